'use strict'
// @ctliz/agent-intercom-core/policy: the TypeScript core's remote-access policy kernel
// (semantics version 2), computed by the Rust core (core/src/policy/). Each function hands its
// arguments to the core by name (lib/contract.js: no getter, toJSON or proxy trap of the caller
// runs); the decision, the new state and any refusal are the core's.
const { call } = require('../lib/contract.js')

const { POLICY_SEMANTICS_VERSION } = call('policy.constants', [])

/** `{allowed: true, reason}` or `{allowed: false, code}`. `context` defaults to `{}`. */
function authorize (state, actorId, action, targetId, context = undefined) {
  return call('policy.authorize', [state, actorId, action, targetId, context])
}

/** Whether `ancestorId` is on the parent chain above `descendantId` (cycle-safe). */
function isAncestor (state, ancestorId, descendantId) {
  return call('policy.isAncestor', [state, ancestorId, descendantId])
}

/** Whether one of the two principals is the other's direct parent. */
function isDirectParentPair (left, right) {
  return call('policy.isDirectParentPair', [left, right])
}

/** A copy of `state` with the subtree under `principalId` revoked, one generation up. */
function revokeSubtree (state, principalId) {
  return call('policy.revokeSubtree', [state, principalId])
}

/** A copy of `state` with the subtree under `principalId` moved under a new parent and root. */
function adoptSubtree (state, principalId, newParentSessionId, newRootSessionId) {
  return call('policy.adoptSubtree', [state, principalId, newParentSessionId, newRootSessionId])
}

module.exports = {
  POLICY_SEMANTICS_VERSION,
  authorize,
  isAncestor,
  isDirectParentPair,
  revokeSubtree,
  adoptSubtree,
}

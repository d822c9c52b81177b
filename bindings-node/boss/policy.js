'use strict'
// @ctliz/agent-intercom-core/boss/policy: the Boss policy of the TypeScript core, backed by the
// Rust core (core/src/boss/policy.rs). Constants are read from the core once; the functions are
// thin calls. parseBossPolicyPrincipal returns a fresh record; authorizeBossPolicy never throws.
const { call, callFrozen } = require('../lib/contract.js')

const C = callFrozen('boss.policyConstants', [])
// What the core decides for a call it cannot use (no action): the answer when the arguments
// cannot even be snapshotted (a cyclic value, or one nested deeper than the core reads).
const UNUSABLE = callFrozen('boss.authorizeBossPolicy', [])

/** The exact principal record (a fresh object), or a ContractValidationError. */
function parseBossPolicyPrincipal (value) {
  return call('boss.parseBossPolicyPrincipal', [value])
}

/** May `actorId` do `action` to `targetId`? A decision, never an exception. */
function authorizeBossPolicy (state, actorId, action, targetId, context) {
  try {
    return call('boss.authorizeBossPolicy', [state, actorId, action, targetId, context])
  } catch {
    // Only the snapshot can refuse: the core itself never fails this operation.
    return { ...UNUSABLE }
  }
}

module.exports = {
  BOSS_POLICY_SEMANTICS_VERSION: C.semanticsVersion,
  BOSS_POLICY_PRINCIPAL_VERSION: C.principalVersion,
  BOSS_POLICY_ACTIONS: C.actions,
  BOSS_POLICY_ROLES: C.roles,
  BOSS_CONTROL_KINDS: C.controlKinds,
  BOSS_DIRECTIONAL_CONTROL_KIND_MATRIX: C.controlMatrix,
  parseBossPolicyPrincipal,
  authorizeBossPolicy,
}

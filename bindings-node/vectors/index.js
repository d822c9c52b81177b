'use strict'
// @ctliz/agent-intercom-core/vectors: the policy kernel's golden vectors, as the Rust core
// embeds them (vectors/policy-v2.json, the exact text whose SHA-256 is POLICY_SEMANTICS_HASH;
// the core computes that hash from the file's bytes).
const { call } = require('../lib/contract.js')

const constants = call('policy.constants', [])

const POLICY_VECTOR_SCHEMA_VERSION = constants.POLICY_VECTOR_SCHEMA_VERSION
const POLICY_SEMANTICS_HASH = constants.POLICY_SEMANTICS_HASH
/** The 12 vectors, plain mutable objects as TypeScript exports them. */
const POLICY_VECTORS = constants.corpus.vectors

/** A fresh `PolicyState` of the vector's principals, keyed by id (a new copy on every call). */
function stateForVector (vector) {
  return call('policy.stateForVector', [vector])
}

module.exports = {
  POLICY_VECTORS,
  stateForVector,
  POLICY_VECTOR_SCHEMA_VERSION,
  POLICY_SEMANTICS_HASH,
}

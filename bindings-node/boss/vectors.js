'use strict'
// The Boss policy and feature-routing corpora (vectors/boss-policy-v1.json and
// vectors/feature-routing-v1.json, embedded in the core), with the semantics hashes the core
// computes from them and bossPolicyStateForVector; the semantics hashes of the other Boss
// corpora (participant state, transitions, supervision, worker store), as the feature-semantics
// corpus embeds them; and the supervision corpus itself (./supervision-vectors.js). The subpath
// ./boss/vectors; ./boss exports the same.
const { call, callFrozen } = require('../lib/contract.js')

const policy = callFrozen('boss.policyVectors', [])
const routing = callFrozen('boss.featureRoutingVectors', [])
const C = require('./constants.js')
const supervision = require('./supervision-vectors.js')
const vectors = policy.corpus.vectors
const roleEdges = policy.corpus.roleEdgeCount
const controlEdges = policy.corpus.controlEdgeCount

/** The state a Boss policy vector runs against (a fresh object). */
function bossPolicyStateForVector (vector) {
  return call('boss.bossPolicyStateForVector', [vector])
}

module.exports = {
  BOSS_POLICY_VECTOR_SCHEMA_VERSION: policy.corpus.version,
  BOSS_ROLE_EDGE_VECTORS: Object.freeze(vectors.slice(0, roleEdges)),
  BOSS_CONTROL_EDGE_VECTORS: Object.freeze(vectors.slice(roleEdges, roleEdges + controlEdges)),
  BOSS_POLICY_VECTORS: vectors,
  bossPolicyStateForVector,
  BOSS_POLICY_SEMANTICS_HASH: policy.semanticsHash,
  FEATURE_ROUTING_VECTOR_SCHEMA_VERSION: routing.corpus.version,
  FEATURE_ROUTING_VECTORS: routing.corpus.vectors,
  FEATURE_ROUTING_SEMANTICS_HASH: routing.semanticsHash,
  PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION: C.PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION,
  PARTICIPANT_STATE_VECTORS_HASH: C.PARTICIPANT_STATE_VECTORS_HASH,
  PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION: C.PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION,
  PARTICIPANT_STATE_TRANSITION_VECTORS_HASH: C.PARTICIPANT_STATE_TRANSITION_VECTORS_HASH,
  SUPERVISION_VECTOR_SCHEMA_VERSION: C.SUPERVISION_VECTOR_SCHEMA_VERSION,
  SUPERVISION_VECTORS_HASH: C.SUPERVISION_VECTORS_HASH,
  FULL_WORKER_STORE_MIGRATION_VECTOR_VERSION: C.FULL_WORKER_STORE_MIGRATION_VECTOR_VERSION,
  FULL_WORKER_STORE_MIGRATION_VECTORS_HASH: C.FULL_WORKER_STORE_MIGRATION_VECTORS_HASH,
  ...supervision,
}

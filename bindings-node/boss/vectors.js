'use strict'
// The Boss policy and feature-routing corpora (vectors/boss-policy-v1.json and
// vectors/feature-routing-v1.json, embedded in the core), with the semantics hashes the core
// computes from them and bossPolicyStateForVector; the participant-state corpora
// (participant-vectors.js), the worker-store migration corpus (./worker-store-vectors.js) and the
// supervision corpus (./supervision-vectors.js), each with the semantics hash the core computes
// from it. The subpath ./boss/vectors; ./boss exports the same.
const { call, callFrozen } = require('../lib/contract.js')

const policy = callFrozen('boss.policyVectors', [])
const routing = callFrozen('boss.featureRoutingVectors', [])
const C = require('./constants.js')
const workerStoreVectors = require('./worker-store-vectors.js')
const participantVectors = require('./participant-vectors.js')
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
  ...participantVectors,
  SUPERVISION_VECTOR_SCHEMA_VERSION: C.SUPERVISION_VECTOR_SCHEMA_VERSION,
  SUPERVISION_VECTORS_HASH: C.SUPERVISION_VECTORS_HASH,
  ...workerStoreVectors,
  ...supervision,
}

'use strict'
// The supervision corpus (vectors/orc-supervision-v1.json, embedded in the core) as the
// TypeScript core's supervision-vectors.ts exports it (./boss/vectors and ./boss): the vectors,
// SUPERVISION_VECTOR_CORPUS (the very object whose canonical hash, computed by the core, is
// SUPERVISION_VECTORS_HASH; vectors.js exports that and the schema version) and
// stateForSupervisorAclVector. The corpus is deep-frozen; the ACL state is a fresh copy each call.
const { call, callFrozen } = require('../lib/contract.js')

const V = callFrozen('boss.supervisionVectors', [])
const corpus = V.corpus

/** A fresh, mutable copy of SUPERVISOR_ACL_STATE. */
function stateForSupervisorAclVector () {
  return call('boss.stateForSupervisorAclVector', [])
}

module.exports = {
  SUPERVISION_VECTOR_HASH_DOMAIN: V.hashDomain,
  MANAGER_WORKER_SUBSCRIPTION_VECTOR: corpus.subscriptions[0],
  BOSS_MANAGER_SUBSCRIPTION_VECTOR: corpus.subscriptions[1],
  LIFECYCLE_SUBSCRIPTION_SCHEDULER_NEGATIVE_VECTORS: corpus.subscriptionSchedulerNegativeVectors,
  AUTHENTICATED_ACTIVITY_VECTOR: corpus.activity,
  ACTIVE_OPERATION_LEASE_VECTOR: corpus.operationLease,
  EXTERNAL_WAIT_LEASE_VECTOR: corpus.externalWaitLease,
  LIFECYCLE_TRIGGER_VECTOR: corpus.trigger,
  INACTIVITY_EDGE_VECTORS: corpus.inactivityEdges,
  COMMITTED_REBIND_MIGRATION_VECTOR: corpus.rebindMigrations[0],
  BLOCKED_REBIND_MIGRATION_VECTOR: corpus.rebindMigrations[1],
  REBIND_MIGRATION_NEGATIVE_VECTORS: V.rebindMigrationNegativeVectors,
  SUPERVISOR_ACL_STATE: corpus.aclState,
  SUPERVISOR_ACL_VECTORS: corpus.aclVectors,
  stateForSupervisorAclVector,
  SUPERVISION_VECTOR_CORPUS: corpus,
}

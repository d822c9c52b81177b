'use strict'
// ./boss/vectors, participant state: the two corpora (vectors/boss-participant-state-v1.json and
// vectors/boss-participant-state-transition-v1.json, embedded in the core) with the hashes the
// core computes from them. The corpus objects hold the files' own members, so
// canonicalHash(domain, corpus) is the hash of the file.
const { callFrozen } = require('../lib/contract.js')
const C = require('./constants.js')

const state = callFrozen('boss.participantStateVectors', [])
const transition = callFrozen('boss.participantStateTransitionVectors', [])
const s = state.corpus
const t = transition.corpus

module.exports = {
  PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION: s.version,
  PARTICIPANT_STATE_VECTORS_HASH: state.semanticsHash,
  PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION: t.version,
  PARTICIPANT_STATE_TRANSITION_VECTORS_HASH: transition.semanticsHash,
  PARTICIPANT_STATE_VECTOR_HASH_DOMAIN: C.PARTICIPANT_STATE_VECTOR_HASH_DOMAIN,
  PARTICIPANT_STATE_TRANSITION_VECTOR_HASH_DOMAIN: C.PARTICIPANT_STATE_TRANSITION_VECTOR_HASH_DOMAIN,
  PARTICIPANT_STATE_MIGRATION_VECTORS: s.migrationVectors,
  STOPPING_RECONCILIATION_VECTORS: s.stoppingReconciliationVectors,
  PARTICIPANT_HEALTH_EVENT_VECTOR: s.healthEvent,
  PARTICIPANT_STATE_TRANSITION_VECTORS: t.transitionVectors,
  PARTICIPANT_STATE_TRANSITION_VECTOR_CORPUS: Object.freeze({
    version: t.version,
    sameGenerationTransitionTable: t.sameGenerationTransitionTable,
    newGenerationTransitionTable: t.newGenerationTransitionTable,
    transitionVectors: t.transitionVectors,
  }),
  PARTICIPANT_STATE_VECTOR_CORPUS: Object.freeze({
    version: s.version,
    migrationVectors: s.migrationVectors,
    stoppingReconciliationVectors: s.stoppingReconciliationVectors,
    healthEvent: s.healthEvent,
  }),
}

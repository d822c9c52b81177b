'use strict'
// ./boss, participant state: the twelve states and the dispatch gates, health events, the frozen
// WorkerStore v1 -> v2 migration and its legacy `stopping` reconciliation, the evidence-guarded
// transition tables and the store validators (core/src/boss/participant/). Each function is one
// call into the core; the constants are the core's.
const { call } = require('../lib/contract.js')
const C = require('./constants.js')

const { getOwnPropertyDescriptor } = Object
const { hasOwnProperty } = Object.prototype

/**
 * A store validator's result, with the caller's own version value as `observedVersion`.
 * @param {import('../facts.js').ContractOp} op
 */
function store (op, value) {
  const result = call(op, [value])
  // The core names an observed version only after its gate found a plain object whose version
  // is an own data property: reading that descriptor runs nothing of the caller's.
  if (hasOwnProperty.call(result, 'observedVersion')) {
    result.observedVersion = getOwnPropertyDescriptor(value, 'version').value
  }
  return result
}

const parseParticipantState = (value, path) => call('boss.parseParticipantState', [value, path])
const isTerminalParticipantState = (state) => call('boss.isTerminalParticipantState', [state])
const canDispatchParticipantState = (value) => call('boss.canDispatchParticipantState', [value])
const isParticipantStateReadOnly = (value) => call('boss.isParticipantStateReadOnly', [value])
const requiresDirectProcessEvidenceForCleanup = (state) =>
  call('boss.requiresDirectProcessEvidenceForCleanup', [state])
const parseParticipantHealthEventV1 = (value, path) => call('boss.parseParticipantHealthEventV1', [value, path])
const parseLegacyWorkerMigrationInputV1 = (value, path) =>
  call('boss.parseLegacyWorkerMigrationInputV1', [value, path])
const migrateLegacyWorkerRecordV1 = (value) => call('boss.migrateLegacyWorkerRecordV1', [value])
const parseLegacyStoppingReconciliationV1 = (value, path) =>
  call('boss.parseLegacyStoppingReconciliationV1', [value, path])
const reconcileLegacyStoppingWorker = (pending, evidence) =>
  call('boss.reconcileLegacyStoppingWorker', [pending, evidence])
const parseMigratedWorkerRecordV2 = (value, path) => call('boss.parseMigratedWorkerRecordV2', [value, path])
const canDispatchMigratedWorker = (record) => call('boss.canDispatchMigratedWorker', [record])
const parseParticipantStateTransitionEvidence = (value, path) =>
  call('boss.parseParticipantStateTransitionEvidence', [value, path])
const parseParticipantStateTransitionContextV1 = (value, path) =>
  call('boss.parseParticipantStateTransitionContextV1', [value, path])
const validateParticipantStateTransition = (value) => call('boss.validateParticipantStateTransition', [value])
const validateParticipantHealthEventStore = (value) => store('boss.validateParticipantHealthEventStore', value)
const validateLegacyWorkerMigrationInputStore = (value) =>
  store('boss.validateLegacyWorkerMigrationInputStore', value)
const validateLegacyStoppingReconciliationStore = (value) =>
  store('boss.validateLegacyStoppingReconciliationStore', value)

module.exports = {
  PARTICIPANT_STATES: C.PARTICIPANT_STATES,
  TERMINAL_PARTICIPANT_STATES: C.TERMINAL_PARTICIPANT_STATES,
  LEGACY_WORKER_STATES: C.LEGACY_WORKER_STATES,
  PARTICIPANT_HEALTH_EVENT_VERSION: C.PARTICIPANT_HEALTH_EVENT_VERSION,
  WORKER_STATE_MIGRATION_CONTRACT_VERSION: C.WORKER_STATE_MIGRATION_CONTRACT_VERSION,
  LEGACY_WORKER_STORE_SCHEMA_VERSION: C.LEGACY_WORKER_STORE_SCHEMA_VERSION,
  CANONICAL_WORKER_STORE_SCHEMA_VERSION: C.CANONICAL_WORKER_STORE_SCHEMA_VERSION,
  PARTICIPANT_HEALTH_SEVERITIES: C.PARTICIPANT_HEALTH_SEVERITIES,
  STOPPING_RECONCILIATION_OUTCOMES: C.STOPPING_RECONCILIATION_OUTCOMES,
  STOPPING_EVIDENCE_SOURCES: C.STOPPING_EVIDENCE_SOURCES,
  PARTICIPANT_STATE_TRANSITION_CONTRACT_VERSION: C.PARTICIPANT_STATE_TRANSITION_CONTRACT_VERSION,
  BLOCKED_RESUME_STATES: C.BLOCKED_RESUME_STATES,
  STALLED_RESUME_STATES: C.STALLED_RESUME_STATES,
  PARTICIPANT_STATE_TRANSITION_EVIDENCE_KINDS: C.PARTICIPANT_STATE_TRANSITION_EVIDENCE_KINDS,
  PARTICIPANT_STATE_TRANSITION_TABLE: C.PARTICIPANT_STATE_TRANSITION_TABLE,
  PARTICIPANT_NEW_GENERATION_TRANSITIONS: C.PARTICIPANT_NEW_GENERATION_TRANSITIONS,
  PARTICIPANT_DISPATCHABLE_STATES: C.PARTICIPANT_DISPATCHABLE_STATES,
  PARTICIPANT_READ_ONLY_STATES: C.PARTICIPANT_READ_ONLY_STATES,
  parseParticipantState,
  isTerminalParticipantState,
  canDispatchParticipantState,
  isParticipantStateReadOnly,
  requiresDirectProcessEvidenceForCleanup,
  parseParticipantHealthEventV1,
  parseLegacyWorkerMigrationInputV1,
  migrateLegacyWorkerRecordV1,
  parseLegacyStoppingReconciliationV1,
  reconcileLegacyStoppingWorker,
  parseMigratedWorkerRecordV2,
  canDispatchMigratedWorker,
  parseParticipantStateTransitionEvidence,
  parseParticipantStateTransitionContextV1,
  validateParticipantStateTransition,
  validateParticipantHealthEventStore,
  validateLegacyWorkerMigrationInputStore,
  validateLegacyStoppingReconciliationStore,
}

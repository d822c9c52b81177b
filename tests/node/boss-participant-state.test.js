'use strict'
// Runs vectors/boss-participant-state-v1.json and vectors/boss-participant-state-transition-v1.json
// through the package (one sub-test per case, counted; AIC_VECTOR=<id substring> selects), and
// checks the participant-state names of ./boss and ./boss/vectors against the TypeScript
// contract: the corpora are the files, their hashes the published ones, and the readers return
// fresh values and refuse with the contract's paths and messages.
const test = require('node:test')
const assert = require('node:assert')
const boss = require('@ctliz/agent-intercom-core/boss')
const bossVectors = require('@ctliz/agent-intercom-core/boss/vectors')
const { canonicalHash } = require('@ctliz/agent-intercom-core/canonical')
const { readVectors, describeVectors } = require('./helpers.js')

const stateFile = readVectors('boss-participant-state-v1.json')
const transitionFile = readVectors('boss-participant-state-transition-v1.json')
const STATE_HASH = '0da19269f0c2befd9b22b8d146d6bd30450f3f0d64598148fd9317f36a5fc920'
const TRANSITION_HASH = '143fb362364d0742df565e8a02f778a493007e799c429cec8468f38e6520c86a'

const stateCases = [
  ...stateFile.migrationVectors.map((v) => ({ id: `migration: ${v.name}`, kind: 'migration', v })),
  ...stateFile.stoppingReconciliationVectors.map((v) => ({ id: `stopping: ${v.name}`, kind: 'stopping', v })),
  { id: 'health event', kind: 'health', v: stateFile.healthEvent },
]

describeVectors('boss-participant-state-v1.json', stateCases, {
  run ({ kind, v }) {
    if (kind === 'migration') {
      assert.deepStrictEqual(boss.migrateLegacyWorkerRecordV1(v.input), v.expected)
      assert.deepStrictEqual(boss.parseMigratedWorkerRecordV2(v.expected), v.expected)
      assert.strictEqual(boss.canDispatchMigratedWorker(v.expected), false)
    } else if (kind === 'stopping') {
      const settled = boss.reconcileLegacyStoppingWorker(v.pending, v.evidence)
      assert.strictEqual(settled.state, v.expectedState)
      assert.strictEqual(settled.reason, v.expectedReason)
      assert.deepStrictEqual(settled.stoppingReconciliation, v.evidence)
      assert.deepStrictEqual([settled.migrationStatus, settled.readOnly, settled.dispatchAllowed], ['complete', false, false])
      assert.deepStrictEqual(boss.parseMigratedWorkerRecordV2(settled), settled)
    } else {
      assert.deepStrictEqual(boss.parseParticipantHealthEventV1(v), v)
    }
  },
  done (counts) {
    assert.strictEqual(counts.executed, stateFile.count)
    assert.strictEqual(counts.executed, 14)
  },
})

describeVectors('boss-participant-state-transition-v1.json', transitionFile.transitionVectors, {
  id: (v) => v.name,
  run (v) {
    assert.strictEqual(boss.validateParticipantStateTransition(v.input), undefined)
    assert.deepStrictEqual(boss.parseParticipantStateTransitionContextV1(v.input), v.input)
  },
  done (counts) {
    assert.strictEqual(counts.executed, transitionFile.count)
    assert.strictEqual(counts.executed, 12)
  },
})

test('the corpora are the shipped files and hash to the published values', () => {
  const v = bossVectors
  assert.deepStrictEqual(v.PARTICIPANT_STATE_MIGRATION_VECTORS, stateFile.migrationVectors)
  assert.deepStrictEqual(v.STOPPING_RECONCILIATION_VECTORS, stateFile.stoppingReconciliationVectors)
  assert.deepStrictEqual(v.PARTICIPANT_HEALTH_EVENT_VECTOR, stateFile.healthEvent)
  assert.deepStrictEqual(v.PARTICIPANT_STATE_TRANSITION_VECTORS, transitionFile.transitionVectors)
  assert.strictEqual(v.PARTICIPANT_STATE_VECTORS_HASH, STATE_HASH)
  assert.strictEqual(v.PARTICIPANT_STATE_TRANSITION_VECTORS_HASH, TRANSITION_HASH)
  assert.strictEqual(stateFile.semanticsHash, STATE_HASH)
  assert.strictEqual(transitionFile.semanticsHash, TRANSITION_HASH)
  assert.strictEqual(v.PARTICIPANT_STATE_VECTOR_HASH_DOMAIN, stateFile.corpus)
  assert.strictEqual(v.PARTICIPANT_STATE_TRANSITION_VECTOR_HASH_DOMAIN, transitionFile.corpus)
  assert.strictEqual(canonicalHash(v.PARTICIPANT_STATE_VECTOR_HASH_DOMAIN, v.PARTICIPANT_STATE_VECTOR_CORPUS), STATE_HASH)
  assert.strictEqual(canonicalHash(v.PARTICIPANT_STATE_TRANSITION_VECTOR_HASH_DOMAIN, v.PARTICIPANT_STATE_TRANSITION_VECTOR_CORPUS), TRANSITION_HASH)
  assert.deepStrictEqual([v.PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION, v.PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION], [1, 1])
  // The corpus objects hold the exported vectors themselves, as the TypeScript corpus does.
  assert.strictEqual(v.PARTICIPANT_STATE_VECTOR_CORPUS.migrationVectors, v.PARTICIPANT_STATE_MIGRATION_VECTORS)
  assert.ok(Object.isFrozen(v.PARTICIPANT_STATE_TRANSITION_VECTORS[0].input.evidence))
  // The feature-semantics corpus embeds the same hashes.
  assert.strictEqual(boss.BOSS_RUN_FEATURE_SEMANTICS_CORPUS.participantStateVectorsHash, STATE_HASH)
  assert.strictEqual(boss.BOSS_RUN_FEATURE_SEMANTICS_CORPUS.participantStateTransitionVectorsHash, TRANSITION_HASH)
})

test('the transition file holds the core\'s tables', () => {
  assert.deepStrictEqual(boss.PARTICIPANT_STATE_TRANSITION_TABLE, transitionFile.sameGenerationTransitionTable)
  assert.deepStrictEqual(boss.PARTICIPANT_NEW_GENERATION_TRANSITIONS, transitionFile.newGenerationTransitionTable)
  assert.deepStrictEqual(Object.keys(boss.PARTICIPANT_STATE_TRANSITION_TABLE), boss.PARTICIPANT_STATES)
})

const PARTICIPANT_NAMES = [
  'BLOCKED_RESUME_STATES', 'CANONICAL_WORKER_STORE_SCHEMA_VERSION', 'LEGACY_WORKER_STATES',
  'LEGACY_WORKER_STORE_SCHEMA_VERSION', 'PARTICIPANT_DISPATCHABLE_STATES', 'PARTICIPANT_HEALTH_EVENT_VERSION',
  'PARTICIPANT_HEALTH_SEVERITIES', 'PARTICIPANT_NEW_GENERATION_TRANSITIONS', 'PARTICIPANT_READ_ONLY_STATES',
  'PARTICIPANT_STATES', 'PARTICIPANT_STATE_TRANSITION_CONTRACT_VERSION', 'PARTICIPANT_STATE_TRANSITION_EVIDENCE_KINDS',
  'PARTICIPANT_STATE_TRANSITION_TABLE', 'STALLED_RESUME_STATES', 'STOPPING_EVIDENCE_SOURCES',
  'STOPPING_RECONCILIATION_OUTCOMES', 'TERMINAL_PARTICIPANT_STATES', 'WORKER_STATE_MIGRATION_CONTRACT_VERSION',
  'canDispatchMigratedWorker', 'canDispatchParticipantState', 'isParticipantStateReadOnly', 'isTerminalParticipantState',
  'migrateLegacyWorkerRecordV1', 'parseLegacyStoppingReconciliationV1', 'parseLegacyWorkerMigrationInputV1',
  'parseMigratedWorkerRecordV2', 'parseParticipantHealthEventV1', 'parseParticipantState',
  'parseParticipantStateTransitionContextV1', 'parseParticipantStateTransitionEvidence',
  'reconcileLegacyStoppingWorker', 'requiresDirectProcessEvidenceForCleanup',
  'validateLegacyStoppingReconciliationStore', 'validateLegacyWorkerMigrationInputStore',
  'validateParticipantHealthEventStore', 'validateParticipantStateTransition',
]
const VECTOR_NAMES = [
  'PARTICIPANT_HEALTH_EVENT_VECTOR', 'PARTICIPANT_STATE_MIGRATION_VECTORS', 'PARTICIPANT_STATE_TRANSITION_VECTORS',
  'PARTICIPANT_STATE_TRANSITION_VECTORS_HASH', 'PARTICIPANT_STATE_TRANSITION_VECTOR_CORPUS',
  'PARTICIPANT_STATE_TRANSITION_VECTOR_HASH_DOMAIN', 'PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION',
  'PARTICIPANT_STATE_VECTORS_HASH', 'PARTICIPANT_STATE_VECTOR_CORPUS', 'PARTICIPANT_STATE_VECTOR_HASH_DOMAIN',
  'PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION', 'STOPPING_RECONCILIATION_VECTORS',
]

test('./boss exports every participant-state name, ./boss/vectors the corpora', () => {
  for (const name of [...PARTICIPANT_NAMES, ...VECTOR_NAMES]) assert.ok(name in boss, name)
  for (const name of VECTOR_NAMES) assert.strictEqual(bossVectors[name], boss[name], name)
  for (const name of PARTICIPANT_NAMES) assert.ok(!(name in bossVectors), name)
})

test('readers return fresh values and refuse with the contract\'s paths and messages', () => {
  const event = stateFile.healthEvent
  const parsed = boss.parseParticipantHealthEventV1(event)
  assert.notStrictEqual(parsed, event)
  assert.throws(() => boss.parseParticipantHealthEventV1({ ...event, reason: null }, '$.e'),
    { name: 'ContractValidationError', path: '$.e.reason', message: '$.e.reason: blocked requires an explicit reason' })
  const input = stateFile.migrationVectors[0].input
  assert.throws(() => boss.migrateLegacyWorkerRecordV1({ ...input, workerGenerationFloor: 1 }),
    { path: '$.assignedWorkerGeneration', message: '$.assignedWorkerGeneration: must be greater than the persisted workerGenerationFloor' })
  assert.throws(() => boss.parseMigratedWorkerRecordV2({ ...stateFile.migrationVectors[0].expected, bossRunId: 'r' }),
    { message: '$.bossRunId: is not supported' })
  const stopping = stateFile.stoppingReconciliationVectors[0]
  assert.throws(() => boss.reconcileLegacyStoppingWorker(stopping.pending, { ...stopping.evidence, workerGeneration: 10 }),
    { path: '$.evidence', message: '$.evidence: worker identity or generation does not match the pending record' })
  const restart = transitionFile.transitionVectors[9].input
  assert.throws(() => boss.validateParticipantStateTransition({ ...restart, workerGeneration: 9 }),
    { path: '$.workerGeneration', message: '$.workerGeneration: must increase by exactly one generation' })
  assert.throws(() => boss.parseParticipantStateTransitionEvidence({ kind: 'turn_started', evidenceId: 'e' }),
    { path: '$.evidence.turnId', message: '$.evidence.turnId: is required' })
  assert.throws(() => boss.canDispatchParticipantState('newer-state'), { path: '$.state' })
  assert.strictEqual(boss.requiresDirectProcessEvidenceForCleanup('nonsense'), true)
  assert.strictEqual(boss.isTerminalParticipantState(42), false)
})

test('an accessor is refused without running it', () => {
  let calls = 0
  const input = Object.defineProperty({ ...transitionFile.transitionVectors[3].input }, 'previousResumeState', {
    enumerable: true, get () { calls++; return 'working' },
  })
  assert.throws(() => boss.validateParticipantStateTransition(input),
    { message: '$.previousResumeState: must be an enumerable data property' })
  assert.strictEqual(calls, 0)
})

test('the store validators gate the version and keep the caller\'s own version value', () => {
  const event = stateFile.healthEvent
  const valid = boss.validateParticipantHealthEventStore(event)
  assert.deepStrictEqual(valid, { ok: true, status: 'valid', value: event })
  assert.notStrictEqual(valid.value, event)
  const observed = ['v1']
  const foreign = boss.validateParticipantHealthEventStore({ ...event, version: observed })
  assert.strictEqual(foreign.status, 'foreign_version')
  assert.strictEqual(foreign.observedVersion, observed)
  assert.deepStrictEqual(boss.validateLegacyStoppingReconciliationStore({ version: 2 }), {
    ok: false, status: 'unsupported_newer_version', observedVersion: 2, path: '$.version',
    message: 'unsupported store version 2; expected 1', preserveExisting: true, mutationAllowed: false,
  })
  assert.deepStrictEqual(boss.validateLegacyWorkerMigrationInputStore({ version: 1 }), {
    ok: false, status: 'corrupt', observedVersion: 1, path: '$.sourceStoreVersion',
    message: '$.sourceStoreVersion: is required', preserveExisting: true, mutationAllowed: false,
  })
})

// Regenerates the two worker-store migration data files from the TypeScript core 0.2.0's dist:
//   * vectors/worker-store-migration-v2.json: its corpus (FULL_WORKER_STORE_MIGRATION_VECTOR_CORPUS)
//     as data, with the error each strict rejection vector gets there (measured, not hashed);
//   * core/tests/data/worker_store_cases.json: this repository's own cases (mutations of the
//     corpus records), each with the outcome the TypeScript core gives it (the fresh value, or
//     the error's class, path and message).
// Usage (from the repository root):
//   AIC_TS_CORE_DIST=/path/to/agent-intercom-core/dist node core/tests/data/gen-worker-store.mjs
import { writeFileSync } from 'node:fs'
import { isDeepStrictEqual } from 'node:util'

const dist = process.env.AIC_TS_CORE_DIST || '/work/ext/core/dist'
const m = await import(`${dist}/boss.js`)
const root = new URL('../../../', import.meta.url)

const corpus = m.FULL_WORKER_STORE_MIGRATION_VECTOR_CORPUS
const domain = m.FULL_WORKER_STORE_MIGRATION_VECTOR_HASH_DOMAIN
const { canonicalHash } = await import(`${dist}/canonical.js`)
if (canonicalHash(domain, corpus) !== m.FULL_WORKER_STORE_MIGRATION_VECTORS_HASH) throw new Error('the corpus does not hash to its constant')

const CASES_DESCRIPTION = 'Each case calls `op` with one argument: `arg`, or the record `bases[base]` after ' +
  '`edits`, applied in order: [path, value] sets the member at path (keys from the top; an existing key keeps ' +
  'its place, a new one is appended) and [path] deletes it. `expect` is what the TypeScript core gives: ' +
  '{kind: "error", class, path, message}; {kind: "equal"}, a fresh value equal to the argument; ' +
  '{kind: "valid"}, {ok: true, status: "valid", value} with value equal to the argument; or ' +
  '{kind: "value", value}. Values are compared with their member order.'

// The edits that turn `base` into `value` (both plain objects), or undefined when there are none
// that reproduce it exactly, member order included.
function diff (base, value) {
  const plain = (x) => x !== null && typeof x === 'object' && !Array.isArray(x)
  if (!plain(base) || !plain(value)) return undefined
  const edits = []
  const walk = (b, v, path) => {
    for (const k of Object.keys(b)) if (!Object.hasOwn(v, k)) edits.push([[...path, k]])
    for (const k of Object.keys(v)) {
      if (Object.hasOwn(b, k) && JSON.stringify(b[k]) === JSON.stringify(v[k])) continue
      if (Object.hasOwn(b, k) && plain(b[k]) && plain(v[k])) walk(b[k], v[k], [...path, k])
      else edits.push([[...path, k], v[k]])
    }
  }
  walk(base, value, [])
  return JSON.stringify(applyEdits(base, edits)) === JSON.stringify(value) ? edits : undefined
}

function applyEdits (base, edits) {
  const out = structuredClone(base)
  for (const [path, ...value] of edits) {
    let at = out
    for (const k of path.slice(0, -1)) at = at[k]
    const last = path[path.length - 1]
    if (value.length === 0) delete at[last]
    else at[last] = value[0]
  }
  return out
}

function outcome (run) {
  try {
    return { kind: 'value', value: run() }
  } catch (e) {
    return { kind: 'error', class: e.constructor.name, ...(e.path === undefined ? {} : { path: e.path }), message: e.message }
  }
}

// The corpus: one vector per line after a header.
const rejections = corpus.strictRejectionVectors.map((v) => {
  const got = outcome(() => m.parseWorkerStoreRecordV2(v.value))
  if (got.kind !== 'error') throw new Error(`${v.name} is accepted`)
  return { name: v.name, class: got.class, path: got.path, message: got.message }
})
const header = {
  corpus: domain,
  version: corpus.version,
  description: 'The full worker-store migration corpus of @ctliz/agent-intercom-core 0.2.0 ' +
    '(FULL_WORKER_STORE_MIGRATION_VECTOR_CORPUS, in its order). Each of `vectors` holds an input ' +
    '(parseFullWorkerStoreMigrationInputV1 returns an equal record) and the record ' +
    'migrateFullWorkerStoreV1 makes of it (parseWorkerStoreRecordV2 returns an equal record); each of ' +
    '`strictRejectionVectors` is a v2 record parseWorkerStoreRecordV2 refuses. ' +
    'FULL_WORKER_STORE_MIGRATION_VECTORS_HASH = canonicalHash("agent-intercom-core/worker-store-v1-v2-full-v2", ' +
    '{version, vectors, strictRejectionVectors}); `count`, `strictRejectionCount`, `semanticsHash` (the ' +
    'published digest, a known answer) and `strictRejectionErrors` (the ContractValidationError each ' +
    'strict rejection vector gets from the TypeScript core, in the same order) are not hashed.',
  count: corpus.vectors.length,
  strictRejectionCount: corpus.strictRejectionVectors.length,
  semanticsHash: m.FULL_WORKER_STORE_MIGRATION_VECTORS_HASH,
}
const lines = (list) => list.map((v) => '    ' + JSON.stringify(v)).join(',\n')
const head = JSON.stringify(header, null, 2).replace(/\n}$/, '')
writeFileSync(new URL('vectors/worker-store-migration-v2.json', root),
  `${head},\n  "vectors": [\n${lines(corpus.vectors)}\n  ],\n` +
  `  "strictRejectionVectors": [\n${lines(corpus.strictRejectionVectors)}\n  ],\n` +
  `  "strictRejectionErrors": [\n${lines(rejections)}\n  ]\n}\n`)

// The cases.
const input = corpus.vectors[0].input
const record = corpus.vectors[0].expected
const pending = corpus.vectors[8].expected
const headless = corpus.vectors[2].input
const w = (o, k, v) => ({ ...o, [k]: v })
const without = (o, k) => { const c = { ...o }; delete c[k]; return c }
const at = (o, group, k, v) => w(o, group, w(o[group], k, v))
const atOut = (o, group, k) => w(o, group, without(o[group], k))
const recipientAt = (o, k, v) => at(o, 'notice', 'owningManagerRecipient', w(o.notice.owningManagerRecipient, k, v))

// A reconciled legacy stopping worker (its evidence, then the record around it).
const evidence = (outcome, expired = outcome === 'unresolved_after_settle') => ({
  version: 1,
  workerId: pending.worker.workerId,
  workerIncarnationId: pending.worker.workerIncarnationId,
  workerGeneration: pending.worker.workerGeneration,
  observationId: `observation-${outcome}`,
  evidenceSource: 'systemd_and_cgroup',
  outcome,
  boundedSettleWindowExpired: expired,
  observedAt: '2026-07-28T12:05:00.000Z',
})
const reconciled = (outcome) => {
  const worker = m.reconcileLegacyStoppingWorker(pending.worker, evidence(outcome))
  return { ...pending, worker, health: { ...pending.health, canonicalState: worker.state } }
}
const stopped = reconciled('stopped')
const unresolved = reconciled('unresolved_after_settle')
const atWorker = (o, k, v) => at(o, 'worker', k, v)
const atAudit = (o, k, v) => atWorker(o, 'migrationAudit', w(o.worker.migrationAudit, k, v))
const atEvidence = (o, k, v) => atWorker(o, 'stoppingReconciliation', w(o.worker.stoppingReconciliation, k, v))
const failedInput = corpus.vectors[5].input
const failedRecord = corpus.vectors[5].expected
const blocked = corpus.vectors[3].expected
const surfaces = ['health', 'runtime', 'adapter', 'systemd', 'notice', 'controller']

// The records the cases start from; a case names one and lists its edits (see `diff`).
const bases = { input, headless, failedInput, lostInput: corpus.vectors[7].input, record, pending, stopped, unresolved, blocked, failedRecord }
const baseOf = (value) => {
  let best
  for (const [name, base] of Object.entries(bases)) {
    const edits = diff(base, value)
    if (edits && (!best || JSON.stringify(edits).length < JSON.stringify(best.edits).length)) best = { base: name, edits }
  }
  return best
}
const C = []
const add = (id, op, args) => C.push({ id, op, args })
const P = 'parseFullWorkerStoreMigrationInputV1'
const M = 'migrateFullWorkerStoreV1'
const R = 'parseWorkerStoreRecordV2'
const VI = 'validateFullWorkerStoreMigrationInputV1'
const VR = 'validateWorkerStoreRecordV2'

// parseFullWorkerStoreMigrationInputV1, in the order it checks.
add('input/ok', P, [input])
add('input/headless', P, [headless])
add('input/array', P, [[]])
add('input/null', P, [null])
add('input/string', P, ['x'])
add('input/missing-version', P, [without(input, 'version')])
add('input/missing-controller', P, [without(input, 'controller')])
add('input/extra', P, [w(input, 'hidden', true)])
add('input/version-2', P, [w(input, 'version', 2)])
add('input/version-text', P, [w(input, 'version', '1')])
add('input/version-null', P, [w(input, 'version', null)])
add('input/version-array', P, [w(input, 'version', [1, 2])])
add('input/version-object', P, [w(input, 'version', {})])
add('input/version-before-worker', P, [{ ...input, version: 3, worker: null }])
add('input/worker-array', P, [w(input, 'worker', [])])
add('input/worker-extra', P, [at(input, 'worker', 'bossRunId', 'r')])
add('input/worker-missing', P, [atOut(input, 'worker', 'migratedAt')])
add('input/worker-floor', P, [at(input, 'worker', 'workerGenerationFloor', -1)])
add('input/worker-assigned', P, [at(input, 'worker', 'assignedWorkerGeneration', 0)])
add('input/worker-not-above-floor', P, [w(input, 'worker', { ...input.worker, workerGenerationFloor: 4, assignedWorkerGeneration: 4 })])
add('input/worker-floor-before-version', P, [w(input, 'worker', { ...input.worker, version: 2, workerGenerationFloor: 1.5 })])
add('input/worker-version', P, [at(input, 'worker', 'version', 2)])
add('input/worker-version-negative', P, [at(input, 'worker', 'version', -1)])
add('input/worker-source', P, [at(input, 'worker', 'sourceStoreVersion', 2)])
add('input/worker-target', P, [at(input, 'worker', 'targetStoreVersion', 1)])
add('input/worker-id', P, [at(input, 'worker', 'workerId', '')])
add('input/worker-run', P, [at(input, 'worker', 'legacyRunId', 5)])
add('input/worker-deprecated', P, [at(input, 'worker', 'deprecatedAgentIntercomRunId', 5)])
add('input/worker-deprecated-null', P, [at(input, 'worker', 'deprecatedAgentIntercomRunId', null)])
add('input/worker-state', P, [at(input, 'worker', 'legacyState', 'zombie')])
add('input/worker-outcome', P, [at(input, 'worker', 'legacyOutcome', '')])
add('input/worker-migrated-at', P, [at(input, 'worker', 'migratedAt', '2026-02-30T00:00:00.000Z')])
add('input/worker-before-fields', P, [{ ...input, worker: { ...input.worker, workerId: '' }, environment: null }])
add('input/environment-array', P, [w(input, 'environment', [])])
add('input/environment-extra', P, [at(input, 'environment', 'AGENT_INTERCOM_BOSS_RUN_ID', 'r')])
add('input/environment-missing', P, [atOut(input, 'environment', 'AGENT_INTERCOM_RUN_ID')])
add('input/environment-worker', P, [at(input, 'environment', 'AGENT_INTERCOM_WORKER_ID', '')])
add('input/environment-workspace', P, [at(input, 'environment', 'workspacePath', '')])
add('input/environment-no-workspace', P, [atOut(input, 'environment', 'workspacePath')])
add('input/environment-worker-mismatch', P, [at(input, 'environment', 'AGENT_INTERCOM_WORKER_ID', 'other')])
add('input/environment-run-mismatch', P, [at(input, 'environment', 'AGENT_INTERCOM_RUN_ID', 'pretend-boss')])
add('input/health-extra', P, [at(input, 'health', 'canonicalState', 'ready')])
add('input/health-state', P, [at(input, 'health', 'observedLegacyState', 'ready')])
add('input/health-mismatch', P, [at(input, 'health', 'observedLegacyState', 'running')])
add('input/health-confirmed', P, [at(input, 'health', 'lastConfirmedAt', 'yesterday')])
add('input/health-failure', P, [at(input, 'health', 'failureCode', 1)])
add('input/health-minimal', P, [w(input, 'health', { observedLegacyState: 'provisioning' })])
add('input/runtime-missing', P, [atOut(input, 'runtime', 'runtimeId')])
add('input/runtime-process-zero', P, [at(input, 'runtime', 'processId', 0)])
add('input/runtime-process-fraction', P, [at(input, 'runtime', 'processId', 1.5)])
add('input/runtime-lease', P, [at(input, 'runtime', 'leaseExpiresAt', '2026-07-28T14:00:00Z')])
add('input/runtime-max', P, [at(input, 'runtime', 'maxRuntimeAt', 7)])
add('input/runtime-minimal', P, [w(input, 'runtime', { runtimeId: 'r' })])
add('input/adapter-ready', P, [at(input, 'adapter', 'readinessReported', 'yes')])
add('input/adapter-session', P, [at(input, 'adapter', 'sessionId', '')])
add('input/adapter-missing', P, [atOut(input, 'adapter', 'adapterVersion')])
add('input/adapter-minimal', P, [w(input, 'adapter', { readinessReported: true, adapterVersion: '2', adapterId: 'pi' })])
add('input/systemd-observed', P, [at(input, 'systemd', 'observedAt', 'now')])
add('input/systemd-extra', P, [at(input, 'systemd', 'result', 'ok')])
add('input/systemd-missing', P, [atOut(input, 'systemd', 'subState')])
add('input/systemd-order', P, [w(input, 'systemd', { ...input.systemd, unitName: '', observedAt: 'now' })])
add('input/notice-duplicates', P, [at(input, 'notice', 'pendingNoticeIds', ['a', 'b', 'a'])])
add('input/notice-empty', P, [at(input, 'notice', 'pendingNoticeIds', [])])
add('input/notice-not-array', P, [at(input, 'notice', 'pendingNoticeIds', 'notice-0')])
add('input/notice-element', P, [at(input, 'notice', 'pendingNoticeIds', ['a', ''])])
add('input/notice-delivered', P, [at(input, 'notice', 'lastDeliveredNoticeId', '')])
add('input/notice-missing-recipient', P, [atOut(input, 'notice', 'owningManagerRecipient')])
add('input/notice-duplicates-before-recipient', P, [w(input, 'notice', { ...input.notice, pendingNoticeIds: ['a', 'a'], owningManagerRecipient: null })])
add('input/recipient-null', P, [at(input, 'notice', 'owningManagerRecipient', null)])
add('input/recipient-context', P, [recipientAt(input, 'recipientContext', 'tmux')])
add('input/recipient-context-first', P, [w(input, 'notice', { ...input.notice, owningManagerRecipient: { recipientContext: 'tmux', recipientPrincipalId: '' } })])
add('input/recipient-principal', P, [recipientAt(input, 'recipientPrincipalId', '')])
add('input/recipient-epoch', P, [recipientAt(input, 'recipientBindingEpoch', 0)])
add('input/recipient-session', P, [recipientAt(input, 'recipientSessionId', '')])
add('input/recipient-target', P, [recipientAt(input, 'recipientTargetSessionId', 5)])
add('input/recipient-extra', P, [recipientAt(input, 'bossRunId', 'r')])
add('input/recipient-interactive-no-session', P, [at(input, 'notice', 'owningManagerRecipient', { recipientPrincipalId: 'm', recipientBindingEpoch: 1, recipientContext: 'opencode' })])
add('input/recipient-headless-session', P, [recipientAt(headless, 'recipientSessionId', 's')])
add('input/recipient-headless-target', P, [recipientAt(headless, 'recipientTargetSessionId', 's')])
add('input/recipient-headless-epoch-first', P, [w(headless, 'notice', { ...headless.notice, owningManagerRecipient: { ...headless.notice.owningManagerRecipient, recipientBindingEpoch: -1, recipientSessionId: 's' } })])
add('input/controller-revision', P, [at(input, 'controller', 'revision', -1)])
add('input/controller-projection', P, [at(input, 'controller', 'projectionId', '')])
add('input/controller-missing', P, [atOut(input, 'controller', 'revision')])
add('input/controller-minimal', P, [w(input, 'controller', { revision: 0 })])
add('input/fields-before-cross-checks', P, [{ ...at(input, 'environment', 'AGENT_INTERCOM_RUN_ID', 'x'), controller: { revision: -1 } }])
add('input/worker-check-before-run-check', P, [{ ...input, environment: { ...input.environment, AGENT_INTERCOM_WORKER_ID: 'x', AGENT_INTERCOM_RUN_ID: 'y' } }])
add('input/run-check-before-state-check', P, [{ ...at(input, 'environment', 'AGENT_INTERCOM_RUN_ID', 'y'), health: { observedLegacyState: 'lost' } }])

// migrateFullWorkerStoreV1.
for (const v of corpus.vectors) add(`migrate/${v.input.worker.legacyState}`, M, [v.input])
add('migrate/failed-without-outcome', M, [{ ...failedInput, worker: { ...failedInput.worker, legacyOutcome: null } }])
add('migrate/lost-with-outcome', M, [{ ...corpus.vectors[7].input, worker: { ...corpus.vectors[7].input.worker, legacyOutcome: 'host-gone' } }])
add('migrate/minimal', M, [{ ...input, environment: without(input.environment, 'workspacePath'), health: { observedLegacyState: 'provisioning' }, runtime: { runtimeId: 'r' }, adapter: { adapterId: 'a', adapterVersion: 'v', readinessReported: false }, notice: { pendingNoticeIds: [], owningManagerRecipient: headless.notice.owningManagerRecipient }, controller: { revision: 0 } }])
add('migrate/invalid', M, [w(input, 'version', 2)])
add('migrate/run-mismatch', M, [at(input, 'environment', 'AGENT_INTERCOM_RUN_ID', 'pretend-boss')])
add('migrate/not-record', M, [7])

// parseWorkerStoreRecordV2: the top level.
add('record/ok', R, [record])
add('record/pending', R, [pending])
add('record/reconciled-stopped', R, [stopped])
add('record/reconciled-failed', R, [reconciled('failed')])
add('record/reconciled-lost', R, [reconciled('lost')])
add('record/reconciled-unresolved', R, [unresolved])
add('record/blocked', R, [blocked])
add('record/failed', R, [failedRecord])
add('record/array', R, [[]])
add('record/missing', R, [without(record, 'compatibilityAudit')])
add('record/extra', R, [w(record, 'bossRunId', 'r')])
add('record/version-v3', R, [w(record, 'version', 'orc.worker-store-record.v3')])
add('record/version-number', R, [w(record, 'version', 2)])
add('record/version-before-worker', R, [{ ...record, version: 'x', worker: null }])
// The migrated worker.
add('worker/array', R, [w(record, 'worker', [])])
add('worker/extra', R, [atWorker(record, 'bossRunId', 'r')])
add('worker/missing', R, [atOut(record, 'worker', 'stoppingReconciliation')])
add('worker/status', R, [atWorker(record, 'migrationStatus', 'done')])
add('worker/state', R, [atWorker(record, 'state', 'zombie')])
add('worker/resume', R, [atWorker(record, 'resumeState', 'stalled')])
add('worker/status-before-state', R, [w(record, 'worker', { ...record.worker, migrationStatus: 1, state: 1 })])
add('worker/audit-array', R, [atWorker(record, 'migrationAudit', [])])
add('worker/audit-field', R, [atAudit(record, 'sourceIncarnationField', 'runID')])
add('worker/audit-version', R, [atAudit(record, 'version', 2)])
add('worker/audit-target', R, [atAudit(record, 'targetStoreVersion', 3)])
add('worker/audit-run', R, [atAudit(record, 'originalRunId', '')])
add('worker/audit-deprecated', R, [atAudit(record, 'originalDeprecatedAgentIntercomRunId', 1)])
add('worker/audit-state', R, [atAudit(record, 'originalState', 'ready')])
add('worker/audit-outcome', R, [atAudit(record, 'originalOutcome', false)])
add('worker/audit-floor', R, [atAudit(record, 'workerGenerationFloor', -0.5)])
add('worker/audit-migrated', R, [atAudit(record, 'migratedAt', '')])
add('worker/audit-extra', R, [atAudit(record, 'bossRunId', 'r')])
add('worker/audit-before-evidence', R, [{ ...atAudit(stopped, 'version', 0), worker: { ...atAudit(stopped, 'version', 0).worker, stoppingReconciliation: [] } }])
add('worker/evidence-array', R, [atWorker(stopped, 'stoppingReconciliation', [])])
add('worker/evidence-version', R, [atEvidence(stopped, 'version', 2)])
add('worker/evidence-source', R, [atEvidence(stopped, 'evidenceSource', 'ps')])
add('worker/evidence-outcome', R, [atEvidence(stopped, 'outcome', 'running')])
add('worker/evidence-bounded-type', R, [atEvidence(stopped, 'boundedSettleWindowExpired', 'no')])
add('worker/evidence-unresolved-not-expired', R, [atEvidence(unresolved, 'boundedSettleWindowExpired', false)])
add('worker/evidence-terminal-expired', R, [atEvidence(stopped, 'boundedSettleWindowExpired', true)])
add('worker/evidence-observed', R, [atEvidence(stopped, 'observedAt', 'later')])
add('worker/evidence-extra', R, [atEvidence(stopped, 'note', 'x')])
add('worker/schema', R, [atWorker(record, 'schemaVersion', 1)])
add('worker/schema-text', R, [atWorker(record, 'schemaVersion', '2')])
add('worker/id', R, [atWorker(record, 'workerId', '')])
add('worker/generation', R, [atWorker(record, 'workerGeneration', 0)])
add('worker/reason', R, [atWorker(record, 'reason', 0)])
add('worker/terminal', R, [atWorker(record, 'terminalOutcome', '')])
add('worker/readiness', R, [atWorker(record, 'requiresReadinessReconciliation', null)])
add('worker/idle', R, [atWorker(record, 'legacyIdleHint', 'false')])
add('worker/read-only', R, [atWorker(record, 'readOnly', 0)])
add('worker/dispatch', R, [atWorker(record, 'dispatchAllowed', true)])
add('worker/dispatch-missing-value', R, [atWorker(record, 'dispatchAllowed', null)])
add('worker/incarnation', R, [atWorker(record, 'workerIncarnationId', 'other')])
add('worker/generation-floor', R, [atAudit(record, 'workerGenerationFloor', record.worker.workerGeneration)])
add('worker/pending-not-stopping', R, [atAudit(pending, 'originalState', 'running')])
add('worker/pending-state', R, [atWorker(pending, 'state', 'stopped')])
add('worker/pending-read-only', R, [atWorker(pending, 'readOnly', false)])
add('worker/pending-evidence', R, [atWorker(pending, 'stoppingReconciliation', evidence('stopped'))])
add('worker/complete-null-state', R, [atWorker(record, 'state', null)])
add('worker/complete-read-only', R, [atWorker(record, 'readOnly', true)])
add('worker/blocked-no-resume', R, [atWorker(blocked, 'resumeState', null)])
add('worker/resume-not-blocked', R, [atWorker(record, 'resumeState', 'ready')])
add('worker/stopping-no-evidence', R, [atWorker(stopped, 'stoppingReconciliation', null)])
add('worker/evidence-not-stopping', R, [atWorker(record, 'stoppingReconciliation', evidence('stopped'))])
add('worker/evidence-identity', R, [atEvidence(stopped, 'workerGeneration', 99)])
add('worker/evidence-before-migration', R, [atEvidence(stopped, 'observedAt', '2026-07-28T11:00:00.000Z')])
add('worker/mapping-state', R, [atWorker(record, 'state', 'ready')])
add('worker/mapping-reason', R, [atWorker(failedRecord, 'reason', 'other')])
add('worker/mapping-terminal', R, [atWorker(record, 'terminalOutcome', 'done')])
add('worker/mapping-readiness', R, [atWorker(record, 'requiresReadinessReconciliation', true)])
add('worker/mapping-idle', R, [atWorker(record, 'legacyIdleHint', true)])
add('worker/mapping-blocked-resume', R, [atWorker(blocked, 'resumeState', 'ready')])
add('worker/mapping-unresolved-reason', R, [atWorker(unresolved, 'reason', null)])
add('worker/mapping-stopped-state', R, [{ ...atWorker(stopped, 'state', 'lost'), health: { ...stopped.health, canonicalState: 'lost' } }])
// The environment.
add('environment/array', R, [w(record, 'environment', [])])
add('environment/missing-alias', R, [atOut(record, 'environment', 'AGENT_INTERCOM_RUN_ID')])
add('environment/boss', R, [at(record, 'environment', 'AGENT_INTERCOM_BOSS_RUN_ID', 'r')])
add('environment/worker', R, [at(record, 'environment', 'AGENT_INTERCOM_WORKER_ID', 'other')])
add('environment/incarnation', R, [at(record, 'environment', 'AGENT_INTERCOM_WORKER_INCARNATION_ID', 'other')])
add('environment/generation', R, [at(record, 'environment', 'AGENT_INTERCOM_WORKER_GENERATION', '01')])
add('environment/generation-number', R, [at(record, 'environment', 'AGENT_INTERCOM_WORKER_GENERATION', 1)])
add('environment/alias', R, [at(record, 'environment', 'AGENT_INTERCOM_RUN_ID', 'other')])
add('environment/workspace', R, [at(record, 'environment', 'workspacePath', '')])
add('environment/no-workspace', R, [atOut(record, 'environment', 'workspacePath')])
add('environment/identity-before-alias', R, [{ ...record, environment: { ...record.environment, AGENT_INTERCOM_WORKER_ID: 'x', AGENT_INTERCOM_RUN_ID: 'y' } }])
add('environment/before-health', R, [{ ...at(record, 'environment', 'AGENT_INTERCOM_RUN_ID', 'y'), health: null }])
// The identity-bound surfaces.
for (const s of surfaces) {
  add(`${s}/array`, R, [w(record, s, [])])
  add(`${s}/incarnation`, R, [at(record, s, 'workerIncarnationId', 'other')])
  add(`${s}/incarnation-empty`, R, [at(record, s, 'workerIncarnationId', '')])
  add(`${s}/generation`, R, [at(record, s, 'workerGeneration', record.worker.workerGeneration + 1)])
  add(`${s}/generation-zero`, R, [at(record, s, 'workerGeneration', 0)])
  add(`${s}/missing-identity`, R, [atOut(record, s, 'workerGeneration')])
  add(`${s}/extra`, R, [at(record, s, 'bossRunId', 'r')])
}
add('health/original', R, [at(record, 'health', 'originalLegacyState', 'running')])
add('health/canonical', R, [at(record, 'health', 'canonicalState', 'ready')])
add('health/canonical-missing', R, [atOut(record, 'health', 'canonicalState')])
add('health/pending-null', R, [at(pending, 'health', 'canonicalState', null)])
add('health/confirmed', R, [at(record, 'health', 'lastConfirmedAt', 'now')])
add('health/failure', R, [at(failedRecord, 'health', 'failureCode', '')])
add('health/original-invalid', R, [{ ...atAudit(record, 'originalState', 'provisioning'), health: { ...record.health, originalLegacyState: 5 } }])
add('runtime/process', R, [at(record, 'runtime', 'processId', 0)])
add('runtime/missing', R, [atOut(record, 'runtime', 'runtimeId')])
add('runtime/lease', R, [at(record, 'runtime', 'leaseExpiresAt', 1)])
add('adapter/ready', R, [at(record, 'adapter', 'readinessReported', 1)])
add('adapter/session', R, [at(record, 'adapter', 'sessionId', '')])
add('systemd/observed', R, [at(record, 'systemd', 'observedAt', 'x')])
add('systemd/missing', R, [atOut(record, 'systemd', 'unitName')])
add('notice/duplicates', R, [at(record, 'notice', 'pendingNoticeIds', ['n', 'n'])])
add('notice/ids', R, [at(record, 'notice', 'pendingNoticeIds', {})])
add('notice/missing-recipient', R, [atOut(record, 'notice', 'owningManagerRecipient')])
add('notice/recipient-epoch', R, [recipientAt(record, 'recipientBindingEpoch', 0)])
add('notice/recipient-context', R, [recipientAt(record, 'recipientContext', 'web')])
add('notice/recipient-headless-session', R, [recipientAt(pending, 'recipientSessionId', 's')])
add('notice/delivered', R, [at(record, 'notice', 'lastDeliveredNoticeId', 5)])
add('controller/revision', R, [at(record, 'controller', 'revision', 1.5)])
add('controller/projection', R, [at(record, 'controller', 'projectionId', '')])
add('controller/minimal', R, [w(record, 'controller', { revision: 0, workerIncarnationId: record.worker.workerIncarnationId, workerGeneration: record.worker.workerGeneration })])
add('surfaces/identity-before-fields', R, [{ ...at(record, 'runtime', 'processId', 0), controller: { ...record.controller, workerGeneration: 7 } }])
add('surfaces/health-before-runtime', R, [{ ...at(record, 'health', 'canonicalState', 'ready'), runtime: null }])
// The compatibility audit.
const audit = (k, v) => at(record, 'compatibilityAudit', k, v)
add('audit/array', R, [w(record, 'compatibilityAudit', [])])
add('audit/extra', R, [audit('note', 'x')])
add('audit/missing', R, [atOut(record, 'compatibilityAudit', 'bossRunIdDerived')])
add('audit/source', R, [audit('sourceEnvironmentIncarnationField', 'AGENT_INTERCOM_BOSS_RUN_ID')])
add('audit/target', R, [audit('targetEnvironmentIncarnationField', 'x')])
add('audit/alias-version', R, [audit('deprecatedEnvironmentAliasLastSupportedVersion', 'orc.worker-store-record.v3')])
add('audit/derived', R, [audit('bossRunIdDerived', true)])
add('audit/derived-null', R, [audit('bossRunIdDerived', null)])
add('audit/groups-order', R, [audit('preservedFieldGroups', ['health', 'environment', 'runtime', 'adapter', 'systemd', 'notice', 'controller'])])
add('audit/groups-short', R, [audit('preservedFieldGroups', ['environment'])])
add('audit/groups-element', R, [audit('preservedFieldGroups', ['environment', ''])])
add('audit/groups-not-array', R, [audit('preservedFieldGroups', 'environment,health,runtime,adapter,systemd,notice,controller')])
add('audit/groups-joined', R, [audit('preservedFieldGroups', ['environment,health', 'runtime', 'adapter,systemd', 'notice', 'controller'])])
add('audit/literals-before-groups', R, [{ ...audit('bossRunIdDerived', 'no'), compatibilityAudit: { ...record.compatibilityAudit, bossRunIdDerived: 'no', preservedFieldGroups: 1 } }])
add('audit/after-fields', R, [{ ...audit('bossRunIdDerived', true), controller: { ...record.controller, revision: -1 } }])

// The store validators.
add('validate-input/ok', VI, [input])
add('validate-input/array', VI, [[]])
add('validate-input/no-version', VI, [without(input, 'version')])
add('validate-input/version-null', VI, [w(input, 'version', null)])
add('validate-input/newer', VI, [w(input, 'version', 2)])
add('validate-input/older', VI, [w(input, 'version', 0)])
add('validate-input/text', VI, [w(input, 'version', '1')])
add('validate-input/fraction', VI, [w(input, 'version', 1.5)])
add('validate-input/object', VI, [w(input, 'version', { v: 1 })])
add('validate-input/corrupt', VI, [at(input, 'environment', 'AGENT_INTERCOM_RUN_ID', 'pretend-boss')])
add('validate-record/ok', VR, [record])
add('validate-record/pending', VR, [pending])
add('validate-record/newer', VR, [w(record, 'version', 'orc.worker-store-record.v3')])
add('validate-record/older', VR, [w(record, 'version', 'orc.worker-store-record.v1')])
add('validate-record/foreign', VR, [w(record, 'version', 'orc.worker-identity.v2')])
add('validate-record/unversioned-text', VR, [w(record, 'version', 'worker-store')])
add('validate-record/number', VR, [w(record, 'version', 2)])
add('validate-record/corrupt', VR, [at(record, 'health', 'workerGeneration', 99)])
add('validate-record/corrupt-deep', VR, [recipientAt(record, 'recipientBindingEpoch', 0)])
add('validate-record/null', VR, [null])

const ids = new Set()
const cases = C.map(({ id, op, args }) => {
  if (ids.has(id)) throw new Error(`duplicate id ${id}`)
  ids.add(id)
  const [arg] = args
  const got = outcome(() => m[op](arg))
  let expect = got
  // Equal with the member order too (the order is part of the answer).
  const equal = (a, b) => isDeepStrictEqual(a, b) && JSON.stringify(a) === JSON.stringify(b)
  if (got.kind === 'value' && equal(got.value, arg)) expect = { kind: 'equal' }
  else if (got.kind === 'value' && got.value.ok === true && equal(got.value.value, arg)) expect = { kind: 'valid' }
  const from = baseOf(arg)
  return { id, op, ...(from ? { base: from.base, edits: from.edits } : { arg }), expect }
})
const caseLines = cases.map((c) => ' ' + JSON.stringify(c)).join(',\n')
const baseLines = Object.entries(bases).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(',\n')
writeFileSync(new URL('core/tests/data/worker_store_cases.json', root),
  '{\n "version": 1,\n' +
  ' "source": "outcomes of @ctliz/agent-intercom-core 0.2.0 (dist); regenerate with core/tests/data/gen-worker-store.mjs",\n' +
  ' "description": ' + JSON.stringify(CASES_DESCRIPTION) + ',\n' +
  ` "count": ${cases.length},\n "bases": {\n${baseLines}\n },\n "cases": [\n${caseLines}\n ]\n}\n`)
console.log(`worker-store-migration-v2.json: ${corpus.vectors.length} vectors, ${rejections.length} strict rejections; worker_store_cases.json: ${cases.length} cases`)

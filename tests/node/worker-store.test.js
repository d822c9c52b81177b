'use strict'
// The full worker-store migration of @ctliz/agent-intercom-core/boss: every vector of
// vectors/worker-store-migration-v2.json and every case of core/tests/data/worker_store_cases.json
// (each with the TypeScript core 0.2.0's outcome) through the package, one sub-test each
// (AIC_VECTOR=<name or id part> selects); the hash computed from the file; and what JSON cannot
// carry (fresh objects, member order, getters never run, proxies never entered, undefined
// members, the caller's own observedVersion).
const { test } = require('node:test')
const assert = require('node:assert')
const { readFileSync } = require('node:fs')
const { join } = require('node:path')
const boss = require('@ctliz/agent-intercom-core/boss')
const bossVectors = require('@ctliz/agent-intercom-core/boss/vectors')
const { canonicalHash, ContractValidationError } = require('@ctliz/agent-intercom-core/canonical')
const { root, readVectors, describeVectors } = require('./helpers.js')

const PUBLISHED_HASH = 'dfc3680c3b085a0a7a53266abe309d5710a181b7831d2582998dd38e76dca2bf'
const corpusFile = readVectors('worker-store-migration-v2.json')
const cases = JSON.parse(readFileSync(join(root, 'core', 'tests', 'data', 'worker_store_cases.json'), 'utf8'))

/** Equal, and with the same member order (the TypeScript member order is part of the answer). */
function sameOrdered (actual, expected) {
  assert.deepStrictEqual(actual, expected)
  assert.strictEqual(JSON.stringify(actual), JSON.stringify(expected))
}

function assertError (run, want) {
  let error
  try { run() } catch (e) { error = e }
  assert.ok(error, `expected ${want.message}`)
  assert.ok(error instanceof ContractValidationError, error.message)
  assert.strictEqual(error.constructor.name, want.class)
  assert.strictEqual(error.path, want.path)
  assert.strictEqual(error.message, want.message)
}

const corpusCases = [
  ...corpusFile.vectors.map((v) => ({ kind: 'migration', v })),
  ...corpusFile.strictRejectionVectors.map((v, i) => ({ kind: 'rejection', v, error: corpusFile.strictRejectionErrors[i] })),
]

describeVectors('worker-store-migration-v2.json', corpusCases, {
  id: (c) => c.v.name,
  run ({ kind, v, error }) {
    if (kind === 'rejection') {
      assert.strictEqual(error.name, v.name)
      assertError(() => boss.parseWorkerStoreRecordV2(v.value), error)
      return
    }
    const parsed = boss.parseFullWorkerStoreMigrationInputV1(v.input)
    assert.notStrictEqual(parsed, v.input)
    sameOrdered(parsed, v.input)
    const migrated = boss.migrateFullWorkerStoreV1(v.input)
    sameOrdered(migrated, v.expected)
    assert.strictEqual('bossRunId' in migrated.worker, false)
    sameOrdered(boss.parseWorkerStoreRecordV2(v.expected), v.expected)
  },
  done (counts) {
    assert.strictEqual(counts.executed, 26)
  },
})

/** The case's argument: `arg`, or the base after its edits (see the file's description). */
function argumentOf (c) {
  if (!c.base) return c.arg
  const value = structuredClone(cases.bases[c.base])
  for (const [path, ...set] of c.edits) {
    let at = value
    for (const key of path.slice(0, -1)) at = at[key]
    const last = path[path.length - 1]
    if (set.length === 0) delete at[last]
    else at[last] = set[0]
  }
  return value
}

describeVectors('worker_store_cases.json', cases.cases, {
  run (c) {
    const arg = argumentOf(c)
    const run = () => boss[c.op](arg)
    const { expect } = c
    if (expect.kind === 'error') return assertError(run, expect)
    const result = run()
    if (expect.kind === 'equal') {
      assert.notStrictEqual(result, arg)
      sameOrdered(result, arg)
    } else if (expect.kind === 'valid') {
      sameOrdered({ ...result, value: undefined }, { ok: true, status: 'valid', value: undefined })
      sameOrdered(result.value, arg)
    } else {
      sameOrdered(result, expect.value)
    }
  },
  done (counts) {
    assert.strictEqual(counts.executed, cases.count)
  },
})

test('the corpus is the shipped file and hashes to the published value', () => {
  const v = bossVectors
  assert.strictEqual(v.FULL_WORKER_STORE_MIGRATION_VECTORS_HASH, PUBLISHED_HASH)
  assert.strictEqual(corpusFile.semanticsHash, PUBLISHED_HASH)
  assert.strictEqual(v.FULL_WORKER_STORE_MIGRATION_VECTOR_VERSION, 2)
  assert.strictEqual(v.FULL_WORKER_STORE_MIGRATION_VECTOR_HASH_DOMAIN, 'agent-intercom-core/worker-store-v1-v2-full-v2')
  assert.deepStrictEqual(v.FULL_WORKER_STORE_MIGRATION_VECTORS, corpusFile.vectors)
  assert.deepStrictEqual(v.FULL_WORKER_STORE_V2_STRICT_REJECTION_VECTORS, corpusFile.strictRejectionVectors)
  assert.deepStrictEqual(Object.keys(v.FULL_WORKER_STORE_MIGRATION_VECTOR_CORPUS), ['version', 'vectors', 'strictRejectionVectors'])
  assert.strictEqual(canonicalHash(v.FULL_WORKER_STORE_MIGRATION_VECTOR_HASH_DOMAIN, v.FULL_WORKER_STORE_MIGRATION_VECTOR_CORPUS), PUBLISHED_HASH)
  // ./boss carries the same values, and the feature-semantics corpus embeds the same hash.
  for (const name of Object.keys(v).filter((n) => n.startsWith('FULL_WORKER_STORE'))) assert.strictEqual(boss[name], v[name], name)
  assert.strictEqual(boss.BOSS_RUN_FEATURE_SEMANTICS_CORPUS.fullWorkerStoreMigrationVectorsHash, PUBLISHED_HASH)
  assert.ok(Object.isFrozen(v.FULL_WORKER_STORE_MIGRATION_VECTORS[0].input))
})

test('./boss has the TypeScript names and constants of the module', () => {
  for (const name of ['parseFullWorkerStoreMigrationInputV1', 'migrateFullWorkerStoreV1', 'parseWorkerStoreRecordV2',
    'validateFullWorkerStoreMigrationInputV1', 'validateWorkerStoreRecordV2']) {
    assert.strictEqual(typeof boss[name], 'function', name)
  }
  assert.strictEqual(boss.FULL_WORKER_STORE_MIGRATION_VERSION, 1)
  assert.strictEqual(boss.FULL_WORKER_STORE_V2_RECORD_VERSION, 'orc.worker-store-record.v2')
  assert.deepStrictEqual(boss.WORKER_STORE_MANAGER_RECIPIENT_CONTEXTS, ['pi', 'opencode', 'headless_cli'])
})

const input = corpusFile.vectors[0].input
const record = corpusFile.vectors[0].expected

test('getters are never run and proxies never entered', () => {
  let touched = false
  const runtime = { ...input.runtime }
  Object.defineProperty(runtime, 'runtimeId', { enumerable: true, get () { touched = true; return 'r' } })
  assert.throws(() => boss.parseFullWorkerStoreMigrationInputV1({ ...input, runtime }),
    { name: 'ContractValidationError', path: '$.runtime.runtimeId', message: '$.runtime.runtimeId: must be an enumerable data property' })
  const proxy = new Proxy(record, { get () { touched = true }, ownKeys () { touched = true; return [] } })
  assert.throws(() => boss.parseWorkerStoreRecordV2(proxy), { message: '$: must be a plain object' })
  assert.throws(() => boss.migrateFullWorkerStoreV1({ ...input, notice: { ...input.notice, owningManagerRecipient: proxy } }),
    { message: '$.notice.owningManagerRecipient: must be a plain object' })
  assert.strictEqual(touched, false)
})

test('undefined members: optional ones read as absent, required ones are present and refused', () => {
  const parsed = boss.parseFullWorkerStoreMigrationInputV1({ ...input, environment: { ...input.environment, workspacePath: undefined } })
  assert.strictEqual('workspacePath' in parsed.environment, false)
  assert.throws(() => boss.parseFullWorkerStoreMigrationInputV1({ ...input, controller: { revision: undefined } }),
    { message: '$.controller.revision: must be a safe integer >= 0' })
  // A v2 surface drops its undefined members with the identity, so the group read afresh
  // misses the required one.
  assert.throws(() => boss.parseWorkerStoreRecordV2({ ...record, runtime: { ...record.runtime, runtimeId: undefined } }),
    { path: '$compatibility.runtime.runtimeId', message: '$compatibility.runtime.runtimeId: is required' })
  assert.throws(() => boss.parseFullWorkerStoreMigrationInputV1({ ...input, version: -0 }), { message: '$.version: unsupported version: 0' })
  assert.throws(() => boss.parseWorkerStoreRecordV2({ ...record, notice: { ...record.notice, pendingNoticeIds: ['n', , 'm'] } }), // eslint-disable-line no-sparse-arrays
    { message: '$compatibility.notice.pendingNoticeIds[1]: sparse array holes are not supported' })
})

test('the results are fresh objects in the TypeScript member order', () => {
  const migrated = boss.migrateFullWorkerStoreV1(input)
  assert.deepStrictEqual(Object.keys(migrated), ['version', 'worker', 'environment', 'health', 'runtime', 'adapter',
    'systemd', 'notice', 'controller', 'compatibilityAudit'])
  assert.deepStrictEqual(Object.keys(migrated.runtime).slice(-2), ['workerIncarnationId', 'workerGeneration'])
  const reread = boss.parseWorkerStoreRecordV2(migrated)
  assert.notStrictEqual(reread, migrated)
  assert.notStrictEqual(reread.notice.pendingNoticeIds, migrated.notice.pendingNoticeIds)
  reread.notice.pendingNoticeIds.push('mutated')
  assert.deepStrictEqual(boss.parseWorkerStoreRecordV2(migrated), migrated)
})

test('the store validators never throw and report the caller\'s own version', () => {
  const version = { family: 'orc', revision: 2 }
  const result = boss.validateWorkerStoreRecordV2({ ...record, version })
  assert.strictEqual(result.ok, false)
  assert.strictEqual(result.status, 'foreign_version')
  assert.strictEqual(result.observedVersion, version, 'the very value')
  const valid = boss.validateFullWorkerStoreMigrationInputV1(input)
  assert.deepStrictEqual(valid, { ok: true, status: 'valid', value: input })
  assert.notStrictEqual(valid.value, input)
  const corrupt = boss.validateWorkerStoreRecordV2({ ...record, health: { ...record.health, workerGeneration: 99 } })
  assert.deepStrictEqual(corrupt, {
    ok: false,
    status: 'corrupt',
    observedVersion: 'orc.worker-store-record.v2',
    path: '$.health',
    message: '$.health: must bind the migrated worker incarnation and generation',
    preserveExisting: true,
    mutationAllowed: false,
  })
  let touched = false
  const accessor = { ...record }
  Object.defineProperty(accessor, 'version', { enumerable: true, get () { touched = true; return 'x' } })
  assert.strictEqual(boss.validateWorkerStoreRecordV2(accessor).status, 'corrupt')
  assert.strictEqual(boss.validateWorkerStoreRecordV2(new Proxy({}, {})).status, 'corrupt')
  assert.strictEqual(touched, false)
  // The one exception is the package's limit on what crosses into the core: a cyclic value is
  // refused before anything runs (docs/contract.md), as by every function of the package.
  const cyclic = { ...input }
  cyclic.worker = cyclic
  assert.throws(() => boss.validateFullWorkerStoreMigrationInputV1(cyclic),
    { name: 'ContractValidationError', path: '$', message: '$: value nests deeper than 512 levels or is cyclic' })
})

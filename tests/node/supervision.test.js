'use strict'
// Runs vectors/orc-supervision-v1.json through the package (one sub-test per case, counted;
// AIC_VECTOR=<id substring> selects): each case calls the public function its op names with the
// values its args point at, and must give the TypeScript core's outcome; likewise the 1,656 edit
// cases of core/tests/data/supervision_cases.json. Then what JSON cannot carry: the corpus hash
// recomputed here, the TypeScript names, fresh results, the caller's own version value in a store
// result, and getters, proxies and prototypes never entered.
const test = require('node:test')
const assert = require('node:assert')
const boss = require('@ctliz/agent-intercom-core/boss')
const bossVectors = require('@ctliz/agent-intercom-core/boss/vectors')
const { canonicalHash, ContractValidationError } = require('@ctliz/agent-intercom-core/canonical')
const { readFileSync } = require('node:fs')
const { join } = require('node:path')
const { root, readVectors, describeVectors } = require('./helpers.js')

const file = readVectors('orc-supervision-v1.json')
const edits = JSON.parse(readFileSync(join(root, 'core/tests/data/supervision_cases.json'), 'utf8'))

function walk (value, path) {
  return path.reduce((v, token) => v[Array.isArray(v) ? Number(token) : token], value)
}

function at (pointer) {
  return walk(file, pointer.split('/').slice(1))
}

/** What an edit case's argument stands for (core/tests/data/gen-supervision-cases.mjs). */
function build (arg) {
  if ('value' in arg) return structuredClone(arg.value)
  const value = structuredClone(at(arg.vector))
  for (const edit of arg.edits ?? []) {
    const parent = walk(value, edit.at.slice(0, -1))
    const key = edit.at.at(-1)
    if (edit.delete) delete parent[key]
    else parent[key] = structuredClone(edit.set)
  }
  if (arg.resign) {
    const evidence = walk(value, arg.resign)
    const { evidenceDigest: _old, ...body } = evidence
    try { evidence.evidenceDigest = boss.rebindMigrationEvidenceDigest(body) } catch { /* stays unsigned */ }
  }
  return value
}

/** Runs a case's function over `args` and compares with the TypeScript outcome. */
function check (c, args) {
  const fn = boss[c.op.slice('boss.'.length)]
  assert.strictEqual(typeof fn, 'function', c.op)
  const { outcome } = c
  if (outcome.throws) {
    assert.throws(() => fn(...args), (e) => e instanceof ContractValidationError &&
      e.name === outcome.throws.class && e.message === outcome.throws.message)
    return
  }
  const result = fn(...args)
  if (outcome.equalsArg !== undefined) {
    assert.deepStrictEqual(result, args[outcome.equalsArg])
    if (typeof result === 'object') assert.notStrictEqual(result, args[outcome.equalsArg], 'a fresh object')
  } else if (outcome.validStoreRecordOf !== undefined) {
    assert.deepStrictEqual(result, { ok: true, status: 'valid', value: args[outcome.validStoreRecordOf] })
  } else {
    assert.deepStrictEqual(result, outcome.value)
  }
}

describeVectors('orc-supervision-v1.json', file.cases, {
  id: (c) => c.id,
  run: (c) => check(c, c.args.map(at)),
  done (counts) {
    assert.strictEqual(counts.executed, 64)
  },
})

describeVectors('supervision_cases.json', edits.cases, {
  id: (c) => c.id,
  run: (c) => check(c, c.args.map(build)),
  done (counts) {
    assert.strictEqual(counts.executed, edits.count)
    assert.strictEqual(counts.executed, 1656)
  },
})

test('the corpus is the shipped file and hashes, here, to SUPERVISION_VECTORS_HASH', () => {
  const { SUPERVISION_VECTOR_CORPUS: corpus, SUPERVISION_VECTOR_HASH_DOMAIN: domain } = bossVectors
  assert.strictEqual(domain, file.corpus)
  assert.deepStrictEqual(corpus, file.semantics)
  assert.deepStrictEqual(bossVectors.REBIND_MIGRATION_NEGATIVE_VECTORS, file.rebindMigrationNegativeVectors)
  assert.strictEqual(canonicalHash(domain, corpus), '6795156a761aa7fa404c06657e7ca3438a99b1a7e4d2919308379a5448e14b33')
  assert.strictEqual(canonicalHash(domain, file.semantics), bossVectors.SUPERVISION_VECTORS_HASH)
  assert.strictEqual(bossVectors.SUPERVISION_VECTORS_HASH, file.semanticsHash)
  assert.strictEqual(bossVectors.SUPERVISION_VECTOR_SCHEMA_VERSION, file.version)
  // The named vectors are the corpus's own objects, as in TypeScript.
  assert.strictEqual(bossVectors.MANAGER_WORKER_SUBSCRIPTION_VECTOR, corpus.subscriptions[0])
  assert.strictEqual(bossVectors.BLOCKED_REBIND_MIGRATION_VECTOR, corpus.rebindMigrations[1])
  assert.strictEqual(bossVectors.SUPERVISOR_ACL_STATE, corpus.aclState)
  assert.ok(Object.isFrozen(corpus.aclState.principals))
  const state = bossVectors.stateForSupervisorAclVector()
  assert.deepStrictEqual(state, corpus.aclState)
  assert.notStrictEqual(state, bossVectors.stateForSupervisorAclVector())
  state.principals['manager-a'].state = 'revoked' // a fresh, mutable copy
})

const FUNCTIONS = [
  'aggregateDeliveryIntent', 'authorizeSupervisorSubscription', 'inactivityTransitionId', 'isSmartInactivitySuppressed',
  'parseActiveOperationLease', 'parseAuthenticatedActivity', 'parseExternalWaitLease', 'parseInactivityEdgeKey',
  'parseLifecycleSubscription', 'parseLifecycleTarget', 'parseLifecycleTrigger', 'parseSubscriberRebindMigration',
  'rebindMigrationEvidenceDigest', 'validateActiveOperationLeaseRenewal', 'validateActiveOperationLeaseStore',
  'validateAuthenticatedActivityStore', 'validateExternalWaitLeaseRenewal', 'validateExternalWaitLeaseStore',
  'validateLifecycleSubscriptionStore', 'validateLifecycleTriggerStore', 'validateSubscriberRebindMigrationStore',
]
const VECTOR_NAMES = [
  'ACTIVE_OPERATION_LEASE_VECTOR', 'AUTHENTICATED_ACTIVITY_VECTOR', 'BLOCKED_REBIND_MIGRATION_VECTOR',
  'BOSS_MANAGER_SUBSCRIPTION_VECTOR', 'COMMITTED_REBIND_MIGRATION_VECTOR', 'EXTERNAL_WAIT_LEASE_VECTOR',
  'INACTIVITY_EDGE_VECTORS', 'LIFECYCLE_SUBSCRIPTION_SCHEDULER_NEGATIVE_VECTORS', 'LIFECYCLE_TRIGGER_VECTOR',
  'MANAGER_WORKER_SUBSCRIPTION_VECTOR', 'REBIND_MIGRATION_NEGATIVE_VECTORS', 'SUPERVISION_VECTORS_HASH',
  'SUPERVISION_VECTOR_CORPUS', 'SUPERVISION_VECTOR_HASH_DOMAIN', 'SUPERVISION_VECTOR_SCHEMA_VERSION',
  'SUPERVISOR_ACL_STATE', 'SUPERVISOR_ACL_VECTORS', 'stateForSupervisorAclVector',
]

test('./boss and ./boss/vectors carry the TypeScript supervision names and constants', () => {
  for (const name of FUNCTIONS) assert.strictEqual(typeof boss[name], 'function', name)
  for (const name of VECTOR_NAMES) {
    assert.ok(Object.hasOwn(bossVectors, name), `./boss/vectors ${name}`)
    assert.strictEqual(boss[name], bossVectors[name], `./boss ${name}`)
  }
  assert.strictEqual(boss.LIFECYCLE_SUBSCRIPTION_VERSION, 'orc.lifecycle-subscription.v1')
  assert.strictEqual(boss.SUBSCRIBER_REBIND_MIGRATION_VERSION, 'orc.subscriber-rebind-migration.v1')
  assert.strictEqual(boss.LIFECYCLE_TRIGGER_SCHEMA_VERSION, 1)
  assert.strictEqual(boss.MAX_EXTERNAL_WAIT_LEASE_MS_DEFAULT, 7_200_000)
  assert.deepStrictEqual(boss.SUPERVISED_ROLES, ['boss', 'manager', 'adversary', 'scout', 'worker', 'council'])
  assert.deepStrictEqual(boss.WAIT_SOURCE_KINDS, ['process', 'timer', 'file', 'port', 'url', 'webhook', 'async_tool', 'other'])
  assert.deepStrictEqual(boss.SUPERVISOR_PRINCIPAL_KINDS,
    ['ordinary_owner', 'boss', 'manager', 'controller', 'worker', 'scout', 'adversary', 'council'])
  assert.deepStrictEqual(boss.REBIND_MIGRATION_STATES, ['prepared', 'projected', 'committed', 'aborted', 'blocked'])
})

test('parsers refuse proxies, accessors and holes without running them', () => {
  const base = bossVectors.MANAGER_WORKER_SUBSCRIPTION_VECTOR
  let touched = 0
  const trap = () => { touched++ }
  const proxy = new Proxy({ ...base }, { get: trap, getOwnPropertyDescriptor: trap, ownKeys: trap, getPrototypeOf: trap })
  assert.throws(() => boss.parseLifecycleSubscription(proxy), { path: '$', message: '$: Proxy values are not supported' })
  assert.deepStrictEqual(boss.validateLifecycleSubscriptionStore(proxy), {
    ok: false, status: 'corrupt', path: '$', message: '$: Proxy values are not supported', preserveExisting: true, mutationAllowed: false,
  })
  const accessor = Object.defineProperty({ ...base }, 'dueAt', { enumerable: true, get () { touched++; return base.dueAt } })
  assert.throws(() => boss.parseLifecycleSubscription(accessor), { message: '$.dueAt: must be an enumerable data property' })
  const predicates = [{ kind: 'failed' }]
  predicates.length = 2
  assert.throws(() => boss.parseLifecycleSubscription({ ...base, predicates }), { message: '$.predicates[1]: sparse array holes are not supported' })
  assert.throws(() => boss.parseLifecycleTarget({ kind: 'worker', workerId: 'w', workerGeneration: 0 }, '$.t'),
    { path: '$.t.workerGeneration', message: '$.t.workerGeneration: must be a safe integer >= 1' })
  assert.throws(() => boss.parseExternalWaitLease(bossVectors.EXTERNAL_WAIT_LEASE_VECTOR, 0),
    { path: 'maxExternalWaitLeaseMs', message: 'maxExternalWaitLeaseMs: must be a positive safe integer' })
  assert.strictEqual(touched, 0)
})

test('store results carry the caller\'s own version value', () => {
  const version = { v: 1 }
  const foreign = boss.validateActiveOperationLeaseStore({ ...bossVectors.ACTIVE_OPERATION_LEASE_VECTOR, version })
  assert.strictEqual(foreign.status, 'foreign_version')
  assert.strictEqual(foreign.observedVersion, version)
  const newer = boss.validateLifecycleTriggerStore({ ...bossVectors.LIFECYCLE_TRIGGER_VECTOR, version: 'orc.lifecycle-trigger.v2' })
  assert.deepStrictEqual(newer, {
    ok: false,
    status: 'unsupported_newer_version',
    observedVersion: 'orc.lifecycle-trigger.v2',
    path: '$.version',
    message: 'unsupported store version orc.lifecycle-trigger.v2; expected orc.lifecycle-trigger.v1',
    preserveExisting: true,
    mutationAllowed: false,
  })
})

test('the supervisor ACL never runs a getter, a proxy trap or a coercion of the state', () => {
  const vector = bossVectors.SUPERVISOR_ACL_VECTORS.find((v) => v.name === 'Boss may follow the current Manager role')
  let touched = 0
  const state = bossVectors.stateForSupervisorAclVector()
  state.principals.extra = Object.defineProperty({}, 'kind', { enumerable: true, get () { touched++; return 'boss' } })
  state.currentManagerByRun.other = { toString () { touched++; return 'manager-a' } }
  assert.deepStrictEqual(boss.authorizeSupervisorSubscription(state, vector.request), vector.expected)
  state.workers = new Proxy(state.workers, { ownKeys () { touched++; return [] } })
  assert.deepStrictEqual(boss.authorizeSupervisorSubscription(state, vector.request), { allowed: false, code: 'UNKNOWN_TARGET' })
  assert.deepStrictEqual(boss.authorizeSupervisorSubscription(undefined, undefined), { allowed: false, code: 'UNKNOWN_SUBSCRIBER' })
  assert.strictEqual(touched, 0)
})

test('smart inactivity reads its evidence as JavaScript does', () => {
  const lease = bossVectors.ACTIVE_OPERATION_LEASE_VECTOR
  const evidence = {
    workerId: lease.workerId,
    workerGeneration: lease.workerGeneration,
    now: '2026-07-28T12:01:00.000Z',
    currentOperation: { invocationId: lease.invocationId, processId: lease.processId, cgroupIdentity: lease.cgroupIdentity, live: true },
    activeOperation: lease,
  }
  assert.strictEqual(boss.isSmartInactivitySuppressed(evidence), true)
  assert.strictEqual(boss.isSmartInactivitySuppressed({ ...evidence, currentOperation: null }), false)
  assert.throws(() => boss.isSmartInactivitySuppressed(undefined), TypeError)
  assert.throws(() => boss.isSmartInactivitySuppressed({ ...evidence, now: 'soon' }), { message: '$.now: must be a canonical UTC ISO-8601 timestamp' })
})

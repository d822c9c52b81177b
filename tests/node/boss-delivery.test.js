'use strict'
// @ctliz/agent-intercom-core/boss: lifecycle notices and their delivery. core/tests/data/
// boss_delivery_cases.json holds each case's outcome as the TypeScript core 0.2.0 gives it; every
// case runs here through the package, and the JavaScript-only properties (the very object
// returned, the caller's own key and record in fresh results, getters never run, proxies never
// entered, undefined members, NaN versions) are tested below.
const { test } = require('node:test')
const assert = require('node:assert')
const { readFileSync } = require('node:fs')
const { join } = require('node:path')
const boss = require('@ctliz/agent-intercom-core/boss')
const { root, describeVectors, outcomeCase } = require('./helpers.js')

const { ContractValidationError } = require('../../bindings-node/lib/contract.js')
const data = JSON.parse(readFileSync(join(root, 'core', 'tests', 'data', 'boss_delivery_cases.json'), 'utf8'))
const arg = (id) => data.cases.find((c) => c.id === id).args[0]

test('the case file counts its cases', () => {
  assert.strictEqual(data.count, data.cases.length)
})

describeVectors('boss_delivery_cases.json', data.cases, { run: outcomeCase(boss) })

test('golden ids', () => {
  const key = {
    recipientPrincipalId: 'manager', recipientBindingEpoch: 1,
    sourceAuthorityId: { kind: 'orc_scheduler', ownerUid: 1, schedulerGeneration: 1 },
    sourceEventId: 'event-1', workerId: 'worker-1', workerGeneration: 1, transitionId: 'transition-1', transitionVersion: 1,
  }
  assert.strictEqual(boss.deliveryGroupId(key), 'e60277cc3344ebd07a041095daed3e663b383970ca6e8881c4f8b622ac9eece5')
  const logical = { workerId: 'worker-a', workerGeneration: 6, transitionId: 'turn-settled-9', transitionVersion: 1, kind: 'turn_settled', assignmentId: 'assignment-1' }
  assert.strictEqual(boss.lifecycleNoticeId(logical), '62a55d55fc11518e0ac6eedc485a9224493664f1e47022cb5ed2708ad68401cb')
})

test('constants', () => {
  assert.strictEqual(boss.LIFECYCLE_NOTICE_VERSION, 'orc.lifecycle-notice.v1')
  assert.strictEqual(boss.DELIVERY_GROUP_ASSEMBLY_VERSION, 'orc.delivery-group-assembly.v1')
  assert.deepStrictEqual(boss.DELIVERY_INTENTS, ['wake', 'follow_up', 'status_only'])
  assert.deepStrictEqual(boss.NOTICE_DELIVERY_CLAIM_STATES, boss.DELIVERY_CLAIM_STATES.filter((s) => s !== 'released'))
  assert.deepStrictEqual(boss.TARGET_LEDGER_STATES, ['absent', 'inserting', 'inserted', 'ambiguous'])
  assert.strictEqual(boss.NOTICE_RECIPIENT_INGRESS_OPERATIONS.length, 6)
  assert.strictEqual(boss.DELIVERY_GROUP_STATES.length, 7)
  for (const name of ['DELIVERY_GROUP_VERSION', 'DELIVERY_CLAIM_VERSION', 'NOTICE_RECIPIENT_INGRESS_VERSION', 'TARGET_LEDGER_RESULT_VERSION']) {
    assert.strictEqual(typeof boss[name], 'string', name)
  }
  for (const name of ['RECIPIENT_CONTEXTS', 'DELIVERY_MODES', 'DELIVERY_GROUP_MEMBERSHIP_STATES']) assert.ok(Array.isArray(boss[name]), name)
})

test('fresh results carry the caller\'s own equivalence key', () => {
  const input = arg('assemble/ok')
  const assembled = boss.assembleDeliveryGroup(input)
  assert.strictEqual(assembled.equivalenceKey, input.equivalenceKey)
  assert.deepStrictEqual(Object.keys(assembled).slice(0, 3), ['version', 'deliveryGroupId', 'equivalenceKey'])
  const parsed = boss.parseDeliveryGroupAssemblyInput(input)
  assert.notStrictEqual(parsed, input)
  assert.strictEqual(parsed.equivalenceKey, input.equivalenceKey)
  assert.notStrictEqual(parsed.members[0], input.members[0])
  // An undefined optional member stays in the caller's key (TypeScript returns that key).
  const withUndefined = { ...input, equivalenceKey: { ...input.equivalenceKey, turnId: undefined } }
  assert.ok('turnId' in boss.parseDeliveryGroupAssemblyInput(withUndefined).equivalenceKey)
  assert.throws(() => boss.assembleDeliveryGroup(withUndefined), /^ContractValidationError: \$\.turnId: undefined is not a canonical value$/)
  assert.strictEqual(boss.parseDeliveryEquivalenceKey(withUndefined.equivalenceKey), withUndefined.equivalenceKey)
})

test('store results name the caller\'s own record and version', () => {
  const notice = arg('notice/ok')
  const valid = boss.validateLifecycleNoticeStore(notice)
  assert.deepStrictEqual(Object.keys(valid), ['ok', 'status', 'value'])
  assert.strictEqual(valid.value, notice)
  const version = ['orc.lifecycle-notice.v1']
  const foreign = boss.validateLifecycleNoticeStore({ ...notice, version })
  assert.strictEqual(foreign.status, 'foreign_version')
  assert.strictEqual(foreign.observedVersion, version)
  const nan = boss.validateTargetLedgerStore({ ...arg('ledger/inserted'), version: NaN })
  assert.ok(Number.isNaN(nan.observedVersion))
  const corrupt = boss.validateDeliveryClaimStore({ ...arg('claim/reserved'), state: 'gone' })
  assert.deepStrictEqual(corrupt, {
    ok: false, status: 'corrupt', observedVersion: 'orc.delivery-claim.v1', path: '$.state',
    message: '$.state: must be one of: reserved, inserting, inserted, delivered, blocked, released',
    preserveExisting: true, mutationAllowed: false,
  })
  assert.strictEqual(boss.validateDeliveryGroupStore(Object.create(null)).status, 'corrupt')
})

test('getters never run and proxies are never entered', () => {
  let reads = 0
  const key = { ...arg('key/controller') }
  Object.defineProperty(key, 'sourceAuthorityId', { enumerable: true, get () { reads++; return arg('key/controller').sourceAuthorityId } })
  assert.throws(() => boss.parseDeliveryEquivalenceKey(key), /^ContractValidationError: \$\.sourceAuthorityId: must be an enumerable data property$/)
  const intents = ['wake']
  Object.defineProperty(intents, '0', { enumerable: true, get () { reads++; return 'wake' } })
  assert.throws(() => boss.effectiveDeliveryIntent(intents), /^ContractValidationError: intents\[0\]: must be an enumerable data property$/)
  const trap = new Proxy({ ...arg('key/controller') }, { get () { reads++ }, ownKeys () { reads++; return [] }, getPrototypeOf () { reads++; return Object.prototype } })
  assert.strictEqual(boss.validateLifecycleNoticeStore(trap).status, 'corrupt')
  assert.strictEqual(reads, 0)
})

test('the equivalence key parser reads a proxy as its TypeScript twin does: each member once', () => {
  const source = arg('key/controller')
  const gets = new Map()
  const counted = new Proxy({ ...source }, {
    get (target, key, receiver) {
      gets.set(key, (gets.get(key) ?? 0) + 1)
      return Reflect.get(target, key, receiver)
    },
  })
  assert.strictEqual(boss.parseDeliveryEquivalenceKey(counted), counted)
  assert.deepStrictEqual([...gets.keys()].sort(), Object.keys(source).sort())
  for (const [key, n] of gets) assert.strictEqual(n, 1, key)
  // What the proxy answers is what is checked: a member it changes is refused by its path.
  const changed = new Proxy({ ...source }, { get: (target, key) => key === 'workerGeneration' ? 0 : target[key] })
  assert.throws(() => boss.parseDeliveryEquivalenceKey(changed), /^ContractValidationError: \$\.workerGeneration: /)
  // An accessor behind the proxy is refused without its getter running; so is another prototype.
  let getterRuns = 0
  const withAccessor = Object.defineProperty({ ...source }, 'sourceEventId', { enumerable: true, get () { getterRuns++; return 'e' } })
  assert.throws(() => boss.parseDeliveryEquivalenceKey(new Proxy(withAccessor, {})), /^ContractValidationError: \$\.sourceEventId: must be an enumerable data property$/)
  assert.strictEqual(getterRuns, 0)
  const foreign = new Proxy({ ...source }, { getPrototypeOf: () => Array.prototype })
  assert.throws(() => boss.parseDeliveryEquivalenceKey(foreign), /^ContractValidationError: \$: must be a plain object$/)
  // A proxy of an array, or of a null-prototype object, is refused as the TypeScript parser refuses it.
  assert.throws(() => boss.parseDeliveryEquivalenceKey(new Proxy([1], {})), /^ContractValidationError: \$: must be a plain object$/)
  assert.throws(() => boss.parseDeliveryEquivalenceKey(new Proxy(Object.assign(Object.create(null), source), {})), /^ContractValidationError: \$: must be a plain object$/)
  // A proxy inside is not entered (refused as everywhere).
  let inner = 0
  const nested = { ...source, sourceAuthorityId: new Proxy({ ...source.sourceAuthorityId }, { get () { inner++ } }) }
  assert.throws(() => boss.parseDeliveryEquivalenceKey(nested), /^ContractValidationError: \$\.sourceAuthorityId/)
  assert.strictEqual(inner, 0)
})

test('arrays are dense own data', () => {
  assert.strictEqual(boss.effectiveDeliveryIntent(Object.freeze(['status_only', 'follow_up'])), 'follow_up')
  assert.throws(() => boss.effectiveDeliveryIntent([, 'wake']), /intents\[0\]: sparse array holes are not supported/) // eslint-disable-line no-sparse-arrays
  assert.throws(() => boss.effectiveDeliveryIntent(Object.assign(['wake'], { extra: 1 })), /intents: array must not have symbol or non-index properties/)
  const group = arg('group/ok')
  assert.throws(() => boss.parseDeliveryGroupRecord({ ...group, requestedIntents: new Array(group.requestedIntents.length) }), /\$\.requestedIntents\[0\]: sparse array holes/)
})

test('a version String() cannot convert is a TypeError, as in TypeScript', () => {
  assert.throws(() => boss.parseTargetLedgerLookupResult({ ...arg('ledger/inserted'), version: Object.create(null) }), TypeError)
})

test('the equivalence key parser takes a path', () => {
  assert.throws(() => boss.parseDeliveryEquivalenceKey({}, '$.key'), /^ContractValidationError: \$\.key\.recipientPrincipalId: is required$/)
  assert.throws(() => boss.parseDeliveryEquivalenceKey(null), /^ContractValidationError: \$: must be a plain object$/)
})

test('ESM names', async () => {
  const esm = await import('@ctliz/agent-intercom-core/boss')
  for (const name of ['LIFECYCLE_NOTICE_VERSION', 'assembleDeliveryGroup', 'validateTargetLedgerStore', 'parseDeliveryEquivalenceKey']) {
    assert.strictEqual(esm[name], boss[name], name)
  }
})

'use strict'
// @ctliz/agent-intercom-core/boss: the credential registry, credential use, credential audit,
// authority transition and store-gate functions. core/tests/data/boss_authority_cases.json holds
// each case's outcome as the TypeScript core 0.2.0 gives it; every case runs here through the
// package, and the JavaScript-only properties (the very object returned, the caller's own
// version value in a gate's result, undefined members, getters never run, proxies never
// entered) are tested below.
const { test } = require('node:test')
const assert = require('node:assert')
const { readFileSync } = require('node:fs')
const { join } = require('node:path')
const boss = require('@ctliz/agent-intercom-core/boss')
const { root, describeVectors, outcomeCase } = require('./helpers.js')

const { ContractValidationError } = require('../../bindings-node/lib/contract.js')
const data = JSON.parse(readFileSync(join(root, 'core', 'tests', 'data', 'boss_authority_cases.json'), 'utf8'))
const arg = (id) => structuredClone(data.cases.find((c) => c.id === id).args[0])

test('the case file counts its cases', () => {
  assert.strictEqual(data.count, data.cases.length)
})

describeVectors('boss_authority_cases.json', data.cases, { run: outcomeCase(boss) })

test('constants', () => {
  assert.deepStrictEqual(boss.BOSS_CREDENTIAL_STATES, ['issued', 'consumed', 'revoked', 'expired'])
  assert.deepStrictEqual(boss.BOSS_CREDENTIAL_AUDIT_OPERATIONS, ['issue', 'consume', 'reconnect', 'deny', 'revoke', 'rotate'])
  assert.strictEqual(boss.AUTHORITY_TRANSITION_OPERATIONS.length, 11)
  assert.deepStrictEqual(boss.AUTHORITY_TRANSITION_STATES, ['prepared', 'committed', 'aborted'])
  assert.deepStrictEqual(boss.AUTHORITY_REQUEST_OPERATIONS, ['prepare', 'commit', 'abort', 'query'])
})

test('store gates return the record itself and the caller\'s own version value', () => {
  const record = arg('store/validateAuthorityTransitionStore/valid')
  const valid = boss.validateAuthorityTransitionStore(record)
  assert.strictEqual(valid.ok, true)
  assert.strictEqual(valid.value, record)
  const version = { family: 'x' }
  const foreign = boss.validateAuthorityEventStore({ ...arg('event/ok'), version })
  assert.strictEqual(foreign.status, 'foreign_version')
  assert.strictEqual(foreign.observedVersion, version)
  const symbol = Symbol('v')
  assert.strictEqual(boss.validateBossCredentialDigestStore({ version: symbol }).observedVersion, symbol)
  assert.strictEqual(boss.validateBossParticipantBindingStore({ version: 10n }).observedVersion, 10n)
  // Present only when the TypeScript gate sets it.
  const missing = boss.validateBossParticipantBindingStore({})
  assert.ok(!Object.hasOwn(missing, 'observedVersion'))
  assert.deepStrictEqual(boss.validateBossParticipantBindingStore({ version: undefined }), missing)
  // Never throws: not even for a value the snapshot cannot take.
  const cyclic = { version: 'boss.authority-event.v1' }
  cyclic.self = cyclic
  const refused = boss.validateAuthorityEventStore(cyclic)
  assert.strictEqual(refused.ok, false)
  assert.strictEqual(refused.status, 'corrupt')
})

test('undefined members read as absent where the TypeScript readers allow it', () => {
  const event = { ...arg('event/subscriber'), bossRunId: undefined }
  assert.strictEqual(boss.parseAuthorityTransitionEvent(event), event)
  const record = { ...arg('transition/prepared'), committedAt: undefined, abortReason: undefined }
  assert.strictEqual(boss.parseAuthorityTransitionRecord(record), record)
  assert.throws(() => boss.parseAuthorityTransitionEvent({ ...arg('event/ok'), state: undefined }), /only for committed/)
  assert.throws(() => boss.parseBossCredentialAuditEvent({ ...arg('audit/rotate'), authorityTransitionId: undefined }), /is required for revocation and rotation/)
  assert.throws(() => boss.authorizeBossCredentialUse(), /^ContractValidationError: \$: must be a plain object$/)
  // The audit event is a fresh object without the undefined member.
  const audit = boss.parseBossCredentialAuditEvent({ ...arg('audit/deny'), authorityTransitionId: undefined })
  assert.ok(!Object.hasOwn(audit, 'authorityTransitionId'))
})

test('the audit event and the decision are fresh objects', () => {
  const event = arg('audit/deny')
  const parsed = boss.parseBossCredentialAuditEvent(event)
  assert.notStrictEqual(parsed, event)
  assert.deepStrictEqual(parsed, event)
  const c = data.cases.find((x) => x.id === 'use/ok')
  const decision = boss.authorizeBossCredentialUse(...c.args)
  assert.deepStrictEqual(decision, { accepted: true, credentialId: 'cred-1', auditEventId: 'audit-1' })
})

test('getters never run and proxies are never entered', () => {
  let reads = 0
  const record = arg('transition/prepared')
  Object.defineProperty(record, 'state', { enumerable: true, get () { reads++; return 'prepared' } })
  assert.throws(() => boss.parseAuthorityTransitionRecord(record), /\$\.state: must be an enumerable data property/)
  const gate = boss.validateAuthorityTransitionStore(record)
  assert.strictEqual(gate.path, '$.state')
  const versioned = {}
  Object.defineProperty(versioned, 'version', { enumerable: true, get () { reads++; return 'boss.authority-event.v1' } })
  assert.strictEqual(boss.validateAuthorityEventStore(versioned).message, '$.version: must be an enumerable data property')
  const trap = new Proxy({}, { get () { reads++ }, ownKeys () { reads++; return [] }, getPrototypeOf () { reads++; return Object.prototype } })
  for (const fn of ['parseBossCredentialDigestRecord', 'parseBossCredentialAuditEvent', 'parseAuthorityTransitionRecord',
    'parseAuthorityTransitionEvent', 'parseAuthorityTransitionRequest']) {
    assert.throws(() => boss[fn](trap), /^ContractValidationError: \$: must be a plain object$/, fn)
  }
  assert.throws(() => boss.authorizeBossCredentialUse(trap, trap, trap), ContractValidationError)
  assert.strictEqual(boss.validateAuthorityEventStore(trap).status, 'corrupt')
  assert.strictEqual(reads, 0)
})

test('ESM names', async () => {
  const esm = await import('@ctliz/agent-intercom-core/boss')
  for (const name of ['BOSS_CREDENTIAL_STATES', 'authorizeBossCredentialUse', 'parseAuthorityTransitionRequest',
    'AUTHORITY_TRANSITION_OPERATIONS', 'validateAuthorityEventStore', 'validateBossParticipantBindingStore']) {
    assert.strictEqual(esm[name], boss[name], name)
  }
})

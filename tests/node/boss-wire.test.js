'use strict'
// @ctliz/agent-intercom-core/boss: the wire, service, participant-state and worker-identity
// functions. core/tests/data/boss_wire_cases.json holds each case's outcome as the TypeScript
// core 0.2.0 gives it; every case runs here through the package, and the JavaScript-only
// properties (the very object returned, fresh objects, error classes, getters never run,
// proxies never entered) are tested below.
const { test } = require('node:test')
const assert = require('node:assert')
const { readFileSync } = require('node:fs')
const { join } = require('node:path')
const boss = require('@ctliz/agent-intercom-core/boss')
const { root, describeVectors, outcomeCase } = require('./helpers.js')

const { ContractValidationError } = require('../../bindings-node/lib/contract.js')
const data = JSON.parse(readFileSync(join(root, 'core', 'tests', 'data', 'boss_wire_cases.json'), 'utf8'))

test('the case file counts its cases', () => {
  assert.strictEqual(data.count, data.cases.length)
})

describeVectors('boss_wire_cases.json', data.cases, { run: outcomeCase(boss) })

test('computed hashes are the published ones', () => {
  assert.strictEqual(boss.BOSS_RUN_FEATURE_SEMANTICS_HASH, '8943eb60d29afa5264322b5cc7df3de245b01b1cf48a8cbf9cfb6188b02fcfa9')
  assert.strictEqual(boss.BOSS_RUN_PROTOCOL_FEATURE_CONTRACT_HASH, 'dae30efe2c48d2de0fe72a7ebdfd107d3feaefc180d42056ba05df6088a94364')
  assert.strictEqual(boss.BOSS_CAPABILITY_FEATURE_DIGEST, '239bee8bb64cc8c149d49ac00c7396f33f375a89a1d6dea6bd86ff840d551a59')
  assert.strictEqual(boss.brokerFeatureSetHash([]), '0423394d55ed9769cfd7d71a0177a094d6a3962175885ec84a1ce5d77938ba70')
  const canonical = require('@ctliz/agent-intercom-core/canonical')
  assert.strictEqual(canonical.canonicalHash('agent-intercom-core/boss-run-v1/feature-semantics', boss.BOSS_RUN_FEATURE_SEMANTICS_CORPUS), boss.BOSS_RUN_FEATURE_SEMANTICS_HASH)
  assert.strictEqual(canonical.canonicalHash('agent-intercom-core/boss-run-v1/protocol-feature-contract', boss.BOSS_RUN_FEATURE_CONTRACT), boss.BOSS_RUN_PROTOCOL_FEATURE_CONTRACT_HASH)
})

test('constants', () => {
  assert.strictEqual(boss.INTERCOM_BASE_PROTOCOL_VERSION, 4)
  assert.strictEqual(boss.BOSS_RUN_FEATURE, 'boss-run-v1')
  assert.strictEqual(boss.BOSS_COMMUNICATION_PROFILES, boss.BOSS_PARTICIPANT_ROLES)
  assert.deepStrictEqual(boss.BOSS_PARTICIPANT_ROLES, ['boss', 'manager', 'adversary', 'scout', 'worker', 'council'])
  assert.strictEqual(boss.BOSS_CONTROL_TYPES.length, 19)
  assert.strictEqual(boss.PARTICIPANT_STATES.length, 12)
  assert.deepStrictEqual(boss.TERMINAL_PARTICIPANT_STATES, ['failed', 'lost', 'stopped'])
  assert.deepStrictEqual(boss.BOSS_RUN_FEATURE_CONTRACT, {
    feature: 'boss-run-v1', version: 1, baseProtocolVersion: 4, semanticsHash: boss.BOSS_RUN_FEATURE_SEMANTICS_HASH, controlEnvelopeVersion: 1,
  })
  assert.strictEqual(Object.keys(boss.BOSS_RUN_FEATURE_SEMANTICS_CORPUS).length, 28)
  assert.strictEqual(boss.BROKER_PROTECTED_PROVIDER_ROOT, '/usr/lib/agent-intercom/providers/')
  assert.strictEqual(boss.WORKER_IDENTITY_VERSION, 'orc.worker-identity.v2')
  for (const name of ['BROKER_FEATURE_ATTESTATION_VERSION', 'BROKER_PEER_EXPECTATION_VERSION', 'BOSS_PARTICIPANT_BINDING_VERSION',
    'BOSS_PARTICIPANT_CREDENTIAL_VERSION', 'AUTHORITY_EVENT_VERSION', 'AUTHORITY_REQUEST_VERSION', 'AUTHORITY_TRANSITION_VERSION',
    'BOSS_RUN_AUTHORITY_IDENTITY_VERSION', 'BROKER_IDENTITY_RECORD_VERSION', 'BROKER_PROVIDER_ATTESTATION_VERSION']) {
    assert.strictEqual(typeof boss[name], 'string', name)
  }
})

test('the contract parser returns the caller\'s object, the service parsers fresh ones', () => {
  const contract = { ...boss.BOSS_RUN_FEATURE_CONTRACT }
  assert.strictEqual(boss.parseBossRunFeatureContract(contract), contract)
  const feature = { version: 'intercom.broker-feature.v1', feature: 'x', featureVersion: 1, semanticsHash: 'a'.repeat(64), optional: true }
  const parsed = boss.parseBrokerFeatureAttestation(feature)
  assert.notStrictEqual(parsed, feature)
  assert.deepStrictEqual(parsed, feature)
  const identity = { version: 'orc.worker-identity.v2', workerId: 'w', workerIncarnationId: 'i', workerGeneration: 1 }
  assert.notStrictEqual(boss.parseWorkerIdentityV2(identity), identity)
})

test('BrokerCapabilityAdvertisementError is a ContractValidationError with a code', () => {
  const error = assert.throws(() => boss.parseBrokerCapabilityAdvertisement({ baseProtocolVersion: 4, features: [{ feature: 'x' }] }), (e) => {
    assert.ok(e instanceof boss.BrokerCapabilityAdvertisementError)
    assert.ok(e instanceof ContractValidationError)
    assert.strictEqual(e.name, 'BrokerCapabilityAdvertisementError')
    assert.strictEqual(e.code, 'UNKNOWN_FEATURE')
    assert.strictEqual(e.path, '$.features[0].feature')
    return true
  })
  void error
  const made = new boss.BrokerCapabilityAdvertisementError('$.p', 'detail', 'DUPLICATE_FEATURE')
  assert.strictEqual(made.message, '$.p: detail')
  assert.strictEqual(made.code, 'DUPLICATE_FEATURE')
})

test('getters never run and proxies are never entered', () => {
  let reads = 0
  const contract = { ...boss.BOSS_RUN_FEATURE_CONTRACT }
  Object.defineProperty(contract, 'feature', { enumerable: true, get () { reads++; return 'boss-run-v1' } })
  assert.throws(() => boss.parseBossRunFeatureContract(contract), /\$\.feature: must be an enumerable data property/)
  const trap = new Proxy({}, { get () { reads++ }, ownKeys () { reads++; return [] }, getPrototypeOf () { reads++; return Object.prototype } })
  assert.throws(() => boss.parseBossControlEnvelope(trap), ContractValidationError)
  assert.throws(() => boss.workerIdentityFromEnvironment(trap), /\$: must be an environment object/)
  assert.deepStrictEqual(boss.evaluateBrokerCompatibility(trap, trap, trap), { compatible: false, code: 'INVALID_COMPATIBILITY_REQUEST' })
  assert.strictEqual(boss.isTerminalParticipantState(trap), false)
  const env = { AGENT_INTERCOM_WORKER_ID: 'w', AGENT_INTERCOM_WORKER_INCARNATION_ID: 'i', AGENT_INTERCOM_WORKER_GENERATION: '1' }
  Object.defineProperty(env, 'HOME', { enumerable: true, get () { reads++; return '/' } })
  assert.strictEqual(boss.workerIdentityFromEnvironment(env).workerId, 'w')
  assert.strictEqual(reads, 0)
})

test('control envelope payloads are canonical data', () => {
  const envelope = (payload) => ({ type: 'boss.worker.health', version: 1, messageId: 'm', bossRunId: 'r', participantId: 'p', bindingEpoch: 1, idempotencyKey: 'k', payload })
  const good = envelope({ list: [1, 'two', null, false], nested: { 'é': 'x' } })
  assert.strictEqual(boss.parseBossControlEnvelope(good), good)
  assert.throws(() => boss.parseBossControlEnvelope(envelope([1, , 3])), /^ContractValidationError: \$\[1\]: sparse array holes are not supported$/) // eslint-disable-line no-sparse-arrays
  assert.throws(() => boss.parseBossControlEnvelope(envelope({ a: undefined })), /\$\.a: undefined is not a canonical value/)
  assert.throws(() => boss.parseBossControlEnvelope(envelope(new Date(0))), /\$: value must be a JSON primitive, array, or plain object/)
  assert.throws(() => boss.parseBossControlEnvelope(envelope('\ud800')), /\$: string contains an unpaired high surrogate/)
  assert.throws(() => boss.parseBossControlEnvelope(envelope({ [Symbol('s')]: 1 })), /\$: symbol properties are not supported/)
})

test('feature sets sort by UTF-16 code units, not by code points', () => {
  const f = (feature) => ({ version: 'intercom.broker-feature.v1', feature, featureVersion: 1, semanticsHash: 'a'.repeat(64), optional: true })
  const a = boss.brokerFeatureSetHash([f('\u{10000}'), f('\uffff')])
  assert.strictEqual(a, boss.brokerFeatureSetHash([f('\uffff'), f('\u{10000}')]))
  const canonical = require('@ctliz/agent-intercom-core/canonical')
  const utf16 = [f('\u{10000}'), f('\uffff')] // '\ud800' < '\uffff'
  assert.strictEqual(a, canonical.canonicalHash('agent-intercom-core/broker-feature-set/v1', utf16))
})

test('worker identity from process.env-like objects', () => {
  const env = { PATH: '/bin', AGENT_INTERCOM_WORKER_ID: 'w', AGENT_INTERCOM_RUN_ID: 'legacy', AGENT_INTERCOM_WORKER_GENERATION: '7' }
  assert.deepStrictEqual(boss.workerIdentityFromEnvironment(env), { version: 'orc.worker-identity.v2', workerId: 'w', workerIncarnationId: 'legacy', workerGeneration: 7 })
  assert.throws(() => boss.workerIdentityFromEnvironment({ ...env, AGENT_INTERCOM_BINDING_X: '1' }), /\$\.AGENT_INTERCOM_BINDING_X: is not a supported Boss authority environment field/)
  assert.throws(() => boss.workerIdentityFromEnvironment('x'), /\$: must be an environment object/)
  const event = boss.parseWorkerEventIdentityV2({ workerId: 'w', workerIncarnationId: 'i', workerGeneration: 1 })
  assert.deepStrictEqual(event, { workerId: 'w', workerIncarnationId: 'i', workerGeneration: 1 })
})

test('the environment may be process.env, whose prototype is not Object.prototype', () => {
  const saved = { ...process.env }
  try {
    process.env.AGENT_INTERCOM_WORKER_ID = 'worker-env'
    process.env.AGENT_INTERCOM_WORKER_INCARNATION_ID = 'inc-env'
    process.env.AGENT_INTERCOM_WORKER_GENERATION = '5'
    process.env.AGENT_INTERCOM_SUPERVISOR_ID = 'unrelated'
    assert.notStrictEqual(Object.getPrototypeOf(process.env), Object.prototype)
    assert.deepStrictEqual(boss.workerIdentityFromEnvironment(process.env), {
      version: 'orc.worker-identity.v2', workerId: 'worker-env', workerIncarnationId: 'inc-env', workerGeneration: 5,
    })
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key]
  }
  class Env { constructor () { this.AGENT_INTERCOM_WORKER_ID = 'w'; this.AGENT_INTERCOM_RUN_ID = 'r'; this.AGENT_INTERCOM_WORKER_GENERATION = '1' } }
  assert.strictEqual(boss.workerIdentityFromEnvironment(new Env()).workerIncarnationId, 'r')
})

test('participant states', () => {
  assert.strictEqual(boss.parseParticipantState('paused'), 'paused')
  assert.throws(() => boss.parseParticipantState('x', '$.p'), /^ContractValidationError: \$\.p: must be one of: provisioning,/)
  for (const s of boss.PARTICIPANT_STATES) assert.strictEqual(boss.isTerminalParticipantState(s), boss.TERMINAL_PARTICIPANT_STATES.includes(s))
})

test('a Boss request with a forged identity signature is refused; KeyObjects come back as given', () => {
  const c = data.cases.find((x) => x.id === 'eval/boss-signature-shape')
  const [request, advertisement, identity] = c.args
  const decision = boss.evaluateBrokerCompatibility(request, advertisement, { ...identity, signature: 'A'.repeat(86) + '==' })
  assert.deepStrictEqual(decision, { compatible: false, code: 'IDENTITY_SIGNATURE_INVALID' })
  const { generateKeyPairSync } = require('node:crypto')
  const { publicKey } = generateKeyPairSync('ed25519')
  const withKeyObject = { ...request, identityVerification: { ...request.identityVerification, trustedIdentityKeys: { ik: publicKey } } }
  assert.deepStrictEqual(boss.evaluateBrokerCompatibility(withKeyObject, advertisement, { ...identity, signature: 'A'.repeat(86) + '==' }), decision)
  const parsed = boss.parseBrokerCompatibilityRequest(withKeyObject)
  assert.strictEqual(parsed.identityVerification.trustedIdentityKeys.ik, publicKey)
  assert.deepStrictEqual(parsed, withKeyObject)
})

test('ESM names', async () => {
  const esm = await import('@ctliz/agent-intercom-core/boss')
  for (const name of ['BOSS_RUN_FEATURE_CONTRACT', 'parseBossControlEnvelope', 'evaluateBrokerCompatibility', 'BrokerCapabilityAdvertisementError']) {
    assert.strictEqual(esm[name], boss[name], name)
  }
})

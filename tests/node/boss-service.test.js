'use strict'
// The broker and restricted-client part of @ctliz/agent-intercom-core/boss (boss-service.ts).
// core/tests/data/boss_service_cases.json holds each case's outcome as the TypeScript core 0.2.0
// gives it (real Ed25519 signatures, keys as PEM text); every case runs here through the package,
// then again with its trust stores' public keys as node:crypto KeyObjects, which must change
// nothing. The JavaScript-only properties (Uint8Array signing bytes, KeyObjects handed back, getters
// never run, proxies never entered, the caller's own observedVersion) are tested below.
const { test } = require('node:test')
const assert = require('node:assert')
const { readFileSync } = require('node:fs')
const { join } = require('node:path')
const { createPublicKey, generateKeyPairSync, sign } = require('node:crypto')
const boss = require('@ctliz/agent-intercom-core/boss')
const { root, describeVectors } = require('./helpers.js')

const { ContractValidationError } = require('../../bindings-node/lib/contract.js')
const data = JSON.parse(readFileSync(join(root, 'core', 'tests', 'data', 'boss_service_cases.json'), 'utf8'))

const isRef = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && typeof v.$ref === 'string'
function resolve (v) {
  if (isRef(v)) return resolve(data.bases[v.$ref])
  if (Array.isArray(v)) return v.map(resolve)
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]))
  return v
}

const STORES = ['trustedIdentityKeys', 'trustedProviderKeys']
/** A copy whose trust stores hold KeyObjects for their PEM public keys; `changed` counts them. */
function withKeyObjects (v, changed) {
  if (Array.isArray(v)) return v.map((x) => withKeyObjects(x, changed))
  if (v === null || typeof v !== 'object') return v
  return Object.fromEntries(Object.entries(v).map(([k, x]) => {
    if (STORES.includes(k) && x !== null && typeof x === 'object' && !Array.isArray(x)) {
      return [k, Object.fromEntries(Object.entries(x).map(([id, key]) => {
        if (typeof key !== 'string' || !key.startsWith('-----BEGIN PUBLIC KEY-----')) return [id, key]
        let object
        try { object = createPublicKey(key) } catch { return [id, key] }
        changed.push(key)
        return [id, object]
      }))]
    }
    return [k, withKeyObjects(x, changed)]
  }))
}

function check (c, args, expect) {
  const fn = boss[c.op.slice('boss.'.length)]
  assert.strictEqual(typeof fn, 'function', c.op)
  let result
  let error
  try { result = fn(...args) } catch (e) { error = e }
  if (expect.kind === 'error') {
    assert.ok(error, `${c.id}: expected ${expect.message}`)
    assert.strictEqual(error.name, expect.class)
    assert.strictEqual(error.message, expect.message)
    assert.strictEqual(error.path, expect.path)
    // A canonical refusal also carries this package's stable code, which the TypeScript class lacks.
    if (expect.code !== undefined) assert.strictEqual(error.code, expect.code)
    assert.ok(error instanceof ContractValidationError)
    return result
  }
  if (error) throw error
  if (expect.kind === 'bytes') {
    assert.ok(result instanceof Uint8Array)
    assert.strictEqual(new TextDecoder().decode(result), expect.text)
  } else if (expect.kind === 'undefined') {
    assert.strictEqual(result, undefined)
  } else {
    assert.deepStrictEqual(result, expect.value)
    assert.strictEqual(JSON.stringify(result), JSON.stringify(expect.value), 'member order')
  }
  return result
}

test('the case file counts its cases', () => {
  assert.strictEqual(data.count, data.cases.length)
})

describeVectors('boss_service_cases.json', data.cases, {
  run (c) {
    const missing = (c.requires || []).filter((op) => typeof boss[op.slice('boss.'.length)] !== 'function')
    if (missing.length > 0) return `needs ${missing.join(', ')} (another ./boss module)`
    const args = resolve(c.args)
    const expect = resolve(c.expect)
    check(c, args, expect)
    const changed = []
    const keyed = withKeyObjects(args, changed)
    if (changed.length === 0) return
    // The same answer with KeyObjects, except where a request is handed back: it holds them.
    if (c.op === 'boss.parseBrokerCompatibilityRequest' && expect.kind === 'value') {
      const got = boss.parseBrokerCompatibilityRequest(keyed[0])
      assert.deepStrictEqual(got, keyed[0])
      for (const field of STORES) {
        for (const [id, key] of Object.entries(keyed[0].identityVerification[field])) {
          assert.strictEqual(got.identityVerification[field][id], key, 'the caller\'s own KeyObject')
        }
      }
      return
    }
    check(c, keyed, expect)
  },
})

// A signed provider attestation and broker identity, with KeyObjects throughout.
const identityKeys = generateKeyPairSync('ed25519')
const providerKeys = generateKeyPairSync('ed25519')
const feature = {
  version: boss.BROKER_FEATURE_ATTESTATION_VERSION,
  feature: boss.BOSS_RUN_FEATURE,
  featureVersion: boss.BOSS_RUN_FEATURE_VERSION,
  semanticsHash: boss.BOSS_RUN_FEATURE_SEMANTICS_HASH,
  controlEnvelopeVersion: boss.BOSS_CONTROL_ENVELOPE_VERSION,
  capabilityDigest: boss.BOSS_CAPABILITY_FEATURE_DIGEST,
}
function signed (value, bytes, key) {
  const unsigned = { ...value, signature: '' }
  return { ...unsigned, signature: sign(null, bytes(unsigned), key).toString('base64') }
}
const provider = signed({
  version: boss.BROKER_PROVIDER_ATTESTATION_VERSION,
  providerPackage: 'p',
  providerVersion: '1',
  providerDigest: 'a'.repeat(64),
  artifactPath: `${boss.BROKER_PROTECTED_PROVIDER_ROOT}p`,
  artifactOwnerUid: 0,
  artifactOwnerGid: 0,
  artifactMode: '0755',
  userWritable: false,
  attestedAt: '2026-07-28T12:00:00.000Z',
  attestationKeyId: 'pk',
}, boss.brokerProviderAttestationSigningBytes, providerKeys.privateKey)
const identity = signed({
  version: boss.BROKER_IDENTITY_RECORD_VERSION,
  owningProviderPackage: 'p',
  providerDigest: 'a'.repeat(64),
  providerVersion: '1',
  baseProtocolVersion: boss.INTERCOM_BASE_PROTOCOL_VERSION,
  features: [feature],
  protocolFeatureContractHash: boss.BOSS_RUN_PROTOCOL_FEATURE_CONTRACT_HASH,
  featureSetHash: boss.brokerFeatureSetHash([feature]),
  controlEnvelopeVersion: boss.BOSS_CONTROL_ENVELOPE_VERSION,
  capabilityDigest: boss.BOSS_CAPABILITY_FEATURE_DIGEST,
  protectedServiceUid: 991,
  ownerUid: 1000,
  bootInstance: 'b',
  processId: 7,
  brokerGeneration: 1,
  publicEndpoint: '/run/agent-intercom/1000/public.sock',
  authorityEndpoint: '/run/agent-intercom/1000/authority.sock',
  identityKeyId: 'ik',
}, boss.brokerIdentitySigningBytes, identityKeys.privateKey)
const context = {
  expectedProviderPackage: 'p',
  expectedProviderVersion: '1',
  expectedProviderDigest: 'a'.repeat(64),
  expectedProviderArtifactRoot: boss.BROKER_PROTECTED_PROVIDER_ROOT,
  expectedProviderArtifactOwnerUid: 0,
  expectedProviderArtifactOwnerGid: 0,
  expectedProviderArtifactMode: '0755',
  expectedOwnerUid: 1000,
  expectedBrokerServiceUid: 991,
  expectedBootInstance: 'b',
  minimumBrokerGeneration: 1,
  expectedPublicEndpoint: identity.publicEndpoint,
  expectedAuthorityEndpoint: identity.authorityEndpoint,
  trustedIdentityKeys: { ik: identityKeys.publicKey },
  trustedProviderKeys: { pk: providerKeys.publicKey },
  providerAttestation: provider,
}

test('identities verify with KeyObjects; a private or other KeyObject is no trusted key', () => {
  assert.deepStrictEqual(boss.verifyProtectedBrokerIdentity(identity, context), { accepted: true })
  const other = generateKeyPairSync('ed25519').publicKey
  assert.deepStrictEqual(
    boss.verifyProtectedBrokerIdentity(identity, { ...context, trustedIdentityKeys: { ik: other } }),
    { accepted: false, code: 'IDENTITY_SIGNATURE_INVALID' },
  )
  for (const key of [identityKeys.privateKey, Object.create(Object.getPrototypeOf(identityKeys.publicKey))]) {
    assert.deepStrictEqual(
      boss.verifyProtectedBrokerIdentity(identity, { ...context, trustedIdentityKeys: { ik: key } }),
      { accepted: false, code: 'IDENTITY_KEY_UNKNOWN' },
    )
  }
  assert.deepStrictEqual(
    boss.verifyProtectedBrokerIdentity(identity, { ...context, trustedProviderKeys: { pk: providerKeys.privateKey } }),
    { accepted: false, code: 'PROVIDER_KEY_UNKNOWN' },
  )
})

test('no getter of a record, context or trust store runs; proxies are never entered', () => {
  let calls = 0
  const getter = (value) => ({ enumerable: true, get () { calls++; return value } })
  const accessorStore = Object.defineProperty({}, 'ik', getter(identityKeys.publicKey))
  assert.deepStrictEqual(
    boss.verifyProtectedBrokerIdentity(identity, { ...context, trustedIdentityKeys: accessorStore }),
    { accepted: false, code: 'IDENTITY_KEY_UNKNOWN' },
  )
  const accessorIdentity = Object.defineProperty({ ...identity }, 'signature', getter(identity.signature))
  assert.deepStrictEqual(boss.verifyProtectedBrokerIdentity(accessorIdentity, context), { accepted: false, code: 'IDENTITY_RECORD_INVALID' })
  assert.strictEqual(calls, 0)
  const trap = () => { throw new Error('a proxy was entered') }
  const proxy = new Proxy({}, { get: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap })
  assert.deepStrictEqual(boss.verifyProtectedBrokerIdentity(proxy, context), { accepted: false, code: 'IDENTITY_RECORD_INVALID' })
  assert.deepStrictEqual(
    boss.verifyProtectedBrokerIdentity(identity, { ...context, trustedIdentityKeys: proxy }),
    { accepted: false, code: 'IDENTITY_KEY_UNKNOWN' },
  )
  assert.throws(() => boss.authorizeBossRestrictedClientRequest({}, proxy), ContractValidationError)
})

test('signing bytes are a Uint8Array of the canonical frame', () => {
  const bytes = boss.brokerIdentitySigningBytes(identity)
  assert.ok(bytes instanceof Uint8Array)
  assert.ok(new TextDecoder().decode(bytes).startsWith(`agent-intercom-canonical-frame-v1:${boss.BROKER_IDENTITY_SIGNATURE_DOMAIN.length}:`))
  assert.throws(() => boss.brokerProviderAttestationSigningBytes([]), /must be a plain object/)
})

test('store validators give the caller\'s own version value back', () => {
  const version = { not: 'a string' }
  const result = boss.validateBrokerJournalRecoveryStore({ version })
  assert.strictEqual(result.ok, false)
  assert.strictEqual(result.status, 'foreign_version')
  assert.strictEqual(result.observedVersion, version)
  assert.deepStrictEqual(boss.validateBrokerIdentityStore(identity), { ok: true, status: 'valid', value: identity })
})

test('the restricted constants are the TypeScript lists', () => {
  assert.strictEqual(boss.BOSS_MANAGER_OPERATIONS.length, 12)
  assert.strictEqual(boss.BOSS_PARTICIPANT_OPERATIONS.length, 6)
  assert.strictEqual(boss.BOSS_REVIEWER_OPERATIONS.length, 5)
  assert.strictEqual(boss.BOSS_RESTRICTED_AUTHORIZATION_DENIAL_CODES.length, 12)
  assert.deepStrictEqual(boss.RESTRICTED_RESULT_STATUSES, ['ok', 'rejected', 'feature_not_enabled', 'conflict', 'unauthorized'])
})

'use strict'
// Runs vectors/transport-envelope-v1.json through @ctliz/agent-intercom-core/transport (one
// sub-test per case, counted; AIC_VECTOR=<id substring> selects): each case's envelopes in order
// through verifyEnvelopeSequence (one fresh nonce set per case), the known-answer signatures
// through signEnvelope and the signing inputs through envelopeSigningInput. The valid envelopes'
// signatures are also checked with node:crypto alone (Ed25519, and HMAC-SHA256 under the
// HKDF-SHA256 key of docs/envelope.md), from the signing input as the documentation builds it.
const test = require('node:test')
const assert = require('node:assert')
const crypto = require('node:crypto')
const transport = require('@ctliz/agent-intercom-core/transport')
const { IntercomError } = require('@ctliz/agent-intercom-core')
const { readVectors, describeVectors } = require('./helpers.js')

const FILE = 'transport-envelope-v1.json'
const doc = readVectors(FILE)
const { keyring, signers } = doc

const padded = (text, size) => (size === undefined ? text : text + ' '.repeat(size - Buffer.byteLength(text)))

describeVectors(FILE, doc.cases, {
  run (c) {
    const envelopes = c.envelopes.map((e) => padded(e, c.pad_to_bytes))
    const now = c.now_ms ?? doc.now_ms
    const outcomes = transport.verifyEnvelopeSequence(envelopes, keyring, { now, skewMs: doc.skew_ms })
    assert.deepStrictEqual(outcomes.map((o) => (o.ok ? 'OK' : o.code)), c.expected)
    if (c.sign) assert.strictEqual(transport.signEnvelope(c.sign.fields, signers[c.sign.signer]), envelopes[0])
    if (c.signing_input_sha256) {
      assert.strictEqual(transport.envelopeSigningInput(envelopes[0]).sha256, c.signing_input_sha256)
      independently(envelopes[0])
    }
  },
  done (counts) {
    assert.strictEqual(counts.executed, doc.count)
  },
})

/** JSON with sorted keys, no whitespace (the vectors' keys are ASCII, so UTF-16 order is code
 * point order). */
function canonical (value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`
  }
  return JSON.stringify(value)
}

/** The signature of `text`, verified with node:crypto from the documented construction. */
function independently (text) {
  const envelope = JSON.parse(text)
  const { kind, key_id: keyId, value } = envelope.signature
  const json = canonical({ ...envelope, signature: { kind, key_id: keyId } })
  const domain = transport.ENVELOPE_SIGNING_DOMAIN
  const frame = Buffer.from(`agent-intercom-canonical-frame-v1:${domain.length}:${domain}:${Buffer.byteLength(json)}:${json}`)
  assert.strictEqual(transport.envelopeSigningInput(text).text, frame.toString())
  const signature = Buffer.from(value, 'base64')
  if (kind === 'ed25519') {
    const key = crypto.createPublicKey(keyring.ed25519[keyId])
    assert.ok(crypto.verify(null, frame, key, signature), 'node:crypto verifies the Ed25519 signature')
  } else {
    const secret = Buffer.from(keyring['hmac-sha256'][keyId], 'base64')
    const key = Buffer.from(crypto.hkdfSync('sha256', secret, transport.ENVELOPE_HKDF_SALT, transport.ENVELOPE_HKDF_INFO_PREFIX + keyId, 32))
    assert.deepStrictEqual(crypto.createHmac('sha256', key).update(frame).digest(), signature)
    // Never the raw secret.
    assert.notDeepStrictEqual(crypto.createHmac('sha256', secret).update(frame).digest(), signature)
  }
}

const valid = doc.cases.find((c) => c.id === 'ed25519/valid')

test('verifyEnvelope answers what verified; refusals are IntercomErrors with the stable code', () => {
  const text = valid.envelopes[0]
  const verified = transport.verifyEnvelope(text, keyring, { now: doc.now_ms })
  assert.strictEqual(verified.kind, 'ed25519')
  assert.strictEqual(verified.key_id, 'ed-1')
  assert.strictEqual(verified.sender, verified.envelope.sender.agent_id)
  assert.strictEqual(verified.content_type, 'a2a_message')
  assert.deepStrictEqual(verified.envelope, JSON.parse(text))
  const codeOf = (f) => { try { f(); return 'OK' } catch (e) { assert.ok(e instanceof IntercomError, e); return e.code } }
  // The default clock is the real one: the vectors' envelopes are long expired by it.
  assert.strictEqual(codeOf(() => transport.verifyEnvelope(text, keyring)), 'SIGNATURE_EXPIRED')
  assert.strictEqual(codeOf(() => transport.verifyEnvelope(text, {}, { now: doc.now_ms })), 'UNKNOWN_SIGNING_KEY')
  assert.strictEqual(codeOf(() => transport.verifyEnvelope(text, keyring, { now: doc.now_ms, skew: 1 })), 'UNKNOWN_KEY')
  assert.strictEqual(codeOf(() => transport.verifyEnvelope(text, keyring, { now: 1.5 })), 'INVALID_ARGUMENT')
  assert.strictEqual(codeOf(() => transport.verifyEnvelope(text, keyring, { now: doc.now_ms, skewMs: transport.MAX_ENVELOPE_SKEW_MS + 1 })), 'INVALID_ARGUMENT')
  assert.strictEqual(codeOf(() => transport.verifyEnvelope(text, { rsa: {} }, { now: doc.now_ms })), 'UNKNOWN_KEY')
  assert.strictEqual(codeOf(() => transport.verifyEnvelope(Buffer.from(text), keyring, { now: doc.now_ms })), 'INVALID_ARGUMENT')
  assert.strictEqual(codeOf(() => transport.verifyEnvelope('{"format_version":1}', keyring, { now: doc.now_ms })), 'ENVELOPE_MALFORMED')
  assert.throws(() => transport.verifyEnvelope('{"format_version":1,"x":1}', keyring, { now: doc.now_ms }), { code: 'ENVELOPE_MALFORMED', message: '$.x: unknown member' })
})

test('signEnvelope signs fields given as an object, and what it signs verifies', () => {
  const fields = { ...JSON.parse(valid.envelopes[0]), nonce: 'nonce-node-test-00001' }
  delete fields.signature
  for (const key of Object.values(signers)) {
    const text = transport.signEnvelope(fields, key)
    const [outcome] = transport.verifyEnvelopeSequence([text, text], keyring, { now: doc.now_ms }).slice(1)
    assert.deepStrictEqual(outcome.code, 'REPLAYED')
    assert.strictEqual(transport.verifyEnvelope(text, keyring, { now: doc.now_ms }).key_id, key.key_id)
  }
  // A key pair made by node:crypto signs too (PKCS#8 PEM in, SPKI PEM enrolled).
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519')
  const key = { kind: 'ed25519', key_id: 'node-key', private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) }
  const text = transport.signEnvelope(fields, key)
  const ring = { ed25519: { 'node-key': publicKey.export({ type: 'spki', format: 'pem' }) } }
  assert.strictEqual(transport.verifyEnvelope(text, ring, { now: doc.now_ms }).key_id, 'node-key')
  const der = { ed25519: { 'node-key': publicKey.export({ type: 'spki', format: 'der' }).toString('base64') } }
  assert.strictEqual(transport.verifyEnvelope(text, der, { now: doc.now_ms }).kind, 'ed25519')
  assert.throws(() => transport.signEnvelope({ ...fields, expires_at: fields.sent_at }, key), { code: 'ENVELOPE_MALFORMED' })
  assert.throws(() => transport.signEnvelope(fields, { ...key, extra: 1 }), { code: 'UNKNOWN_KEY' })
  assert.throws(() => transport.signEnvelope(fields, { kind: 'hmac-sha256', key_id: 'k', secret: 'c2hvcnQ=' }), { code: 'INVALID_ARGUMENT' })
  assert.throws(() => transport.signEnvelope([fields], key), { code: 'INVALID_ARGUMENT' })
})

test('the constants are the core\'s', () => {
  assert.strictEqual(transport.MAX_ENVELOPE_BYTES, 2 * 1024 * 1024)
  assert.strictEqual(transport.TRANSPORT_ENVELOPE_FORMAT_VERSION, 1)
  assert.deepStrictEqual([...transport.ENVELOPE_CONTENT_TYPES], ['handoff_bundle', 'context_package', 'a2a_message', 'a2a_task'])
  assert.deepStrictEqual([...transport.ENVELOPE_SIGNATURE_KINDS], ['ed25519', 'hmac-sha256'])
  assert.ok(Object.isFrozen(transport.ENVELOPE_CONTENT_TYPES))
})

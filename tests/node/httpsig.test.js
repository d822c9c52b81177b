'use strict'
// Runs vectors/http-signatures-v1.json through the package's one path into the core,
// lib/contract.js `call(op, args)`, with the httpsig.* operations (one sub-test per case,
// counted; AIC_VECTOR=<id substring> selects): RFC 9421 B.2.6 byte for byte, the RFC 9530
// digests, signature bases, and the A2A request and response profiles. No public subpath: the
// service signs and verifies in Rust; this suite proves the same rules answer from Node.
const test = require('node:test')
const assert = require('node:assert')
const { createHash } = require('node:crypto')
const { call } = require('../../bindings-node/lib/contract.js')
const { readVectors, describeVectors } = require('./helpers.js')

const FILE = 'http-signatures-v1.json'
const doc = readVectors(FILE)
const { keys } = doc

function withHeaders (message, lines) {
  return { ...message, headers: [...message.headers, ...lines] }
}

function ring (names) {
  return Object.fromEntries(Object.entries(names).map(([id, name]) => [id, keys[name].publicKey]))
}

function matches (answer, expected, what) {
  for (const [key, want] of Object.entries(expected)) {
    assert.deepStrictEqual(answer[key], want, `${what}: ${key} of ${JSON.stringify(answer)}`)
  }
}

function signedLines (answer) {
  return [
    ['Content-Digest', answer.contentDigest],
    ['Signature-Input', answer.signatureInput],
    ['Signature', answer.signature],
  ]
}

const kinds = {
  'rfc-signature' (c) {
    const withInput = withHeaders(c.message, [['Signature-Input', c.signatureInput]])
    const { ok, base } = call('httpsig.signatureBase', [withInput, c.label])
    assert.strictEqual(ok, true)
    assert.strictEqual(base, c.expected.base)
    assert.strictEqual(Buffer.byteLength(base), c.expected.baseLength)
    assert.strictEqual(createHash('sha256').update(base).digest('hex'), c.expected.baseSha256)
    const key = keys[c.key]
    const made = call('httpsig.sign', [c.message, c.signatureInput, c.label, key.privateKey])
    matches(made, { ok: true, signatureInput: c.signatureInput, signature: c.signature }, 'sign')
    const both = withHeaders(withInput, [['Signature', c.signature]])
    matches(call('httpsig.verify', [both, c.label, key.publicKey]), { ok: true }, 'verify')
  },
  'content-digest' (c) {
    const value = call('httpsig.contentDigest', [c.algorithm, c.body])
    assert.strictEqual(value, c.expected)
    matches(call('httpsig.checkContentDigest', [value, c.body]), { ok: true }, 'check')
  },
  'check-content-digest' (c) {
    matches(call('httpsig.checkContentDigest', [c.field, c.body]), c.expected, 'check')
  },
  'signature-base' (c) {
    const message = withHeaders(c.message, [['Signature-Input', c.signatureInput]])
    matches(call('httpsig.signatureBase', [message, c.label]), c.expected, 'base')
  },
  'sign-request' (c) {
    const answer = call('httpsig.signRequest', [c.profile, c.request, c.body, keys[c.signer.key].privateKey, c.signer])
    matches(answer, c.expected, 'sign')
    const request = withHeaders(c.request, signedLines(answer))
    const verified = call('httpsig.verifyRequest', [c.profile, request, c.body, c.verify.nowMs, ring(c.verify.keyring)])
    matches(verified, c.verify.expected, 'verify')
  },
  'verify-request' (c) {
    const answer = call('httpsig.verifyRequest', [c.profile, c.request, c.body, c.nowMs, ring(c.keyring)])
    matches(answer, c.expected, 'verify')
  },
  'sign-response' (c) {
    const answer = call('httpsig.signResponse', [c.profile, c.response, c.request, c.body, keys[c.signer.key].privateKey, c.signer])
    matches(answer, c.expected, 'sign')
    const response = withHeaders(c.response, signedLines(answer))
    const verified = call('httpsig.verifyResponse', [c.profile, response, c.request, c.body, c.verify.nowMs, ring(c.verify.keyring)])
    matches(verified, c.verify.expected, 'verify')
  },
  'verify-response' (c) {
    const answer = call('httpsig.verifyResponse', [c.profile, c.response, c.request, c.body, c.nowMs, ring(c.keyring)])
    matches(answer, c.expected, 'verify')
  },
}

describeVectors(FILE, doc.cases, {
  run (c) {
    const run = kinds[c.kind]
    assert.ok(run, `unknown kind ${c.kind}`)
    run(c)
  },
  done (counts) {
    assert.strictEqual(counts.total, doc.count)
    assert.strictEqual(counts.executed, doc.count)
    assert.ok(counts.executed >= 120)
  },
})

test('the profile constants answer from the core', () => {
  const profile = call('httpsig.profile', ['a2a-request'])
  assert.strictEqual(profile.extensionUri, 'https://github.com/ctliz/agent-intercom/ext/rfc9421-ed25519/v1')
  assert.strictEqual(profile.tag, 'agent-intercom-a2a@1')
  assert.deepStrictEqual(profile.components, ['"@method"', '"@target-uri"', '"content-type"', '"content-digest"'])
  assert.deepStrictEqual(profile.requiredParams, ['created', 'expires', 'nonce', 'keyid', 'alg', 'tag'])
  const response = call('httpsig.profile', ['a2a-response'])
  assert.ok(response.components.includes('"signature";req;key="a2a"'))
})

test('arguments of the wrong shape throw; hostile values are refused with codes', () => {
  assert.throws(() => call('httpsig.verifyRequest', ['nope']), /profile/)
  assert.throws(() => call('httpsig.verifyRequest', ['a2a-request', { method: 'POST' }, '', 0, {}]), /targetUri/)
  const request = { method: 'POST', targetUri: 'https://h/a2a', headers: [['Signature-Input', 'a2a=('], ['Signature', 'a2a=:AA==:']] }
  assert.deepStrictEqual(call('httpsig.verifyRequest', ['a2a-request', request, '', 0, {}]).code, 'SIGNATURE_MALFORMED')
  const huge = { ...request, headers: [['Signature-Input', 'a'.repeat(1 << 20)], ['Signature', 'a2a=:AA==:']] }
  assert.deepStrictEqual(call('httpsig.verifyRequest', ['a2a-request', huge, '', 0, {}]).code, 'SIGNATURE_MALFORMED')
  const bytes = { ...request, headers: [['Signature-Input', { base64: '/w==' }], ['Signature', 'a2a=:AA==:']] }
  assert.deepStrictEqual(call('httpsig.verifyRequest', ['a2a-request', bytes, '', 0, {}]).code, 'SIGNATURE_MALFORMED')
})

'use strict'
// @ctliz/agent-intercom-core/transport: signed transport envelopes (TransportEnvelopeV1, see
// docs/envelope.md), signed and verified by the Rust core (core/src/envelope). This module only
// supplies the clock and the defaults; every rule, limit and refusal is the core's, and each
// refusal is an IntercomError whose code is the stable code (SIGNATURE_INVALID, REPLAYED, ...).
const { call, registerError } = require('../lib/contract.js')
const { IntercomError } = require('../lib/native.js')

registerError('IntercomError', (f) => new IntercomError(f.code, f.message))

const C = call('envelope.constants', [])
const TRANSPORT_ENVELOPE_FORMAT_VERSION = C.FORMAT_VERSION
const MAX_ENVELOPE_BYTES = C.MAX_ENVELOPE_BYTES
const MAX_ENVELOPE_LIFETIME_MS = C.MAX_LIFETIME_MS
const DEFAULT_ENVELOPE_SKEW_MS = C.DEFAULT_SKEW_MS
const MAX_ENVELOPE_SKEW_MS = C.MAX_SKEW_MS
const ENVELOPE_SIGNING_DOMAIN = C.SIGNING_DOMAIN
const ENVELOPE_HKDF_SALT = C.HKDF_SALT
const ENVELOPE_HKDF_INFO_PREFIX = C.HKDF_INFO_PREFIX
const ENVELOPE_CONTENT_TYPES = Object.freeze(C.CONTENT_TYPES)
const ENVELOPE_SIGNATURE_KINDS = Object.freeze(C.SIGNATURE_KINDS)

const OPTIONS = ['now', 'skewMs']

/** The clock and skew of a verification: { now?: ms since the epoch (default Date.now()),
 * skewMs?: how far ahead sent_at may be (default DEFAULT_ENVELOPE_SKEW_MS) }. */
function clock (options) {
  if (options === undefined) return [Date.now(), DEFAULT_ENVELOPE_SKEW_MS]
  if (typeof options !== 'object' || options === null) {
    throw new IntercomError('INVALID_ARGUMENT', 'options must be an object { now?, skewMs? }')
  }
  for (const key of Object.keys(options)) {
    if (!OPTIONS.includes(key)) {
      throw new IntercomError('UNKNOWN_KEY', `options take now and skewMs, not ${JSON.stringify(key)}`)
    }
  }
  const now = options.now === undefined ? Date.now() : options.now
  const skew = options.skewMs === undefined ? DEFAULT_ENVELOPE_SKEW_MS : options.skewMs
  return [now, skew]
}

/** Signs an envelope given without its signature (JSON text or a plain object) with
 * { kind: 'ed25519', key_id, private_key } (PKCS#8 PEM) or { kind: 'hmac-sha256', key_id,
 * secret } (base64); returns the signed envelope as canonical JSON text. */
function signEnvelope (fields, key) {
  return call('envelope.sign', [fields, key])
}

/** Verifies an envelope's text against a keyring { ed25519?: { id: SPKI PEM or base64 DER },
 * 'hmac-sha256'?: { id: base64 secret } }; returns what verified, or throws IntercomError.
 * Replay is the caller's: remember (key_id, nonce) until expires_at_ms. */
function verifyEnvelope (text, keyring, options) {
  const [now, skew] = clock(options)
  return call('envelope.verify', [text, keyring, now, skew])
}

/** Verifies each text in order against one fresh in-memory nonce set (a nonce seen earlier in
 * the sequence is REPLAYED); one { ok: true, key_id, nonce } or { ok: false, code, message }
 * per text. */
function verifyEnvelopeSequence (texts, keyring, options) {
  const [now, skew] = clock(options)
  return call('envelope.verifySequence', [texts, keyring, now, skew])
}

/** The bytes a signed envelope's signature covers, as text, and their hex SHA-256. */
function envelopeSigningInput (text) {
  return call('envelope.signingInput', [text])
}

module.exports = {
  TRANSPORT_ENVELOPE_FORMAT_VERSION,
  MAX_ENVELOPE_BYTES,
  MAX_ENVELOPE_LIFETIME_MS,
  DEFAULT_ENVELOPE_SKEW_MS,
  MAX_ENVELOPE_SKEW_MS,
  ENVELOPE_SIGNING_DOMAIN,
  ENVELOPE_HKDF_SALT,
  ENVELOPE_HKDF_INFO_PREFIX,
  ENVELOPE_CONTENT_TYPES,
  ENVELOPE_SIGNATURE_KINDS,
  signEnvelope,
  verifyEnvelope,
  verifyEnvelopeSequence,
  envelopeSigningInput,
  IntercomError,
}

'use strict'
// @ctliz/agent-intercom-core/canonical: canonicalJson, canonicalFrame and canonicalHash with the
// TypeScript core's semantics, computed by the Rust core.
//
// JavaScript values reach the core as JSON text. JSON.stringify silently rewrites what JSON
// cannot hold (undefined, -0, NaN, functions, class instances via toJSON, holes), so the value
// is first checked to be plain data of the canonical model (lib/plain.js, shared with every
// other path into the core) and the rest is refused with a stable code. Everything else
// (integer range, surrogates, key order, escaping, framing, hashing) is the core's, whose errors
// carry the same codes.
const { addon, constants: C, fail } = require('../lib/native.js')
const { CANONICAL, jsonText } = require('../lib/plain.js')

const MAX_DEPTH = C.maxDepth

function domainArg (domain) {
  if (typeof domain !== 'string') fail('INVALID_DOMAIN', 'domain must be non-empty printable ASCII without whitespace')
  return domain
}

function textArg (text) {
  if (typeof text !== 'string') fail('INVALID_ARGUMENT', 'text must be a string of JSON')
  return text
}

/** Canonical JSON: keys sorted recursively by UTF-16 code units (array-index keys first, as
 * JavaScript orders them), no whitespace, JSON.stringify escapes, safe integers only. */
function canonicalJson (value) {
  const text = jsonText(value, CANONICAL, '$')
  return addon.canonicalJsonText(text)
}

/** The canonical frame as bytes: agent-intercom-canonical-frame-v1:L(domain):domain:L(payload):payload. */
function canonicalFrame (domain, value) {
  const d = domainArg(domain)
  const text = jsonText(value, CANONICAL, '$')
  const buffer = addon.canonicalFrameText(d, text)
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
}

/** Lowercase hex SHA-256 of the canonical frame. */
function canonicalHash (domain, value) {
  const d = domainArg(domain)
  const text = jsonText(value, CANONICAL, '$')
  return addon.canonicalHashText(d, text)
}

/** Canonical JSON of a JSON document (text). Stricter than JSON.parse: repeated keys are
 * rejected (DUPLICATE_KEY) instead of silently keeping the last. */
function canonicalJsonFromText (text) {
  const t = textArg(text)
  return addon.canonicalJsonText(t)
}

/** canonicalHash of a JSON document (text). */
function canonicalHashFromText (domain, text) {
  const d = domainArg(domain)
  const t = textArg(text)
  return addon.canonicalHashText(d, t)
}

module.exports = {
  CANONICAL_ENCODING_VERSION: C.encodingVersion,
  CANONICAL_HASH_FRAME: C.framePrefix,
  CANONICAL_UNICODE_NORMALIZATION: C.unicodeNormalization,
  CANONICAL_MAX_DEPTH: MAX_DEPTH,
  canonicalJson,
  canonicalFrame,
  canonicalHash,
  canonicalJsonFromText,
  canonicalHashFromText,
}

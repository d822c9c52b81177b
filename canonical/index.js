'use strict'
// @ctliz/agent-intercom-core/canonical: canonicalJson, canonicalFrame and canonicalHash with the
// TypeScript core's semantics, computed by the Rust core.
//
// JavaScript values reach the core as JSON text. JSON.stringify silently rewrites what JSON
// cannot hold (undefined, -0, NaN, functions, class instances via toJSON, holes), so this
// module first checks that the value is plain JSON data and rejects the rest with a stable
// code. Everything else (integer range, surrogates, key order, escaping, framing, hashing) is
// the core's, whose errors carry the same codes.
const { addon, constants: C, rethrow, fail } = require('../lib/native.js')

const MAX_DEPTH = C.maxDepth
const objectProto = Object.prototype
const { getPrototypeOf, keys: ownKeys, getOwnPropertyNames, getOwnPropertySymbols, getOwnPropertyDescriptor } = Object
const { isArray } = Array
const { isSafeInteger } = Number

// Paths such as $.vectors[3].name are built only when something is rejected: each level adds
// its key to the error while it unwinds, so the common path allocates no strings.
class Rejection {
  constructor (code, message) {
    this.code = code
    this.message = message
    this.keys = []
  }
}

function reject (code, message) {
  throw new Rejection(code, message)
}

function withKey (error, key) {
  if (error instanceof Rejection) error.keys.push(key)
  return error
}

function pathOf (keys) {
  let path = '$'
  for (let i = keys.length - 1; i >= 0; i--) path += typeof keys[i] === 'number' ? `[${keys[i]}]` : `.${keys[i]}`
  return path
}

function checkPlainProperties (value, names) {
  // Symbol keys, non-enumerable or accessor properties would be dropped or invoked by
  // JSON.stringify; the contract rejects them. The own string keys match the enumerable ones,
  // plus an array's length, only when none is hidden.
  if (getOwnPropertySymbols(value).length !== 0) reject('UNSUPPORTED_VALUE', 'symbol properties are not supported')
  if (getOwnPropertyNames(value).length !== names.length + (isArray(value) ? 1 : 0)) {
    reject('UNSUPPORTED_VALUE', 'properties must be enumerable data properties (no holes or extra array properties)')
  }
  for (let i = 0; i < names.length; i++) {
    const descriptor = getOwnPropertyDescriptor(value, names[i])
    if (descriptor.get !== undefined || descriptor.set !== undefined) {
      throw withKey(new Rejection('UNSUPPORTED_VALUE', 'accessor properties are not supported'), isArray(value) ? i : names[i])
    }
  }
}

// Deep-frozen plain data cannot change once checked: frozen objects keep their prototype,
// their values and their property set, and accessors were rejected. So a deep-frozen subtree is
// checked once, and its JSON text is made once and kept (only for the outermost frozen object,
// while it lives: a WeakMap). The core still canonicalizes and hashes every byte on every call,
// and still enforces the depth limit. (The exported corpus is deep-frozen, so hashing it again is
// cheap; docs/benchmarks.md also measures an unfrozen copy.)
const immutableChecked = new WeakSet()
const frozenText = new WeakMap()
const { isFrozen } = Object

const PLAIN = 0 // holds no deep-frozen subtree: JSON.stringify it whole
const FROZEN = 1 // deep-frozen: its JSON text is kept
const MIXED = 2 // unfrozen, with deep-frozen subtrees inside

/** Checks that value is plain JSON data; returns PLAIN, FROZEN or MIXED. `mixed` collects the
 * MIXED containers of this call. Throws a Rejection. */
function check (value, depth, mixed) {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return FROZEN
    case 'number':
      if (!isSafeInteger(value) || (value === 0 && 1 / value < 0)) {
        reject('UNSUPPORTED_NUMBER', 'number must be a safe integer and must not be negative zero')
      }
      return FROZEN
    case 'object': {
      if (value === null) return FROZEN
      if (immutableChecked.has(value)) return FROZEN
      if (depth > MAX_DEPTH) reject('NESTING_TOO_DEEP', `nesting deeper than ${MAX_DEPTH} levels`)
      let allFrozen = true
      let holdsFrozenContainer = false
      const array = isArray(value)
      if (!array && getPrototypeOf(value) !== objectProto) reject('UNSUPPORTED_VALUE', 'value must be a JSON primitive, array, or plain object')
      const names = ownKeys(value)
      if (array && names.length !== value.length) reject('UNSUPPORTED_VALUE', 'sparse arrays and extra array properties are not supported')
      checkPlainProperties(value, names)
      for (let i = 0; i < names.length; i++) {
        const child = array ? value[i] : value[names[i]]
        let state
        try {
          state = check(child, depth + 1, mixed)
        } catch (error) {
          throw withKey(error, array ? i : names[i])
        }
        if (state !== FROZEN) allFrozen = false
        if (state === MIXED || (state === FROZEN && child !== null && typeof child === 'object')) holdsFrozenContainer = true
      }
      if (allFrozen && isFrozen(value)) {
        immutableChecked.add(value)
        return FROZEN
      }
      if (holdsFrozenContainer) {
        mixed.add(value)
        return MIXED
      }
      return PLAIN
    }
    case 'undefined':
      return reject('UNSUPPORTED_VALUE', 'undefined is not a canonical value')
    default:
      return reject('UNSUPPORTED_VALUE', `${typeof value} is not a canonical value`)
  }
}

function textOf (value, mixed) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  if (immutableChecked.has(value)) {
    let text = frozenText.get(value)
    if (text === undefined) {
      text = JSON.stringify(value)
      frozenText.set(value, text)
    }
    return text
  }
  if (!mixed.has(value)) return JSON.stringify(value)
  const parts = []
  if (isArray(value)) {
    for (let i = 0; i < value.length; i++) parts.push(textOf(value[i], mixed))
    return `[${parts.join(',')}]`
  }
  const names = ownKeys(value)
  for (let i = 0; i < names.length; i++) parts.push(`${JSON.stringify(names[i])}:${textOf(value[names[i]], mixed)}`)
  return `{${parts.join(',')}}`
}

/** JSON text of a value, after checking that it is plain JSON data. */
function toJsonText (value) {
  const mixed = new Set()
  let state
  try {
    state = check(value, 1, mixed)
  } catch (error) {
    if (error instanceof Rejection) fail(error.code, `${pathOf(error.keys)}: ${error.message}`)
    throw error
  }
  return state === PLAIN ? JSON.stringify(value) : textOf(value, mixed)
}

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
  const text = toJsonText(value)
  try { return addon.canonicalJsonText(text) } catch (error) { return rethrow(error) }
}

/** The canonical frame as bytes: agent-intercom-canonical-frame-v1:L(domain):domain:L(payload):payload. */
function canonicalFrame (domain, value) {
  const d = domainArg(domain)
  const text = toJsonText(value)
  let buffer
  try { buffer = addon.canonicalFrameText(d, text) } catch (error) { return rethrow(error) }
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
}

/** Lowercase hex SHA-256 of the canonical frame. */
function canonicalHash (domain, value) {
  const d = domainArg(domain)
  const text = toJsonText(value)
  try { return addon.canonicalHashText(d, text) } catch (error) { return rethrow(error) }
}

/** Canonical JSON of a JSON document (text). Stricter than JSON.parse: repeated keys are
 * rejected (DUPLICATE_KEY) instead of silently keeping the last. */
function canonicalJsonFromText (text) {
  const t = textArg(text)
  try { return addon.canonicalJsonText(t) } catch (error) { return rethrow(error) }
}

/** canonicalHash of a JSON document (text). */
function canonicalHashFromText (domain, text) {
  const d = domainArg(domain)
  const t = textArg(text)
  try { return addon.canonicalHashText(d, t) } catch (error) { return rethrow(error) }
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

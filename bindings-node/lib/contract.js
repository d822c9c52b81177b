'use strict'
// The one path from the TypeScript contract's functions (policy, team manifest, canonical
// readers, Boss records and policies) into the Rust core: `call(op, args)`.
//
// The contract validates live JavaScript values: it tells undefined from an absent key, -0 from
// 0, an accessor from a data property, a hole from undefined, a null-prototype object from a
// plain one, and it refuses proxies without entering them. So the arguments are not sent as JSON:
// `snapshot` writes them in the core's snapshot form (core/src/contract/value.rs), JSON plus
// markers for exactly those things, by reading property descriptors only. No getter, toJSON or
// proxy trap of the caller runs, and JSON.stringify never reads a caller's object (it only quotes
// strings). Every rule (which keys, which values, which message) is then the core's; what comes
// back is the value to return or the error to throw, as the TypeScript contract throws it.
const { types: { isProxy } } = require('node:util')
const { addon, constants, IntercomError } = require('./native.js')

const { getPrototypeOf, getOwnPropertyDescriptor, getOwnPropertyNames, getOwnPropertySymbols, freeze, isFrozen } = Object
const { ownKeys } = Reflect
const { isArray } = Array
const { isView } = ArrayBuffer
const objectProto = Object.prototype
const quote = JSON.stringify
const parse = JSON.parse
const { contractCall, contractKeep } = addon

// An operation crosses as its index in the core's sorted list, not as its name.
const OPERATIONS = new Map(addon.contractOperations().map((name, index) => [name, index]))

/** Deepest nesting a snapshot holds (the core reads no deeper; the value itself is depth 1). */
const MAX_DEPTH = constants.contractMaxDepth

/** The error every contract validator throws: `message` is `<path>: <detail>`. */
class ContractValidationError extends Error {
  constructor (path, message) {
    super(`${path}: ${message}`)
    this.name = 'ContractValidationError'
    this.path = path
  }
}

function nestingError () {
  return new ContractValidationError('$', `value nests deeper than ${MAX_DEPTH} levels or is cyclic`)
}

// Deep-frozen values (the package's own corpora, a caller's frozen constants) cannot change, so
// their snapshot text is kept: `deep` tells the caller of `snap` whether what it just wrote was
// deep-frozen (every container frozen, all the way down).
const frozenText = new WeakMap()
let deep = true
// The deepest level the current walk reached (to tell whether a kept text still fits the limit
// where it is reused).
let maxDepth = 0

// Most strings need no escape: they are quoted here, the rest by JSON.stringify (which escapes a
// lone surrogate as \uXXXX, as the snapshot form wants).
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/
function quoteString (text) {
  return NEEDS_ESCAPE.test(text) ? quote(text) : '"' + text + '"'
}

// Short strings repeat too (ids, kinds, states): their quoted forms are kept like the keys'.
function quoteValue (text) {
  if (text.length > 64) return quoteString(text)
  return quoteKey(text)
}

// Keys repeat (records of one shape); their quoted forms are kept, within a bound.
const quotedKeys = new Map()
function quoteKey (key) {
  let q = quotedKeys.get(key)
  if (q === undefined) {
    q = quoteString(key)
    if (quotedKeys.size < 4096) quotedKeys.set(key, q)
  }
  return q
}

function isIndex (key, length) {
  // Canonical array index below the length: "0", "1", ... (never "01" or "-0").
  const n = Number(key)
  return n >>> 0 === n && n < length && String(n) === key
}

function snapArray (value, depth, stack) {
  // An array's own `length` is a data property (never an accessor), so reading it runs nothing.
  const length = value.length
  // The string keys and the symbol keys apart: two calls cost a third of Reflect.ownKeys.
  const keys = getOwnPropertyNames(value)
  const symbols = getOwnPropertySymbols(value).length !== 0
  // Own string keys come as the indices ascending, then `length`, then the others: `length`
  // right after `length` keys means every index is there and no other string key is.
  if (!symbols && keys.length === length + 1 && keys[length] === 'length') return snapDense(value, keys, length, depth, stack)
  let extra = symbols
  const present = []
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]
    if (key === 'length') continue
    if (isIndex(key, length)) present.push(key)
    else extra = true
  }
  let out = extra ? '[!' : '['
  let all = true
  // A sparse array is written up to its first hole: the core reports that hole (or an earlier
  // problem) and nothing after it, so a huge length costs nothing.
  const dense = present.length === length
  const upto = dense ? length : firstHole(present)
  for (let i = 0; i < upto; i++) {
    if (i > 0) out += ','
    const descriptor = getOwnPropertyDescriptor(value, i)
    if (descriptor.enumerable && 'value' in descriptor) {
      out += snap(descriptor.value, depth + 1, stack)
      all = all && deep
    } else {
      out += 'h'
    }
  }
  if (!dense) out += upto > 0 ? ',_' : '_'
  deep = all
  return out + ']'
}

function snapDense (value, keys, length, depth, stack) {
  let out = '['
  let all = true
  for (let i = 0; i < length; i++) {
    if (i > 0) out += ','
    const descriptor = getOwnPropertyDescriptor(value, keys[i])
    if (descriptor.enumerable && 'value' in descriptor) {
      out += snap(descriptor.value, depth + 1, stack)
      all = all && deep
    } else {
      out += 'h'
    }
  }
  deep = all
  return out + ']'
}

function firstHole (present) {
  // `present` is in ascending order (own index keys are enumerated that way).
  let i = 0
  while (i < present.length && Number(present[i]) === i) i++
  return i
}

function snapObject (value, depth, stack) {
  const proto = getPrototypeOf(value)
  const plain = proto === objectProto || proto === null
  // An object of another prototype is written with its own members too (the contract reads own
  // keys of, say, a map object with a custom prototype); a typed array or DataView is not walked.
  if (!plain && isView(value)) {
    deep = false
    return '{@}'
  }
  const keys = getOwnPropertyNames(value)
  let all = true
  let out = proto === null ? '{#' : plain ? '{' : '{@'
  const symbols = getOwnPropertySymbols(value).length !== 0
  let first = true
  let body = ''
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]
    const descriptor = getOwnPropertyDescriptor(value, key)
    let item = 'h'
    if (descriptor.enumerable && 'value' in descriptor) {
      item = snap(descriptor.value, depth + 1, stack)
      all = all && deep
    }
    body += (first ? '' : ',') + quoteKey(key) + ':' + item
    first = false
  }
  if (symbols) out += '!'
  deep = all
  return out + body + '}'
}

function snap (value, depth, stack) {
  deep = true
  switch (typeof value) {
    case 'undefined': return 'u'
    case 'boolean': return value ? 'true' : 'false'
    case 'number':
      if (value !== value) return 'N'
      if (value === Infinity) return 'I'
      if (value === -Infinity) return '-I'
      if (value === 0 && 1 / value < 0) return '-0'
      return '' + value
    case 'string': return quoteValue(value)
    case 'bigint': return 'b"' + BigInt.prototype.toString.call(value) + '"'
    case 'symbol': return 's'
    case 'function': return isProxy(value) ? 'p' : 'f'
  }
  if (value === null) return 'null'
  if (isProxy(value)) return 'p'
  if (crossingKept !== null) {
    const parsed = keptValues.get(value)
    if (parsed !== undefined && parsed.call !== callId && depth + parsed.depth <= MAX_DEPTH) return reuse(parsed, depth)
  }
  const kept = frozenText.get(value)
  if (kept !== undefined && depth + kept.depth <= MAX_DEPTH) {
    const reached = depth + kept.depth - 1
    if (reached > maxDepth) maxDepth = reached
    return keeping(value, kept.text, kept.depth, depth)
  }
  if (depth >= MAX_DEPTH || stack.includes(value)) throw nestingError()
  stack.push(value)
  const start = maxDepth
  const refs = crossingKept === null ? 0 : crossingKept.length
  maxDepth = depth
  let out
  try {
    out = isArray(value) ? snapArray(value, depth, stack) : snapObject(value, depth, stack)
  } finally {
    stack.pop()
  }
  const below = maxDepth - depth + 1
  maxDepth = start > maxDepth ? start : maxDepth
  if (deep && isFrozen(value)) {
    if (crossingKept !== null && crossingKept.length > refs) {
      // `out` stands for kept values (`r`): the value's own text is written from theirs, and
      // the value is kept whole in their place.
      const used = crossingKept
      crossingKept = null
      try {
        out = snap(value, depth, stack)
      } finally {
        crossingKept = used
      }
      used.length = refs
      return keeping(value, out, below, depth)
    }
    frozenText.set(value, { text: out, depth: below })
    return keeping(value, out, below, depth)
  }
  deep = false
  return out
}

/** The snapshot text of an argument list. */
function snapshot (args) {
  const stack = []
  let out = '['
  for (let i = 0; i < args.length; i++) out += (i > 0 ? ',' : '') + snap(args[i], 1, stack)
  return out + ']'
}

// A deep-frozen value cannot change, so besides its text (frozenText) the core keeps its parsed
// form (an External, `contractKeep`) when it is an argument itself or large: a call then writes
// `r` in its place and passes the External, and the core moves the parsed value into the
// argument tree and back out, so nothing of it is written, copied or parsed again. Each kept
// value crosses at most once per call (`call`: the call that used it); a repeat is written out.
let keptValues = new WeakMap()
const KEEP_MIN_TEXT = 256
// While `call` writes its arguments: the kept values its text stands for, in order.
let crossingKept = null
let callId = 0

function reuse (parsed, depth) {
  parsed.call = callId
  crossingKept.push(parsed.handle)
  const reached = depth + parsed.depth - 1
  if (reached > maxDepth) maxDepth = reached
  return 'r'
}

/** `text`, the text of deep-frozen `value` at `depth`, or `r` when the value is worth keeping
 * parsed for this and later calls. */
function keeping (value, text, below, depth) {
  if (crossingKept === null || (depth !== 1 && text.length < KEEP_MIN_TEXT) || keptValues.has(value)) return text
  const parsed = { handle: contractKeep(text), depth: below, call: 0 }
  keptValues.set(value, parsed)
  return reuse(parsed, depth)
}

// Error classes by the name the core gives; a module that defines a class registers how to
// build it from the core's failure {class, message, detail, path?, code?}.
const builders = {
  __proto__: null,
  ContractValidationError: (f) => {
    const error = new ContractValidationError(f.path, f.detail)
    // Our stable code, where the core gives one (the canonical functions): an extra property the
    // TypeScript class does not have.
    if (f.code !== undefined) error.code = f.code
    return error
  },
  Error: (f) => new Error(f.message),
  TypeError: (f) => new TypeError(f.message),
}

function registerError (name, build) {
  builders[name] = build
}

function failure (text) {
  const f = parse(text)
  const build = builders[f.class]
  return build ? build(f) : new Error(f.message)
}

/** @typedef {import('../facts.js').ContractOp} ContractOp */

/**
 * Runs the core operation `op` over `args` (an array): returns what it answers (one of the
 * arguments itself, undefined, or a fresh value) or throws the error it names.
 * @param {ContractOp} op
 * @param {unknown[]} args
 * @returns {any}
 */
function call (op, args) {
  const index = OPERATIONS.get(op)
  if (index === undefined) throw new IntercomError('INVALID_ARGUMENT', `unknown contract operation ${quote(op)}`)
  const kept = []
  callId++
  crossingKept = kept
  let text
  try {
    text = snapshot(args)
  } finally {
    crossingKept = null
  }
  let answer
  if (kept.length === 0) {
    answer = contractCall(index, text)
  } else {
    try {
      answer = contractCall(index, text, kept)
    } catch {
      // Only a bug gets here; a kept value it cost is parsed again when next needed.
      keptValues = new WeakMap()
      answer = contractCall(index, snapshot(args))
    }
  }
  switch (answer.charCodeAt(0)) {
    case 0x75: return undefined // u
    case 0x69: return args[+answer.slice(1)] // i<index>
    case 0x6a: return parse(answer.slice(1)) // j<json>
    case 0x73: return answer.slice(1) // s<string>
    default: throw failure(answer.slice(1)) // e<failure>
  }
}

/**
 * The one exception to "a proxy is refused without being entered", for the parsers whose
 * TypeScript twin reads its argument through the proxy (`parseDeliveryEquivalenceKey`): a proxy
 * `value` is read once, as the TypeScript parser reads it (its prototype, its own keys and their
 * descriptors, then each enumerable data member through its `get` trap, once), into a stand-in
 * the core checks; anything not a proxy is returned as it is. Members are not entered further (a
 * proxy inside is refused as everywhere). Call `callReadOnce` rather than this.
 */
function readOnce (value) {
  // An array is not a record: it is refused as it is (its `length` could not be copied anyway).
  if (!isProxy(value) || typeof value !== 'object' || isArray(value)) return value
  const standIn = Object.create(getPrototypeOf(value))
  for (const key of ownKeys(value)) {
    const descriptor = getOwnPropertyDescriptor(value, key)
    if (descriptor === undefined) continue
    if (descriptor.enumerable && 'value' in descriptor) {
      Object.defineProperty(standIn, key, { value: value[key], enumerable: true, writable: true, configurable: true })
    } else {
      // Kept as what it is (not an enumerable data member); the core refuses it by its path,
      // and nothing here calls it.
      Object.defineProperty(standIn, key, { ...descriptor, configurable: true })
    }
  }
  return standIn
}

/**
 * `call(op, [value, ...rest])` where the TypeScript twin reads `value` through a proxy (see
 * `readOnce`): the answer "the argument itself" is the caller's proxy, not the stand-in.
 * @param {ContractOp} op
 * @param {unknown} value
 * @param {...unknown} rest
 * @returns {any}
 */
function callReadOnce (op, value, ...rest) {
  const read = readOnce(value)
  const out = call(op, [read, ...rest])
  return out === read && read !== value ? value : out
}

/**
 * Like `call`, for operations whose answer is a fresh value that callers may not mutate.
 * @param {ContractOp} op
 * @param {unknown[]} args
 * @returns {any}
 */
function callFrozen (op, args) {
  const out = call(op, args)
  return typeof out === 'object' && out !== null ? deepFreeze(out) : out
}

function deepFreeze (value) {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const key of Object.keys(value)) deepFreeze(value[key])
    freeze(value)
  }
  return value
}

module.exports = { ContractValidationError, call, callFrozen, callReadOnce, snapshot, registerError, deepFreeze, MAX_DEPTH }

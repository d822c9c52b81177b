'use strict'
// The one path from the TypeScript contract's functions (policy, team manifest, canonical
// readers, Boss records and policies) into the Rust core: `call(op, args)`.
//
// The contract validates live JavaScript values: it tells undefined from an absent key, -0 from
// 0, an accessor from a data property, a hole from undefined, a null-prototype object from a
// plain one, and it refuses proxies without entering them. So the arguments are not sent as JSON:
// `write` puts them in the core's snapshot form (core/src/contract/value.rs), JSON plus markers
// for exactly those things, by reading property descriptors only, as UTF-8 into a buffer the core
// reads in place. No getter, toJSON or proxy trap of the caller runs, and nothing stringifies a
// caller's object. Every rule (which keys, which values, which message) is then the core's; what
// comes back is the value to return or the error to throw, as the TypeScript contract throws it.
const { types: { isProxy, isNativeError } } = require('node:util')
// The timers module's own, not the global a test's fake timers may stand in for.
const { setImmediate: immediate } = require('node:timers')
const { addon, constants, IntercomError } = require('./native.js')

const { getPrototypeOf, getOwnPropertyDescriptor, getOwnPropertyNames, getOwnPropertySymbols, freeze, isFrozen, keys: objectKeys } = Object
const { ownKeys } = Reflect
const { isArray } = Array
const { isView } = ArrayBuffer
const { byteLength } = Buffer
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

// The snapshot is written as UTF-8 into `buf` (from 0 to `pos`), which the core reads where it
// is: no string is built, flattened or copied (measured: building the text with `+=` and having
// napi flatten that rope cost about as much as the core's whole work on a policy state).
const BUF_SIZE = 16384
let buf = new Uint8Array(BUF_SIZE)
let pos = 0

/** Makes room for `n` more bytes at `pos`. */
function room (n) {
  if (pos + n <= buf.length) return
  // Doubled, or just what is asked when that is more: a huge string is not rounded up.
  const grown = new Uint8Array(Math.max(buf.length * 2, pos + n))
  grown.set(buf.subarray(0, pos))
  buf = grown
}

/** Writes `text`, known to be ASCII without anything to escape (markers, numbers, digits). */
function ascii (text) {
  const n = text.length
  room(n)
  for (let i = 0; i < n; i++) buf[pos++] = text.charCodeAt(i)
}

function byte (b) {
  if (pos === buf.length) room(1)
  buf[pos++] = b
}

// How JSON.stringify escapes the control characters: \b \t \n \f \r, the others \u00XX.
const SHORT_ESCAPES = { 8: 0x62, 9: 0x74, 10: 0x6e, 12: 0x66, 13: 0x72 }
const HEX = [0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66]

/** Writes `unit` as \uXXXX at `p` of `b`; returns the position after it. */
function unicodeEscape (b, p, unit) {
  b[p] = 0x5c
  b[p + 1] = 0x75
  b[p + 2] = HEX[unit >> 12]
  b[p + 3] = HEX[(unit >> 8) & 15]
  b[p + 4] = HEX[(unit >> 4) & 15]
  b[p + 5] = HEX[unit & 15]
  return p + 6
}

// A long string is quoted by JSON.stringify only when it holds something to escape (a lone
// surrogate among them) and encoded by TextEncoder: both are native, where the loop below costs
// about a nanosecond a character (measured: a 100 KB string took 2.4 times as long by the loop).
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/
const encoder = new TextEncoder()
const LONG = 64

/** Writes `text` as a JSON string in UTF-8, escaped as JSON.stringify escapes it: a lone
 * surrogate as \uXXXX, which the snapshot form keeps as such. */
function string (text) {
  const n = text.length
  if (n > LONG) {
    const quoted = NEEDS_ESCAPE.test(text) ? quote(text) : '"' + text + '"'
    // Its UTF-8 length exactly (quoted, it has no lone surrogate).
    room(byteLength(quoted, 'utf8'))
    pos += encoder.encodeInto(quoted, buf.subarray(pos)).written
    return
  }
  // At most three bytes a code unit and the quotes; an escape (six) makes more room itself.
  room(3 * n + 2)
  let b = buf
  let p = pos
  b[p++] = 0x22
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0x20 && c < 0x80) {
      if (c === 0x22 || c === 0x5c) b[p++] = 0x5c
      b[p++] = c
    } else if (c < 0x20) {
      if (p + 3 * (n - i) + 4 > b.length) {
        pos = p
        room(3 * (n - i) + 4)
        b = buf
      }
      const short = SHORT_ESCAPES[c]
      if (short !== undefined) {
        b[p++] = 0x5c
        b[p++] = short
      } else {
        p = unicodeEscape(b, p, c)
      }
    } else if (c < 0x800) {
      b[p++] = 0xc0 | (c >> 6)
      b[p++] = 0x80 | (c & 63)
    } else if (c < 0xd800 || c > 0xdfff) {
      b[p++] = 0xe0 | (c >> 12)
      b[p++] = 0x80 | ((c >> 6) & 63)
      b[p++] = 0x80 | (c & 63)
    } else {
      const next = i + 1 < n ? text.charCodeAt(i + 1) : 0
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        const point = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00)
        b[p++] = 0xf0 | (point >> 18)
        b[p++] = 0x80 | ((point >> 12) & 63)
        b[p++] = 0x80 | ((point >> 6) & 63)
        b[p++] = 0x80 | (point & 63)
        i++
      } else {
        if (p + 3 * (n - i) + 4 > b.length) {
          pos = p
          room(3 * (n - i) + 4)
          b = buf
        }
        p = unicodeEscape(b, p, c)
      }
    }
  }
  b[p++] = 0x22
  pos = p
}

// Deep-frozen values (the package's own corpora, a caller's frozen constants) cannot change, so
// their snapshot (its bytes) is kept: `deep` tells the caller of `snap` whether what it just
// wrote was deep-frozen (every container frozen, all the way down).
const frozenText = new WeakMap()
let deep = true
// The deepest level the current walk reached (to tell whether a kept text still fits the limit
// where it is reused).
let maxDepth = 0

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
  ascii(extra ? '[!' : '[')
  let all = true
  // A sparse array is written up to its first hole: the core reports that hole (or an earlier
  // problem) and nothing after it, so a huge length costs nothing.
  const dense = present.length === length
  const upto = dense ? length : firstHole(present)
  for (let i = 0; i < upto; i++) {
    if (i > 0) byte(0x2c)
    const descriptor = getOwnPropertyDescriptor(value, i)
    if (descriptor.enumerable && 'value' in descriptor) {
      snap(descriptor.value, depth + 1, stack)
      all = all && deep
    } else {
      byte(0x68) // h
    }
  }
  if (!dense) ascii(upto > 0 ? ',_' : '_')
  deep = all
  byte(0x5d)
}

function snapDense (value, keys, length, depth, stack) {
  byte(0x5b)
  let all = true
  for (let i = 0; i < length; i++) {
    if (i > 0) byte(0x2c)
    const descriptor = getOwnPropertyDescriptor(value, keys[i])
    if (descriptor.enumerable && 'value' in descriptor) {
      snap(descriptor.value, depth + 1, stack)
      all = all && deep
    } else {
      byte(0x68) // h
    }
  }
  deep = all
  byte(0x5d)
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
    ascii('{@}')
    return
  }
  const keys = getOwnPropertyNames(value)
  const symbols = getOwnPropertySymbols(value).length !== 0
  ascii(proto === null ? '{#' : plain ? '{' : '{@')
  if (symbols) byte(0x21) // !
  // A typed array walked as an object (its prototype made plain) is never taken as deep-frozen:
  // on a resizable buffer, a frozen one still gains elements when the buffer grows.
  let all = !isView(value)
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]
    if (i > 0) byte(0x2c)
    string(key)
    byte(0x3a)
    const descriptor = hidden(value, key) ? undefined : getOwnPropertyDescriptor(value, key)
    if (descriptor !== undefined && descriptor.enumerable && 'value' in descriptor) {
      snap(descriptor.value, depth + 1, stack)
      all = all && deep
    } else {
      byte(0x68) // h
    }
  }
  deep = all
  byte(0x7d)
}

/** Writes a value that is not an object (nor null). */
function scalar (value) {
  switch (typeof value) {
    case 'string': return string(value)
    case 'number':
      if (value !== value) return byte(0x4e) // N
      if (value === Infinity) return byte(0x49) // I
      if (value === -Infinity) return ascii('-I')
      if (value === 0 && 1 / value < 0) return ascii('-0')
      return ascii('' + value)
    case 'undefined': return byte(0x75) // u
    case 'boolean': return ascii(value ? 'true' : 'false')
    case 'bigint':
      byte(0x62) // b
      return string(BigInt.prototype.toString.call(value))
    case 'symbol': return byte(0x73) // s
    default: return byte(isProxy(value) ? 0x70 : 0x66) // p, f (a function)
  }
}

/** Writes the bytes of a kept text. */
function bytes (text) {
  room(text.length)
  buf.set(text, pos)
  pos += text.length
}

/** Writes the snapshot of `value`; `deep` then says whether it is deep-frozen. */
function snap (value, depth, stack) {
  deep = true
  if (typeof value !== 'object') return scalar(value)
  if (value === null) return ascii('null')
  if (isProxy(value)) return byte(0x70) // p
  // An argument that may be kept while unfrozen (`reusedValues`), once written: `entry`, its
  // entry when it has one.
  let candidate = false
  let entry
  if (crossingKept !== null) {
    const parsed = keptValues.get(value)
    if (parsed !== undefined && parsed.call !== callId && depth + parsed.depth <= MAX_DEPTH) return reuse(parsed, depth)
    if (depth === 1) {
      entry = reusedValues.get(value)
      candidate = true
      if (entry !== undefined) {
        const held = entry.parsed
        if (held === null) {
          // Given up on for `wait` calls (it changed call after call); kept again after them.
          if (--entry.wait > 0) candidate = false
        } else if (held.call === callId) {
          // Already crossing in this call: written out.
          candidate = false
        } else if (unchanged(entry.record)) {
          entry.misses = 0
          deep = false
          return reuse(held, depth)
        } else if (++entry.misses === MAX_MISSES) {
          entry.parsed = entry.record = null
          entry.misses = 0
          entry.backoff = Math.min(entry.backoff * 2, MAX_BACKOFF)
          entry.wait = entry.backoff
          candidate = false
        }
      }
    }
  }
  const kept = frozenText.get(value)
  if (kept !== undefined && depth + kept.depth <= MAX_DEPTH) {
    const reached = depth + kept.depth - 1
    if (reached > maxDepth) maxDepth = reached
    if (!keeping(value, kept.text, kept.depth, depth)) bytes(kept.text)
    return
  }
  if (depth >= MAX_DEPTH || stack.includes(value)) throw nestingError()
  stack.push(value)
  const start = maxDepth
  const refs = crossingKept === null ? 0 : crossingKept.length
  const from = pos
  maxDepth = depth
  try {
    if (isArray(value)) snapArray(value, depth, stack)
    else snapObject(value, depth, stack)
  } finally {
    stack.pop()
  }
  const below = maxDepth - depth + 1
  maxDepth = start > maxDepth ? start : maxDepth
  if (deep && isFrozen(value)) {
    if (crossingKept !== null && crossingKept.length > refs) {
      // What was written stands for kept values (`r`): the value's own text is written again
      // from theirs, and the value is kept whole in their place.
      const used = crossingKept
      crossingKept = null
      pos = from
      try {
        snap(value, depth, stack)
      } finally {
        crossingKept = used
      }
      used.length = refs
    } else {
      frozenText.set(value, { text: buf.slice(from, pos), depth: below })
    }
    const text = frozenText.get(value).text
    pos = from
    if (!keeping(value, text, below, depth)) bytes(text)
    return
  }
  deep = false
  if (candidate && pos - from >= REUSE_MIN_TEXT && pos - from <= REUSE_MAX_TEXT) {
    if (entry !== undefined) {
      keepUnfrozen(value, entry, from, refs, below, stack)
    } else if (seenValues.has(value)) {
      entry = { parsed: null, record: null, misses: 0, wait: 0, backoff: MAX_BACKOFF >> 6 }
      keepUnfrozen(value, entry, from, refs, below, stack)
    } else {
      seenValues.add(value)
    }
  }
}

/** Writes the snapshot of an argument list at the start of `buf`; returns its length. */
function write (args) {
  const stack = []
  pos = 0
  byte(0x5b)
  for (let i = 0; i < args.length; i++) {
    if (i > 0) byte(0x2c)
    snap(args[i], 1, stack)
  }
  byte(0x5d)
  return pos
}

const decoder = new TextDecoder()

/** The snapshot text of an argument list. */
function snapshot (args) {
  try {
    // Written first: writing may replace `buf`.
    const length = write(args)
    return decoder.decode(buf.subarray(0, length))
  } finally {
    release()
  }
}

/** A large argument's room is not kept past its call. */
function release () {
  if (buf.length > 64 * BUF_SIZE) buf = new Uint8Array(BUF_SIZE)
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

/** Writes `r` for kept value `parsed`, which the call then passes. */
function reuse (parsed, depth) {
  parsed.call = callId
  crossingKept.push(parsed.handle)
  const reached = depth + parsed.depth - 1
  if (reached > maxDepth) maxDepth = reached
  byte(0x72) // r
}

/** Whether deep-frozen `value` at `depth` (its snapshot: the bytes `text`) is worth keeping
 * parsed for this and later calls; if so, `r` is written in its place. */
function keeping (value, text, below, depth) {
  if (crossingKept === null || (depth !== 1 && text.length < KEEP_MIN_TEXT) || keptValues.has(value) || !mayKeep()) return false
  const parsed = { handle: contractKeep(text), depth: below, call: 0 }
  keptValues.set(value, parsed)
  reuse(parsed, depth)
  return true
}

// A kept value's memory is the core's, freed by the External's finalizer, which Node runs only
// once the event loop turns: a synchronous loop that kept a value at each call (a fresh
// deep-frozen argument each time, say) would hold every one of them, about three times its text,
// until it yields. So at most KEEPS_PER_TURN values are kept between two turns of the loop, and
// past that arguments are written out (values kept before are still used).
const KEEPS_PER_TURN = 1024
let keptThisTurn = 0

function mayKeep () {
  if (keptThisTurn === 0) immediate(newTurn).unref()
  if (keptThisTurn === KEEPS_PER_TURN) return false
  keptThisTurn++
  return true
}

function newTurn () {
  keptThisTurn = 0
}

// An unfrozen argument passed again is kept parsed too, beside a record of everything its snapshot
// was written from (`record`): each container's prototype, own keys, symbol keys present or not,
// length, and each member as written (its value, or HOLE for an accessor or a non-enumerable
// member). A later call that finds all of it the same (`unchanged`: the same reads by descriptor
// as writing, without writing or parsing anything) passes the kept value; anything changed, and
// the argument is written out and kept anew. An argument is kept from its second call on
// (`seenValues`), so a value passed once costs one WeakSet entry; one that changed at each of
// MAX_MISSES calls in a row is written out for a while (see MAX_BACKOFF), and one whose text is
// under REUSE_MIN_TEXT or over REUSE_MAX_TEXT bytes always.
let reusedValues = new WeakMap()
const seenValues = new WeakSet()
const MAX_MISSES = 3
// After MAX_MISSES changes in a row an argument is written out for the next 32 calls, then kept
// again; the wait doubles after each such run of changes, up to MAX_BACKOFF calls.
const MAX_BACKOFF = 1024
// Larger arguments are written out each time: the parsed form and the record together hold
// several times the text, for as long as the caller's object lives. Smaller ones too: writing
// them costs about what checking them would, and remembering each one seen (a WeakSet entry)
// would cost a call that passes fresh small values (literals) more than keeping saves.
const REUSE_MAX_TEXT = 1 << 20
const REUSE_MIN_TEXT = 64
const HOLE = Symbol('hole')

/** Keeps argument `value`, just written from `from` (its subtree `below` levels deep), parsed,
 * with the record to tell whether it changed; writes `r` in its place. */
function keepUnfrozen (value, entry, from, refs, below, stack) {
  if (!mayKeep()) return
  if (crossingKept.length > refs) {
    // Its text stands for kept values (`r`) inside it: written again in full (see `snap`).
    const used = crossingKept
    crossingKept = null
    pos = from
    try {
      snap(value, 1, stack)
    } finally {
      crossingKept = used
    }
    used.length = refs
  }
  // The record first: should it fail, the argument stays written out and nothing is kept.
  let entries
  try {
    entries = record(value, [])
  } catch {
    entry.parsed = entry.record = null
    return
  }
  const text = buf.slice(from, pos)
  pos = from
  const parsed = { handle: contractKeep(text), depth: below, call: 0 }
  entry.parsed = parsed
  entry.record = entries
  reusedValues.set(value, entry)
  deep = false
  reuse(parsed, 1)
}

/** What `value`'s snapshot was written from, container by container into `out` (see above),
 * reading exactly what the writer reads (`snapObject`, `snapArray`): an array's elements only up
 * to its first hole, no value under an array's other keys, nothing of a typed array or DataView
 * but its prototype (which says what it is), and no deep-frozen member (it cannot change). Each
 * entry: the container, its prototype, its own string keys (null: not walked), whether it has
 * symbol keys, an array's length (-1: an object), then each member written, as `read` gives it. */
function record (value, out) {
  const proto = getPrototypeOf(value)
  const array = isArray(value)
  if (!array && proto !== objectProto && proto !== null && isView(value)) {
    out.push([value, proto, null])
    return out
  }
  const keys = getOwnPropertyNames(value)
  const symbols = getOwnPropertySymbols(value).length !== 0
  const length = array ? value.length : -1
  const entry = [value, proto, keys, symbols, length]
  out.push(entry)
  const n = array ? written(keys, symbols, length) : keys.length
  for (let i = 0; i < n; i++) {
    const member = array ? read(value, i) : read(value, keys[i])
    entry.push(member)
    if (typeof member === 'object' && member !== null && !isProxy(member) && !frozenText.has(member)) record(member, out)
  }
  return out
}

/** How many of an array's elements its snapshot holds (`snapArray`): all of them when dense, else
 * those before the first hole. */
function written (keys, symbols, length) {
  if (!symbols && keys.length === length + 1 && keys[length] === 'length') return length
  const present = []
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] !== 'length' && isIndex(keys[i], length)) present.push(keys[i])
  }
  return present.length === length ? length : firstHole(present)
}

/** Member `key` of `value` as a snapshot writes it: its value, or HOLE (see `hidden`). */
function read (value, key) {
  if (hidden(value, key)) return HOLE
  const descriptor = getOwnPropertyDescriptor(value, key)
  return descriptor.enumerable && 'value' in descriptor ? descriptor.value : HOLE
}

/** Whether member `key` of `value` is written as `h` without reading its descriptor: an error's
 * `stack`, whose descriptor V8 makes by formatting the stack, which runs the caller's
 * `Error.prepareStackTrace` (it is not enumerable, so it would be `h` anyway). */
function hidden (value, key) {
  return key === 'stack' && isNativeError(value)
}

/** Whether everything `entries` (from `record`) holds is as it was. */
function unchanged (entries) {
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]
    const value = entry[0]
    if (getPrototypeOf(value) !== entry[1]) return false
    const was = entry[2]
    if (was === null) continue
    const keys = getOwnPropertyNames(value)
    const n = keys.length
    if (n !== was.length || (getOwnPropertySymbols(value).length !== 0) !== entry[3]) return false
    const length = entry[4]
    if (length !== -1 && value.length !== length) return false
    for (let j = 0; j < n; j++) {
      if (keys[j] !== was[j]) return false
    }
    // The same keys, symbol keys and length: an array holds as many elements as before.
    const members = entry.length - 5
    for (let j = 0; j < members; j++) {
      const now = length !== -1 ? read(value, j) : read(value, keys[j])
      const then = entry[5 + j]
      // The same value (SameValue: NaN is NaN, -0 is not 0), the same object, or HOLE again.
      if (now !== then) {
        if (now === now || then === then) return false
      } else if (now === 0 && 1 / now !== 1 / then) {
        return false
      }
    }
  }
  return true
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

// A short answer that is a record of plain values (a decision such as `{allowed, reason}`) is
// parsed once and then copied, which costs a fraction of JSON.parse: the copy has the same own
// keys in the same order and the same values, as a fresh JSON.parse of the text would. The
// parsed record itself is never handed out. Other short answers are marked and parsed each time.
const SMALL_ANSWER = 96
const SMALL_ANSWERS = 256
const smallAnswers = new Map()
const NOT_A_RECORD = Symbol('not a record')

function small (answer) {
  const known = smallAnswers.get(answer)
  if (known !== undefined && known !== NOT_A_RECORD) return { ...known }
  const value = parse(answer.slice(1))
  if (known === undefined) {
    if (smallAnswers.size === SMALL_ANSWERS) smallAnswers.clear()
    if (flatRecord(value)) {
      smallAnswers.set(answer, value)
      return { ...value }
    }
    smallAnswers.set(answer, NOT_A_RECORD)
  }
  return value
}

/** Whether `value` (from JSON.parse) is an object whose members are all strings, numbers,
 * booleans or null. */
function flatRecord (value) {
  if (typeof value !== 'object' || value === null || isArray(value)) return false
  // Own keys only (for-in would visit, and read, an enumerable member of Object.prototype).
  const keys = objectKeys(value)
  for (let i = 0; i < keys.length; i++) {
    const member = value[keys[i]]
    if (typeof member === 'object' && member !== null) return false
  }
  return true
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
  let answer
  try {
    let length
    try {
      length = write(args)
    } finally {
      crossingKept = null
    }
    if (kept.length === 0) {
      answer = contractCall(index, buf, length)
    } else {
      try {
        answer = contractCall(index, buf, length, kept)
      } catch {
        // Only a bug gets here; a kept value it cost is parsed again when next needed.
        keptValues = new WeakMap()
        reusedValues = new WeakMap()
        length = write(args)
        answer = contractCall(index, buf, length)
      }
    }
  } finally {
    release()
  }
  switch (answer.charCodeAt(0)) {
    case 0x75: return undefined // u
    case 0x69: return args[+answer.slice(1)] // i<index>
    case 0x6a: return answer.length <= SMALL_ANSWER ? small(answer) : parse(answer.slice(1)) // j<json>
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

'use strict'
// The plain-data model: where a JavaScript value given to this package's own JSON APIs is checked
// before it becomes JSON text or reaches the addon (scratchpad arguments and options, routing
// candidates, broker options, client frames). The TypeScript core's functions (canonical, policy,
// team manifest, Boss) read their arguments through lib/contract.js instead, which keeps what
// JSON loses so that the core can answer with the TypeScript core's errors.
//
// Plain data is null, booleans, strings, numbers, arrays whose prototype is exactly
// Array.prototype, and objects whose prototype is Object.prototype or null, holding only enumerable own data properties with string keys. Anything else is refused
// before a property of it is read, so no toJSON, getter or proxy trap of the caller ever runs:
// proxies (detected, never entered), subclasses and swapped prototypes, boxed primitives,
// accessors, symbol keys, holes, functions, symbols, BigInt, and cycles. JSON.stringify then
// writes the text; on checked data the only code it could still call is a toJSON inherited from
// Object.prototype or Array.prototype, so when one is planted there the text is written here.
const { types: { isProxy, isBoxedPrimitive } } = require('node:util')
const { constants: C, IntercomError } = require('./native.js')

const MAX_DEPTH = C.maxDepth
const objectProto = Object.prototype
const arrayProto = Array.prototype
const { getPrototypeOf, keys: ownKeys, getOwnPropertyNames, getOwnPropertySymbols, getOwnPropertyDescriptor, hasOwn } = Object
const { isArray } = Array
const { isFinite } = Number
const stringify = JSON.stringify
const isRawJSON = typeof JSON.isRawJSON === 'function' ? JSON.isRawJSON : () => false

/**
 * What a caller accepts: JSON data (finite numbers, well-formed strings, objects of
 * Object.prototype or null). `absentDepth`: an undefined property of an object at this depth or
 * shallower (the value itself is depth 1) is absent, as JSON.stringify drops it; anywhere else
 * undefined is refused. An undefined array element is always refused (JSON.stringify writes null).
 * (The canonical functions read their values through lib/contract.js instead, with the
 * TypeScript core's errors.)
 */
/** JSON data, undefined nowhere. */
const DATA = Object.freeze({ absentDepth: 0, what: 'JSON data' })
/** An arguments or options object: an undefined top-level property is absent. */
const ARGS = Object.freeze({ absentDepth: 1, what: 'JSON data' })
/** A list of records (routing candidates): an undefined field of a record is absent. */
const RECORDS = Object.freeze({ absentDepth: 2, what: 'JSON data' })
/** A wire frame: every object field is optional, so an undefined one is absent at any depth. */
const FRAME = Object.freeze({ absentDepth: Infinity, what: 'JSON data' })

// Paths such as $.vectors[3].name are built only when something is refused: each level adds its
// key (and the container, to tell a cycle) while the error unwinds, so the common path
// allocates nothing.
class Rejection {
  constructor (code, message) {
    this.code = code
    this.message = message
    this.keys = []
    this.holders = []
  }
}

function reject (code, message) {
  throw new Rejection(code, message)
}

function within (error, key, holder) {
  if (error instanceof Rejection) {
    error.keys.push(key)
    error.holders.push(holder)
  }
  return error
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

/** `keys` innermost first, as collected. */
function pathOf (root, keys, from = 0) {
  let path = root
  for (let i = keys.length - 1; i >= from; i--) {
    const key = keys[i]
    path += typeof key === 'number' ? `[${key}]` : IDENTIFIER.test(key) ? `.${key}` : `[${stringify(key)}]`
  }
  return path
}

/** The IntercomError for a Rejection; a nesting failure whose containers repeat is a cycle. */
function refusal (error, root) {
  if (!(error instanceof Rejection)) return error
  const { keys, holders } = error
  if (error.code === 'NESTING_TOO_DEEP') {
    // holders[i] holds keys[i]; from the root down, the first container seen twice closes it.
    const seen = new Map()
    for (let i = holders.length - 1; i >= 0; i--) {
      const first = seen.get(holders[i])
      if (first !== undefined) {
        return new IntercomError('UNSUPPORTED_VALUE', `${pathOf(root, keys, i + 1)}: cyclic reference (back to ${pathOf(root, keys, first + 1)})`)
      }
      seen.set(holders[i], i)
    }
  }
  return new IntercomError(error.code, `${pathOf(root, keys)}: ${error.message}`)
}

function checkProperties (value, names, array) {
  // Symbol keys, non-enumerable or accessor properties would be dropped or invoked by
  // JSON.stringify. The own string keys match the enumerable ones, plus an array's length,
  // only when none is hidden.
  if (getOwnPropertySymbols(value).length !== 0) reject('UNSUPPORTED_VALUE', 'symbol properties are not supported')
  if (getOwnPropertyNames(value).length !== names.length + (array ? 1 : 0)) {
    reject('UNSUPPORTED_VALUE', 'properties must be enumerable data properties (no holes or extra array properties)')
  }
  for (let i = 0; i < names.length; i++) {
    const descriptor = getOwnPropertyDescriptor(value, names[i])
    if (descriptor.get !== undefined || descriptor.set !== undefined) {
      throw within(new Rejection('UNSUPPORTED_VALUE', 'accessor properties are not supported'), array ? i : names[i], value)
    }
  }
}

/** Checks one array or object without entering its values; returns its own keys. */
function checkContainer (value, depth, model) {
  if (isProxy(value)) reject('UNSUPPORTED_VALUE', 'a proxy is not plain data (it is refused without being entered)')
  if (depth > MAX_DEPTH) reject('NESTING_TOO_DEEP', `nesting deeper than ${MAX_DEPTH} levels`)
  const array = isArray(value)
  const proto = getPrototypeOf(value)
  if (array) {
    if (proto !== arrayProto) reject('UNSUPPORTED_VALUE', 'an array must be a plain Array (no subclass, no other prototype)')
  } else if (proto === objectProto || proto === null) {
    if (isBoxedPrimitive(value) || (proto === null && isRawJSON(value))) reject('UNSUPPORTED_VALUE', 'a boxed primitive or raw JSON object is not plain data')
  } else {
    reject('UNSUPPORTED_VALUE', 'value must be a JSON primitive, array, or plain object (prototype Object.prototype or null)')
  }
  const names = ownKeys(value)
  if (array && names.length !== value.length) reject('UNSUPPORTED_VALUE', 'sparse arrays and extra array properties are not supported')
  checkProperties(value, names, array)
  for (let i = 0; i < names.length; i++) if (!names[i].isWellFormed()) throw within(new Rejection('UNPAIRED_SURROGATE', 'the key holds an unpaired surrogate'), names[i], value)
  return names
}

/** Checks that value is plain data of `model`. Throws a Rejection. */
function check (value, depth, model) {
  switch (typeof value) {
    case 'string':
      if (!value.isWellFormed()) reject('UNPAIRED_SURROGATE', 'the string holds an unpaired surrogate')
      return
    case 'boolean':
      return
    case 'number':
      if (!isFinite(value)) reject('UNSUPPORTED_VALUE', `${value} is not a JSON number`)
      return
    case 'object': {
      if (value === null) return
      const names = checkContainer(value, depth, model)
      const array = isArray(value)
      const absentHere = !array && depth <= model.absentDepth
      for (let i = 0; i < names.length; i++) {
        const child = array ? value[i] : value[names[i]]
        if (child === undefined && absentHere) continue
        try {
          check(child, depth + 1, model)
        } catch (error) {
          throw within(error, array ? i : names[i], value)
        }
      }
      return
    }
    case 'undefined':
      return reject('UNSUPPORTED_VALUE', `undefined is not ${model.what}`)
    default:
      return reject('UNSUPPORTED_VALUE', `${typeof value} is not ${model.what}`)
  }
}

/** Whether JSON.stringify, given checked data, can call nothing of anyone's: no toJSON it would
 * inherit. (Object.prototype's own prototype is always null.) */
function stringifyIsInert () {
  return !hasOwn(objectProto, 'toJSON') && !hasOwn(arrayProto, 'toJSON') && getPrototypeOf(arrayProto) === objectProto
}

/** The JSON text of checked data, written here (what JSON.stringify prints for it), for when a
 * toJSON has been planted on Object.prototype or Array.prototype. */
function written (value) {
  if (value === null || typeof value !== 'object') return stringify(value)
  let text = ''
  if (isArray(value)) {
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + written(value[i])
    return `[${text}]`
  }
  const names = ownKeys(value)
  for (let i = 0; i < names.length; i++) {
    const child = value[names[i]]
    if (child === undefined) continue // absent: the check allowed it only where the model does
    text += (text === '' ? '' : ',') + stringify(names[i]) + ':' + written(child)
  }
  return `{${text}}`
}

/** Throws an IntercomError unless value is plain data of `model`; paths start at `root`. */
function checkPlain (value, model, root) {
  try {
    check(value, 1, model)
  } catch (error) {
    throw refusal(error, root)
  }
}

/** The JSON text of value, after checking that it is plain data of `model`. */
function jsonText (value, model, root) {
  try {
    check(value, 1, model)
  } catch (error) {
    throw refusal(error, root)
  }
  return stringifyIsInert() ? stringify(value) : written(value)
}

/**
 * The own properties of an options object given to `fn`, as a null-prototype object without the
 * undefined ones (an undefined option is absent). Refuses a non-object (INVALID_ARGUMENT), an
 * object that is not plain data (UNSUPPORTED_VALUE, nothing of it is read), and a key not in
 * `keys` (UNKNOWN_KEY: a typo is refused, never ignored). With `deep`, the values are checked as
 * plain data too; otherwise the caller checks each where it is used. Inherited properties are
 * never read. `undefined` options are an empty object.
 */
function optionsOf (options, keys, fn, deep) {
  const own = { __proto__: null }
  if (options === undefined) return own
  if (options === null || typeof options !== 'object') fail('INVALID_ARGUMENT', `${fn} takes an options object`)
  try {
    if (deep) check(options, 1, ARGS, null)
    else checkContainer(options, 1, ARGS)
  } catch (error) {
    throw refusal(error, 'options')
  }
  if (isArray(options)) fail('INVALID_ARGUMENT', `${fn} takes an options object, not an array`)
  const names = ownKeys(options)
  for (let i = 0; i < names.length; i++) {
    const key = names[i]
    if (!keys.includes(key)) fail('UNKNOWN_KEY', `${pathOf('options', [key])}: ${fn} takes no such option (options: ${keys.join(', ')})`)
    if (options[key] !== undefined) own[key] = options[key]
  }
  return own
}

function fail (code, message) {
  throw new IntercomError(code, message)
}

module.exports = { DATA, ARGS, RECORDS, FRAME, checkPlain, jsonText, optionsOf }

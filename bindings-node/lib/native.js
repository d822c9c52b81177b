'use strict'
// Loads the N-API addon. Its failures arrive as Errors whose `code` napi set to the core's stable
// name (bindings-node/src/lib.rs, CodeStatus) and whose message is the core's; the addon is
// wrapped once, here, so that every such failure reaches callers as an IntercomError with the
// same code and message, whichever function or method threw it (or rejected, for a promise).
const { join } = require('node:path')

class IntercomError extends Error {
  constructor (code, message) {
    super(message)
    this.name = 'IntercomError'
    this.code = code
  }
}

let native
try {
  native = require(join(__dirname, '..', 'agent_intercom.node'))
} catch (cause) {
  throw new IntercomError('NATIVE_ADDON_UNAVAILABLE',
    `@ctliz/agent-intercom-core: cannot load agent_intercom.node for ${process.platform}-${process.arch}` +
    ` (in a source checkout, run \`npm run build\`): ${cause && cause.message}`)
}

const { apply } = Reflect
const { getOwnPropertyNames, getOwnPropertyDescriptor, defineProperty } = Object
const NativePromise = Promise
const promiseCatch = Promise.prototype.catch

const constants = native.constants()
const CODES = new Set(constants.errorCodes)

/** An addon failure carrying one of the core's codes as an IntercomError; anything else (napi's
 * own argument errors, whose codes are napi statuses) unchanged. */
function intercomError (error) {
  if (error instanceof Error && !(error instanceof IntercomError) && CODES.has(error.code)) {
    return new IntercomError(error.code, error.message)
  }
  return error
}

function rejected (error) {
  throw intercomError(error)
}

function converting (fn) {
  return function (...args) {
    let out
    try {
      out = apply(fn, this, args)
    } catch (error) {
      throw intercomError(error)
    }
    return out instanceof NativePromise ? apply(promiseCatch, out, [rejected]) : out
  }
}

// Functions are replaced by converting ones; the classes napi defines keep their identity (they
// are what the addon's factories return) and get converting methods in place.
const addon = { __proto__: null }
for (const name of Object.keys(native)) {
  const value = native[name]
  if (typeof value !== 'function') {
    addon[name] = value
    continue
  }
  const proto = value.prototype
  const methods = proto ? getOwnPropertyNames(proto).filter((key) => key !== 'constructor') : []
  if (methods.length === 0) {
    addon[name] = converting(value)
    continue
  }
  for (const key of methods) {
    const descriptor = getOwnPropertyDescriptor(proto, key)
    if (typeof descriptor.value === 'function') defineProperty(proto, key, { ...descriptor, value: converting(descriptor.value) })
  }
  addon[name] = value
}
Object.freeze(addon)

function fail (code, message) {
  throw new IntercomError(code, message)
}

module.exports = { addon, constants, fail, IntercomError }

'use strict'
// @ctliz/agent-intercom-core/scratchpad: the agent scratchpad and task contract (a2a-contract-v1)
// on one SQLite store shared safely by many processes, backed by the Rust implementation.
const { mkdirSync } = require('node:fs')
const { dirname, join, resolve } = require('node:path')
const { addon, rethrow, fail, IntercomError } = require('./native.js')
const { agentDirFromEnv } = require('./broker.js')

const ALL = addon.padOperations()
/** Store operations, in the order of docs/scratchpad.md. */
const OPERATIONS = Object.freeze(ALL.filter((op) => !op.startsWith('check.')))
/** Rule checks, which need no store. */
const CHECKS = Object.freeze(ALL.filter((op) => op.startsWith('check.')))

const camel = (name) => name.replace(/[._]([a-z])/g, (_, c) => c.toUpperCase())
/** camelCase option name -> the store's snake_case key, from the Rust side's list. */
const OPTION_KEYS = Object.fromEntries(addon.padOptionKeys().map((key) => [camel(key), key]))

function isPlainObject (value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** The default store: $AGENT_INTERCOM_SCRATCHPAD, else <agentDir>/scratchpad.sqlite. */
function defaultScratchpadPath (env = process.env) {
  const configured = typeof env.AGENT_INTERCOM_SCRATCHPAD === 'string' ? env.AGENT_INTERCOM_SCRATCHPAD.trim() : ''
  return configured ? resolve(configured) : join(agentDirFromEnv(env), 'scratchpad.sqlite')
}

function argsText (args, what) {
  if (args === undefined) return undefined
  if (!isPlainObject(args)) fail('INVALID_ARGUMENT', `${what} must be a plain object`)
  try {
    return JSON.stringify(args)
  } catch (cause) {
    // BigInt, cycles, throwing toJSON ...
    return fail('INVALID_ARGUMENT', `${what} cannot be sent as JSON: ${cause && cause.message}`)
  }
}

function opArg (op) {
  if (typeof op !== 'string') fail('INVALID_ARGUMENT', 'op must be a string')
  return op
}

/** A scratchpad store. Every method is synchronous (SQLite in this thread) and throws
 * IntercomError with a stable code; a refused operation changes nothing. */
class Scratchpad {
  constructor (native, path) {
    this._native = native
    this.path = path
  }

  /** Runs one operation by name with its arguments object; returns the parsed result. */
  request (op, args) {
    const text = argsText(args, 'args')
    let out
    try {
      out = this._native.request(opArg(op), text)
    } catch (error) {
      return rethrow(error)
    }
    return JSON.parse(out)
  }

  /** True after close(). */
  get closed () { return this._native.closed }

  /** Closes the store; later calls throw. Closing twice is harmless. */
  close () { this._native.close() }
}

for (const op of OPERATIONS) {
  Object.defineProperty(Scratchpad.prototype, camel(op), {
    value: function (args) { return this.request(op, args) },
    writable: true,
    configurable: true
  })
}

/**
 * Opens (creating if needed) a store. options: { path?, perProjectCap?, perRecipientCap?,
 * maxContentBytes?, allowFullExport? }. Throws IntercomError STORE_NEWER_SCHEMA,
 * STORE_CORRUPT (the file is left untouched), STORE_IO or INVALID_ARGUMENT.
 */
function openScratchpad (options = {}) {
  if (!isPlainObject(options)) fail('INVALID_ARGUMENT', 'options must be a plain object')
  const config = {}
  for (const [key, value] of Object.entries(options)) {
    if (key === 'path') continue
    if (value === undefined) continue
    if (!(key in OPTION_KEYS)) fail('INVALID_ARGUMENT', `unknown option ${JSON.stringify(key)}; options: path, ${Object.keys(OPTION_KEYS).join(', ')}`)
    // Values are checked by the store's own option parser, with the same codes as C and the CLI.
    config[OPTION_KEYS[key]] = value
  }
  if (options.path !== undefined && (typeof options.path !== 'string' || options.path === '')) fail('INVALID_ARGUMENT', 'path must be a non-empty string')
  const path = options.path !== undefined ? resolve(options.path) : defaultScratchpadPath()
  try {
    mkdirSync(dirname(path), { recursive: true })
  } catch (cause) {
    fail('STORE_IO', `cannot create ${dirname(path)}: ${cause && cause.message}`)
  }
  try {
    return new Scratchpad(addon.openPad(path, JSON.stringify(config)), path)
  } catch (error) {
    return rethrow(error)
  }
}

/** Evaluates a rule check (see CHECKS) without a store; returns the parsed result. */
function checkRule (op, args) {
  const text = argsText(args, 'args')
  if (!opArg(op).startsWith('check.')) fail('INVALID_ARGUMENT', `${JSON.stringify(op)} is not a rule check; checks: ${CHECKS.join(', ')}`)
  let out
  try {
    out = addon.padCheck(op, text)
  } catch (error) {
    return rethrow(error)
  }
  return JSON.parse(out)
}

module.exports = { openScratchpad, checkRule, defaultScratchpadPath, Scratchpad, OPERATIONS, CHECKS, IntercomError }

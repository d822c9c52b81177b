'use strict'
// @ctliz/agent-intercom-core/scratchpad: the agent scratchpad and task contract (a2a-contract-v1)
// on one SQLite store shared safely by many processes, backed by the Rust implementation.
const { mkdirSync } = require('node:fs')
const { dirname, resolve } = require('node:path')
const { addon, constants: C, fail, IntercomError } = require('./native.js')
const { agentDirFromEnv } = require('./broker.js')
const { ARGS, DATA, jsonText, optionsOf } = require('./plain.js')

const ALL = addon.padOperations()
/** Store operations, in the order of docs/scratchpad.md. */
const OPERATIONS = Object.freeze(ALL.filter((op) => !op.startsWith('check.')))
/** Rule checks, which need no store. */
const CHECKS = Object.freeze(ALL.filter((op) => op.startsWith('check.')))

const camel = (name) => name.replace(/[._]([a-z])/g, (_, c) => c.toUpperCase())
/** camelCase option name -> the store's snake_case key, from the Rust side's list. */
const OPTION_KEYS = Object.fromEntries(addon.padOptionKeys().map((key) => [camel(key), key]))

/** The default store, by agent_intercom_scratchpad::default_path: the variable paths::PATH_ENV
 * names (trimmed, a relative path resolved), else paths::DEFAULT_FILE_NAME in the agent directory. */
function defaultScratchpadPath (env = process.env) {
  const value = env[C.scratchpad.pathEnv]
  return resolve(addon.defaultPadPath(typeof value === 'string' ? value : undefined, agentDirFromEnv(env)))
}

/** The JSON text of an operation's arguments: plain JSON data (lib/plain.js), refused with
 * UNSUPPORTED_VALUE (or UNPAIRED_SURROGATE) naming the path otherwise; NaN and Infinity are
 * refused, never sent as null. An undefined top-level property is absent, as before; undefined
 * deeper (where JSON.stringify would drop a key or write null) is refused. */
function argsText (args, what) {
  if (args === undefined) return undefined
  if (args === null || typeof args !== 'object') fail('INVALID_ARGUMENT', `${what} must be a plain object`)
  const text = jsonText(args, ARGS, what)
  if (Array.isArray(args)) fail('INVALID_ARGUMENT', `${what} must be a plain object`)
  return text
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
    return JSON.parse(this._native.request(opArg(op), text))
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

/** The options openScratchpad takes: path, and the store's own (camelCase) keys. */
const OPTIONS = Object.freeze(['path', ...Object.keys(OPTION_KEYS)])

/**
 * Opens (creating if needed) a store. options: { path?, perProjectCap?, perRecipientCap?,
 * maxContentBytes?, allowFullExport? }; an undefined one is absent. Throws IntercomError
 * UNKNOWN_KEY (another key), UNSUPPORTED_VALUE (NaN, Infinity or anything else that is not plain
 * JSON data), STORE_NEWER_SCHEMA, STORE_CORRUPT (the file is left untouched), STORE_IO or
 * INVALID_ARGUMENT.
 */
function openScratchpad (options) {
  const own = optionsOf(options, OPTIONS, 'openScratchpad', true)
  const config = { __proto__: null }
  // Values are checked by the store's own option parser, with the same codes as C and the CLI.
  for (const key of Object.keys(own)) if (key !== 'path') config[OPTION_KEYS[key]] = own[key]
  if (own.path !== undefined && (typeof own.path !== 'string' || own.path === '')) fail('INVALID_ARGUMENT', 'path must be a non-empty string')
  const path = own.path !== undefined ? resolve(own.path) : defaultScratchpadPath()
  try {
    mkdirSync(dirname(path), { recursive: true })
  } catch (cause) {
    fail('STORE_IO', `cannot create ${dirname(path)}: ${cause && cause.message}`)
  }
  return new Scratchpad(addon.openPad(path, jsonText(config, DATA, 'options')), path)
}

/** Evaluates a rule check (see CHECKS) without a store; returns the parsed result. */
function checkRule (op, args) {
  const text = argsText(args, 'args')
  if (!opArg(op).startsWith('check.')) fail('INVALID_ARGUMENT', `${JSON.stringify(op)} is not a rule check; checks: ${CHECKS.join(', ')}`)
  return JSON.parse(addon.padCheck(op, text))
}

module.exports = { openScratchpad, checkRule, defaultScratchpadPath, Scratchpad, OPERATIONS, CHECKS, IntercomError }

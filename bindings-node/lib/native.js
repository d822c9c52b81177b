'use strict'
// Loads the N-API addon and turns its failures into IntercomError objects with stable codes.
const { join } = require('node:path')

class IntercomError extends Error {
  constructor (code, message) {
    super(message)
    this.name = 'IntercomError'
    this.code = code
  }
}

let addon
try {
  addon = require(join(__dirname, '..', 'agent_intercom.node'))
} catch (cause) {
  throw new IntercomError('NATIVE_ADDON_UNAVAILABLE',
    `@ctliz/agent-intercom-core: cannot load agent_intercom.node for ${process.platform}-${process.arch}` +
    ` (in a source checkout, run \`npm run build\`): ${cause && cause.message}`)
}

const NATIVE_ERROR = /^\[aic:([A-Z0-9_]+)\] ([\s\S]*)$/

/** Re-throws a native failure as an IntercomError carrying the core's stable code. */
function rethrow (error) {
  const match = error && typeof error.message === 'string' ? NATIVE_ERROR.exec(error.message) : null
  if (match === null) throw error
  throw new IntercomError(match[1], match[2])
}

function fail (code, message) {
  throw new IntercomError(code, message)
}

const constants = addon.constants()

module.exports = { addon, constants, rethrow, fail, IntercomError }

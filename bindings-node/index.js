'use strict'
// @ctliz/agent-intercom-core: everything from ./protocol-v4 and ./canonical, plus the vendored
// copy drift check and the error class.
const { constants, IntercomError } = require('./lib/native.js')
const protocolV4 = require('./protocol-v4/index.js')
const canonical = require('./canonical/index.js')
const drift = require('./lib/drift.js')

module.exports = {
  ...protocolV4,
  ...canonical,
  ...drift,
  IntercomError,
  AGENT_INTERCOM_CORE_VERSION: constants.version,
  INTERCOM_ERROR_CODES: Object.freeze(constants.errorCodes.slice()),
}

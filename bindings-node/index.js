'use strict'
// @ctliz/agent-intercom-core: what the TypeScript core's root exports (./policy, ./vectors and
// ./team-manifest), plus this package's own root names: everything from ./protocol-v4 and
// ./canonical, the vendored copy drift check, the error class and the versions. No two of these
// modules export the same name (tests/node/policy.test.js holds that).
const { constants, IntercomError } = require('./lib/native.js')
const policy = require('./policy/index.js')
const vectors = require('./vectors/index.js')
const teamManifest = require('./team-manifest/index.js')
const protocolV4 = require('./protocol-v4/index.js')
const canonical = require('./canonical/index.js')
const drift = require('./lib/drift.js')

module.exports = {
  ...policy,
  ...vectors,
  ...teamManifest,
  ...protocolV4,
  ...canonical,
  ...drift,
  IntercomError,
  AGENT_INTERCOM_CORE_VERSION: constants.version,
  INTERCOM_ERROR_CODES: Object.freeze(constants.errorCodes.slice()),
}

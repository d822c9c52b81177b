#!/usr/bin/env node
'use strict'
// agent-intercom-core check-vendored <path>: exit 0 when the vendored copy matches, 1 when it
// drifted, 2 for usage errors or an unreadable file.
const { checkVendoredProtocolV4, AGENT_INTERCOM_CORE_VERSION } = require('../index.js')

const [command, path, ...rest] = process.argv.slice(2)
if (command === '--version') {
  console.log(AGENT_INTERCOM_CORE_VERSION)
  process.exit(0)
}
if (command !== 'check-vendored' || !path || rest.length > 0) {
  console.error('usage: agent-intercom-core check-vendored <path-to-agent-intercom-protocol-v4.mjs-or-.cjs>')
  process.exit(2)
}
let report
try {
  report = checkVendoredProtocolV4(path)
} catch (error) {
  console.error(`agent-intercom-core: ${error.message}`)
  process.exit(2)
}
if (report.ok) {
  console.log(`ok: ${path} is byte-identical to ${report.matchedFile} (sha256 ${report.sha256}); schema ${report.schemaVersion}, semantics hash ${report.semanticsHash}`)
  process.exit(0)
}
console.error(`drift: ${path}`)
for (const problem of report.problems) console.error(`  - ${problem}`)
process.exit(1)

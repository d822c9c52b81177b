'use strict'
// The drift guard: checks an adapter's vendored copy of vendor/agent-intercom-protocol-v4.mjs.
const { readFileSync } = require('node:fs')
const { addon, constants: C, fail } = require('./native.js')

const VENDORED_PROTOCOL_V4 = Object.freeze({
  files: Object.freeze(C.vendoredFiles.map((f) => Object.freeze({ format: f.format, file: f.file, sha256: f.sha256 }))),
  schemaVersion: C.vectorSchemaVersion,
  semanticsHash: C.semanticsHash,
})

function checkVendoredProtocolV4 (path) {
  if (typeof path !== 'string' || path === '') fail('INVALID_ARGUMENT', 'path must be a non-empty string')
  let bytes
  try {
    bytes = readFileSync(path)
  } catch (error) {
    fail('INVALID_ARGUMENT', `cannot read the vendored copy at ${path}: ${error.code || error.message}`)
  }
  const report = addon.checkVendored(bytes)
  return Object.freeze({
    ok: report.ok,
    path,
    sha256: report.sha256,
    byteIdentical: report.byteIdentical,
    matchedFile: report.matchedFile ?? null,
    schemaVersion: report.schemaVersion ?? null,
    expectedSchemaVersion: C.vectorSchemaVersion,
    semanticsHash: report.semanticsHash ?? null,
    computedSemanticsHash: report.computedSemanticsHash ?? null,
    expectedSemanticsHash: C.semanticsHash,
    problems: Object.freeze(report.problems.slice()),
  })
}

module.exports = { VENDORED_PROTOCOL_V4, checkVendoredProtocolV4 }

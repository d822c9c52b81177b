'use strict'
const test = require('node:test')
const assert = require('node:assert')
const { mkdtempSync, readFileSync, writeFileSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')
const { createHash } = require('node:crypto')
const { checkVendoredProtocolV4, VENDORED_PROTOCOL_V4 } = require('@ctliz/agent-intercom-core')
const { root, throwsCode } = require('./helpers.js')

const shipped = join(root, 'vendor', 'agent-intercom-protocol-v4.mjs')

test('the published SHA-256 digests are the shipped files', () => {
  const sums = VENDORED_PROTOCOL_V4.files.map((f) => {
    assert.strictEqual(f.sha256, createHash('sha256').update(readFileSync(join(root, 'vendor', f.file))).digest('hex'))
    return `${f.sha256}  ${f.file}\n`
  })
  assert.deepStrictEqual(VENDORED_PROTOCOL_V4.files.map((f) => f.format), ['esm', 'cjs'])
  assert.strictEqual(readFileSync(join(root, 'vendor', 'SHA256SUMS'), 'utf8'), sums.join(''))
})

test('the CommonJS twin exports exactly what the ES module exports', async () => {
  const esm = await import(join(root, 'vendor', 'agent-intercom-protocol-v4.mjs'))
  const cjs = require(join(root, 'vendor', 'agent-intercom-protocol-v4.cjs'))
  assert.deepStrictEqual(Object.keys(cjs).sort(), Object.keys(esm).sort())
  assert.deepStrictEqual(cjs.INTERCOM_PROTOCOL_V4_VECTORS, esm.INTERCOM_PROTOCOL_V4_VECTORS)
  assert.strictEqual(checkVendoredProtocolV4(join(root, 'vendor', 'agent-intercom-protocol-v4.cjs')).matchedFile, 'agent-intercom-protocol-v4.cjs')
})

test('checkVendoredProtocolV4: identical passes, any drift fails with reasons', () => {
  const ok = checkVendoredProtocolV4(shipped)
  assert.strictEqual(ok.ok, true)
  assert.strictEqual(ok.byteIdentical, true)
  assert.strictEqual(ok.matchedFile, 'agent-intercom-protocol-v4.mjs')
  assert.strictEqual(ok.schemaVersion, 2)
  assert.strictEqual(ok.computedSemanticsHash, ok.expectedSemanticsHash)
  const dir = mkdtempSync(join(tmpdir(), 'aic-drift-'))
  try {
    const copy = join(dir, 'copy.mjs')
    writeFileSync(copy, readFileSync(shipped, 'utf8').replace('"alpha"', '"ALPHA"'))
    const bad = checkVendoredProtocolV4(copy)
    assert.strictEqual(bad.ok, false)
    assert.strictEqual(bad.byteIdentical, false)
    assert.notStrictEqual(bad.computedSemanticsHash, bad.expectedSemanticsHash)
    assert.ok(bad.problems.length >= 2)
    throwsCode(assert, () => checkVendoredProtocolV4(join(dir, 'missing.mjs')), 'INVALID_ARGUMENT')
    throwsCode(assert, () => checkVendoredProtocolV4(42), 'INVALID_ARGUMENT')
    const bin = join(root, 'bindings-node', 'bin', 'agent-intercom-core.js')
    assert.match(execFileSync(process.execPath, [bin, 'check-vendored', shipped], { encoding: 'utf8' }), /^ok: /)
    const drift = spawnSync(process.execPath, [bin, 'check-vendored', copy], { encoding: 'utf8' })
    assert.strictEqual(drift.status, 1)
    assert.match(drift.stderr, /not byte-identical to a shipped file/)
    assert.strictEqual(spawnSync(process.execPath, [bin], { encoding: 'utf8' }).status, 2)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

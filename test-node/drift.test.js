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

test('the published SHA-256 is the shipped file digest', () => {
  const bytes = readFileSync(shipped)
  assert.strictEqual(VENDORED_PROTOCOL_V4.sha256, createHash('sha256').update(bytes).digest('hex'))
  assert.strictEqual(readFileSync(`${shipped}.sha256`, 'utf8'), `${VENDORED_PROTOCOL_V4.sha256}  ${VENDORED_PROTOCOL_V4.file}\n`)
})

test('checkVendoredProtocolV4: identical passes, any drift fails with reasons', () => {
  const ok = checkVendoredProtocolV4(shipped)
  assert.strictEqual(ok.ok, true)
  assert.strictEqual(ok.byteIdentical, true)
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
    const bin = join(root, 'bin', 'agent-intercom-core.js')
    assert.match(execFileSync(process.execPath, [bin, 'check-vendored', shipped], { encoding: 'utf8' }), /^ok: /)
    const drift = spawnSync(process.execPath, [bin, 'check-vendored', copy], { encoding: 'utf8' })
    assert.strictEqual(drift.status, 1)
    assert.match(drift.stderr, /not byte-identical/)
    assert.strictEqual(spawnSync(process.execPath, [bin], { encoding: 'utf8' }).status, 2)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

'use strict'
const { readFileSync } = require('node:fs')
const { join } = require('node:path')

const root = join(__dirname, '..', '..')
function readVectors (name) {
  return JSON.parse(readFileSync(join(root, 'vectors', name), 'utf8'))
}

/** Asserts that fn throws an error carrying `code`, and returns it. */
function throwsCode (assert, fn, code) {
  let caught
  try { fn() } catch (error) { caught = error }
  assert.ok(caught, `expected a throw with code ${code}`)
  assert.ok(caught instanceof Error, 'throws an Error')
  assert.strictEqual(caught.code, code, `code of: ${caught.message}`)
  return caught
}

module.exports = { root, readVectors, throwsCode }

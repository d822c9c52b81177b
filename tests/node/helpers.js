'use strict'
const { readFileSync } = require('node:fs')
const { join } = require('node:path')
const { describe, test, after } = require('node:test')
const assert = require('node:assert')

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

/** AIC_VECTOR=<substring>: only the cases whose id (or name) contains it run; null when unset. */
function vectorFilter () {
  return process.env.AIC_VECTOR || null
}

/** True when node --test selects tests by name, so some cases may not start. */
function namePatternActive () {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS || '').split(/\s+/)]
  return flags.some((flag) => /^--test-(name|skip)-pattern/.test(flag))
}

/**
 * Registers the cases of one vectors file as a suite named `file`, one sub-test per case named
 * by its id, so `node --test --test-name-pattern=<id>` runs one case and AIC_VECTOR=<substring>
 * (see vectorFilter) the matching ones. `run(c, t)` executes a case and returns nothing, or
 * returns a reason why this runner skips it. After the suite, prints
 * `file: N cases, E executed, S skipped[, F filtered]` and fails unless every case was executed,
 * skipped or filtered (by AIC_VECTOR, or not started under a name pattern). `done(counts)`, when
 * given, checks the counts of an unfiltered run further.
 */
function describeVectors (file, cases, { id = (c) => c.id, run, done }) {
  const filter = vectorFilter()
  describe(file, () => {
    const counts = { total: cases.length, executed: 0, skipped: 0, filtered: 0 }
    for (const c of cases) {
      const name = id(c)
      if (filter !== null && !name.includes(filter)) {
        counts.filtered++
        continue
      }
      test(name, async (t) => {
        counts.executed++ // a case that fails was executed too
        const skip = await run(c, t)
        if (skip !== undefined) {
          counts.executed--
          counts.skipped++
          t.skip(skip)
        }
      })
    }
    after(() => {
      const unstarted = counts.total - counts.executed - counts.skipped - counts.filtered
      const by = [filter !== null && `AIC_VECTOR=${filter}`, unstarted > 0 && 'name pattern'].filter(Boolean)
      const filtered = counts.filtered + unstarted
      console.log(`${file}: ${counts.total} cases, ${counts.executed} executed, ${counts.skipped} skipped` +
        (by.length ? `, ${filtered} filtered (${by.join(', ')})` : ''))
      assert.ok(unstarted === 0 || namePatternActive(), `${file}: ${unstarted} cases neither executed, skipped nor filtered`)
      if (filtered === 0 && done) done(counts)
    })
  })
}

/**
 * The run function of describeVectors for a case file of TypeScript outcomes
 * (core/tests/data/<name>_cases.json): calls module[c.op](...c.args) and compares with c.expect,
 * the very first argument ("input"), a value, or an error of a class, message and code (a
 * ContractValidationError unless the class is a plain Error or TypeError). The Rust and C twins
 * are core/tests/support/outcome_cases.rs and tests/c/outcome_cases.h.
 */
function outcomeCase (module) {
  const { ContractValidationError } = require('../../bindings-node/lib/contract.js')
  return (c) => {
    const fn = module[c.op]
    assert.strictEqual(typeof fn, 'function', c.op)
    let result
    let error
    try { result = fn(...c.args) } catch (e) { error = e }
    const expect = c.expect
    if (expect.kind === 'error') {
      assert.ok(error, `${c.id}: expected ${expect.message}`)
      assert.strictEqual(error.constructor.name, expect.class)
      assert.strictEqual(error.message, expect.message)
      assert.strictEqual(error.code, expect.code)
      if (expect.class !== 'Error' && expect.class !== 'TypeError') assert.ok(error instanceof ContractValidationError)
      return
    }
    if (error) throw error
    if (expect.kind === 'input') assert.strictEqual(result, c.args[0], 'returns the very object')
    else assert.deepStrictEqual(result, expect.value)
  }
}

module.exports = { root, readVectors, throwsCode, vectorFilter, describeVectors, outcomeCase }

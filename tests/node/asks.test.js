'use strict'
// Runs vectors/asks-v1.json through the core's ask-threading rules, by way of the addon's
// checkAskJson (asks::check_ask_json, which the Rust and C runners call too): each case's edges,
// send and maxOpenAsks go in as JSON, the answer must equal its expected. An internal function,
// not public API: the package exposes no ask rules.
const test = require('node:test')
const assert = require('node:assert')
const { addon, IntercomError } = require('../../bindings-node/lib/native.js')
const { readVectors, describeVectors } = require('./helpers.js')

const doc = readVectors('asks-v1.json')

/** Asks the core about one case, as the C runner does. */
function answer (c) {
  return JSON.parse(addon.checkAskJson(JSON.stringify({ edges: c.edges, send: c.send, maxOpenAsks: c.maxOpenAsks })))
}

test('asks-v1.json is the corpus it says, counted and with unique ids', () => {
  assert.strictEqual(doc.corpus, 'agent-intercom/asks-v1')
  assert.strictEqual(doc.version, 1)
  assert.strictEqual(doc.count, doc.cases.length)
  assert.strictEqual(new Set(doc.cases.map((c) => c.id)).size, doc.cases.length)
})

describeVectors('asks-v1.json', doc.cases, {
  run (c) {
    assert.strictEqual(c.kind, 'check', `${c.id}: unknown kind ${c.kind}: neither executed nor skipped`)
    assert.deepStrictEqual(answer(c), c.expected)
  },
  done (counts) {
    assert.deepStrictEqual([counts.executed, counts.skipped], [doc.count, 0])
  }
})

test('the runner reports an edited expectation instead of passing', () => {
  const c = doc.cases.find((x) => x.expected.refused === 'MUTUAL_ASK')
  assert.throws(() => assert.deepStrictEqual(answer(c), { refused: 'TOO_MANY_PENDING_ASKS' }), assert.AssertionError)
})

test('checkAskJson refuses what is not an input, with the core codes', () => {
  const send = { from: 'a', to: 'b' }
  const cases = [
    ['{', 'INVALID_JSON'],
    [JSON.stringify({ edges: [], send, maxOpenAsks: 1, id: 'x' }), 'UNKNOWN_KEY'],
    [JSON.stringify({ edges: [], send: { from: 'a' }, maxOpenAsks: 1 }), 'INVALID_ARGUMENT'],
    [JSON.stringify({ edges: [{ asker: 'a', messageId: 'q', asked: 'b', state: 'open' }], send, maxOpenAsks: 1 }), 'INVALID_ARGUMENT'],
    ['{"edges":[],"send":{"from":"a","to":"b"},"maxOpenAsks":0.5}', 'UNSUPPORTED_NUMBER']
  ]
  for (const [text, code] of cases) {
    assert.throws(() => addon.checkAskJson(text), (error) => error instanceof IntercomError && error.code === code, text)
  }
})

'use strict'
// Values JSON cannot carry faithfully, and option keys nothing reads, are refused with a stable
// code on every path where a JavaScript value becomes JSON text or reaches the addon: the
// canonical model (./canonical), scratchpad arguments and options, routing candidates, broker
// options and client frames. No toJSON, getter or proxy trap of the caller runs.
const test = require('node:test')
const assert = require('node:assert')
const { mkdtempSync, rmSync, existsSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const c = require('@ctliz/agent-intercom-core/canonical')
const p = require('@ctliz/agent-intercom-core/protocol-v4')
const pad = require('@ctliz/agent-intercom-core/scratchpad')
const broker = require('@ctliz/agent-intercom-core/broker')
const { throwsCode } = require('./helpers.js')

const A = 'Scope_AAAAAAAAAA'

/** A proxy whose every trap counts its calls in `calls`. */
function spy (target) {
  const calls = []
  const handler = {}
  for (const trap of ['get', 'set', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf', 'setPrototypeOf',
    'defineProperty', 'deleteProperty', 'isExtensible', 'preventExtensions', 'apply', 'construct']) {
    handler[trap] = (...args) => { calls.push(trap); return Reflect[trap](...args) }
  }
  return { proxy: new Proxy(target, handler), calls }
}

/** Plants `toJSON` on a built-in prototype for the duration of fn, counting calls. */
function withPlantedToJSON (proto, fn) {
  const had = Object.getOwnPropertyDescriptor(proto, 'toJSON')
  let calls = 0
  Object.defineProperty(proto, 'toJSON', { value: function () { calls++; return 'planted' }, writable: true, configurable: true, enumerable: false })
  try {
    fn()
  } finally {
    if (had) Object.defineProperty(proto, 'toJSON', had)
    else delete proto.toJSON
  }
  return calls
}

function tmp (prefix) {
  return mkdtempSync(join(tmpdir(), prefix))
}

// ---------------------------------------------------------------------------------------------
// The canonical model

test('canonical: an Array subclass with toJSON is refused, toJSON never called', () => {
  let called = 0
  class Sub extends Array { toJSON () { called++; return 'sub' } }
  const sub = Sub.from([1, 2])
  for (const value of [sub, { a: sub }]) {
    const error = throwsCode(assert, () => c.canonicalJson(value), 'UNSUPPORTED_VALUE')
    throwsCode(assert, () => c.canonicalHash('d', value), 'UNSUPPORTED_VALUE')
    throwsCode(assert, () => c.canonicalFrame('d', value), 'UNSUPPORTED_VALUE')
    assert.match(error.message, value === sub ? /^\$: / : /^\$\.a: /)
  }
  // No toJSON either: a subclass is not a plain array.
  throwsCode(assert, () => c.canonicalJson(new (class extends Array {})()), 'UNSUPPORTED_VALUE')
  assert.strictEqual(called, 0)
})

test('canonical: arrays and objects with a swapped prototype are refused, toJSON never called', () => {
  let called = 0
  const proto = { toJSON () { called++; return 'swapped' } }
  const array = Object.setPrototypeOf([1], proto)
  const arrayWithArrayProto = Object.setPrototypeOf([1], Object.create(Array.prototype, { toJSON: { value: proto.toJSON } }))
  const object = Object.setPrototypeOf({ a: 1 }, proto)
  for (const value of [array, arrayWithArrayProto, object, [0, array], { x: { y: object } }]) {
    throwsCode(assert, () => c.canonicalJson(value), 'UNSUPPORTED_VALUE')
    throwsCode(assert, () => c.canonicalHash('d', value), 'UNSUPPORTED_VALUE')
  }
  assert.match(throwsCode(assert, () => c.canonicalJson({ x: { y: object } }), 'UNSUPPORTED_VALUE').message, /^\$\.x\.y: /)
  // A boxed primitive made to look plain: JSON.stringify would call valueOf/toString on it.
  throwsCode(assert, () => c.canonicalJson([Object.setPrototypeOf(new Number(1), Object.prototype)]), 'UNSUPPORTED_VALUE')
  throwsCode(assert, () => c.canonicalJson(Object.setPrototypeOf(new String('s'), Object.prototype)), 'UNSUPPORTED_VALUE')
  assert.strictEqual(called, 0)
})

test('canonical: toJSON planted on Object.prototype or Array.prototype changes nothing and is never called', () => {
  const frozen = Object.freeze({ z: Object.freeze([1, 'two', null]), a: true })
  const values = [{ b: 2, a: 1 }, [1, [2, { c: 3 }]], { frozen, n: 1 }, frozen, [], {}, { toJSON: 1 }]
  const expected = values.map((v) => [c.canonicalJson(v), c.canonicalHash('d', v), Buffer.from(c.canonicalFrame('d', v)).toString()])
  const corpus = { version: p.INTERCOM_PROTOCOL_V4_VECTOR_SCHEMA_VERSION, vectors: p.INTERCOM_PROTOCOL_V4_VECTORS }
  const run = () => {
    values.forEach((v, i) => {
      assert.deepStrictEqual([c.canonicalJson(v), c.canonicalHash('d', v), Buffer.from(c.canonicalFrame('d', v)).toString()], expected[i])
    })
    assert.strictEqual(c.canonicalHash(p.INTERCOM_PROTOCOL_V4_VECTORS_HASH_DOMAIN, corpus), p.INTERCOM_PROTOCOL_V4_SEMANTICS_HASH)
    // Frozen data first seen while toJSON is planted is encoded (and remembered) correctly.
    const fresh = Object.freeze({ q: Object.freeze([Object.freeze({ r: 1 })]) })
    assert.strictEqual(c.canonicalJson(fresh), '{"q":[{"r":1}]}')
    assert.strictEqual(c.canonicalJson({ fresh }), '{"fresh":{"q":[{"r":1}]}}')
  }
  assert.strictEqual(withPlantedToJSON(Object.prototype, run), 0)
  assert.strictEqual(withPlantedToJSON(Array.prototype, run), 0)
  // A planted getter is not read either.
  let reads = 0
  Object.defineProperty(Object.prototype, 'toJSON', { get () { reads++; return () => 'x' }, configurable: true })
  try { run() } finally { delete Object.prototype.toJSON }
  assert.strictEqual(reads, 0)
  // Array.prototype moved onto another prototype carrying toJSON.
  const arrayProtoProto = Object.getPrototypeOf(Array.prototype)
  let called = 0
  Object.setPrototypeOf(Array.prototype, Object.create(Object.prototype, { toJSON: { value () { called++; return 'x' }, configurable: true } }))
  try { run() } finally { Object.setPrototypeOf(Array.prototype, arrayProtoProto) }
  assert.strictEqual(called, 0)
})

test('canonical: an own toJSON is a key like any other; a function there is refused', () => {
  assert.strictEqual(c.canonicalJson({ toJSON: 1, a: [{ toJSON: 'x' }] }), '{"a":[{"toJSON":"x"}],"toJSON":1}')
  let called = 0
  const error = throwsCode(assert, () => c.canonicalJson({ a: { toJSON () { called++; return 1 } } }), 'UNSUPPORTED_VALUE')
  assert.match(error.message, /^\$\.a\.toJSON: /)
  assert.strictEqual(called, 0)
})

test('canonical: proxies are refused without running a trap', () => {
  for (const target of [{ a: 1 }, [1, 2], Object.freeze({ a: 1 }), function () {}]) {
    const { proxy, calls } = spy(target)
    for (const value of [proxy, { inner: proxy }, [proxy]]) {
      const error = throwsCode(assert, () => c.canonicalJson(value), 'UNSUPPORTED_VALUE')
      throwsCode(assert, () => c.canonicalHash('d', value), 'UNSUPPORTED_VALUE')
      assert.match(error.message, /^\$(\.inner|\[0\])?: /)
    }
    assert.deepStrictEqual(calls, [])
  }
  const { proxy, revoke } = Proxy.revocable([], {})
  revoke()
  throwsCode(assert, () => c.canonicalJson(proxy), 'UNSUPPORTED_VALUE')
})

test('canonical: a cycle is refused as such, with the path where it closes', () => {
  const cyclic = { a: { b: [0] } }
  cyclic.a.b.push(cyclic.a)
  const error = throwsCode(assert, () => c.canonicalJson(cyclic), 'UNSUPPORTED_VALUE')
  assert.match(error.message, /^\$\.a\.b\[1\]: .*cycl/)
  // Deep but acyclic data keeps its own code.
  let deep = 1
  for (let i = 0; i <= c.CANONICAL_MAX_DEPTH; i++) deep = [deep]
  throwsCode(assert, () => c.canonicalJson(deep), 'NESTING_TOO_DEEP')
  // The same object twice, not nested in itself, is not a cycle.
  const shared = { s: 1 }
  assert.strictEqual(c.canonicalJson({ x: shared, y: [shared, shared] }), '{"x":{"s":1},"y":[{"s":1},{"s":1}]}')
})

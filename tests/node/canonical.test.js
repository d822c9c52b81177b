'use strict'
const test = require('node:test')
const assert = require('node:assert')
const c = require('@ctliz/agent-intercom-core/canonical')
const policy = require('@ctliz/agent-intercom-core/policy')
const { throwsCode } = require('./helpers.js')

test('known answer and frame layout', () => {
  assert.strictEqual(c.canonicalHash('boss-test-v1', { b: 2, a: 1 }), '4ff6c078039d0d494b220a4dafa919c183136d4cf7e303eed1bc642ab0b8e4c2')
  assert.strictEqual(Buffer.from(c.canonicalFrame('d', { é: 1 })).toString('utf8'), 'agent-intercom-canonical-frame-v1:1:d:8:{"é":1}')
  assert.strictEqual(c.CANONICAL_HASH_FRAME, 'agent-intercom-canonical-frame-v1')
  assert.strictEqual(c.CANONICAL_ENCODING_VERSION, 1)
  assert.strictEqual(c.CANONICAL_UNICODE_NORMALIZATION, 'none')
})

test('answers cross whole whatever their characters: ASCII, Latin-1, wider, astral', () => {
  // The addon makes an ASCII or Latin-1 answer as Latin-1 and anything wider as UTF-16: each
  // comes back as written, as a string answer and inside a JSON (object) answer.
  for (const text of ['plain', 'caf\u00e9 \u00ff\u0080', 'caf\u00e9 \u20ac', '\u{1f600} \u00e9', '\u0100']) {
    assert.strictEqual(c.canonicalJson({ k: text }), JSON.stringify({ k: text }))
    // A fresh record (JSON crossing): the revoked state names the principal by the text.
    const principal = { id: text, kind: 'local', state: 'active', generation: 1, policy: 'local-public', rootSessionId: text }
    const { state, changedPrincipalIds } = policy.revokeSubtree({ principals: { [text]: principal } }, text)
    assert.deepStrictEqual(changedPrincipalIds, [text])
    assert.deepStrictEqual(state.principals[text], { ...principal, state: 'revoked', generation: 2 })
  }
})

test('integer-like keys follow JavaScript order, like JSON.stringify', () => {
  const value = { b: 1, 10: 2, 9: 3, a: 4, '01': 5 }
  assert.strictEqual(c.canonicalJson(value), '{"9":3,"10":2,"01":5,"a":4,"b":1}')
})

test('domains and argument types', () => {
  for (const bad of ['', 'a b', 'é', '\ud800', {}]) {
    const error = throwsCode(assert, () => c.canonicalHash(bad, {}), 'INVALID_DOMAIN')
    assert.ok(error instanceof c.ContractValidationError)
    assert.strictEqual(error.message, 'domain: must be non-empty printable ASCII without whitespace')
  }
  // As in TypeScript, the domain is String(domain) for the check (42, null pass).
  assert.strictEqual(c.canonicalHash(42, {}), c.canonicalHash('42', {}))
  assert.strictEqual(c.canonicalHash(null, {}), c.canonicalHash('null', {}))
  assert.throws(() => c.canonicalHash(Symbol('d'), {}), TypeError)
  // The text functions (our extras) keep their IntercomError for a non-string domain.
  throwsCode(assert, () => c.canonicalHashFromText(42, '{}'), 'INVALID_DOMAIN')
  throwsCode(assert, () => c.canonicalHashFromText('d', 42), 'INVALID_ARGUMENT')
  throwsCode(assert, () => c.canonicalJsonFromText({}), 'INVALID_ARGUMENT')
})

test('depth limit and large inputs', () => {
  let deep = 1
  for (let i = 0; i < c.CANONICAL_MAX_DEPTH; i++) deep = [deep]
  assert.ok(c.canonicalJson(deep).startsWith('[[['))
  throwsCode(assert, () => c.canonicalJson([deep]), 'NESTING_TOO_DEEP')
  // A cycle is refused when the value is read (docs/canonical.md), before the core sees it.
  const cyclic = { a: 1 }
  cyclic.self = cyclic
  assert.match(throwsCode(assert, () => c.canonicalJson(cyclic), 'NESTING_TOO_DEEP').message, /^\$: .*cyclic$/)
  const big = 'x'.repeat(8 << 20)
  assert.strictEqual(c.canonicalJson({ big }).length, big.length + 10)
  assert.strictEqual(c.canonicalHash('d', Array.from({ length: 100000 }, (_, i) => i)).length, 64)
})

test('errors are ContractValidationError with a path and a code', () => {
  const error = throwsCode(assert, () => c.canonicalJson({ a: [0, { b: 0.5 }] }), 'UNSUPPORTED_NUMBER')
  assert.strictEqual(error.name, 'ContractValidationError')
  assert.strictEqual(error.path, '$.a[1].b')
  assert.strictEqual(error.message, '$.a[1].b: number must be a safe integer and must not be negative zero')
})

test('deep-frozen data is checked once and still hashed in full', () => {
  const inner = Object.freeze({ b: Object.freeze([1, 2]), a: 'x' })
  const first = c.canonicalHash('d', { inner })
  assert.strictEqual(c.canonicalHash('d', { inner }), first)
  // A frozen object holding an unfrozen child is not remembered: the child can still change.
  const child = { n: 1 }
  const holder = Object.freeze({ child })
  c.canonicalJson(holder)
  child.n = 0.5
  throwsCode(assert, () => c.canonicalJson(holder), 'UNSUPPORTED_NUMBER')
  child.n = 2
  assert.strictEqual(c.canonicalJson(holder), '{"child":{"n":2}}')
  // A remembered subtree placed deeper than the limit is still refused by the core.
  let deep = Object.freeze([0])
  for (let i = 0; i < c.CANONICAL_MAX_DEPTH - 1; i++) deep = Object.freeze([deep])
  assert.ok(c.canonicalJson(deep))
  throwsCode(assert, () => c.canonicalJson([deep]), 'NESTING_TOO_DEEP')
})

test('mixed frozen and unfrozen data encodes exactly like unfrozen data', () => {
  const clone = (x) => JSON.parse(JSON.stringify(x))
  const frozenPart = Object.freeze({ z: Object.freeze(['é', '\u2028', 1, null, true]), '10': Object.freeze({}), a: 'q"\\' })
  const shapes = [
    frozenPart,
    { frozenPart, other: [frozenPart, { n: 1 }], '2': frozenPart },
    [{ x: frozenPart }, [frozenPart], 'tail'],
    { emptyFrozenArray: Object.freeze([]), nested: { deeper: { f: frozenPart } } },
  ]
  for (const value of shapes) {
    for (let round = 0; round < 2; round++) { // the second round uses the kept texts
      assert.strictEqual(c.canonicalJson(value), c.canonicalJson(clone(value)))
      assert.strictEqual(c.canonicalHash('d', value), c.canonicalHash('d', clone(value)))
    }
  }
  // Unfrozen containers around frozen parts stay live: a change is seen on the next call.
  const holder = { frozenPart, n: 1 }
  const before = c.canonicalJson(holder)
  holder.n = 2
  assert.notStrictEqual(c.canonicalJson(holder), before)
  holder.n = -0
  throwsCode(assert, () => c.canonicalJson(holder), 'UNSUPPORTED_NUMBER')
})

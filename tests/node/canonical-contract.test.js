'use strict'
// ./canonical as the TypeScript core's ./canonical: every name it exports, with its paths and
// messages, computed by the Rust core. Expected values were taken from the TypeScript core 0.2.0
// (written here literally; nothing of it is imported). No getter or proxy trap may run.
const test = require('node:test')
const assert = require('node:assert')
const c = require('@ctliz/agent-intercom-core/canonical')
const { ContractValidationError } = c

// Object.keys(await import('@ctliz/agent-intercom-core' 0.2.0 'dist/canonical.js')).
const TS_NAMES = ['CANONICAL_ENCODING_VERSION', 'CANONICAL_HASH_FRAME', 'CANONICAL_UNICODE_NORMALIZATION',
  'ContractValidationError', 'assertExactKeys', 'assertRecord', 'bossBindingEpoch', 'brokerGeneration', 'brokerRevision',
  'canonicalFrame', 'canonicalHash', 'canonicalJson', 'controllerGeneration', 'deliveryClaimGeneration',
  'journalGeneration', 'participantBindingEpoch', 'readBoolean', 'readEnum', 'readHexDigest', 'readIdentifier',
  'readInteger', 'readMonotonicCounter', 'readOptionalBoolean', 'readOptionalIdentifier', 'readOptionalInteger',
  'readOptionalString', 'readOptionalTimestamp', 'readString', 'readStringArray', 'readTimestamp',
  'recipientTransferGeneration', 'schedulerGeneration', 'subscriberBindingEpoch', 'subscriberBindingGeneration',
  'transitionVersion', 'triggerGeneration', 'validateVersionedStoreRecord', 'watchdogGeneration', 'workerGeneration']
const EXTRAS = ['CANONICAL_MAX_DEPTH', 'canonicalHashFromText', 'canonicalJsonFromText']

/** Asserts fn throws a ContractValidationError with this message and path (by default the
 * message up to its first colon); returns it. */
function refuses (fn, message, ...path) {
  let caught
  try { fn() } catch (error) { caught = error }
  assert.ok(caught instanceof ContractValidationError, `expected ContractValidationError, got ${caught}`)
  assert.strictEqual(caught.name, 'ContractValidationError')
  assert.strictEqual(caught.message, message)
  assert.strictEqual(caught.path, path.length > 0 ? path[0] : message.slice(0, message.indexOf(': ')))
  return caught
}

/** A proxy that counts every trap. */
function spy (target) {
  const calls = []
  const handler = {}
  for (const trap of ['get', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf', 'apply']) {
    handler[trap] = (...args) => { calls.push(trap); return Reflect[trap](...args) }
  }
  return { proxy: new Proxy(target, handler), calls }
}

function withAccessor (target, key, counter) {
  return Object.defineProperty(target, key, { get () { counter.n++; return 'x' }, enumerable: true, configurable: true })
}

test('the TypeScript ./canonical names, and our extras, are all exported', () => {
  assert.deepStrictEqual(Object.keys(c).filter((k) => !EXTRAS.includes(k)).sort(), [...TS_NAMES].sort())
  for (const name of EXTRAS) assert.ok(name in c, name)
  assert.strictEqual(TS_NAMES.length, 39)
  const esm = import('@ctliz/agent-intercom-core/canonical')
  return esm.then((m) => assert.deepStrictEqual(Object.keys(m).filter((k) => k !== 'default').sort(), Object.keys(c).sort()))
})

test('constants and the error class', () => {
  assert.strictEqual(c.CANONICAL_ENCODING_VERSION, 1)
  assert.strictEqual(c.CANONICAL_HASH_FRAME, 'agent-intercom-canonical-frame-v1')
  assert.strictEqual(c.CANONICAL_UNICODE_NORMALIZATION, 'none')
  const error = new ContractValidationError('$.a', 'bad')
  assert.ok(error instanceof Error)
  assert.deepStrictEqual([error.name, error.message, error.path], ['ContractValidationError', '$.a: bad', '$.a'])
})

test('canonicalJson: values and order', () => {
  assert.strictEqual(c.canonicalJson({ z: [3, { b: true, a: 'x' }], a: 0 }), '{"a":0,"z":[3,{"a":"x","b":true}]}')
  assert.strictEqual(c.canonicalJson({ b: 1, 10: 2, 9: 3, a: 4 }), '{"9":3,"10":2,"a":4,"b":1}')
  assert.strictEqual(c.canonicalJson('\u2028"\\\n'), '"\u2028\\"\\\\\\n"')
  assert.strictEqual(c.canonicalJson(-(2 ** 53 - 1)), '-9007199254740991')
  assert.strictEqual(c.canonicalJson(null), 'null')
  assert.notStrictEqual(c.canonicalJson('é'), c.canonicalJson('e\u0301'))
  // An array is an array whatever its prototype; an own toJSON is a key.
  class Sub extends Array {}
  assert.strictEqual(c.canonicalJson(Sub.from([1])), '[1]')
  assert.strictEqual(c.canonicalJson({ toJSON: 1 }), '{"toJSON":1}')
})

test('canonicalJson: refusals with the TypeScript paths, messages, and our codes', () => {
  const cases = [
    [{ a: undefined }, '$.a: undefined is not a canonical value', 'UNSUPPORTED_VALUE'],
    [undefined, '$: undefined is not a canonical value', 'UNSUPPORTED_VALUE'],
    [[1, , 3], '$[1]: sparse array holes are not supported', 'UNSUPPORTED_VALUE'], // eslint-disable-line no-sparse-arrays
    [{ '\ud800': 1 }, '$.[key]: string contains an unpaired high surrogate', 'UNPAIRED_SURROGATE'],
    [{ a: ['\udc00'] }, '$.a[0]: string contains an unpaired low surrogate', 'UNPAIRED_SURROGATE'],
    [[-0], '$[0]: number must be a safe integer and must not be negative zero', 'UNSUPPORTED_NUMBER'],
    [NaN, '$: number must be a safe integer and must not be negative zero', 'UNSUPPORTED_NUMBER'],
    [2 ** 53, '$: number must be a safe integer and must not be negative zero', 'UNSUPPORTED_NUMBER'],
    [{ x: 0.5 }, '$.x: number must be a safe integer and must not be negative zero', 'UNSUPPORTED_NUMBER'],
    [1n, '$: value must be a JSON primitive, array, or plain object', 'UNSUPPORTED_VALUE'],
    [Symbol('s'), '$: value must be a JSON primitive, array, or plain object', 'UNSUPPORTED_VALUE'],
    [[() => 1], '$[0]: value must be a JSON primitive, array, or plain object', 'UNSUPPORTED_VALUE'],
    [new Date(0), '$: value must be a JSON primitive, array, or plain object', 'UNSUPPORTED_VALUE'],
    [Object.create(null), '$: value must be a JSON primitive, array, or plain object', 'UNSUPPORTED_VALUE'],
    [{ a: 1, [Symbol('s')]: 2 }, '$: symbol properties are not supported', 'UNSUPPORTED_VALUE'],
    [Object.defineProperty({}, 'h', { value: 1 }), '$.h: must be an enumerable data property', 'UNSUPPORTED_VALUE'],
    [Object.assign([1], { x: 2 }), '$: array must not have symbol or non-index properties', 'UNSUPPORTED_VALUE'],
    // Keys are checked in code-unit order: "10" before "9".
    [{ 9: undefined, 10: undefined }, '$.10: undefined is not a canonical value', 'UNSUPPORTED_VALUE'],
  ]
  for (const [value, message, code] of cases) {
    for (const fn of [() => c.canonicalJson(value), () => c.canonicalHash('d', value), () => c.canonicalFrame('d', value)]) {
      assert.strictEqual(refuses(fn, message).code, code, message)
    }
  }
})

test('canonicalJson: accessors are never invoked, proxies never entered', () => {
  const reads = { n: 0 }
  refuses(() => c.canonicalJson(withAccessor({ b: 1 }, 'a', reads)), '$.a: must be an enumerable data property')
  refuses(() => c.canonicalJson(withAccessor([1], 0, reads)), '$[0]: must be an enumerable data property')
  assert.strictEqual(reads.n, 0)
  for (const target of [{ a: 1 }, [1], function () {}]) {
    const { proxy, calls } = spy(target)
    const error = refuses(() => c.canonicalJson({ p: proxy }), '$.p: value must be a JSON primitive, array, or plain object')
    assert.strictEqual(error.code, 'UNSUPPORTED_VALUE')
    refuses(() => c.canonicalHash('d', [proxy]), '$[0]: value must be a JSON primitive, array, or plain object')
    assert.deepStrictEqual(calls, [])
  }
  // Inherited keys are not members, even enumerable ones on Object.prototype.
  Object.prototype.inherited = 1 // eslint-disable-line no-extend-native
  try {
    assert.strictEqual(c.canonicalJson({ a: 1 }), '{"a":1}')
  } finally {
    delete Object.prototype.inherited
  }
})

test('canonicalJson: nesting limit and cycles', () => {
  let deep = 0
  for (let i = 0; i < c.CANONICAL_MAX_DEPTH; i++) deep = [deep]
  assert.ok(c.canonicalJson(deep).startsWith('[['))
  const error = refuses(() => c.canonicalJson({ d: deep }), `$.d${'[0]'.repeat(c.CANONICAL_MAX_DEPTH - 1)}: nesting deeper than 128 levels`)
  assert.strictEqual(error.code, 'NESTING_TOO_DEEP')
  const cyclic = {}
  cyclic.self = cyclic
  assert.strictEqual(refuses(() => c.canonicalJson(cyclic), '$: value nests deeper than 512 levels or is cyclic').code, 'NESTING_TOO_DEEP')
})

test('canonicalFrame and canonicalHash', () => {
  assert.strictEqual(c.canonicalHash('boss-test-v1', { b: 2, a: 1 }), '4ff6c078039d0d494b220a4dafa919c183136d4cf7e303eed1bc642ab0b8e4c2')
  const frame = c.canonicalFrame('d', { é: 1 })
  assert.strictEqual(Object.getPrototypeOf(frame), Uint8Array.prototype)
  assert.strictEqual(Buffer.from(frame).toString(), 'agent-intercom-canonical-frame-v1:1:d:8:{"é":1}')
  assert.notDeepStrictEqual(c.canonicalFrame('a', { value: 'b:c' }), c.canonicalFrame('a:b', { value: 'c' }))
  for (const bad of ['', 'a b', 'a\0b', 'é', '\ud800', {}]) {
    const error = refuses(() => c.canonicalFrame(bad, {}), 'domain: must be non-empty printable ASCII without whitespace')
    assert.strictEqual(error.code, 'INVALID_DOMAIN')
  }
  // The domain is checked first, as String(domain); undefined frames as an empty domain.
  refuses(() => c.canonicalHash('', undefined), 'domain: must be non-empty printable ASCII without whitespace')
  assert.strictEqual(c.canonicalHash(7, 1), c.canonicalHash('7', 1))
  assert.strictEqual(Buffer.from(c.canonicalFrame(undefined, 1)).toString(), 'agent-intercom-canonical-frame-v1:0::1:1')
  assert.strictEqual(c.canonicalHash(undefined, 1), '66e2007bf7fb2f4e71f984294b2f42bbd3f631d5f56c5631cfec29f01a4c74c3')
  assert.throws(() => c.canonicalHash(Symbol('d'), 1), { name: 'TypeError', message: 'Cannot convert a Symbol value to a string' })
})

test('string readers', () => {
  const s = 'abc'
  assert.strictEqual(c.readString(s, 'p'), s)
  refuses(() => c.readString('', 'p'), 'p: must be a non-empty string')
  refuses(() => c.readString(1, '$.id'), '$.id: must be a non-empty string')
  refuses(() => c.readString('a\ud800', 'p'), 'p: string contains an unpaired high surrogate')
  assert.strictEqual(c.readIdentifier('a-b', 'p'), 'a-b')
  assert.strictEqual(c.readIdentifier('a\u00a0b', 'p'), 'a\u00a0b')
  refuses(() => c.readIdentifier('a b', 'p'), 'p: identifier must not contain ASCII whitespace or control characters')
  refuses(() => c.readIdentifier('a\x7f', 'p'), 'p: identifier must not contain ASCII whitespace or control characters')
  assert.strictEqual(c.readOptionalString(undefined, 'p'), undefined)
  assert.strictEqual(c.readOptionalIdentifier(undefined, 'p'), undefined)
  refuses(() => c.readOptionalString(null, 'p'), 'p: must be a non-empty string')
  refuses(() => c.readOptionalIdentifier('\n', 'p'), 'p: identifier must not contain ASCII whitespace or control characters')
  // A path is printed only for a refusal: a primitive path stays what it was.
  assert.strictEqual(c.readString('x', Symbol('p')), 'x')
  assert.throws(() => c.readString('', Symbol('p')), { name: 'TypeError' })
  const e = refuses(() => c.readString('', 5), '5: must be a non-empty string', 5)
  assert.strictEqual(e.path, 5)
  assert.strictEqual(refuses(() => c.readString(''), 'undefined: must be a non-empty string', undefined).path, undefined)
})

test('integer, boolean and enum readers', () => {
  assert.strictEqual(c.readInteger(0, 'n'), 0)
  refuses(() => c.readInteger(-0, 'n'), 'n: must be a safe integer >= 0')
  refuses(() => c.readInteger(1.5, 'n'), 'n: must be a safe integer >= 0')
  refuses(() => c.readInteger(2 ** 53, 'n'), 'n: must be a safe integer >= 0')
  refuses(() => c.readInteger(NaN, 'n'), 'n: must be a safe integer >= 0')
  refuses(() => c.readInteger(-1, 'n'), 'n: must be a safe integer >= 0')
  refuses(() => c.readInteger(1, 'n', 2), 'n: must be a safe integer >= 2')
  // The minimum compares as JavaScript compares.
  refuses(() => c.readInteger(3, 'n', '0x10'), 'n: must be a safe integer >= 0x10')
  assert.strictEqual(c.readInteger(3, 'n', NaN), 3)
  assert.strictEqual(c.readInteger(-5, 'n', -Infinity), -5)
  assert.strictEqual(c.readOptionalInteger(undefined, 'n'), undefined)
  refuses(() => c.readOptionalInteger(null, 'n', 1), 'n: must be a safe integer >= 1')
  assert.strictEqual(c.readBoolean(false, 'b'), false)
  refuses(() => c.readBoolean(0, 'b'), 'b: must be a boolean')
  assert.strictEqual(c.readOptionalBoolean(undefined, 'b'), undefined)
  assert.strictEqual(c.readOptionalBoolean(true, 'b'), true)
  assert.strictEqual(c.readEnum('b', ['a', 'b'], 'e'), 'b')
  refuses(() => c.readEnum('z', ['a', 'b'], 'e'), 'e: must be one of: a, b')
  refuses(() => c.readEnum(1, ['a', null, 1], 'e'), 'e: must be one of: a, , 1')
})

test('timestamps and digests', () => {
  assert.strictEqual(c.readTimestamp('2024-02-29T00:00:00.000Z', 't'), '2024-02-29T00:00:00.000Z')
  for (const bad of ['2026-02-31T12:00:00.000Z', '2026-07-28T12:00:00Z', '2023-02-29T00:00:00.000Z', '2024-01-01T24:00:00.000Z']) {
    refuses(() => c.readTimestamp(bad, 't'), 't: must be a canonical UTC ISO-8601 timestamp')
  }
  refuses(() => c.readTimestamp('', 't'), 't: must be a non-empty string')
  assert.strictEqual(c.readOptionalTimestamp(undefined, 't'), undefined)
  assert.strictEqual(c.readHexDigest('a'.repeat(64), 'd'), 'a'.repeat(64))
  refuses(() => c.readHexDigest('A'.repeat(64), 'd'), 'd: must be a lowercase SHA-256 digest')
  refuses(() => c.readHexDigest('a'.repeat(63), 'd'), 'd: must be a lowercase SHA-256 digest')
})

test('readStringArray: dense own data elements, a fresh array', () => {
  const input = ['a', 'b']
  const out = c.readStringArray(input, 'l')
  assert.deepStrictEqual(out, ['a', 'b'])
  assert.notStrictEqual(out, input)
  refuses(() => c.readStringArray('a', 'l'), 'l: must be an array')
  refuses(() => c.readStringArray(['a', 1], 'l'), 'l[1]: must be a non-empty string')
  refuses(() => c.readStringArray(Array(2), 'l'), 'l[0]: sparse array holes are not supported')
  refuses(() => c.readStringArray(Object.assign(['a'], { meta: 1 }), 'l'), 'l: array must not have symbol or non-index properties')
  const reads = { n: 0 }
  refuses(() => c.readStringArray(withAccessor([], 0, reads), 'participants'), 'participants[0]: must be an enumerable data property')
  assert.strictEqual(reads.n, 0)
  // An inherited Array.prototype slot does not fill a hole.
  Object.defineProperty(Array.prototype, '0', { value: 'polluted', enumerable: true, configurable: true, writable: true })
  try {
    refuses(() => c.readStringArray(Array(1), '$.ids'), '$.ids[0]: sparse array holes are not supported')
  } finally {
    delete Array.prototype[0]
  }
})

test('assertRecord and assertExactKeys', () => {
  assert.strictEqual(c.assertRecord({ a: 1 }), undefined)
  for (const bad of [[], null, 'x', new Date(0), Object.create(null)]) refuses(() => c.assertRecord(bad), '$: must be a plain object')
  refuses(() => c.assertRecord(null, '$.r'), '$.r: must be a plain object')
  refuses(() => c.assertRecord({ [Symbol('s')]: 1 }), '$: symbol properties are not supported')
  const reads = { n: 0 }
  refuses(() => c.assertRecord(withAccessor({}, 'a', reads)), '$.a: must be an enumerable data property')
  const { proxy, calls } = spy({ a: 1 })
  refuses(() => c.assertRecord(proxy), '$: must be a plain object')
  assert.deepStrictEqual(calls, [])
  assert.strictEqual(c.assertExactKeys({ a: 1, b: 2 }, ['a'], ['b']), undefined)
  refuses(() => c.assertExactKeys({ a: 1 }, ['a', 'b']), '$.b: is required')
  refuses(() => c.assertExactKeys({ a: 1, z: 1 }, ['a'], [], '$.x'), '$.x.z: is not supported')
  refuses(() => c.assertExactKeys(withAccessor({}, 'a', reads), ['a']), '$.a: must be an enumerable data property')
  refuses(() => c.assertExactKeys([], [], [], '$.k'), '$.k.length: must be an enumerable data property')
  refuses(() => c.assertExactKeys(5, ['a']), '$.a: is required')
  assert.throws(() => c.assertExactKeys(null, ['a']), TypeError)
  assert.strictEqual(reads.n, 0)
  // Inherited keys are not own.
  refuses(() => c.assertExactKeys(Object.create({ a: 1 }), ['a']), '$.a: is required')
})

test('the monotonic counters', () => {
  const defaults = {
    bossBindingEpoch: ['bossBindingEpoch', 1],
    participantBindingEpoch: ['bindingEpoch', 1],
    subscriberBindingEpoch: ['subscriberBindingEpoch', 1],
    subscriberBindingGeneration: ['subscriberBindingGeneration', 1],
    controllerGeneration: ['controllerGeneration', 1],
    brokerRevision: ['brokerRevision', 0],
    workerGeneration: ['workerGeneration', 1],
    transitionVersion: ['transitionVersion', 1],
    brokerGeneration: ['brokerGeneration', 1],
    journalGeneration: ['journalGeneration', 1],
    schedulerGeneration: ['schedulerGeneration', 1],
    recipientTransferGeneration: ['recipientTransferGeneration', 0],
    deliveryClaimGeneration: ['claimGeneration', 1],
    triggerGeneration: ['triggerGeneration', 0],
    watchdogGeneration: ['watchdogGeneration', 1],
  }
  const takesMinimum = ['bossBindingEpoch', 'participantBindingEpoch', 'subscriberBindingEpoch', 'subscriberBindingGeneration',
    'controllerGeneration', 'brokerRevision', 'recipientTransferGeneration', 'triggerGeneration']
  assert.strictEqual(Object.keys(defaults).length, 15)
  for (const [name, [path, minimum]] of Object.entries(defaults)) {
    const read = c[name]
    assert.strictEqual(read(minimum), minimum, name)
    refuses(() => read(minimum - 1), `${path}: must be a safe integer >= ${minimum}`)
    refuses(() => read(-0, 'x'), `x: must be a safe integer >= ${minimum}`)
    if (takesMinimum.includes(name)) refuses(() => read(3, 'x', 4), 'x: must be a safe integer >= 4')
    else assert.strictEqual(read(3, 'x', 4), 3, `${name} takes no minimum`)
  }
  assert.strictEqual(c.readMonotonicCounter(1, 'p', 'kind'), 1)
  refuses(() => c.readMonotonicCounter(0, 'p', 'kind'), 'p: must be a safe integer >= 1')
  assert.strictEqual(c.readMonotonicCounter(0, 'p', 'kind', 0), 0)
})

test('validateVersionedStoreRecord', () => {
  const fail = (status, message, extra = {}) => ({ ok: false, status, ...extra, message, preserveExisting: true, mutationAllowed: false })
  const same = (actual, expected) => {
    assert.deepStrictEqual(actual, expected)
    assert.deepStrictEqual(Object.keys(actual), Object.keys(expected))
  }
  let parsed = 0
  const parser = (v) => { parsed++; return { parsed: v.version } }
  same(c.validateVersionedStoreRecord({ version: 2 }, 2, parser), { ok: true, status: 'valid', value: { parsed: 2 } })
  assert.strictEqual(parsed, 1)
  same(c.validateVersionedStoreRecord([], 2, parser), fail('corrupt', '$: must be a plain object', { path: '$' }))
  same(c.validateVersionedStoreRecord({}, 2, parser), fail('corrupt', 'store version is required', { path: '$.version' }))
  same(c.validateVersionedStoreRecord({ version: undefined }, 2, parser), fail('corrupt', 'store version is required', { path: '$.version' }))
  const reads = { n: 0 }
  same(c.validateVersionedStoreRecord(withAccessor({}, 'version', reads), 2, parser),
    fail('corrupt', '$.version: must be an enumerable data property', { path: '$.version' }))
  assert.strictEqual(reads.n, 0)
  same(c.validateVersionedStoreRecord({ version: 3 }, 2, parser),
    fail('unsupported_newer_version', 'unsupported store version 3; expected 2', { observedVersion: 3, path: '$.version' }))
  same(c.validateVersionedStoreRecord({ version: 1 }, 2, parser),
    fail('unsupported_older_version', 'unsupported store version 1; expected 2', { observedVersion: 1, path: '$.version' }))
  same(c.validateVersionedStoreRecord({ version: 'a.v10' }, 'a.v9', parser),
    fail('unsupported_newer_version', 'unsupported store version a.v10; expected a.v9', { observedVersion: 'a.v10', path: '$.version' }))
  same(c.validateVersionedStoreRecord({ version: 'b.v1' }, 'a.v1', parser),
    fail('foreign_version', 'foreign store version b.v1', { observedVersion: 'b.v1', path: '$.version' }))
  const observed = [1]
  const result = c.validateVersionedStoreRecord({ version: observed }, 1, parser)
  same(result, fail('foreign_version', 'store version uses an incompatible representation', { observedVersion: [1], path: '$.version' }))
  assert.strictEqual(result.observedVersion, observed, 'the caller\'s own value')
  assert.ok(Object.is(c.validateVersionedStoreRecord({ version: NaN }, NaN, parser).observedVersion, NaN))
  assert.strictEqual(parsed, 1, 'the parser runs only when the version matches')
  // The parser's refusal.
  const throwing = (error) => () => { throw error }
  same(c.validateVersionedStoreRecord({ version: 1 }, 1, throwing(new ContractValidationError('$.x', 'bad'))),
    fail('corrupt', '$.x: bad', { observedVersion: 1, path: '$.x' }))
  same(c.validateVersionedStoreRecord({ version: 1 }, 1, (v) => c.readString(v.name, '$.name')),
    fail('corrupt', '$.name: must be a non-empty string', { observedVersion: 1, path: '$.name' }))
  same(c.validateVersionedStoreRecord({ version: 1 }, 1, throwing(new Error('plain'))), fail('corrupt', 'plain', { observedVersion: 1 }))
  same(c.validateVersionedStoreRecord({ version: 1 }, 1, throwing('str')), fail('corrupt', 'unknown validation failure', { observedVersion: 1 }))
  // A proxy record is refused without being entered.
  const { proxy, calls } = spy({ version: 1 })
  same(c.validateVersionedStoreRecord(proxy, 1, parser), fail('corrupt', '$: must be a plain object', { path: '$' }))
  assert.deepStrictEqual(calls, [])
})

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

test('canonical: an Array subclass is read as an array (as in TypeScript), its toJSON never called', () => {
  let called = 0
  class Sub extends Array { toJSON () { called++; return 'sub' } }
  const sub = Sub.from([1, 2])
  assert.strictEqual(c.canonicalJson(sub), '[1,2]')
  assert.strictEqual(c.canonicalJson({ a: sub }), '{"a":[1,2]}')
  assert.strictEqual(c.canonicalHash('d', sub), c.canonicalHash('d', [1, 2]))
  assert.strictEqual(Buffer.from(c.canonicalFrame('d', sub)).toString(), 'agent-intercom-canonical-frame-v1:1:d:5:[1,2]')
  assert.strictEqual(called, 0)
})

test('canonical: objects with a swapped prototype are refused, toJSON never called', () => {
  let called = 0
  const proto = { toJSON () { called++; return 'swapped' } }
  const array = Object.setPrototypeOf([1], proto)
  const object = Object.setPrototypeOf({ a: 1 }, proto)
  // An array is an array whatever its prototype (Array.isArray), as in TypeScript.
  assert.strictEqual(c.canonicalJson([0, array]), '[0,[1]]')
  for (const value of [object, { x: { y: object } }, Object.create(null)]) {
    throwsCode(assert, () => c.canonicalJson(value), 'UNSUPPORTED_VALUE')
    throwsCode(assert, () => c.canonicalHash('d', value), 'UNSUPPORTED_VALUE')
  }
  const error = throwsCode(assert, () => c.canonicalJson({ x: { y: object } }), 'UNSUPPORTED_VALUE')
  assert.strictEqual(error.message, '$.x.y: value must be a JSON primitive, array, or plain object')
  // A boxed primitive made to look plain is read by its own properties only (never valueOf).
  assert.strictEqual(c.canonicalJson([Object.setPrototypeOf(new Number(1), Object.prototype)]), '[{}]')
  const boxed = throwsCode(assert, () => c.canonicalJson(Object.setPrototypeOf(new String('s'), Object.prototype)), 'UNSUPPORTED_VALUE')
  assert.strictEqual(boxed.message, '$.length: must be an enumerable data property')
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

test('canonical: a cycle is refused without looping, and deep data has its own limit', () => {
  const cyclic = { a: { b: [0] } }
  cyclic.a.b.push(cyclic.a)
  const error = throwsCode(assert, () => c.canonicalJson(cyclic), 'NESTING_TOO_DEEP')
  assert.match(error.message, /^\$: .*cyclic$/)
  // Deep but acyclic data keeps its own code.
  let deep = 1
  for (let i = 0; i <= c.CANONICAL_MAX_DEPTH; i++) deep = [deep]
  throwsCode(assert, () => c.canonicalJson(deep), 'NESTING_TOO_DEEP')
  // The same object twice, not nested in itself, is not a cycle.
  const shared = { s: 1 }
  assert.strictEqual(c.canonicalJson({ x: shared, y: [shared, shared] }), '{"x":{"s":1},"y":[{"s":1},{"s":1}]}')
})

// ---------------------------------------------------------------------------------------------
// Scratchpad arguments and options

test('scratchpad: NaN and Infinity in options are refused, not defaulted', () => {
  const dir = tmp('aic-hard-pad-')
  try {
    for (const bad of [NaN, Infinity, -Infinity]) {
      for (const key of ['perProjectCap', 'perRecipientCap', 'maxContentBytes']) {
        const path = join(dir, `${key}.sqlite`)
        const error = throwsCode(assert, () => pad.openScratchpad({ path, [key]: bad }), 'UNSUPPORTED_VALUE')
        assert.match(error.message, new RegExp(`\\b${key}\\b`))
        assert.ok(!existsSync(path), 'no store was created')
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('scratchpad: unknown option keys are UNKNOWN_KEY naming the key; options are plain data', () => {
  const dir = tmp('aic-hard-pad-')
  try {
    const path = join(dir, 'p.sqlite')
    const error = throwsCode(assert, () => pad.openScratchpad({ path, perProjectcap: 5 }), 'UNKNOWN_KEY')
    assert.match(error.message, /perProjectcap/)
    throwsCode(assert, () => pad.openScratchpad({ path, per_project_cap: 5 }), 'UNKNOWN_KEY')
    // An undefined option is absent, as before.
    const s = pad.openScratchpad({ path, perProjectCap: undefined })
    s.close()
    const { proxy, calls } = spy({ path })
    throwsCode(assert, () => pad.openScratchpad(proxy), 'UNSUPPORTED_VALUE')
    throwsCode(assert, () => pad.openScratchpad({ path, perProjectCap: new Number(5) }), 'UNSUPPORTED_VALUE')
    throwsCode(assert, () => pad.openScratchpad({ path, get perProjectCap () { return 5 } }), 'UNSUPPORTED_VALUE')
    assert.deepStrictEqual(calls, [])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('scratchpad: NaN and Infinity in request arguments are refused, not defaulted (ttl_hours)', () => {
  for (const bad of [NaN, Infinity, -Infinity]) {
    const error = throwsCode(assert, () => pad.checkRule('check.ttl', { ttl_hours: bad }), 'UNSUPPORTED_VALUE')
    assert.match(error.message, /^args\.ttl_hours: /)
  }
  assert.deepStrictEqual(pad.checkRule('check.ttl', { ttl_hours: undefined }), { hours: 24 }, 'a top-level undefined is absent')
  const dir = tmp('aic-hard-pad-')
  try {
    const s = pad.openScratchpad({ path: join(dir, 'p.sqlite') })
    for (const bad of [NaN, Infinity, -Infinity]) {
      throwsCode(assert, () => s.post({ from: 'a', content: 'x', ttl_hours: bad }), 'UNSUPPORTED_VALUE')
      throwsCode(assert, () => s.request('post', { from: 'a', content: 'x', ttl_hours: bad }), 'UNSUPPORTED_VALUE')
    }
    assert.deepStrictEqual(s.list({ agent: 'a' }).messages, [], 'nothing was stored')
    s.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('scratchpad: what JSON cannot carry is refused with the path; nothing of the caller runs', () => {
  let ran = 0
  class Point { constructor () { this.x = 1 } }
  const cyclic = { from: 'a' }
  cyclic.self = cyclic
  const cases = [
    [{ metadata: { a: undefined } }, 'UNSUPPORTED_VALUE', /^args\.metadata\.a: /],
    [{ metadata: [1, undefined] }, 'UNSUPPORTED_VALUE', /^args\.metadata\[1\]: /],
    [{ metadata: { f () { ran++ } } }, 'UNSUPPORTED_VALUE', /^args\.metadata\.f: /],
    [{ metadata: Symbol('s') }, 'UNSUPPORTED_VALUE', /^args\.metadata: /],
    [{ metadata: { [Symbol('k')]: 1 } }, 'UNSUPPORTED_VALUE', /^args\.metadata: /],
    [{ n: 10n }, 'UNSUPPORTED_VALUE', /^args\.n: /],
    [{ at: new Date(0) }, 'UNSUPPORTED_VALUE', /^args\.at: /],
    [{ m: new Map([[1, 2]]) }, 'UNSUPPORTED_VALUE', /^args\.m: /],
    [{ p: new Point() }, 'UNSUPPORTED_VALUE', /^args\.p: /],
    [{ t: { toJSON () { ran++; return 1 } } }, 'UNSUPPORTED_VALUE', /^args\.t\.toJSON: /],
    [{ g: { get v () { ran++; return 1 } } }, 'UNSUPPORTED_VALUE', /^args\.g\.v: /],
    [{ s: '\ud800' }, 'UNPAIRED_SURROGATE', /^args\.s: /],
    [{ ttl_hours: -0 }, 'INVALID_TTL', /./], // -0 is the number 0: reaches the rule, which refuses it
    [cyclic, 'UNSUPPORTED_VALUE', /^args\.self: .*cycl/],
  ]
  for (const [args, code, message] of cases) {
    const error = throwsCode(assert, () => pad.checkRule('check.ttl', args), code)
    assert.match(error.message, message)
  }
  const { proxy, calls } = spy({ ttl_hours: 5 })
  throwsCode(assert, () => pad.checkRule('check.ttl', proxy), 'UNSUPPORTED_VALUE')
  throwsCode(assert, () => pad.checkRule('check.ttl', { nested: proxy }), 'UNSUPPORTED_VALUE')
  assert.deepStrictEqual(calls, [])
  assert.strictEqual(ran, 0)
  // Finite fractions are JSON: they reach the rule, which judges them.
  throwsCode(assert, () => pad.checkRule('check.ttl', { ttl_hours: 1.5 }), 'INVALID_TTL')
  assert.deepStrictEqual(pad.checkRule('check.ttl', Object.assign(Object.create(null), { ttl_hours: 5 })), { hours: 5 })
})

test('scratchpad: a planted toJSON changes no argument, option or result', () => {
  const dir = tmp('aic-hard-pad-')
  try {
    const run = () => {
      assert.deepStrictEqual(pad.checkRule('check.ttl', { ttl_hours: 5 }), { hours: 5 })
      assert.deepStrictEqual(pad.checkRule('check.rate', { per_minute: 1, takes: [0, 1] }).map((t) => t.allowed), [true, false])
      const s = pad.openScratchpad({ path: join(dir, 'p.sqlite'), maxContentBytes: 4 })
      try {
        throwsCode(assert, () => s.post({ from: 'a', content: 'too long' }), 'CONTENT_TOO_LARGE')
        const posted = s.post({ from: 'a', content: 'ok', metadata: { n: [1] } })
        assert.deepStrictEqual(s.list({ agent: 'a' }).messages.find((m) => m.id === posted.id).metadata, { n: [1] })
      } finally { s.close() }
    }
    assert.strictEqual(withPlantedToJSON(Object.prototype, run), 0)
    assert.strictEqual(withPlantedToJSON(Array.prototype, run), 0)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

// ---------------------------------------------------------------------------------------------
// Routing candidates

test('protocol-v4: candidates are plain data; unknown option keys are refused', () => {
  const candidates = [{ id: 'id-1', name: 'w', scope: A }]
  throwsCode(assert, () => p.resolveIntercomTarget({ candidates: [{ id: 'id-1', name: new Date(0) }], selector: 'id-1' }), 'UNSUPPORTED_VALUE')
  throwsCode(assert, () => p.resolveIntercomTarget({ candidates: [{ id: 'id-1', name: NaN }], selector: 'id-1' }), 'UNSUPPORTED_VALUE')
  let called = 0
  class Sub extends Array { toJSON () { called++; return [] } }
  throwsCode(assert, () => p.listVisibleIntercomSessions({ candidates: Sub.from(candidates), actorId: 'id-1' }), 'UNSUPPORTED_VALUE')
  const { proxy, calls } = spy(candidates)
  throwsCode(assert, () => p.intercomEventAudience({ event: 'session_joined', candidates: proxy, subjectId: 'id-1' }), 'UNSUPPORTED_VALUE')
  const options = spy({ candidates, selector: 'w' })
  throwsCode(assert, () => p.resolveIntercomTarget(options.proxy), 'UNSUPPORTED_VALUE')
  // An undefined field of a candidate is absent, as in the TypeScript core.
  assert.deepStrictEqual(p.resolveIntercomTarget({ candidates: [{ id: 'id-1', name: undefined, scope: undefined }], selector: 'id-1' }).targetIds, ['id-1'])
  const error = throwsCode(assert, () => p.resolveIntercomTarget({ candidates, actorscope: A, selector: 'w' }), 'UNKNOWN_KEY')
  assert.match(error.message, /actorscope/)
  throwsCode(assert, () => p.listVisibleIntercomSessions({ candidates, actorId: 'id-1', scope: A }), 'UNKNOWN_KEY')
  throwsCode(assert, () => p.intercomEventAudience({ event: 'session_left', candidates, subjectId: 'id-1', actorScope: A }), 'UNKNOWN_KEY')
  throwsCode(assert, () => p.planIntercomReplacement({ sessionId: 'x', oldscope: A }), 'UNKNOWN_KEY')
  // narrow: only plain arrays (an Array subclass would run its species constructor).
  let constructed = 0
  class Counted extends Array { constructor (...a) { super(...a); constructed++ } }
  const base = Counted.from(['a', 'b'])
  constructed = 0
  throwsCode(assert, () => p.narrowIntercomAudience(base, ['a']), 'UNSUPPORTED_VALUE')
  throwsCode(assert, () => p.narrowIntercomAudience(['a'], spy(['a']).proxy), 'UNSUPPORTED_VALUE')
  assert.strictEqual(constructed, 0)
  assert.deepStrictEqual(calls, [])
  assert.deepStrictEqual(options.calls, [])
  assert.strictEqual(called, 0)
  // Strings reach the addon as UTF-8, where an unpaired surrogate would become U+FFFD: another id.
  throwsCode(assert, () => p.resolveIntercomTarget({ candidates: [{ id: 'a\ufffd' }], selector: 'a\ud800' }), 'UNPAIRED_SURROGATE')
  throwsCode(assert, () => p.planIntercomReplacement({ sessionId: 'a\udc00' }), 'UNPAIRED_SURROGATE')
  throwsCode(assert, () => p.narrowIntercomAudience(['a\ud800'], []), 'UNPAIRED_SURROGATE')
  const planted = withPlantedToJSON(Object.prototype, () => withPlantedToJSON(Array.prototype, () => {
    assert.deepStrictEqual(p.resolveIntercomTarget({ candidates, actorScope: A, selector: 'w' }), { kind: 'same_scope_name', targetIds: ['id-1'] })
  }))
  assert.strictEqual(planted, 0)
})

// ---------------------------------------------------------------------------------------------
// Broker options and the client

test('broker: unknown option keys are UNKNOWN_KEY, nothing is started', async () => {
  const dir = tmp('aic-hard-broker-')
  try {
    const error = throwsCode(assert, () => broker.startBroker({ agentDir: dir, idleExitMS: 0 }), 'UNKNOWN_KEY')
    assert.match(error.message, /idleExitMS/)
    throwsCode(assert, () => broker.startBroker({ agentDir: dir, waitMs: 10 }), 'UNKNOWN_KEY')
    throwsCode(assert, () => broker.brokerSocketPath({ agentdir: dir }), 'UNKNOWN_KEY')
    await assert.rejects(broker.ensureBroker({ agentDir: dir, loglevel: 'off' }), (e) => e.code === 'UNKNOWN_KEY' && /loglevel/.test(e.message))
    assert.throws(() => broker.connect({ agentDir: dir, autoack: false }), (e) => e.code === 'UNKNOWN_KEY' && /autoack/.test(e.message))
    assert.throws(() => broker.connect({ agentDir: dir, idleExitMs: 0 }), (e) => e.code === 'UNKNOWN_KEY', 'connect starts nothing: broker settings are not its options')
    assert.ok(!existsSync(join(dir, 'intercom', 'broker.sock')), 'no broker was started')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('broker: numeric options are finite numbers, given values are never dropped', async () => {
  const dir = tmp('aic-hard-broker-')
  try {
    for (const bad of [NaN, Infinity, -Infinity]) {
      throwsCode(assert, () => broker.startBroker({ agentDir: dir, idleExitMs: bad }), 'UNSUPPORTED_VALUE')
      throwsCode(assert, () => broker.startBroker({ agentDir: dir, settings: { max_sessions: bad } }), 'UNSUPPORTED_VALUE')
      await assert.rejects(broker.ensureBroker({ agentDir: dir, waitMs: bad }), (e) => e.code === 'UNSUPPORTED_VALUE' && /waitMs/.test(e.message))
    }
    for (const bad of ['100', true, null, {}]) {
      throwsCode(assert, () => broker.startBroker({ agentDir: dir, idleExitMs: bad }), 'INVALID_ARGUMENT')
      await assert.rejects(broker.ensureBroker({ agentDir: dir, waitMs: bad }), (e) => e.code === 'INVALID_ARGUMENT')
    }
    // Negative or fractional values reach the broker's own parser, which refuses them.
    for (const bad of [-1, 1.5, 1e21]) {
      throwsCode(assert, () => broker.startBroker({ agentDir: dir, idleExitMs: bad }), 'INVALID_ARGUMENT')
      throwsCode(assert, () => broker.startBroker({ agentDir: dir, settings: { max_sessions: bad } }), 'INVALID_ARGUMENT')
    }
    for (const bad of [null, true, undefined, [1]]) {
      throwsCode(assert, () => broker.startBroker({ agentDir: dir, settings: { max_sessions: bad } }), bad === undefined ? 'UNSUPPORTED_VALUE' : 'INVALID_ARGUMENT')
    }
    throwsCode(assert, () => broker.startBroker({ agentDir: dir, settings: [1] }), 'INVALID_ARGUMENT')
    const settings = spy({ max_sessions: 10 })
    throwsCode(assert, () => broker.startBroker({ agentDir: dir, settings: settings.proxy }), 'UNSUPPORTED_VALUE')
    assert.deepStrictEqual(settings.calls, [])
    let reads = 0
    throwsCode(assert, () => broker.startBroker({ agentDir: dir, get idleExitMs () { reads++; return 0 } }), 'UNSUPPORTED_VALUE')
    assert.strictEqual(reads, 0)
    await assert.rejects(broker.brokerHealth(42), (e) => e.code === 'INVALID_ARGUMENT', 'a number is not a socket path (net.connect would dial TCP port 42)')
    await assert.rejects(broker.brokerHealth(join(dir, 'x.sock'), NaN), (e) => e.code === 'UNSUPPORTED_VALUE')
    await assert.rejects(broker.brokerHealth(join(dir, 'x.sock'), -1), (e) => e.code === 'INVALID_ARGUMENT')
    assert.throws(() => broker.connect(''), (e) => e.code === 'INVALID_ARGUMENT')
    // Paths reach the file system as UTF-8, where an unpaired surrogate would become U+FFFD.
    throwsCode(assert, () => broker.startBroker({ agentDir: join(dir, 'a\ud800') }), 'UNPAIRED_SURROGATE')
    assert.throws(() => broker.connect(join(dir, 'a\udc00.sock')), (e) => e.code === 'UNPAIRED_SURROGATE')
    await assert.rejects(broker.brokerHealth(join(dir, 'a\udc00.sock')), (e) => e.code === 'UNPAIRED_SURROGATE')
    throwsCode(assert, () => pad.openScratchpad({ path: join(dir, 'a\ud800.sqlite') }), 'UNPAIRED_SURROGATE')
    assert.throws(() => broker.connect({ agentDir: dir, autoAck: 'no' }), (e) => e.code === 'INVALID_ARGUMENT')
    assert.ok(!existsSync(join(dir, 'intercom', 'broker.sock')), 'no broker was started')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('broker: inherited option values are not read', () => {
  Object.prototype.socketPath = '/planted.sock' // eslint-disable-line no-extend-native
  try {
    assert.strictEqual(broker.brokerSocketPath({ agentDir: '/x' }), '/x/intercom/broker.sock')
  } finally {
    delete Object.prototype.socketPath
  }
})

test('client: frames carry plain data only; option keys are checked', async () => {
  const dir = tmp('aic-hard-client-')
  const running = broker.startBroker({ agentDir: dir, idleExitMs: 0, logLevel: 'off' })
  const session = (name) => ({ cwd: '/work', model: 'test', pid: process.pid, startedAt: 1, lastActivity: 1, name })
  const clients = []
  try {
    const alice = await broker.connect({ agentDir: dir })
    const bob = await broker.connect({ agentDir: dir })
    clients.push(alice, bob)
    await assert.rejects(alice.register({ session: { ...session('alice'), pid: NaN } }), (e) => e.code === 'UNSUPPORTED_VALUE' && /pid/.test(e.message))
    await assert.rejects(alice.register({ session: session('alice'), scopeid: A }), (e) => e.code === 'UNKNOWN_KEY')
    await assert.rejects(alice.register(null), (e) => e.code === 'INVALID_ARGUMENT')
    // An undefined optional field is absent, as JSON.stringify would have it.
    await alice.register({ session: { ...session('alice'), status: undefined }, sessionId: 'alice' })
    await bob.register({ session: session('bob'), sessionId: 'bob' })
    let ran = 0
    await assert.rejects(alice.send('bob', { content: { text: 'x', at: new Date(0) } }), (e) => e.code === 'UNSUPPORTED_VALUE')
    await assert.rejects(alice.send('bob', { content: { text: 'x' }, get replyTo () { ran++; return 'q' } }), (e) => e.code === 'UNSUPPORTED_VALUE')
    const { proxy, calls } = spy({ content: { text: 'x' } })
    await assert.rejects(alice.send('bob', proxy), (e) => e.code === 'UNSUPPORTED_VALUE')
    assert.deepStrictEqual(calls, [])
    assert.throws(() => alice.presence({ type: 'send', to: 'bob' }), (e) => e.code === 'UNKNOWN_KEY', 'presence cannot forge another frame')
    assert.throws(() => alice.presence({ status: Infinity }), (e) => e.code === 'UNSUPPORTED_VALUE')
    assert.throws(() => alice.unregister({ preserveasks: true }), (e) => e.code === 'UNKNOWN_KEY')
    assert.strictEqual(ran, 0)
    // With toJSON planted the frames are unchanged and delivery works.
    let delivered
    const planted = withPlantedToJSON(Object.prototype, () => {
      delivered = new Promise((resolve) => bob.once('message', resolve))
      alice.send('bob', { id: 'm1', content: { text: 'hello' } }).catch(() => {})
    })
    assert.strictEqual(planted, 0)
    const incoming = await delivered
    assert.strictEqual(incoming.message.content.text, 'hello')
  } finally {
    for (const client of clients) client.close()
    running.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

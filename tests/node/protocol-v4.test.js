'use strict'
const test = require('node:test')
const assert = require('node:assert')
const p = require('@ctliz/agent-intercom-core/protocol-v4')
const { throwsCode } = require('./helpers.js')

const A = 'Scope_AAAAAAAAAA'

test('constants match the TypeScript core', () => {
  assert.strictEqual(p.INTERCOM_PROTOCOL_NAME, 'pi-intercom')
  assert.strictEqual(p.INTERCOM_PROTOCOL_VERSION, 4)
  assert.strictEqual(p.INTERCOM_SCOPE_ENV, 'AGENT_INTERCOM_SCOPE_ID')
  assert.strictEqual(p.INTERCOM_SCOPE_ID_PATTERN_SOURCE, '^[A-Za-z0-9_-]{16,128}$')
  assert.ok(p.INTERCOM_SCOPE_ID_PATTERN instanceof RegExp)
  assert.strictEqual(p.INTERCOM_SCOPE_ID_PATTERN.source, p.INTERCOM_SCOPE_ID_PATTERN_SOURCE)
  assert.strictEqual(p.INTERCOM_PROTOCOL_V4_VECTOR_SCHEMA_VERSION, 2)
  assert.strictEqual(p.PROTOCOL_V4_SCOPE_A, A)
  assert.strictEqual(p.PROTOCOL_V4_SCOPE_B, 'Scope_BBBBBBBBBB')
  assert.strictEqual(p.INTERCOM_PROTOCOL_V4_SEMANTICS_HASH, 'ef23cae55b3cca7683fee60e5f2421350cde731dc5424c82286a33a8b9cdf6cb')
})

test('the vectors are deep-frozen', () => {
  const v = p.INTERCOM_PROTOCOL_V4_VECTORS
  assert.ok(Object.isFrozen(v) && Object.isFrozen(v[12]) && Object.isFrozen(v[12].candidates[0]))
  assert.throws(() => { 'use strict'; v.push({}) }, TypeError)
  assert.throws(() => { 'use strict'; v[12].candidates[0].name = 'x' }, TypeError)
  assert.strictEqual(v.length, 48)
})

test('parseIntercomScopeId: exact pattern, path in the message, value never echoed', () => {
  assert.strictEqual(p.parseIntercomScopeId(undefined), undefined)
  assert.strictEqual(p.parseIntercomScopeId(''), undefined)
  assert.strictEqual(p.parseIntercomScopeId(A), A)
  const secret = 'Secret.Scope.Value!!'
  for (const bad of [secret, `${A}\n`, ` ${A}`, 'A'.repeat(15), 'A'.repeat(129), 'é'.repeat(16), 42, null, {}, [], true, Symbol('s'), 10n]) {
    const error = throwsCode(assert, () => p.parseIntercomScopeId(bad, 'session.scopeId'), 'INVALID_SCOPE')
    assert.strictEqual(error.message, 'session.scopeId must match ^[A-Za-z0-9_-]{16,128}$')
    assert.ok(!error.message.includes(secret))
  }
  assert.match(throwsCode(assert, () => p.parseIntercomScopeId('bad'), 'INVALID_SCOPE').message, /^scopeId must match/)
})

test('intercomScopeIdFromEnv names the variable', () => {
  assert.strictEqual(p.intercomScopeIdFromEnv({}), undefined)
  assert.strictEqual(p.intercomScopeIdFromEnv({ AGENT_INTERCOM_SCOPE_ID: '' }), undefined)
  assert.strictEqual(p.intercomScopeIdFromEnv({ AGENT_INTERCOM_SCOPE_ID: A }), A)
  const error = throwsCode(assert, () => p.intercomScopeIdFromEnv({ AGENT_INTERCOM_SCOPE_ID: 'nope' }), 'INVALID_SCOPE')
  assert.match(error.message, /^AGENT_INTERCOM_SCOPE_ID must match/)
  throwsCode(assert, () => p.intercomScopeIdFromEnv(null), 'INVALID_ARGUMENT')
  const saved = process.env.AGENT_INTERCOM_SCOPE_ID
  process.env.AGENT_INTERCOM_SCOPE_ID = A
  try { assert.strictEqual(p.intercomScopeIdFromEnv(), A) } finally {
    if (saved === undefined) delete process.env.AGENT_INTERCOM_SCOPE_ID; else process.env.AGENT_INTERCOM_SCOPE_ID = saved
  }
})

test('sameIntercomScope is strict equality', () => {
  assert.strictEqual(p.sameIntercomScope(undefined, undefined), true)
  assert.strictEqual(p.sameIntercomScope(A, A), true)
  assert.strictEqual(p.sameIntercomScope(A, undefined), false)
  assert.strictEqual(p.sameIntercomScope(A, A.toLowerCase()), false)
})

test('routing functions reject wrong types with stable codes', () => {
  const candidates = [{ id: 'id-1', name: 'w', scope: A }]
  throwsCode(assert, () => p.resolveIntercomTarget(), 'INVALID_ARGUMENT')
  throwsCode(assert, () => p.resolveIntercomTarget({ candidates: 'x', selector: 'w' }), 'INVALID_ARGUMENT')
  throwsCode(assert, () => p.resolveIntercomTarget({ candidates, selector: 5 }), 'INVALID_ARGUMENT')
  throwsCode(assert, () => p.resolveIntercomTarget({ candidates, actorScope: 7, selector: 'w' }), 'INVALID_SCOPE')
  throwsCode(assert, () => p.resolveIntercomTarget({ candidates, actorScope: 'short', selector: 'w' }), 'INVALID_SCOPE')
  throwsCode(assert, () => p.resolveIntercomTarget({ candidates: [{ name: 'w' }], selector: 'w' }), 'INVALID_ARGUMENT')
  throwsCode(assert, () => p.resolveIntercomTarget({ candidates: [{ id: 1 }], selector: 'w' }), 'INVALID_ARGUMENT')
  throwsCode(assert, () => p.resolveIntercomTarget({ candidates: [{ id: 'x', scope: 'bad' }], selector: 'w' }), 'INVALID_SCOPE')
  throwsCode(assert, () => p.intercomEventAudience({ event: 'exploded', candidates, subjectId: 'id-1' }), 'INVALID_ARGUMENT')
  throwsCode(assert, () => p.listVisibleIntercomSessions({ candidates, actorId: null }), 'INVALID_ARGUMENT')
  throwsCode(assert, () => p.narrowIntercomAudience(['a'], [1]), 'INVALID_ARGUMENT')
  throwsCode(assert, () => p.planIntercomReplacement({ sessionId: 'x', oldScope: 'bad' }), 'INVALID_SCOPE')
  throwsCode(assert, () => p.intercomFrameDisposition(-1, 2), 'INVALID_ARGUMENT')
  throwsCode(assert, () => p.intercomFrameDisposition(1.5, 2), 'INVALID_ARGUMENT')
  assert.strictEqual(p.intercomFrameDisposition(3, null), 'discard')
})

test('names resolve case-sensitively; a full id wins over an equal name', () => {
  const candidates = [{ id: 'id-1', name: 'Worker', scope: A }, { id: 'id-2', name: 'worker', scope: A }, { id: 'id-3', name: 'id-1', scope: A }]
  assert.deepStrictEqual(p.resolveIntercomTarget({ candidates, actorScope: A, selector: 'worker' }), { kind: 'same_scope_name', targetIds: ['id-2'] })
  assert.deepStrictEqual(p.resolveIntercomTarget({ candidates, actorScope: A, selector: 'WORKER' }), { kind: 'SESSION_NOT_FOUND', targetIds: [] })
  assert.deepStrictEqual(p.resolveIntercomTarget({ candidates, actorScope: A, selector: 'id-1' }), { kind: 'global_exact_id', targetIds: ['id-1'] })
})

test('a deep-frozen candidate list is read once and answers as its unfrozen copy', () => {
  const deepFreeze = (v) => { if (v && typeof v === 'object') { for (const k of Object.keys(v)) deepFreeze(v[k]); Object.freeze(v) } return v }
  const A = p.PROTOCOL_V4_SCOPE_A
  const list = [{ id: 'aaaa-1', name: 'x', scope: A }, { id: 'bbbb-2', name: 'x', scope: A }, { id: 'cccc-3', name: 'y', scope: null }]
  const frozen = deepFreeze(JSON.parse(JSON.stringify(list)))
  for (let i = 0; i < 3; i++) {
    for (const candidates of [list, frozen]) {
      assert.deepStrictEqual(p.resolveIntercomTarget({ candidates, actorScope: A, selector: 'x' }), { kind: 'AMBIGUOUS_TARGET', targetIds: ['aaaa-1', 'bbbb-2'] })
      assert.deepStrictEqual(p.listVisibleIntercomSessions({ candidates, actorId: 'cccc-3', actorScope: undefined }), ['cccc-3'])
      assert.deepStrictEqual(p.intercomEventAudience({ event: 'session_joined', candidates, subjectId: 'aaaa-1', subjectScope: A }), ['bbbb-2'])
    }
  }
  // A frozen list the core refuses is refused every time (nothing of it is kept).
  const bad = deepFreeze([{ id: 'a', scope: 'not a scope' }])
  for (let i = 0; i < 2; i++) throwsCode(assert, () => p.listVisibleIntercomSessions({ candidates: bad, actorId: 'a' }), 'INVALID_SCOPE')
})

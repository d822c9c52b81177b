'use strict'
// The broker embedded in Node and the JavaScript client, against each other.
const test = require('node:test')
const assert = require('node:assert')
const { mkdtempSync, rmSync, existsSync, statSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { startBroker, ensureBroker, connect, brokerHealth } = require('@ctliz/agent-intercom-core/broker')
const { throwsCode } = require('./helpers.js')

const A = 'Scope_AAAAAAAAAA'
const session = (name) => ({ cwd: '/work', model: 'test', pid: process.pid, startedAt: 1, lastActivity: 1, name, runtimeInstanceId: `rt-${name}` })
const once = (emitter, event) => new Promise((resolve) => emitter.once(event, resolve))

function withDir (fn) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aic-node-broker-'))
    try { await fn(dir) } finally { rmSync(dir, { recursive: true, force: true }) }
  }
}

test('start, talk, ask and reply, close: files removed', withDir(async (dir) => {
  const broker = startBroker({ agentDir: dir, idleExitMs: 0, logLevel: 'off' })
  assert.strictEqual(broker.running, true)
  assert.strictEqual(statSync(broker.socketPath).mode & 0o777, 0o600)
  assert.strictEqual(await brokerHealth(broker.socketPath), 'compatible')
  throwsCode(assert, () => startBroker({ agentDir: dir }), 'BROKER_ALREADY_RUNNING')

  const alice = await connect({ agentDir: dir })
  const bob = await connect({ socketPath: broker.socketPath })
  assert.deepStrictEqual(await alice.register({ session: session('alice'), sessionId: 'alice', scopeId: A }), { sessionId: 'alice' })
  const joined = once(alice, 'session_joined')
  await bob.register({ session: session('bob'), sessionId: 'bob', scopeId: A })
  assert.strictEqual((await joined).session.id, 'bob')
  assert.deepStrictEqual((await alice.list()).map((s) => s.id), ['alice', 'bob'])

  const received = once(bob, 'message')
  const delivered = await alice.send('bob', 'hello')
  const incoming = await received
  assert.strictEqual(incoming.message.content.text, 'hello')
  assert.strictEqual(incoming.from.id, 'alice')
  assert.strictEqual(delivered.messageId, incoming.message.id)

  // Ask, reply threading, and refusals surfacing as DeliveryErrors.
  bob.on('message', ({ message, from }) => {
    if (message.expectsReply) bob.reply(from.id, message.id, 'answer').catch(() => {})
  })
  const replied = new Promise((resolve) => alice.on('message', ({ message }) => { if (message.replyTo) resolve(message) }))
  const asked = await alice.ask('bob', { id: 'q1', content: { text: 'question?' } })
  assert.strictEqual(asked.messageId, 'q1')
  assert.strictEqual((await replied).replyTo, 'q1')
  await assert.rejects(alice.send('nobody', 'x'), (e) => e.code === 'SESSION_NOT_FOUND' && e.accepted === false)
  await assert.rejects(alice.send('bob', { id: 'dup', content: { text: 'a' } }).then(() => alice.send('bob', { id: 'dup', content: { text: 'b' } })),
    (e) => e.code === 'DUPLICATE_MESSAGE_ID')
  assert.deepStrictEqual(await alice.cancel('no-such-ask'), { applied: false, action: 'cancel', messageId: 'no-such-ask' })

  const left = once(alice, 'session_left')
  bob.close()
  assert.strictEqual((await left).sessionId, 'bob')
  alice.close()
  assert.strictEqual(broker.close(), 'Shutdown')
  assert.strictEqual(broker.running, false)
  assert.strictEqual(broker.close(), 'AlreadyStopped')
  for (const f of ['broker.sock', 'broker.pid', 'broker.owner']) assert.ok(!existsSync(join(dir, 'intercom', f)), f)
}))

test('ensureBroker: concurrent callers end with one broker', withDir(async (dir) => {
  const results = await Promise.all(Array.from({ length: 8 }, () => ensureBroker({ agentDir: dir, idleExitMs: 0, logLevel: 'off' })))
  const started = results.filter((r) => r.started)
  assert.strictEqual(started.length, 1)
  assert.ok(results.every((r) => r.socketPath === started[0].socketPath))
  assert.strictEqual((await ensureBroker({ agentDir: dir })).started, false)
  started[0].broker.close()
}))

test('registration errors reject with the broker code, and bad options are refused', withDir(async (dir) => {
  const broker = startBroker({ agentDir: dir, idleExitMs: 0, logLevel: 'off' })
  const client = await connect({ agentDir: dir })
  await assert.rejects(client.register({ session: session('x'), scopeId: 'not a scope' }), (e) => e.code === 'INVALID_REQUEST' && !e.message.includes('not a scope'))
  const other = await connect({ agentDir: dir })
  await assert.rejects(other.register({ session: { cwd: '' } }), (e) => e.code === 'INVALID_REQUEST')
  throwsCode(assert, () => startBroker({ agentDir: dir, idleExitMs: -1 }), 'INVALID_ARGUMENT')
  throwsCode(assert, () => startBroker({ agentDir: dir, logLevel: 'loud' }), 'INVALID_ARGUMENT')
  throwsCode(assert, () => startBroker({ agentDir: dir, settings: { no_such_limit: 1 } }), 'UNKNOWN_KEY')
  // Out of range: refused naming the key and the range, before anything starts.
  for (const [key, value] of [['idle_exit_secs', '18446744073709551615'], ['recent_delivery_ttl_ms', '18446744073709551615'], ['max_sessions', 0], ['ask_timeout_ms', '1.5']]) {
    const e = throwsCode(assert, () => startBroker({ agentDir: dir, settings: { [key]: value } }), 'INVALID_ARGUMENT')
    assert.match(e.message, new RegExp(`${key} takes a whole number from \\d+ to \\d+`))
  }
  throwsCode(assert, () => startBroker({ agentDir: dir, idleExitMs: Number.MAX_SAFE_INTEGER }), 'INVALID_ARGUMENT')
  throwsCode(assert, () => startBroker({ agentDir: 42 }), 'INVALID_ARGUMENT')
  await assert.rejects(connect({ socketPath: join(dir, 'nothing.sock') }), (e) => e.code === 'NOT_CONNECTED')
  broker.close()
}))

test('idle exit stops an embedded broker', withDir(async (dir) => {
  const broker = startBroker({ agentDir: dir, idleExitMs: 100, logLevel: 'off' })
  const client = await connect({ agentDir: dir })
  await client.register({ session: session('brief') })
  client.close()
  const deadline = Date.now() + 5000
  while (broker.running && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  assert.strictEqual(broker.running, false)
  assert.strictEqual(broker.close(), 'Idle')
}))

'use strict'
// The opt-in extensions through connect() (docs/hub.md): send options { queue, receipts },
// markRead, deliveryStatus, and the events 'queued', 'read', 'delivered' and 'delivery_failed'.
const test = require('node:test')
const assert = require('node:assert')
const { mkdtempSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { startBroker, connect } = require('@ctliz/agent-intercom-core/broker')
const { throwsCode } = require('./helpers.js')

const A = 'Scope_AAAAAAAAAA'
const session = (name) => ({ cwd: '/work', model: 'test', pid: process.pid, startedAt: 1, lastActivity: 1, name, runtimeInstanceId: `rt-${name}-${Math.random()}` })
const once = (emitter, event) => new Promise((resolve) => emitter.once(event, resolve))

function withBroker (settings, fn) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aic-node-hub-'))
    const broker = startBroker({ agentDir: dir, idleExitMs: 0, logLevel: 'off', settings })
    try { await fn(broker) } finally {
      broker.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

async function join_ (broker, id, options = {}) {
  const client = await connect({ socketPath: broker.socketPath, ...options })
  await client.register({ session: session(id), sessionId: id, scopeId: A })
  return client
}

/** `watcher` hears `id` leave after it closes. */
async function leave (watcher, client, id) {
  const left = new Promise((resolve) => watcher.on('session_left', (f) => { if (f.sessionId === id) resolve() }))
  client.close()
  await left
}

test('queue: a message for an offline session waits, arrives when it is back, and is delivered', withBroker({}, async (broker) => {
  const alice = await join_(broker, 'alice')
  await leave(alice, await join_(broker, 'bob-1234'), 'bob-1234')
  const queuedEvent = once(alice, 'queued')
  const sent = await alice.send('bob-1234', { id: 'q1', content: { text: 'later' } }, { queue: true })
  assert.strictEqual(sent.queued, true)
  assert.strictEqual(sent.messageId, 'q1')
  assert.deepStrictEqual(await queuedEvent, { messageId: 'q1', deliveryId: sent.deliveryId })
  assert.strictEqual(await alice.deliveryStatus('q1'), 'queued')
  // Names never queue.
  await assert.rejects(alice.send('bob', 'x', { queue: true }), (e) => e.code === 'SESSION_NOT_FOUND' && e.accepted === false)

  const delivered = once(alice, 'delivered')
  const bob = await connect({ socketPath: broker.socketPath })
  const received = once(bob, 'message')
  await bob.register({ session: session('bob'), sessionId: 'bob-1234', scopeId: A })
  const incoming = await received
  assert.strictEqual(incoming.deliveryId, sent.deliveryId)
  assert.strictEqual(incoming.message.content.text, 'later')
  assert.deepStrictEqual(await delivered, { messageId: 'q1', deliveryId: sent.deliveryId })
  assert.strictEqual(await alice.deliveryStatus('q1'), 'delivered')
  bob.close()
  alice.close()
}))

test('receipts: markRead tells the sender, and deliveryStatus follows every state', withBroker({}, async (broker) => {
  const alice = await join_(broker, 'alice')
  const bob = await join_(broker, 'bob', { autoAck: false })
  const received = once(bob, 'message')
  const sending = alice.send('bob', { id: 'r1', content: { text: 'read me' } }, { receipts: true })
  const incoming = await received
  assert.strictEqual(await alice.deliveryStatus('r1'), 'accepted')
  incoming.ack()
  const sent = await sending
  assert.strictEqual(sent.queued, undefined)
  assert.strictEqual(await alice.deliveryStatus('r1'), 'delivered')
  const read = once(alice, 'read')
  bob.markRead(incoming.deliveryId)
  assert.deepStrictEqual(await read, { messageId: 'r1', deliveryId: sent.deliveryId })
  assert.strictEqual(await alice.deliveryStatus('r1'), 'read')
  assert.strictEqual(await bob.deliveryStatus('r1'), 'unknown', "another session's message")
  assert.strictEqual(await alice.deliveryStatus('never'), 'unknown')
  // failed: the recipient leaves before acknowledging.
  const received2 = once(bob, 'message')
  const failing = alice.send('bob', { id: 'r2', content: { text: 'x' } }, { receipts: true })
  await received2
  bob.close()
  await assert.rejects(failing, (e) => e.code === 'RECIPIENT_DISCONNECTED' && e.accepted === true)
  assert.strictEqual(await alice.deliveryStatus('r2'), 'failed')
  alice.close()
}))

test('queue: full and expired are reported', withBroker({ offline_queue_max_messages: 1, offline_ttl_ms: 50 }, async (broker) => {
  const alice = await join_(broker, 'alice')
  await leave(alice, await join_(broker, 'bob'), 'bob')
  const expired = once(alice, 'delivery_failed')
  const sent = await alice.send('bob', { id: 'e1', content: { text: 'x' } }, { queue: true })
  assert.strictEqual(sent.queued, true)
  await assert.rejects(alice.send('bob', { id: 'e2', content: { text: 'y' } }, { queue: true }), (e) => e.code === 'QUEUE_FULL' && e.accepted === false)
  const error = await expired
  assert.strictEqual(error.code, 'QUEUE_EXPIRED')
  assert.strictEqual(error.messageId, 'e1')
  assert.strictEqual(error.accepted, true)
  assert.strictEqual(await alice.deliveryStatus('e1'), 'expired')
  alice.close()
}))

test('bad extension arguments are refused before anything is sent', withBroker({}, async (broker) => {
  const alice = await join_(broker, 'alice')
  await assert.rejects(alice.send('x', 'y', { queue: 'yes' }), (e) => e.code === 'INVALID_ARGUMENT' && /options\.queue/.test(e.message))
  await assert.rejects(alice.send('x', 'y', { queued: true }), (e) => e.code === 'UNKNOWN_KEY')
  await assert.rejects(alice.send('x', 'y', { queue: NaN }), (e) => e.code === 'UNSUPPORTED_VALUE')
  await assert.rejects(alice.deliveryStatus(''), (e) => e.code === 'INVALID_ARGUMENT')
  await assert.rejects(alice.deliveryStatus(7), (e) => e.code === 'INVALID_ARGUMENT')
  throwsCode(assert, () => alice.markRead(''), 'INVALID_ARGUMENT')
  throwsCode(assert, () => alice.markRead(null), 'INVALID_ARGUMENT')
  // The connection is as it was: a plain send still works (to itself).
  const sent = await alice.send('alice', 'still here', {})
  assert.ok(sent.deliveryId)
  alice.close()
}))

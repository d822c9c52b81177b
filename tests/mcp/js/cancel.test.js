'use strict'
// An ask the client cancels (the SDK's AbortSignal sends notifications/cancelled): the asked
// session is told (ask_cancelled), and a client that sent a progress token heard from the server
// while it waited.
const { test, before, after } = require('node:test')
const assert = require('node:assert')
const { World, newScope } = require('./helpers.js')

let world
before(async () => {
  world = new World()
  await world.startBroker()
})
after(async () => {
  const panics = await world.stop()
  assert.deepStrictEqual(panics, [])
})

test('a cancelled intercom_ask reaches the asked session as ask_cancelled', async () => {
  const scope = newScope()
  const alice = await world.mcp('alice', { scope })
  const carol = await world.node('carol', { scope })
  const asked = new Promise((resolveAsked) => carol.on('message', (m) => {
    if (m.message.expectsReply) resolveAsked(m)
  }))
  const cancelled = new Promise((resolveCancelled) => carol.on('ask_cancelled', resolveCancelled))
  const abort = new AbortController()
  let firstProgress
  const progressed = new Promise((resolveProgress) => { firstProgress = resolveProgress })
  const progress = []
  const args = { to: 'carol', message: 'take your time', timeout_ms: 120000 }
  const call = alice.call('intercom_ask', args, {
    signal: abort.signal,
    timeout: 130000,
    onprogress: (p) => { progress.push(p); firstProgress() },
  })
  const ask = await asked
  assert.strictEqual(ask.message.content.text, 'take your time')
  await progressed
  assert.strictEqual(progress[0].total, 120000)
  assert.ok(progress[0].progress >= 0 && progress[0].progress <= 120000, progress[0])
  assert.match(progress[0].message, /carol/)
  abort.abort('the user changed their mind')
  await assert.rejects(call)
  const told = await cancelled
  assert.strictEqual(told.messageId, ask.message.id)
  assert.strictEqual(told.fromSessionId, ask.from.id)
  // The ask is closed: a reply to it is refused by the broker.
  await assert.rejects(carol.reply(ask.from.id, ask.message.id, { text: 'too late' }),
    (e) => e.code === 'INVALID_REPLY_TARGET')
  // The server goes on serving.
  assert.strictEqual((await alice.ok('intercom_status')).connected, true)
})

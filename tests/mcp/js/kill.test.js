'use strict'
// kill -9 of an MCP server between the broker's delivery and intercom_pending: the sender (a
// Node connect() session, which sees the broker's `delivered`) is told `delivered` only for what
// the server had committed, so after a restart with the same session id every such message is
// there, once.
const { test, before, after } = require('node:test')
const assert = require('node:assert')
const { World, newScope, alive, eventually } = require('./helpers.js')

let world
before(async () => {
  world = new World()
  await world.startBroker()
})
after(async () => {
  const panics = await world.stop()
  assert.deepStrictEqual(panics, [])
})

test('kill -9 right after `delivered`: every delivered message is kept, once', async () => {
  const scope = newScope()
  const alice = await world.mcp('alice', { sessionId: 'alice-k9', scope })
  const carol = await world.node('carol', { scope })
  const told = new Map()
  let killed = false
  const sends = []
  for (let i = 0; i < 16; i++) {
    const text = `m${i}`
    sends.push(carol.send('alice-k9', { text }).then(() => {
      told.set(text, 'delivered')
      if (!killed) {
        killed = true
        alice.kill9()
      }
    }, (e) => told.set(text, e.code)))
  }
  await Promise.all(sends)
  assert.ok(killed)
  await eventually(() => !alive(alice.pid), 'the killed server gone')
  const delivered = [...told].filter(([, how]) => how === 'delivered').map(([t]) => t)
  const again = await world.mcp('alice', { sessionId: 'alice-k9', scope })
  await again.untilConnected()
  const kept = (await again.ok('intercom_pending')).messages.map((m) => m.text)
  for (const text of delivered) assert.ok(kept.includes(text), `${text} was delivered: ${kept}`)
  assert.strictEqual(new Set(kept).size, kept.length, `a message kept twice: ${kept}`)
  // The others were refused, each with a delivery code, never left hanging.
  for (const [text, how] of told) {
    if (how !== 'delivered') assert.match(how, /^[A-Z_]+$/, text)
  }
})

'use strict'
// A message the broker delivers a second time (its duplicate window over: here 1 ms) is
// acknowledged again, so its sender hears `delivered`, and kept once. A Node session shows that
// the broker did deliver it again.
const { test, before, after } = require('node:test')
const assert = require('node:assert')
const { World, newScope, sleep, eventually } = require('./helpers.js')

let world
before(async () => {
  world = new World()
  await world.startBroker(['--set', 'recent_delivery_ttl_ms=1'])
})
after(async () => {
  const panics = await world.stop()
  assert.deepStrictEqual(panics, [])
})

test('a delivery repeated by the broker is acknowledged again and kept once', async () => {
  const scope = newScope()
  const alice = await world.mcp('alice', { scope })
  const dave = await world.node('dave', { scope })
  const carol = await world.node('carol', { scope })
  const atDave = []
  dave.on('message', (m) => atDave.push(m.message.id))
  const message = (id) => ({ id, timestamp: 1, content: { text: `again ${id}` } })

  // The control: sent again past the window, the broker delivers it again.
  await eventually(async () => {
    await carol.send('dave', message('to-dave'))
    await sleep(10)
    return atDave.length >= 2
  }, 'the broker delivering a message again')
  assert.deepStrictEqual([...new Set(atDave)], ['to-dave'])

  for (let i = 0; i < 5; i++) {
    const delivered = await carol.send('alice', message('to-alice'))
    assert.strictEqual(delivered.messageId, 'to-alice')
    await sleep(10)
  }
  const pending = await alice.ok('intercom_pending')
  assert.deepStrictEqual(pending.messages.map((m) => m.text), ['again to-alice'])
})

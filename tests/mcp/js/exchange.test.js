'use strict'
// Two `agent-intercom mcp` servers (the TypeScript SDK as their client) and a Node connect()
// session in one scope exchange send, ask and reply through one broker.
const { test, beforeEach, afterEach } = require('node:test')
const assert = require('node:assert')
const { World, eventually, newScope, sdkProtocol } = require('./helpers.js')

let world
beforeEach(async () => {
  world = new World()
  await world.startBroker()
})
afterEach(async () => {
  const panics = await world.stop()
  assert.deepStrictEqual(panics, [])
})

const texts = (messages) => messages.map((m) => m.text)

/** The next 'message' the Node session gets for which `pick` is true. */
function nextMessage (node, pick = () => true) {
  return new Promise((resolveMessage) => {
    const listener = (m) => {
      if (!pick(m)) return
      node.off('message', listener)
      resolveMessage(m)
    }
    node.on('message', listener)
  })
}

test('two MCP servers and a Node connect() session: send, ask and reply', async () => {
  const scope = newScope()
  const alice = await world.mcp('alice', { sessionId: 'alice-x', scope })
  const bob = await world.mcp('bob', { sessionId: 'bob-x', scope })
  const carol = await world.node('carol', { sessionId: 'carol-x', scope })

  const listed = await alice.ok('intercom_list')
  assert.deepStrictEqual(listed.sessions.map((s) => s.name).sort(), ['bob', 'carol'])

  // MCP -> Node.
  const toCarol = nextMessage(carol)
  const sent = await alice.ok('intercom_send', { to: 'carol', message: 'hi carol' })
  const got = await toCarol
  assert.strictEqual(got.message.content.text, 'hi carol')
  assert.strictEqual(got.message.id, sent.message_id)
  assert.strictEqual(got.from.id, 'alice-x')

  // Node -> MCP.
  await carol.send('bob', { text: 'hi bob' })
  const atBob = await bob.ok('intercom_pending', { mark_read: true })
  assert.deepStrictEqual(texts(atBob.messages), ['hi bob'])
  assert.deepStrictEqual(atBob.messages[0].from, { id: 'carol-x', name: 'carol' })

  // Node asks MCP; MCP replies with intercom_reply.
  const asked = { id: 'ask-from-carol-1', content: { text: 'ready?' } }
  const replyToCarol = nextMessage(carol, (m) => m.message.replyTo === asked.id)
  await carol.ask('alice', asked)
  const open = (await alice.ok('intercom_pending')).open_asks
  assert.deepStrictEqual(open.map((a) => [a.ask.id, a.ask.state, a.from.name]),
    [[asked.id, 'open', 'carol']])
  const replied = await alice.ok('intercom_reply', { message: 'ready', to: 'carol' })
  assert.strictEqual(replied.ask_id, asked.id)
  assert.strictEqual((await replyToCarol).message.content.text, 'ready')
  assert.deepStrictEqual((await alice.ok('intercom_pending')).open_asks, [])

  // MCP asks Node and waits; Node replies.
  carol.on('message', (m) => {
    if (m.message.expectsReply && m.message.content.text === 'ping?') {
      carol.reply(m.from.id, m.message.id, { text: 'pong' })
    }
  })
  const answer = await alice.ok('intercom_ask',
    { to: 'carol', message: 'ping?', timeout_ms: 60000 })
  assert.strictEqual(answer.reply.text, 'pong')
  assert.strictEqual(answer.reply.reply_to, answer.ask_id)
  assert.deepStrictEqual(answer.reply.from, { id: 'carol-x', name: 'carol' })

  // MCP asks MCP through the same broker, the other answering while the first waits.
  const asking = alice.ok('intercom_ask', { to: 'bob', message: 'and you?', timeout_ms: 60000 })
  await eventually(async () => (await bob.ok('intercom_pending')).open_asks.length === 1,
    'the ask at bob')
  await bob.ok('intercom_reply', { message: 'me too' })
  assert.strictEqual((await asking).reply.text, 'me too')
})

test('every result is one the SDK accepts: structuredContent is an object', async () => {
  const alice = await world.mcp('alice')
  const bob = await world.mcp('bob')
  // The SDK checks each result against its schema (structuredContent must be an object), so a
  // tool whose answer is a list would be an error here.
  await alice.ok('pad_post', { content: 'note', to: 'bob' })
  const unread = await bob.ok('pad_unread', {})
  assert.deepStrictEqual(unread.result.map((m) => [m.from, m.content]), [['alice', 'note']])
  for (const [name, args] of [['intercom_whoami', {}], ['intercom_status', {}],
    ['intercom_list', {}], ['intercom_pending', {}], ['intercom_wait', { timeout_ms: 1 }],
    ['pad_list', {}], ['pad_unread', {}]]) {
    const result = await bob.call(name, args)
    assert.strictEqual(result.isError, false, name)
    assert.ok(result.structuredContent && !Array.isArray(result.structuredContent), name)
    assert.deepStrictEqual(JSON.parse(result.content[0].text), result.structuredContent, name)
  }
})

test('the default waits end before the SDK gives up on a request', async () => {
  // A client with the SDK's default request timeout would otherwise cancel an unanswered ask
  // (cancel_ask: the late reply is refused) instead of hearing ASK_TIMEOUT (defer_ask: the late
  // reply lands in intercom_pending).
  const alice = await world.mcp('alice')
  const { tools } = await alice.client.listTools()
  const defaultOf = (name) => tools.find((t) => t.name === name).inputSchema.properties
    .timeout_ms.default
  for (const name of ['intercom_ask', 'intercom_wait']) {
    assert.ok(defaultOf(name) < sdkProtocol.DEFAULT_REQUEST_TIMEOUT_MSEC,
      `${name}: ${defaultOf(name)} >= ${sdkProtocol.DEFAULT_REQUEST_TIMEOUT_MSEC}`)
  }
})

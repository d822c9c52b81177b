'use strict'
// `serve --broker` with the @a2a-js/sdk client: a message becomes an ask to a live session (this
// process, through the Node package's broker client, on a broker it runs itself); the session's
// reply completes the task, blocking and streaming, in 1.0 and 0.3; a cancel reaches the session
// as ask_cancelled. (The Python suite covers the rest: tests/a2a/python/test_gateway*.py.)
const { test, before, after } = require('node:test')
const assert = require('node:assert')
const { mkdirSync } = require('node:fs')
const { join } = require('node:path')
const { once } = require('node:events')
const { sdk, tmp, startServe, onlyServe, clientFor, textMessage, randomUUID, root } =
  require('./helpers.js')

const { TaskState } = sdk('@a2a-js/sdk')

let broker, session, server
const asks = []

before(async () => {
  if (onlyServe) return
  const { startBroker, connect } = require(join(root, 'bindings-node', 'lib', 'broker.js'))
  const home = tmp()
  const agentDir = join(home, 'agent')
  mkdirSync(agentDir)
  broker = startBroker({ agentDir, idleExitMs: 0 })
  session = await connect({ agentDir })
  const now = Date.now()
  await session.register({
    session: { cwd: home, model: 'node', pid: process.pid, startedAt: now, lastActivity: now, name: 'worker' },
    sessionId: 'worker-' + randomUUID()
  })
  session.on('message', (m) => asks.push(m))
  server = await startServe(join(home, 'store.sqlite'),
    ['--broker', '--agent-dir', agentDir, '--assignee', 'worker', '--blocking-timeout', '60',
      '--request-timeout', '90'])
})

after(async () => {
  if (onlyServe) return
  const alive = server.alive()
  await server.stop()
  session.close()
  broker.close()
  assert.ok(alive, 'the server died during the tests: ' + server.stderr().slice(-2000))
})

/** The ask whose text is `text`, once the session has it. */
async function askOf (text) {
  for (;;) {
    const found = asks.find((m) => m.message.content.text === text)
    if (found) return found
    await once(session, 'message')
  }
}

/** The session replies to the ask of `text` with `reply`. */
async function answer (text, reply) {
  const ask = await askOf(text)
  await session.reply(ask.from.id, ask.message.id, reply)
  return ask
}

const artifacts = (task) => task.artifacts.map((a) => [a.name, a.parts[0].content.value])

for (const version of ['1.0', '0.3']) {
  test(`${version}: a blocking send returns the task the live session completed`,
    { skip: onlyServe }, async () => {
      const { client } = await clientFor(server.baseUrl, version, { polling: false })
      const text = `review ${randomUUID()}`
      const sending = client.sendMessage({ message: textMessage(text) })
      const ask = await answer(text, 'approved')
      const task = await sending
      assert.strictEqual(task.status.state, TaskState.TASK_STATE_COMPLETED)
      assert.strictEqual(ask.message.id, `a2a-task-${task.id}`)
      assert.strictEqual(ask.message.expectsReply, true)
      assert.deepStrictEqual(artifacts(task), [['reply', 'approved']])
    })

  test(`${version}: a streamed send sees working, the reply and completed`,
    { skip: onlyServe }, async () => {
      const { client } = await clientFor(server.baseUrl, version, { polling: false })
      const text = `stream ${randomUUID()}`
      const events = []
      let answering
      for await (const event of client.sendMessageStream({ message: textMessage(text) })) {
        events.push({ kind: event.payload.$case, value: event.payload.value })
        if (events.length === 1) answering = answer(text, 'streamed')
      }
      await answering
      assert.deepStrictEqual(events.map((e) => e.kind),
        ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate'])
      assert.strictEqual(events[1].value.status.state, TaskState.TASK_STATE_WORKING)
      assert.strictEqual(events[2].value.artifact.parts[0].content.value, 'streamed')
      assert.strictEqual(events[3].value.status.state, TaskState.TASK_STATE_COMPLETED)
    })
}

test('a cancel reaches the live session as ask_cancelled', { skip: onlyServe }, async () => {
  const { client } = await clientFor(server.baseUrl, '1.0')
  const text = `cancel ${randomUUID()}`
  const task = await client.sendMessage({ message: textMessage(text) })
  const ask = await askOf(text)
  const cancelled = once(session, 'ask_cancelled')
  const canceled = await client.cancelTask({ id: task.id })
  assert.strictEqual(canceled.status.state, TaskState.TASK_STATE_CANCELED)
  const [frame] = await cancelled
  assert.strictEqual(frame.messageId, ask.message.id)
  assert.strictEqual(frame.reason, 'cancelled')
})

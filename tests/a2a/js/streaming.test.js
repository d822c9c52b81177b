'use strict'
// Streaming with the official @a2a-js/sdk 1.3 client (1.0, and 0.3 through its legacyCompat)
// against agent-intercom serve: the card says streaming; sendMessageStream follows a task the
// local agent completes through `agent-intercom pad`; resubscribeTask after the first stream was
// dropped starts from the task as it stands; a cancel during a stream ends it.
const { test, before, after } = require('node:test')
const assert = require('node:assert')
const { sdk, startServe, tmp, onlyServe, pad, clientFor, textMessage } = require('./helpers.js')
const { join } = require('node:path')

const { TaskState } = sdk('@a2a-js/sdk')
const { DefaultAgentCardResolver } = sdk('@a2a-js/sdk/client')
const { UnsupportedOperationError } = sdk('@a2a-js/sdk/errors')

// The local agent of serve's default --assignee.
const AGENT = 'a2a'

let server
before(async () => {
  if (onlyServe) return
  server = await startServe(join(tmp(), 'store.sqlite'))
})
after(async () => {
  if (onlyServe) return
  const alive = server.alive()
  await server.stop()
  assert.ok(alive, 'the server died during the tests: ' + server.stderr().slice(-2000))
})

/** The local agent's `agent-intercom pad` calls on task `id`, in order. */
function agent (id, ...steps) {
  for (const [op, args] of steps) pad(server.db, op, { id, by: AGENT, ...args })
}

/** Every event of a stream to its end: { kind, value } each; `onFirst` runs after the first. */
async function drain (stream, onFirst = async () => {}) {
  const events = []
  for await (const event of stream) {
    events.push({ kind: event.payload.$case, value: event.payload.value })
    if (events.length === 1) await onFirst(events[0].value)
  }
  return events
}

function lastMethod (wire) {
  const { headers, body } = wire.last()
  return [headers.get('a2a-version'), body.method]
}

test('the card says streaming', { skip: onlyServe }, async () => {
  const card = await new DefaultAgentCardResolver().resolve(server.baseUrl)
  assert.strictEqual(card.capabilities.streaming, true)
})

for (const version of ['1.0', '0.3']) {
  const [send, subscribe] = version === '1.0'
    ? ['SendStreamingMessage', 'SubscribeToTask']
    : ['message/stream', 'tasks/resubscribe']

  test(`${version}: sendMessageStream follows the task the local agent completes through pad`,
    { skip: onlyServe }, async () => {
      const { client, wire } = await clientFor(server.baseUrl, version, { polling: false })
      const stream = client.sendMessageStream({ message: textMessage('stream the docs') })
      let task
      const events = await drain(stream, async (first) => {
        assert.deepStrictEqual(lastMethod(wire), [version, send])
        task = first
        assert.strictEqual(task.status.state, TaskState.TASK_STATE_SUBMITTED)
        agent(task.id,
          ['task.transition', { to: 'working' }],
          ['task.artifact', { name: 'docs.md', content: '# Docs' }],
          ['task.transition', { to: 'completed', reason: 'written' }])
      })
      assert.deepStrictEqual(events.map((e) => e.kind),
        ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate'])
      const [, working, artifact, done] = events.map((e) => e.value)
      assert.strictEqual(working.status.state, TaskState.TASK_STATE_WORKING)
      assert.strictEqual(artifact.taskId, task.id)
      assert.strictEqual(artifact.artifact.name, 'docs.md')
      assert.strictEqual(artifact.artifact.parts[0].content.value, '# Docs')
      assert.strictEqual(artifact.lastChunk, true)
      assert.strictEqual(done.taskId, task.id)
      assert.strictEqual(done.contextId, task.contextId)
      assert.strictEqual(done.status.state, TaskState.TASK_STATE_COMPLETED)
      assert.strictEqual(done.status.message.parts[0].content.value, 'written')
    })

  test(`${version}: resubscribeTask after a dropped stream starts from the current state`,
    { skip: onlyServe }, async () => {
      const { client, wire } = await clientFor(server.baseUrl, version, { polling: false })
      const first = client.sendMessageStream({ message: textMessage('drop me') })
      const { value } = await first.next()
      const task = value.payload.value
      // Dropped: the SDK cancels the response body, the connection closes.
      await first.return()
      agent(task.id,
        ['task.transition', { to: 'working' }],
        ['task.artifact', { name: 'draft', content: 'half' }])
      const events = await drain(client.resubscribeTask({ id: task.id }), async () => {
        assert.deepStrictEqual(lastMethod(wire), [version, subscribe])
        agent(task.id, ['task.transition', { to: 'completed' }])
      })
      assert.deepStrictEqual(events.map((e) => e.kind), ['task', 'statusUpdate'])
      const now = events[0].value
      assert.strictEqual(now.id, task.id)
      assert.strictEqual(now.status.state, TaskState.TASK_STATE_WORKING)
      assert.deepStrictEqual(now.artifacts.map((a) => a.name), ['draft'])
      assert.strictEqual(events[1].value.status.state, TaskState.TASK_STATE_COMPLETED)
      // A terminal task has nothing more to stream.
      await assert.rejects(drain(client.resubscribeTask({ id: task.id })), (e) =>
        e instanceof UnsupportedOperationError)
    })

  test(`${version}: a cancel during a stream ends it canceled`, { skip: onlyServe }, async () => {
    const { client } = await clientFor(server.baseUrl, version, { polling: false })
    const stream = client.sendMessageStream({ message: textMessage('cancel me') })
    const events = await drain(stream, async (task) => {
      const canceled = await client.cancelTask({ id: task.id })
      assert.strictEqual(canceled.status.state, TaskState.TASK_STATE_CANCELED)
    })
    assert.deepStrictEqual(events.map((e) => e.kind), ['task', 'statusUpdate'])
    assert.strictEqual(events[1].value.status.state, TaskState.TASK_STATE_CANCELED)
    const local = pad(server.db, 'task.get', { id: events[0].value.id, agent: AGENT })
    assert.strictEqual(local.state, 'canceled')
  })
}

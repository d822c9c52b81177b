'use strict'
// End to end through the Node scratchpad API: a message the @a2a-js/sdk client sends becomes a
// scratchpad task; a local agent with openScratchpad() on the same store reads it (unread),
// moves the task to working, adds an artifact, completes it; the client's getTask shows
// COMPLETED with the artifact and its history. Then the same store after kill -9 of the service.
const { test, before, after } = require('node:test')
const assert = require('node:assert')
const { join } = require('node:path')
const { sdk, tmp, startServe, onlyServe, clientFor, textMessage, randomUUID, root } =
  require('./helpers.js')

const { TaskState, Role } = sdk('@a2a-js/sdk')
const { TaskNotCancelableError } = sdk('@a2a-js/sdk/errors')

// The local agent A2A tasks are assigned to (serve's --assignee).
const AGENT = 'reviewer'
const SERVE_ARGS = ['--assignee', AGENT]

let server
let store
before(async () => {
  if (onlyServe) return
  server = await startServe(join(tmp(), 'store.sqlite'), SERVE_ARGS)
  const { openScratchpad } = require(join(root, 'bindings-node', 'lib', 'scratchpad.js'))
  store = openScratchpad({ path: server.db })
})
after(async () => {
  if (onlyServe) return
  store.close()
  const alive = server.alive()
  await server.stop()
  assert.ok(alive, 'the server died during the tests: ' + server.stderr().slice(-2000))
})

const texts = (task) => Object.fromEntries(task.artifacts.map((a) =>
  [a.name, a.parts.map((p) => p.content.value)]))

for (const version of ['1.0', '0.3']) {
  const name = `${version}: an SDK task worked by a local agent through the Node API`
  test(name, { skip: onlyServe }, async () => {
    const { client } = await clientFor(server.baseUrl, version)
    const messageId = randomUUID()
    const message = textMessage('translate the README', messageId)
    const task = await client.sendMessage({ message })
    assert.strictEqual(task.status.state, TaskState.TASK_STATE_SUBMITTED)

    const notes = store.unread({ agent: AGENT }).filter((m) => m.task_id === task.id)
    assert.strictEqual(notes.length, 1)
    assert.ok(notes[0].content.includes('translate the README'))
    assert.strictEqual(notes[0].privacy, 'private')
    const local = store.taskGet({ id: task.id, agent: AGENT })
    assert.strictEqual(local.state, 'submitted')
    assert.strictEqual(local.assignee, AGENT)

    store.taskTransition({ id: task.id, by: AGENT, to: 'working' })
    const working = await client.getTask({ id: task.id })
    assert.strictEqual(working.status.state, TaskState.TASK_STATE_WORKING)
    store.taskArtifact({ id: task.id, by: AGENT, name: 'README.fr.md', content: 'Bonjour' })
    store.taskTransition({ id: task.id, by: AGENT, to: 'completed', reason: 'translated' })

    const done = await client.getTask({ id: task.id })
    assert.strictEqual(done.status.state, TaskState.TASK_STATE_COMPLETED)
    assert.deepStrictEqual(texts(done), { 'README.fr.md': ['Bonjour'] })
    assert.ok(done.artifacts.every((a) => a.artifactId))
    const users = done.history.filter((m) => m.role === Role.ROLE_USER)
    assert.deepStrictEqual(users.map((m) => m.messageId), [messageId])
    assert.strictEqual(users[0].parts[0].content.value, 'translate the README')
    await assert.rejects(client.cancelTask({ id: task.id }),
      (e) => e instanceof TaskNotCancelableError)
  })
}

const cancelName = '1.0: cancel while the local agent works: CANCELED in the store too'
test(cancelName, { skip: onlyServe }, async () => {
  const { client } = await clientFor(server.baseUrl, '1.0')
  const task = await client.sendMessage({ message: textMessage('cancel me') })
  store.taskTransition({ id: task.id, by: AGENT, to: 'working' })
  const canceled = await client.cancelTask({ id: task.id })
  assert.strictEqual(canceled.status.state, TaskState.TASK_STATE_CANCELED)
  assert.strictEqual(store.taskGet({ id: task.id, agent: AGENT }).state, 'canceled')
  assert.throws(() => store.taskTransition({ id: task.id, by: AGENT, to: 'completed' }),
    (e) => e.code === 'INVALID_TRANSITION')
})

const restartName = 'tasks survive kill -9 of the service (the same store, a new process)'
test(restartName, { skip: onlyServe }, async () => {
  const db = join(tmp(), 'restart.sqlite')
  const first = await startServe(db, SERVE_ARGS)
  const made = []
  for (const version of ['1.0', '0.3']) {
    const { client } = await clientFor(first.baseUrl, version)
    const messageId = randomUUID()
    const task = await client.sendMessage({ message: textMessage(`survive ${version}`, messageId) })
    made.push({ task, messageId })
  }
  const { client: c1 } = await clientFor(first.baseUrl, '1.0')
  await c1.cancelTask({ id: made[1].task.id })
  const { signal } = await first.kill9()
  assert.strictEqual(signal, 'SIGKILL')

  const second = await startServe(db, SERVE_ARGS)
  try {
    const { client } = await clientFor(second.baseUrl, '1.0')
    const states = [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_CANCELED]
    for (const [n, { task, messageId }] of made.entries()) {
      const got = await client.getTask({ id: task.id })
      assert.strictEqual(got.status.state, states[n])
      assert.deepStrictEqual(got.history.map((m) => m.messageId), [messageId])
    }
    const message = textMessage('survive 1.0', made[0].messageId)
    const again = await client.sendMessage({ message })
    assert.strictEqual(again.id, made[0].task.id)
  } finally {
    await second.stop()
  }
})

'use strict'
// The official @a2a-js/sdk 1.3 client against the server: card resolution, send
// (returnImmediately / blocking:false) -> SUBMITTED, get, cancel -> CANCELED and again ->
// not cancelable, list (1.0), a repeated messageId; protocol 1.0 and 0.3 (the SDK's legacyCompat).
const { test, before, after } = require('node:test')
const assert = require('node:assert')
const { sdk, startDefault, onlyServe, clientFor, textMessage, randomUUID, root } =
  require('./helpers.js')

const { TaskState } = sdk('@a2a-js/sdk')
const { DefaultAgentCardResolver } = sdk('@a2a-js/sdk/client')
const { parseLegacyAgentCard } = sdk('@a2a-js/sdk/compat/v0_3/client')
const { TaskNotFoundError, TaskNotCancelableError } = sdk('@a2a-js/sdk/errors')

let server
before(async () => { server = await startDefault() })
after(async () => {
  const alive = server.alive()
  await server.stop()
  assert.ok(alive, 'the server died during the tests: ' + server.stderr().slice(-2000))
})

const majorMinor = (v) => v.split('.').slice(0, 2).join('.')

function checkWire (wire, version, method10, method03) {
  const { headers, body } = wire.last()
  assert.strictEqual(body.jsonrpc, '2.0')
  if (version === '1.0') {
    assert.deepStrictEqual([headers.get('a2a-version'), body.method], ['1.0', method10])
  } else {
    assert.deepStrictEqual([headers.get('a2a-version'), body.method], ['0.3', method03])
  }
  return body.params
}

test('card resolution', async () => {
  const card = await new DefaultAgentCardResolver().resolve(server.baseUrl)
  assert.ok(card.name && card.description && card.version)
  const jsonrpc = card.supportedInterfaces.filter((i) => i.protocolBinding === 'JSONRPC')
  assert.deepStrictEqual(jsonrpc.map((i) => majorMinor(i.protocolVersion)).sort(), ['0.3', '1.0'])
  assert.deepStrictEqual([...new Set(jsonrpc.map((i) => i.url))], [server.rpcUrl])
  assert.ok(card.skills.length > 0 && card.skills.every((s) => s.id && s.name))
  assert.ok(card.defaultInputModes.length > 0 && card.defaultOutputModes.length > 0)
  assert.ok(card.provider && card.provider.organization)
  assert.ok(card.documentationUrl)
  assert.ok(card.capabilities)
  const raw = await (await fetch(server.baseUrl + '/.well-known/agent-card.json')).text()
  for (const local of [server.db, root, process.env.HOME].filter(Boolean)) {
    assert.ok(!raw.includes(local), `the card shows ${local}`)
  }
})

test('the card at the well-known path also reads as a 0.3 card', async () => {
  const raw = await (await fetch(server.baseUrl + '/.well-known/agent-card.json')).json()
  assert.strictEqual(raw.url, server.rpcUrl)
  assert.strictEqual(majorMinor(raw.protocolVersion), '0.3')
  const legacy = parseLegacyAgentCard(raw)
  assert.strictEqual(legacy.supportedInterfaces[0].url, server.rpcUrl)
})

for (const version of ['1.0', '0.3']) {
  test(`${version}: send with returnImmediately -> SUBMITTED`, async () => {
    const { client, wire } = await clientFor(server.baseUrl, version)
    assert.strictEqual(client.protocolVersion, version)
    const messageId = randomUUID()
    const task = await client.sendMessage({ message: textMessage('summarise the diff', messageId) })
    const params = checkWire(wire, version, 'SendMessage', 'message/send')
    if (version === '1.0') assert.strictEqual(params.configuration.returnImmediately, true)
    else assert.strictEqual(params.configuration.blocking, false)
    assert.ok('status' in task, 'a Task, not a Message')
    assert.ok(task.id && task.contextId)
    assert.strictEqual(task.status.state, TaskState.TASK_STATE_SUBMITTED)
    assert.deepStrictEqual(task.history.map((m) => m.messageId), [messageId])
    assert.strictEqual(task.history[0].parts[0].content.value, 'summarise the diff')
  })

  test(`${version}: get`, async () => {
    const { client, wire } = await clientFor(server.baseUrl, version)
    const messageId = randomUUID()
    const sent = await client.sendMessage({ message: textMessage('get me', messageId) })
    const got = await client.getTask({ id: sent.id })
    checkWire(wire, version, 'GetTask', 'tasks/get')
    assert.strictEqual(got.id, sent.id)
    assert.strictEqual(got.contextId, sent.contextId)
    assert.strictEqual(got.status.state, TaskState.TASK_STATE_SUBMITTED)
    assert.deepStrictEqual(got.history.map((m) => m.messageId), [messageId])
    await assert.rejects(client.getTask({ id: randomUUID() }), (e) =>
      e instanceof TaskNotFoundError && e.envelopeCode === -32001)
  })

  test(`${version}: cancel -> CANCELED, then not cancelable`, async () => {
    const { client, wire } = await clientFor(server.baseUrl, version)
    const sent = await client.sendMessage({ message: textMessage('cancel me') })
    const canceled = await client.cancelTask({ id: sent.id })
    checkWire(wire, version, 'CancelTask', 'tasks/cancel')
    assert.strictEqual(canceled.id, sent.id)
    assert.strictEqual(canceled.status.state, TaskState.TASK_STATE_CANCELED)
    const got = await client.getTask({ id: sent.id })
    assert.strictEqual(got.status.state, TaskState.TASK_STATE_CANCELED)
    await assert.rejects(client.cancelTask({ id: sent.id }), (e) =>
      e instanceof TaskNotCancelableError && e.envelopeCode === -32002)
    await assert.rejects(client.cancelTask({ id: randomUUID() }), (e) =>
      e instanceof TaskNotFoundError && e.envelopeCode === -32001)
  })

  test(`${version}: a repeated messageId returns the same task`, { skip: onlyServe }, async () => {
    const messageId = randomUUID()
    const first = (await clientFor(server.baseUrl, version)).client
    const one = await first.sendMessage({ message: textMessage('once', messageId) })
    const second = (await clientFor(server.baseUrl, version)).client
    const again = await second.sendMessage({ message: textMessage('once', messageId) })
    const other = await second.sendMessage({ message: textMessage('once') })
    assert.strictEqual(again.id, one.id)
    assert.strictEqual(again.contextId, one.contextId)
    assert.notStrictEqual(other.id, one.id)
  })

  test(`${version}: an A2A-Extensions header for an unknown extension is ignored`, async () => {
    const { withA2AExtensions, ServiceParameters } = sdk('@a2a-js/sdk/client')
    const { client, wire } = await clientFor(server.baseUrl, version)
    const unknown = 'https://example.invalid/ext/unknown/v1'
    const serviceParameters = ServiceParameters.create(withA2AExtensions(unknown))
    const task = await client.sendMessage({ message: textMessage('ext') }, { serviceParameters })
    assert.strictEqual(task.status.state, TaskState.TASK_STATE_SUBMITTED)
    const name = version === '1.0' ? 'a2a-extensions' : 'x-a2a-extensions'
    assert.strictEqual(wire.last().headers.get(name), unknown)
  })
}

test('1.0: list by context, by state, in pages', async () => {
  const { client, wire } = await clientFor(server.baseUrl, '1.0')
  const contextId = randomUUID()
  const ids = []
  for (let n = 0; n < 3; n++) {
    const message = textMessage(`list ${n}`, randomUUID(), contextId)
    const task = await client.sendMessage({ message })
    assert.strictEqual(task.contextId, contextId)
    ids.push(task.id)
  }
  await client.cancelTask({ id: ids[0] })
  const listed = await client.listTasks({ contextId })
  checkWire(wire, '1.0', 'ListTasks', '')
  assert.deepStrictEqual(listed.tasks.map((t) => t.id).sort(), [...ids].sort())
  const canceled = await client.listTasks({ contextId, status: TaskState.TASK_STATE_CANCELED })
  assert.deepStrictEqual(canceled.tasks.map((t) => t.id), [ids[0]])
  const seen = []
  let pageToken = ''
  for (let n = 0; n < 10; n++) {
    const page = await client.listTasks({ contextId, pageSize: 1, pageToken })
    assert.ok(page.tasks.length <= 1)
    seen.push(...page.tasks.map((t) => t.id))
    pageToken = page.nextPageToken
    if (!pageToken) break
  }
  assert.deepStrictEqual(seen.sort(), [...ids].sort())
})

const noList = 'ListTasks has no 0.3 JSON-RPC method; the SDK legacy transport refuses it locally'
test('0.3: list', { skip: noList }, () => {})

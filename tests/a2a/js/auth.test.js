'use strict'
// The bearer token through the @a2a-js/sdk client: the card stays public, a send without the
// token is refused (HTTP 401), one with it (the SDK's authenticating fetch) works.
const { test, before, after } = require('node:test')
const assert = require('node:assert')
const { openSync, writeSync, closeSync } = require('node:fs')
const { join } = require('node:path')
const { sdk, tmp, startServe, onlyServe, textMessage } = require('./helpers.js')

const { TaskState } = sdk('@a2a-js/sdk')
const {
  ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, createAuthenticatingFetchWithRetry
} = sdk('@a2a-js/sdk/client')

const TOKEN = 'interop-token-js-0123456789abcdef'
let server
before(async () => {
  if (onlyServe) return
  const dir = tmp()
  const tokenFile = join(dir, 'token')
  const fd = openSync(tokenFile, 'wx', 0o600)
  writeSync(fd, TOKEN + '\n')
  closeSync(fd)
  server = await startServe(join(dir, 'store.sqlite'), ['--token-file', tokenFile])
})
after(async () => { if (server) await server.stop() })

function factory (fetchImpl) {
  return new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    clientConfig: { polling: true }
  }))
}

test('without the token: the card resolves, the send gets 401', { skip: onlyServe }, async () => {
  const client = await factory(fetch).createFromUrl(server.baseUrl)
  await assert.rejects(client.sendMessage({ message: textMessage('no token') }), /401/)
})

const withToken = 'with the token (the SDK\'s authenticating fetch): send and get'
test(withToken, { skip: onlyServe }, async () => {
  const auth = createAuthenticatingFetchWithRetry(fetch, {
    headers: async () => ({ Authorization: `Bearer ${TOKEN}` }),
    shouldRetryWithHeaders: async () => undefined
  })
  const client = await factory(auth).createFromUrl(server.baseUrl)
  const task = await client.sendMessage({ message: textMessage('with token') })
  assert.strictEqual(task.status.state, TaskState.TASK_STATE_SUBMITTED)
  assert.strictEqual((await client.getTask({ id: task.id })).id, task.id)
})

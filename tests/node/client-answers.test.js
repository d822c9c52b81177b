'use strict'
// vectors/broker-client-v1.json through connect().register(): a fake broker on a Unix socket
// answers the register request with each case's bytes, and the registration must end with the
// case's code and message, closing the connection or not as the case says. The Rust client
// (broker/tests/client.rs) and the C ABI (tests/c/client.c) run the same file, so the three
// answer every frame alike.
const test = require('node:test')
const assert = require('node:assert')
const net = require('node:net')
const { mkdtempSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { connect } = require('@ctliz/agent-intercom-core/broker')
const { IntercomError } = require('@ctliz/agent-intercom-core')
const { readVectors, describeVectors } = require('./helpers.js')

const session = { cwd: '/work', model: 'test', pid: process.pid, startedAt: 1, lastActivity: 1 }

/** The bytes a case answers with: `frame` behind its length, or `wireHex` as it is. */
function caseBytes (c) {
  if (c.frame === undefined) return Buffer.from(c.wireHex, 'hex')
  const body = Buffer.from(c.frame, 'utf8')
  const header = Buffer.alloc(4)
  header.writeUInt32BE(body.length)
  return Buffer.concat([header, body])
}

/** A fake broker that answers the first frame it reads with `bytes` and keeps the connection
 * open; fn(socketPath, received) runs while it listens. */
async function withFakeBroker (bytes, fn) {
  const dir = mkdtempSync(join(tmpdir(), 'aic-node-answers-'))
  const socketPath = join(dir, 'broker.sock')
  const received = []
  const sockets = new Set()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    let buffer = Buffer.alloc(0)
    socket.on('error', () => {})
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk])
      if (received.length > 0 || buffer.length < 4 || buffer.length < 4 + buffer.readUInt32BE(0)) return
      received.push(JSON.parse(buffer.toString('utf8', 4, 4 + buffer.readUInt32BE(0))))
      socket.write(bytes)
    })
  })
  await new Promise((resolve) => server.listen(socketPath, resolve))
  try { await fn(socketPath, received) } finally {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => server.close(resolve))
    rmSync(dir, { recursive: true, force: true })
  }
}

const doc = readVectors('broker-client-v1.json')
test('broker-client-v1.json: counted', () => assert.strictEqual(doc.cases.length, doc.count))

describeVectors('broker-client-v1.json', doc.cases, {
  run: (c) => withFakeBroker(caseBytes(c), async (socketPath, received) => {
    const client = await connect({ socketPath })
    const closed = new Promise((resolve) => client.once('close', resolve))
    const request = c.access === undefined ? { session } : { session, access: c.access }
    let code = 'OK'
    let message = ''
    try {
      await client.register(request)
    } catch (error) {
      assert.ok(error instanceof IntercomError, String(error))
      code = error.code
      message = error.message
    }
    // The fake broker never closes first: a close now is the client's.
    const closes = await Promise.race([closed.then(() => true), new Promise((resolve) => setTimeout(resolve, 100, false))])
    client.close()
    assert.deepStrictEqual({ code, message, closes }, c.expected)
    assert.strictEqual(received[0].type, 'register')
    assert.deepStrictEqual(received[0].access, c.access)
  }),
})

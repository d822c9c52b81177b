'use strict'
// Runs vectors/wire-v4.json against the broker embedded in Node, over raw sockets: the same
// scripts the Rust runner executes. One sub-test per case; AIC_VECTOR=<substring> runs the
// matching ones (WIRE_LOG=debug shows the broker's log).
const test = require('node:test')
const assert = require('node:assert')
const net = require('node:net')
const { mkdtempSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { startBroker } = require('@ctliz/agent-intercom-core/broker')
const { readVectors, describeVectors } = require('./helpers.js')

class RawClient {
  constructor (socketPath) {
    this.frames = []
    this.waiters = []
    this.closed = false
    this.buffer = Buffer.alloc(0)
    this.socket = net.connect(socketPath)
    this.socket.on('data', (chunk) => {
      this.buffer = Buffer.concat([this.buffer, chunk])
      while (this.buffer.length >= 4 && this.buffer.length >= 4 + this.buffer.readUInt32BE(0)) {
        const size = this.buffer.readUInt32BE(0)
        this.frames.push(JSON.parse(this.buffer.toString('utf8', 4, 4 + size)))
        this.buffer = this.buffer.subarray(4 + size)
      }
      this.wake()
    })
    this.socket.on('close', () => { this.closed = true; this.wake() })
    this.socket.on('error', () => {})
  }

  wake () { for (const w of this.waiters.splice(0)) w() }

  send (frame) {
    const body = Buffer.from(JSON.stringify(frame))
    const header = Buffer.alloc(4)
    header.writeUInt32BE(body.length)
    this.socket.write(Buffer.concat([header, body]))
  }

  async next (timeoutMs = 5000) {
    const deadline = Date.now() + timeoutMs
    while (this.frames.length === 0) {
      if (this.closed || Date.now() > deadline) return null
      await new Promise((resolve) => { this.waiters.push(resolve); setTimeout(resolve, 50) })
    }
    return this.frames.shift()
  }

  async closedSoon () {
    const deadline = Date.now() + 5000
    while (!this.closed && Date.now() < deadline) await new Promise((resolve) => { this.waiters.push(resolve); setTimeout(resolve, 50) })
    return this.closed
  }
}

function substitute (value, vars) {
  if (typeof value === 'string' && value.startsWith('${') && value.endsWith('}')) {
    const name = value.slice(2, -1)
    assert.ok(name in vars, `\${${name}} was never captured`)
    return vars[name]
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars))
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]))
  return value
}

function matches (expected, actual, vars, at) {
  if (expected === '$any') return
  if (typeof expected === 'string' && expected.startsWith('$capture:')) { vars[expected.slice(9)] = actual; return }
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual) && actual.length === expected.length, `${at}: expected ${expected.length} items, got ${JSON.stringify(actual)}`)
    expected.forEach((e, i) => matches(e, actual[i], vars, `${at}[${i}]`))
    return
  }
  if (expected && typeof expected === 'object') {
    assert.ok(actual && typeof actual === 'object' && !Array.isArray(actual), `${at}: expected an object, got ${JSON.stringify(actual)}`)
    for (const [k, v] of Object.entries(expected)) {
      assert.ok(Object.hasOwn(actual, k), `${at}.${k}: missing in ${JSON.stringify(actual)}`)
      matches(v, actual[k], vars, `${at}.${k}`)
    }
    return
  }
  assert.deepStrictEqual(actual, expected, at)
}

async function runCase (c) {
  const dir = mkdtempSync(join(tmpdir(), 'aic-wire-'))
  const settings = { ...(c.config ?? {}) }
  const broker = startBroker({ agentDir: dir, idleExitMs: 0, logLevel: process.env.WIRE_LOG ?? 'off', settings })
  const clients = new Map()
  const vars = {}
  try {
    for (const [n, step] of c.steps.entries()) {
      if (!clients.has(step.client)) clients.set(step.client, new RawClient(broker.socketPath))
      const client = clients.get(step.client)
      const at = `${c.id} step ${n} (${step.client})`
      if (step.send) client.send(substitute(step.send, vars))
      else if (step.expect) {
        const expected = substitute(step.expect, vars)
        const actual = await client.next()
        assert.ok(actual, `${at}: no frame, expected ${JSON.stringify(expected)}`)
        matches(expected, actual, vars, at)
        if (step.notContains) assert.ok(!JSON.stringify(actual).includes(step.notContains), `${at}: contains ${step.notContains}`)
      } else if (step.expectClose) {
        while (await client.next(300)) { /* drain what is still in flight */ }
        assert.ok(await client.closedSoon(), `${at}: the connection stayed open`)
      } else if (step.disconnect) {
        client.socket.destroy()
        clients.delete(step.client)
      } else assert.fail(`${at}: unknown step`)
    }
  } finally {
    for (const client of clients.values()) client.socket.destroy()
    broker.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

const doc = readVectors('wire-v4.json')
test('wire-v4.json: counted', () => assert.strictEqual(doc.cases.length, doc.count))
describeVectors('wire-v4.json', doc.cases, {
  run: runCase,
  done (counts) {
    assert.strictEqual(counts.skipped, 0)
  }
})

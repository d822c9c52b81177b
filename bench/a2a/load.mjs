// Load generator for A2A JSON-RPC servers (a benchmark, not a test): N keep-alive HTTP/1.1
// connections, each repeating SendMessage (configuration.returnImmediately: true, a fresh
// messageId) then GetTask on the task it got, for a fixed time after a warm-up. Raw sockets, so
// the client costs little next to the server; both servers meet the same client.
//
//   node bench/a2a/load.mjs --url http://127.0.0.1:PORT/a2a [--connections 16] [--seconds 10]
//                           [--warmup 2] [--label NAME] [--json]
//
// Prints requests/s (SendMessage and GetTask together, and each), p50/p99/max latency in ms, and
// errors. Loopback only: it refuses any other host.
import net from 'node:net'
import { randomUUID } from 'node:crypto'

function parseArgs (argv) {
  const o = { connections: 16, seconds: 10, warmup: 2, label: '', json: false }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--json') { o.json = true; continue }
    const v = argv[++i]
    if (v === undefined) throw new Error(`${a} needs a value`)
    if (a === '--url') o.url = new URL(v)
    else if (a === '--connections') o.connections = Number(v)
    else if (a === '--seconds') o.seconds = Number(v)
    else if (a === '--warmup') o.warmup = Number(v)
    else if (a === '--label') o.label = v
    else throw new Error(`unknown option ${a}`)
  }
  if (!o.url) throw new Error('--url is required')
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(o.url.hostname)) {
    throw new Error('loopback only')
  }
  return o
}

/** One keep-alive connection that sends a request and resolves with {status, body}. */
class Conn {
  constructor (url) {
    this.url = url
    this.buf = Buffer.alloc(0)
    this.waiting = null
    this.sock = net.connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port) })
    this.sock.setNoDelay(true)
    this.ready = new Promise((resolve, reject) => {
      this.sock.once('connect', resolve)
      this.sock.once('error', reject)
    })
    this.sock.on('data', (d) => { this.buf = Buffer.concat([this.buf, d]); this.pump() })
    this.sock.on('error', (e) => { if (this.waiting) this.waiting.reject(e); this.waiting = null })
    this.sock.on('close', () => {
      if (this.waiting) this.waiting.reject(new Error('connection closed'))
      this.waiting = null
    })
  }

  request (body) {
    const payload = Buffer.from(JSON.stringify(body))
    const head = `POST ${this.url.pathname} HTTP/1.1\r\nHost: ${this.url.host}\r\n` +
      'Content-Type: application/json\r\nA2A-Version: 1.0\r\n' +
      `Content-Length: ${payload.length}\r\n\r\n`
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject }
      this.sock.write(Buffer.concat([Buffer.from(head), payload]))
    })
  }

  pump () {
    if (!this.waiting) return
    const end = this.buf.indexOf('\r\n\r\n')
    if (end < 0) return
    const head = this.buf.subarray(0, end).toString('latin1')
    const status = Number(head.slice(9, 12))
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
    let body
    let rest
    if (length) {
      const n = Number(length[1])
      if (this.buf.length < end + 4 + n) return
      body = this.buf.subarray(end + 4, end + 4 + n)
      rest = this.buf.subarray(end + 4 + n)
    } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      const chunks = []
      let at = end + 4
      for (;;) {
        const eol = this.buf.indexOf('\r\n', at)
        if (eol < 0) return
        const size = parseInt(this.buf.subarray(at, eol).toString('latin1'), 16)
        if (this.buf.length < eol + 2 + size + 2) return
        if (size === 0) { rest = this.buf.subarray(eol + 4); break }
        chunks.push(this.buf.subarray(eol + 2, eol + 2 + size))
        at = eol + 2 + size + 2
      }
      body = Buffer.concat(chunks)
    } else {
      this.waiting.reject(new Error('response without length'))
      this.waiting = null
      return
    }
    this.buf = rest
    const w = this.waiting
    this.waiting = null
    w.resolve({ status, body: body.toString('utf8') })
  }

  close () { this.sock.destroy() }
}

function percentile (sorted, p) {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

async function worker (conn, until, record) {
  let id = 0
  while (process.hrtime.bigint() < until.end) {
    const send = {
      jsonrpc: '2.0',
      id: ++id,
      method: 'SendMessage',
      params: {
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'bench task' }] },
        configuration: { returnImmediately: true }
      }
    }
    let t0 = process.hrtime.bigint()
    const sent = await conn.request(send)
    let t1 = process.hrtime.bigint()
    let taskId = null
    try {
      const answer = JSON.parse(sent.body)
      taskId = answer.result && answer.result.task && answer.result.task.id
    } catch {}
    record('send', t0, t1, sent.status === 200 && !!taskId)
    if (!taskId) continue
    t0 = process.hrtime.bigint()
    const get = { jsonrpc: '2.0', id: ++id, method: 'GetTask', params: { id: taskId } }
    const got = await conn.request(get)
    t1 = process.hrtime.bigint()
    let ok = false
    try { ok = got.status === 200 && JSON.parse(got.body).result.id === taskId } catch {}
    record('get', t0, t1, ok)
  }
}

async function main () {
  const o = parseArgs(process.argv.slice(2))
  const conns = Array.from({ length: o.connections }, () => new Conn(o.url))
  await Promise.all(conns.map((c) => c.ready))
  const start = process.hrtime.bigint()
  const measureFrom = start + BigInt(Math.round(o.warmup * 1e9))
  const until = { end: measureFrom + BigInt(Math.round(o.seconds * 1e9)) }
  const lat = { send: [], get: [] }
  const errors = { send: 0, get: 0 }
  const record = (kind, t0, t1, ok) => {
    if (t0 < measureFrom) return
    if (!ok) { errors[kind]++; return }
    lat[kind].push(Number(t1 - t0) / 1e6)
  }
  await Promise.all(conns.map((c) => worker(c, until, record)))
  const elapsed = Number(process.hrtime.bigint() - measureFrom) / 1e9
  conns.forEach((c) => c.close())
  const all = [...lat.send, ...lat.get].sort((a, b) => a - b)
  lat.send.sort((a, b) => a - b)
  lat.get.sort((a, b) => a - b)
  const row = (xs) => ({
    count: xs.length,
    rps: xs.length / elapsed,
    p50: percentile(xs, 50),
    p99: percentile(xs, 99),
    max: xs.length ? xs[xs.length - 1] : NaN
  })
  const result = {
    label: o.label,
    connections: o.connections,
    seconds: elapsed,
    all: row(all),
    send: row(lat.send),
    get: row(lat.get),
    errors
  }
  if (o.json) {
    console.log(JSON.stringify(result))
    return
  }
  const f = (x) => x.toFixed(2)
  console.log(`${o.label || o.url.href}: ${o.connections} connections, ${f(elapsed)} s measured`)
  for (const k of ['all', 'send', 'get']) {
    const r = result[k]
    console.log(`  ${k.padEnd(4)} ${r.count} requests, ${r.rps.toFixed(0)} req/s, ` +
      `p50 ${f(r.p50)} ms, p99 ${f(r.p99)} ms, max ${f(r.max)} ms`)
  }
  console.log(`  errors: SendMessage ${errors.send}, GetTask ${errors.get}`)
}

main().catch((e) => { console.error(e); process.exit(1) })

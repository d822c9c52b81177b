// Round-trip benchmark (not a test): N keep-alive connections, each repeating a blocking
// JSON-RPC 1.0 SendMessage (a fresh messageId) and waiting for the task to come back completed
// with its reply as an artifact. Against `serve --broker` the reply comes from a live session
// this process runs on the broker (--agent-dir: the Node package's broker client, replying to
// every ask at once); against the a2a-sdk server (`--executor reply`) its executor answers in
// process. Prints round trips/s and p50/p99/max in ms, and errors.
//
// With --agent-dir, connection i talks to its own session `bench-worker-i` (named in the
// message's metadata["agent-intercom/to"]): the broker holds one open ask per asker and asked
// session, so one session answers one task at a time.
//
//   node bench/a2a/roundtrip.mjs --url http://127.0.0.1:PORT/a2a [--agent-dir DIR]
//        [--connections 1] [--seconds 10] [--warmup 2] [--label NAME] [--json]
import http from 'node:http'
import { randomUUID } from 'node:crypto'
import { createRequire } from 'node:module'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

function parseArgs (argv) {
  const o = { connections: 1, seconds: 10, warmup: 2, label: '', json: false }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--json') { o.json = true; continue }
    const v = argv[++i]
    if (v === undefined) throw new Error(`${a} needs a value`)
    if (a === '--url') o.url = new URL(v)
    else if (a === '--agent-dir') o.agentDir = v
    else if (a === '--connections') o.connections = Number(v)
    else if (a === '--seconds') o.seconds = Number(v)
    else if (a === '--warmup') o.warmup = Number(v)
    else if (a === '--label') o.label = v
    else throw new Error(`unknown option ${a}`)
  }
  if (!o.url) throw new Error('--url is required')
  if (o.url.hostname !== '127.0.0.1') throw new Error('loopback only')
  return o
}

/** A live session named `name`: replies to every ask with "done: " and its text. */
async function session (agentDir, name) {
  const { connect } = createRequire(import.meta.url)(join(root, 'bindings-node', 'lib', 'broker.js'))
  const client = await connect({ agentDir })
  const now = Date.now()
  await client.register({
    session: { cwd: root, model: 'bench', pid: process.pid, startedAt: now, lastActivity: now, name }
  })
  client.on('message', (m) => {
    if (!m.message.expectsReply) return
    client.reply(m.from.id, m.message.id, 'done: ' + m.message.content.text).catch(() => {})
  })
  return client
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 })

function post (url, body) {
  return new Promise((resolve, reject) => {
    const data = Buffer.from(JSON.stringify(body))
    const req = http.request(url, {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': data.length, 'a2a-version': '1.0' }
    }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))))
    })
    req.on('error', reject)
    req.end(data)
  })
}

/** One round trip: true when the task came back completed with the reply. */
async function roundTrip (url, n, to) {
  const text = `ping ${n}`
  const message = { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] }
  if (to) message.metadata = { 'agent-intercom/to': to }
  const answer = await post(url, { jsonrpc: '2.0', id: n, method: 'SendMessage', params: { message } })
  const task = answer.result?.task
  return task?.status?.state === 'TASK_STATE_COMPLETED' &&
    task.artifacts?.[0]?.parts?.[0]?.text === 'done: ' + text
}

function percentile (sorted, p) {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

async function main () {
  const o = parseArgs(process.argv.slice(2))
  const names = Array.from({ length: o.connections }, (_, i) => `bench-worker-${i}`)
  const clients = o.agentDir ? await Promise.all(names.map((n) => session(o.agentDir, n))) : []
  const start = performance.now()
  const measureFrom = start + o.warmup * 1000
  const end = measureFrom + o.seconds * 1000
  const times = []
  let errors = 0
  let n = 0
  await Promise.all(names.map(async (name) => {
    while (performance.now() < end) {
      const t0 = performance.now()
      let ok = false
      try { ok = await roundTrip(o.url, n++, o.agentDir && name) } catch { ok = false }
      const t1 = performance.now()
      if (t0 >= measureFrom && t1 <= end) {
        if (ok) times.push(t1 - t0)
        else errors++
      }
    }
  }))
  for (const client of clients) client.close()
  agent.destroy()
  times.sort((a, b) => a - b)
  const result = {
    label: o.label,
    connections: o.connections,
    rps: times.length / o.seconds,
    p50: percentile(times, 0.5),
    p99: percentile(times, 0.99),
    max: times.at(-1) ?? 0,
    count: times.length,
    errors
  }
  if (o.json) console.log(JSON.stringify(result))
  else console.log(result)
}

main().catch((e) => { console.error(e); process.exit(1) })

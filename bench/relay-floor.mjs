// The relay floor (a benchmark, not a test): what a round trip through a relay process costs on
// this machine, to read the broker's ask round trip against. A Node relay R (its own process, on a
// Unix socket, frames of a 4-byte big-endian length and JSON, each parsed and re-encoded as a
// broker does) forwards A -> R -> B, B answers, R forwards B -> R -> A: the same hops as an ask
// and its reply through the broker, with no store, no rules and no acknowledgements.
//
//   node bench/relay-floor.mjs [--pairs P] [--rounds N] [--json]
//
// P pairs (2P sessions) at once, N round trips in all; prints p50 / p99 / max in microseconds.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const args = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = args.indexOf(name)
  return i >= 0 ? Number(args[i + 1]) : dflt
}

/// Calls `onFrame(value)` for each whole frame arriving on `socket`.
function frames (socket, onFrame) {
  let buf = Buffer.alloc(0)
  socket.on('data', (chunk) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk
    while (buf.length >= 4) {
      const len = buf.readUInt32BE(0)
      if (buf.length < 4 + len) break
      onFrame(JSON.parse(buf.subarray(4, 4 + len).toString('utf8')))
      buf = buf.subarray(4 + len)
    }
  })
}

function encode (value) {
  const body = Buffer.from(JSON.stringify(value), 'utf8')
  const head = Buffer.alloc(4)
  head.writeUInt32BE(body.length, 0)
  return Buffer.concat([head, body])
}

/// The relay: `{type:'hello', id}` names a connection; any other frame goes to `to`.
function relay (socketPath) {
  const peers = new Map()
  net.createServer((socket) => {
    frames(socket, (v) => {
      if (v.type === 'hello') {
        peers.set(v.id, socket)
        socket.write(encode({ type: 'ready' }))
      } else {
        peers.get(v.to)?.write(encode(v))
      }
    })
  }).listen(socketPath, () => process.stdout.write('listening\n'))
}

function connect (socketPath, id) {
  return new Promise((resolve) => {
    const socket = net.createConnection(socketPath)
    const waiting = []
    frames(socket, (v) => waiting.shift()?.(v))
    const next = () => new Promise((r) => waiting.push(r))
    socket.on('connect', async () => {
      socket.write(encode({ type: 'hello', id }))
      await next()
      resolve({ socket, next })
    })
  })
}

async function pair (socketPath, tag, rounds, samples) {
  const a = await connect(socketPath, `a${tag}`)
  const b = await connect(socketPath, `b${tag}`)
  for (let i = 0; i < rounds; i++) {
    const t = process.hrtime.bigint()
    a.socket.write(encode({ type: 'send', to: `b${tag}`, message: { id: `q${i}`, content: { text: '?' } } }))
    const q = await b.next()
    b.socket.write(encode({ type: 'send', to: `a${tag}`, message: { id: `r${i}`, replyTo: q.message.id, content: { text: '!' } } }))
    await a.next()
    samples.push(Number(process.hrtime.bigint() - t) / 1e3)
  }
  a.socket.end()
  b.socket.end()
}

async function main () {
  if (args[0] === '--relay') return relay(args[1])
  const pairs = opt('--pairs', 32)
  const rounds = opt('--rounds', 5000)
  const dir = mkdtempSync(path.join(os.tmpdir(), 'aic-relay-'))
  const socketPath = path.join(dir, 'relay.sock')
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--relay', socketPath], {
    stdio: ['ignore', 'pipe', 'inherit']
  })
  await new Promise((resolve) => child.stdout.once('data', resolve))
  const run = async (p) => {
    const samples = []
    await Promise.all(Array.from({ length: p }, (_, i) => pair(socketPath, `${p}-${i}`, Math.max(1, Math.floor(rounds / p)), samples)))
    samples.sort((x, y) => x - y)
    const at = (q) => samples[Math.round((samples.length - 1) * q)]
    return { pairs: p, rounds: samples.length, p50: at(0.5), p99: at(0.99), max: samples[samples.length - 1] }
  }
  const rows = [await run(1), await run(pairs)]
  child.kill()
  rmSync(dir, { recursive: true, force: true })
  if (args.includes('--json')) {
    console.log(JSON.stringify(rows))
    return
  }
  for (const r of rows) {
    console.log(`| relay floor (Node), ${2 * r.pairs} sessions, ${r.rounds} round trips: p50 / p99 / max | ` +
      `${r.p50.toFixed(0)} / ${r.p99.toFixed(0)} / ${r.max.toFixed(0)} µs |`)
  }
}

main()

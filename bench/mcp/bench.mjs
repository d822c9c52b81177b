// Benchmark (not a test: nothing here asserts a time) of MCP servers of the intercom over stdio,
// driven the way an MCP client drives them: one JSON-RPC message a line on the server's stdin,
// `initialize`, `notifications/initialized`, then `tools/call`, one call at a time.
//
//   node bench/mcp/bench.mjs [--bin target/release/agent-intercom] [--ts-dir DIR]
//                            [--calls 1000] [--warmup 100] [--starts 5] [--unread 10]
//                            [--under DIR] [--parallel 0] [--json]
//
// --under DIR: where the private agent directory (broker socket and store, the servers' inboxes
// and outboxes) is made, the system's temporary directory by default; /dev/shm (tmpfs) takes
// the cost of fsync out of every server's figures.
// One broker (`agent-intercom broker`, in a fresh private agent directory, its rate limiter and
// pending-delivery caps raised by --set so that they are not what is measured) serves every
// server in turn. Beside the server under test a second session, a plain protocol-v4 client on
// the broker's socket (this file), acknowledges every message it gets at once. For each server:
//
// - start to first tool answer: from spawning the server to the answer of its first
//   `intercom_whoami` (after `initialize`), the broker registration included (the TypeScript
//   server registers lazily, on its first tool call), and the server's CPU until then; the
//   median of --starts fresh processes; also the time from closing its stdin to its exit;
// - idle wake-ups: the context switches of all its threads per second over 5 s with nothing
//   running (after the idle RSS is read);
// - idle RSS: VmRSS of the server after `initialize` and a few calls (whoami, 3 sends,
//   3 pendings), 2 s later, with nothing running;
// - `intercom_send` to the receiving session, which acknowledges: the round trip of
//   `tools/call` to its answer, which comes once the broker reported the message delivered;
//   --calls calls after --warmup;
// - `intercom_pending` (mark_read false) with --unread unread messages waiting (sent to it by the
//   receiving session beforehand): --calls calls after --warmup;
// - the server's CPU (user + system, from /proc) per call in each phase, and its VmRSS and
//   VmHWM at the end;
// - with --parallel K: K sends in flight at once (a client that calls tools in parallel), 20
//   rounds after 2: the median and the slowest round, each from the first request to the last
//   answer.
//
// --ts-dir DIR: the Claude adapter's TypeScript MCP server (an export of
// ctliz/agent-intercom-claude prepared by bench/mcp/prepare-ts.sh; its `dist/claude-server.mjs`
// is what its plugin's .mcp.json starts). Without it only `agent-intercom mcp` is measured.
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import net from 'node:net'
import { availableParallelism, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import readline from 'node:readline'

const ROOT = resolve(new URL('../..', import.meta.url).pathname)

function parseArgs (argv) {
  const o = {
    bin: join(ROOT, 'target/release/agent-intercom'),
    tsDir: null,
    calls: 1000,
    warmup: 100,
    starts: 5,
    unread: 10,
    under: tmpdir(),
    parallel: 0,
    json: false
  }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--json') { o.json = true; continue }
    const v = argv[++i]
    if (v === undefined) throw new Error(`${a} needs a value`)
    if (a === '--bin') o.bin = resolve(v)
    else if (a === '--ts-dir') o.tsDir = resolve(v)
    else if (a === '--calls') o.calls = Number(v)
    else if (a === '--warmup') o.warmup = Number(v)
    else if (a === '--starts') o.starts = Number(v)
    else if (a === '--unread') o.unread = Number(v)
    else if (a === '--under') o.under = resolve(v)
    else if (a === '--parallel') o.parallel = Number(v)
    else throw new Error(`unknown option ${a}`)
  }
  return o
}

const opts = parseArgs(process.argv.slice(2))
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const nowNs = () => process.hrtime.bigint()
const msSince = (t) => Number(process.hrtime.bigint() - t) / 1e6

function procStatus (pid) {
  const out = {}
  for (const line of readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const m = /^(VmRSS|VmHWM):\s+(\d+) kB/.exec(line)
    if (m) out[m[1]] = Number(m[2])
  }
  return out
}

/** Context switches (voluntary + not) of all the threads of a process: its wake-ups. */
function contextSwitches (pid) {
  let n = 0
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    for (const line of readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8').split('\n')) {
      const m = /^(voluntary|nonvoluntary)_ctxt_switches:\s+(\d+)/.exec(line)
      if (m) n += Number(m[2])
    }
  }
  return n
}

/** User + system CPU ms of a process, from /proc (USER_HZ = 100). */
function cpuMs (pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop().trim().split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

// ---- a plain protocol-v4 session: 4-byte big-endian length + JSON ----

class BrokerSession {
  constructor (socketPath, name) {
    this.name = name
    this.id = randomUUID()
    this.buf = Buffer.alloc(0)
    this.received = 0
    this.waiters = new Map() // messageId -> resolve (delivered / delivery_failed)
    this.sock = net.connect(socketPath)
    this.sock.on('data', (d) => { this.buf = Buffer.concat([this.buf, d]); this.pump() })
    this.sock.on('error', (e) => { console.error(`receiver: ${e.message}`) })
    this.registered = new Promise((resolve, reject) => { this.onRegistered = resolve; this.onError = reject })
  }

  write (frame) {
    const payload = Buffer.from(JSON.stringify(frame))
    const head = Buffer.alloc(4)
    head.writeUInt32BE(payload.length, 0)
    this.sock.write(Buffer.concat([head, payload]))
  }

  pump () {
    while (this.buf.length >= 4) {
      const n = this.buf.readUInt32BE(0)
      if (this.buf.length < 4 + n) return
      const frame = JSON.parse(this.buf.subarray(4, 4 + n).toString('utf8'))
      this.buf = this.buf.subarray(4 + n)
      this.onFrame(frame)
    }
  }

  onFrame (f) {
    switch (f.type) {
      case 'registered': this.onRegistered(f); break
      case 'error': this.onError(new Error(`${f.code}: ${f.message ?? f.reason}`)); break
      case 'message':
        this.received++
        this.write({ type: 'message_received', deliveryId: f.deliveryId })
        break
      case 'delivered':
      case 'delivery_failed': {
        const w = this.waiters.get(f.messageId)
        if (w) { this.waiters.delete(f.messageId); w(f) }
        break
      }
    }
  }

  async register () {
    const now = Date.now()
    this.write({
      type: 'register',
      protocol: 'pi-intercom',
      version: 4,
      sessionId: this.id,
      session: { name: this.name, cwd: ROOT, model: 'bench', pid: process.pid, startedAt: now, lastActivity: now }
    })
    await this.registered
  }

  send (to, text) {
    const id = randomUUID()
    const settled = new Promise((resolve) => this.waiters.set(id, resolve))
    this.write({ type: 'send', to, message: { id, timestamp: Date.now(), content: { text } } })
    return settled
  }

  close () { this.sock.end() }
}

// ---- an MCP client on a child's stdio ----

class McpClient {
  constructor (command, args, env) {
    this.t0 = nowNs()
    this.child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] })
    this.pid = this.child.pid
    this.next = 1
    this.pending = new Map()
    this.stderr = ''
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })))
    this.child.stderr.on('data', (d) => { this.stderr += d })
    readline.createInterface({ input: this.child.stdout, crlfDelay: Infinity }).on('line', (line) => {
      if (!line.trim()) return
      const msg = JSON.parse(line)
      if (msg.id !== undefined && msg.id !== null && this.pending.has(msg.id)) {
        const resolve = this.pending.get(msg.id)
        this.pending.delete(msg.id)
        resolve(msg)
      }
      // notifications (resources/updated, ...) are not awaited
    })
  }

  request (method, params) {
    const id = this.next++
    return new Promise((resolve) => {
      this.pending.set(id, resolve)
      this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n')
    })
  }

  notify (method, params) {
    this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method, ...(params ? { params } : {}) }) + '\n')
  }

  async initialize () {
    const answer = await this.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'agent-intercom-bench', version: '0' }
    })
    if (answer.error) throw new Error(`initialize: ${JSON.stringify(answer.error)}`)
    this.notify('notifications/initialized')
    return answer.result
  }

  async tool (name, args) {
    const answer = await this.request('tools/call', { name, arguments: args })
    if (answer.error) throw new Error(`${name}: ${JSON.stringify(answer.error)}`)
    return answer.result
  }

  async close () {
    this.child.stdin.end()
    const timer = setTimeout(() => this.child.kill('SIGTERM'), 5000)
    const out = await this.exited
    clearTimeout(timer)
    return out
  }
}

// ---- the servers ----

function servers (dir, broker) {
  const env = { ...process.env, PI_CODING_AGENT_DIR: dir }
  delete env.AGENT_INTERCOM_SCOPE_ID
  const list = [{
    label: '`agent-intercom mcp` (Rust, rmcp 3.11)',
    start: (id, name) => new McpClient(opts.bin, [
      'mcp', '--agent-dir', dir, '--session-id', id, '--name', name,
      '--db', join(dir, 'pad.sqlite')
    ], env),
    sent: (r) => !r.isError && r.structuredContent?.delivered === true,
    // a page of at most 50, and the count of the rest
    unread: (r) => r.structuredContent?.messages?.length + r.structuredContent?.more_unread
  }]
  if (opts.tsDir) {
    list.push({
      label: 'Claude adapter `claude-server.mjs` (TypeScript, Node)',
      start: (id, name) => new McpClient(process.execPath, [join(opts.tsDir, 'dist/claude-server.mjs')], {
        ...env, AGENT_INTERCOM_SESSION_ID: id, AGENT_INTERCOM_SESSION_NAME: name
      }),
      sent: (r) => !r.isError && r.structuredContent?.ok === true,
      unread: (r) => r.structuredContent?.unread_messages?.length
    })
  }
  return list
}

function stats (samples) {
  const s = [...samples].sort((a, b) => a - b)
  const at = (q) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]
  return { n: s.length, p50: at(0.5), p99: at(0.99), max: s[s.length - 1], mean: s.reduce((a, b) => a + b, 0) / s.length }
}

/** Times `calls` calls of `fn` after `warmup`; returns the latency stats and CPU ms of `pid`. */
async function timed (pid, fn) {
  for (let i = 0; i < opts.warmup; i++) await fn(i)
  const cpu0 = cpuMs(pid)
  const samples = []
  for (let i = 0; i < opts.calls; i++) {
    const t = nowNs()
    await fn(i)
    samples.push(msSince(t))
  }
  return { ...stats(samples), cpuPerCallMs: (cpuMs(pid) - cpu0) / opts.calls }
}

async function measure (server, receiver) {
  const name = 'bench-mcp'
  // Start to first tool answer, over fresh processes.
  const starts = []
  const stops = []
  const startCpu = []
  for (let i = 0; i < opts.starts; i++) {
    const c = server.start(randomUUID(), `${name}-start-${i}`)
    await c.initialize()
    const who = await c.tool('intercom_whoami', {})
    if (who.isError) throw new Error(`whoami: ${JSON.stringify(who)}\n${c.stderr}`)
    starts.push(msSince(c.t0))
    startCpu.push(cpuMs(c.pid))
    const t = nowNs()
    await c.close()
    stops.push(msSince(t))
  }

  const id = randomUUID()
  const c = server.start(id, name)
  await c.initialize()
  await c.tool('intercom_whoami', {})
  for (let i = 0; i < 3; i++) {
    const r = await c.tool('intercom_send', { to: receiver.name, message: `hello ${i}` })
    if (!server.sent(r)) throw new Error(`send: ${JSON.stringify(r)}\n${c.stderr}`)
    await c.tool('intercom_pending', {})
  }
  await sleep(2000)
  const idle = procStatus(c.pid)
  const switches0 = contextSwitches(c.pid)
  await sleep(5000)
  const wakeups = (contextSwitches(c.pid) - switches0) / 5

  let failed = 0
  const send = await timed(c.pid, async (i) => {
    const r = await c.tool('intercom_send', { to: receiver.name, message: `message ${i}` })
    if (!server.sent(r)) failed++
  })

  let parallel = null
  if (opts.parallel > 0) {
    const rounds = []
    for (let round = 0; round < 22; round++) {
      const t = nowNs()
      const answers = await Promise.all(Array.from({ length: opts.parallel }, (_, i) =>
        c.tool('intercom_send', { to: receiver.name, message: `parallel ${round} ${i}` })))
      if (round >= 2) rounds.push(msSince(t))
      failed += answers.filter((r) => !server.sent(r)).length
    }
    parallel = stats(rounds)
  }

  // Unread messages for pending: sent by the receiving session, each settled.
  for (let i = 0; i < opts.unread; i++) {
    const f = await receiver.send(id, `unread ${i}`)
    if (f.type !== 'delivered') throw new Error(`to the server: ${JSON.stringify(f)}`)
  }
  let wrong = 0
  const pending = await timed(c.pid, async () => {
    const r = await c.tool('intercom_pending', {})
    if (r.isError || server.unread(r) !== opts.unread) wrong++
  })
  const end = procStatus(c.pid)
  const exit = await c.close()
  return {
    label: server.label,
    startMs: stats(starts).p50,
    startsMs: starts,
    startCpuMs: stats(startCpu).p50,
    stopMs: stats(stops).p50,
    idleWakeupsPerS: wakeups,
    idleRssKiB: idle.VmRSS,
    endRssKiB: end.VmRSS,
    peakRssKiB: end.VmHWM,
    send,
    parallel,
    pending,
    errors: failed + wrong,
    exit
  }
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

async function main () {
  const loadBefore = loadavg()
  if (!existsSync(opts.bin)) throw new Error(`${opts.bin} is missing: cargo build --release -p agent-intercom-cli`)
  if (opts.tsDir && !existsSync(join(opts.tsDir, 'dist/claude-server.mjs'))) {
    throw new Error(`${opts.tsDir}/dist/claude-server.mjs is missing: bash bench/mcp/prepare-ts.sh`)
  }
  const dir = mkdtempSync(join(opts.under, 'aic-mcp-bench-'))
  const broker = spawn(opts.bin, [
    'broker', '--agent-dir', dir, '--idle-exit', '0', '--log-level', 'error',
    '--set', 'rate_capacity=1000000000', '--set', 'rate_refill_per_second=1000000000',
    '--set', 'max_pending_deliveries=1000000', '--set', 'max_pending_deliveries_per_session=100000'
  ], { stdio: ['ignore', 'ignore', 'inherit'] })
  const results = []
  let receiver
  try {
    const socket = join(dir, 'intercom', 'broker.sock')
    for (let i = 0; i < 200 && !existsSync(socket); i++) await sleep(25)
    receiver = new BrokerSession(socket, 'bench-receiver')
    await receiver.register()
    for (const server of servers(dir, broker)) results.push(await measure(server, receiver))
  } finally {
    receiver?.close()
    broker.kill('SIGTERM')
    await new Promise((resolve) => broker.on('exit', resolve))
    rmSync(dir, { recursive: true, force: true })
  }
  const machine = `${availableParallelism()} cores, node ${process.version}, ` +
    `load average before: ${loadBefore}, after: ${loadavg()}`
  if (opts.json) {
    console.log(JSON.stringify({ machine, results }))
    return
  }
  const f = (x) => x.toFixed(2)
  const mib = (k) => (k / 1024).toFixed(1)
  console.log(machine)
  console.log(`${opts.calls} calls after ${opts.warmup} warm-up per tool, one at a time; ` +
    `start: median of ${opts.starts}; ${opts.unread} unread messages for pending; ` +
    `agent directory under ${opts.under}\n`)
  console.log('| server | start to first tool answer ms (server CPU) | idle RSS MiB | idle wake-ups/s | ' +
    'send p50 / p99 / max ms | send server CPU ms/call | pending p50 / p99 / max ms | ' +
    'pending server CPU ms/call | RSS at end (peak) MiB | stdin closed to exit ms | errors |')
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const r of results) {
    console.log(`| ${r.label} | ${f(r.startMs)} (${r.startCpuMs < 10 ? "<10" : r.startCpuMs.toFixed(0)}) | ${mib(r.idleRssKiB)} | ${r.idleWakeupsPerS.toFixed(1)} | ` +
      `${f(r.send.p50)} / ${f(r.send.p99)} / ${f(r.send.max)} | ${f(r.send.cpuPerCallMs)} | ` +
      `${f(r.pending.p50)} / ${f(r.pending.p99)} / ${f(r.pending.max)} | ${f(r.pending.cpuPerCallMs)} | ` +
      `${mib(r.endRssKiB)} (${mib(r.peakRssKiB)}) | ${f(r.stopMs)} | ${r.errors} |`)
  }
  if (opts.parallel > 0) {
    console.log(`\n| server | ${opts.parallel} sends in flight: all answered, median / slowest of 20 rounds ms |`)
    console.log('| --- | ---: |')
    for (const r of results) console.log(`| ${r.label} | ${f(r.parallel.p50)} / ${f(r.parallel.max)} |`)
  }
}

main().catch((e) => { console.error(e); process.exit(1) })

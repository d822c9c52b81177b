'use strict'
// One fact, one place: the package's JavaScript reads the broker's and the scratchpad's facts
// from the addon (constants().broker, constants().scratchpad), and the addon reads them from the
// Rust crates. This file fails when a JavaScript file types one of them again, and checks that
// every exported fact is what the Rust side does (a live broker, the Rust option parser, the CLI).
const test = require('node:test')
const assert = require('node:assert')
const net = require('node:net')
const { mkdtempSync, rmSync, readFileSync, readdirSync, existsSync, statSync } = require('node:fs')
const { tmpdir, homedir } = require('node:os')
const { join, resolve, relative } = require('node:path')
const { execFileSync } = require('node:child_process')
const { randomUUID } = require('node:crypto')
const broker = require('@ctliz/agent-intercom-core/broker')
const pad = require('@ctliz/agent-intercom-core/scratchpad')
const { IntercomError } = require('@ctliz/agent-intercom-core')
const { constants: C } = require('../../bindings-node/lib/native.js')
const { root, throwsCode } = require('./helpers.js')

const B = C.broker
const S = C.scratchpad
const REMOTE_ACCESS = JSON.parse(B.healthRemoteAccessJson)

function withDir (fn) {
  return async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'aic-node-facts-'))
    try { await fn(dir, t) } finally { rmSync(dir, { recursive: true, force: true }) }
  }
}

/** Every JavaScript file of the package (the generated .mjs entry points only re-export). */
function packageJs (dir = join(root, 'bindings-node')) {
  const out = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'src') out.push(...packageJs(path))
    } else if (entry.name.endsWith('.js')) {
      out.push(path)
    }
  }
  return out
}

// Typed anywhere in a file, comments included: a comment that retypes a fact drifts like code.
const RETYPED = [
  ['the remote-access feature', /remote-access-v\d/],
  ['the policy semantics hash', new RegExp(REMOTE_ACCESS.policySemanticsHash)],
  ['a 64-hex digest', /\b[0-9a-f]{64}\b/],
  ['the default agent directory', /\.pi\/agent/],
  ['the agent-dir variable', new RegExp(B.agentDirEnv)],
  ['the scratchpad variable', new RegExp(S.pathEnv)],
  ['a broker runtime file', /broker\.(sock|pid|owner|spawn\.lock)|broker-state\.sqlite/],
  ['the scratchpad file', /scratchpad\.sqlite/],
  ['the intercom directory name', /['"`]intercom['"`]/],
  ['the health endpoint', /endpoint\s*[!=]==?\s*['"`]/],
  ['the log levels', /\boff\b\W+error\W+warn\W+info\b/],
  ['a setting key', /['"`](idle_exit_ms|idle_exit_secs|log_level)['"`]/],
  ['a stop reason', /['"`](Shutdown|Idle|Failed|AlreadyStopped)['"`]/],
  ['the old error text protocol', /\[aic:/],
]

test('no JavaScript file of the package retypes a fact the addon exports', () => {
  const files = packageJs()
  assert.ok(files.length >= 9, `found ${files.length} files`)
  const found = []
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    text.split('\n').forEach((line, i) => {
      for (const [what, pattern] of RETYPED) {
        if (pattern.test(line)) found.push(`${relative(root, file)}:${i + 1}: ${what}: ${line.trim()}`)
      }
    })
  }
  assert.deepStrictEqual(found, [], 'read it from constants().broker / constants().scratchpad instead')
})

test('the guard would catch each literal it looks for', () => {
  const samples = ["'remote-access-v1'", REMOTE_ACCESS.policySemanticsHash, "join(homedir(), '.pi/agent')",
    'env.PI_CODING_AGENT_DIR', 'env.AGENT_INTERCOM_SCRATCHPAD', "'broker.sock'", "'scratchpad.sqlite'",
    "join(dir, 'intercom')", "f.endpoint === 'local'", "'off, error, warn, info or debug'",
    "['off', 'error', 'warn', 'info', 'debug']", "setting('log_level', v)", "'AlreadyStopped'", '/^\\[aic:([A-Z_]+)\\]/']
  for (const sample of samples) assert.ok(RETYPED.some(([, p]) => p.test(sample)), sample)
})

test('addon errors carry the code natively and arrive as IntercomError with the plain message', () => {
  const raw = require(join(root, 'bindings-node', 'agent_intercom.node'))
  let caught
  try { raw.canonicalJsonText('{') } catch (error) { caught = error }
  assert.ok(caught instanceof Error && !(caught instanceof IntercomError))
  assert.strictEqual(caught.code, 'INVALID_JSON')
  const viaPackage = throwsCode(assert, () => require('@ctliz/agent-intercom-core').canonicalJsonFromText('{'), 'INVALID_JSON')
  assert.ok(viaPackage instanceof IntercomError)
  assert.strictEqual(viaPackage.name, 'IntercomError')
  assert.strictEqual(viaPackage.message, caught.message)
  assert.ok(!viaPackage.message.startsWith('['), viaPackage.message)
})

/** One raw health exchange: the health_ok a broker sends. */
function healthOk (socketPath) {
  return new Promise((resolveFrame, reject) => {
    const requestId = randomUUID()
    const socket = net.connect(socketPath)
    let buffer = Buffer.alloc(0)
    socket.on('error', reject)
    socket.on('connect', () => {
      const body = Buffer.from(JSON.stringify({ type: 'health', requestId }))
      const head = Buffer.alloc(4)
      head.writeUInt32BE(body.length)
      socket.write(Buffer.concat([head, body]))
    })
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk])
      if (buffer.length < 4 || buffer.length < 4 + buffer.readUInt32BE(0)) return
      socket.destroy()
      const frame = JSON.parse(buffer.toString('utf8', 4, 4 + buffer.readUInt32BE(0)))
      assert.strictEqual(frame.requestId, requestId)
      resolveFrame(frame)
    })
  })
}

/** A socket that answers every health frame with `frame` (plus the request id). */
function fakeBroker (socketPath, frame) {
  const server = net.createServer((socket) => {
    let buffer = Buffer.alloc(0)
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk])
      if (buffer.length < 4 || buffer.length < 4 + buffer.readUInt32BE(0)) return
      const { requestId } = JSON.parse(buffer.toString('utf8', 4, 4 + buffer.readUInt32BE(0)))
      const body = Buffer.from(JSON.stringify({ ...frame, requestId }))
      const head = Buffer.alloc(4)
      head.writeUInt32BE(body.length)
      socket.end(Buffer.concat([head, body]))
    })
  })
  return new Promise((resolveServer) => server.listen(socketPath, () => resolveServer(server)))
}

test('the health facts are what a running broker advertises, and brokerHealth holds it to them', withDir(async (dir) => {
  const running = broker.startBroker({ agentDir: dir, idleExitMs: 0, logLevel: 'off' })
  let frame
  try {
    frame = await healthOk(running.socketPath)
  } finally {
    running.close()
  }
  assert.strictEqual(frame.type, 'health_ok')
  assert.strictEqual(frame.protocol, C.protocolName)
  assert.strictEqual(frame.version, C.protocolVersion)
  assert.strictEqual(frame.endpoint, B.healthEndpoint)
  assert.deepStrictEqual(frame.remoteAccess, REMOTE_ACCESS)

  // The same answer from elsewhere is compatible; any change to the contract is not.
  const { requestId, ...answer } = frame
  const cases = [
    [answer, 'compatible'],
    [{ ...answer, endpoint: `${B.healthEndpoint}-not` }, 'incompatible'],
    [{ ...answer, remoteAccess: { ...REMOTE_ACCESS, policySemanticsVersion: REMOTE_ACCESS.policySemanticsVersion + 1 } }, 'incompatible'],
    [{ ...answer, remoteAccess: { ...REMOTE_ACCESS, extra: true } }, 'incompatible'],
    [{ ...answer, remoteAccess: undefined }, 'incompatible'],
  ]
  for (const [i, [reply, expected]] of cases.entries()) {
    const socketPath = join(dir, `fake-${i}.sock`)
    const server = await fakeBroker(socketPath, reply)
    try {
      assert.strictEqual(await broker.brokerHealth(socketPath), expected, JSON.stringify(reply))
    } finally {
      await new Promise((resolveClose) => server.close(resolveClose))
    }
  }
}))

test('the agent-dir layout facts are where the Rust broker puts its files', withDir(async (dir) => {
  assert.strictEqual(broker.agentDirFromEnv({ [B.agentDirEnv]: ` ${dir} ` }), dir)
  assert.strictEqual(broker.agentDirFromEnv({}), join(homedir(), B.defaultAgentDir))
  const running = broker.startBroker({ agentDir: dir, idleExitMs: 0, logLevel: 'off' })
  try {
    assert.strictEqual(running.intercomDir, join(dir, B.intercomDirName))
    assert.strictEqual(running.socketPath, join(running.intercomDir, B.socketFileName))
    assert.strictEqual(broker.brokerSocketPath({ agentDir: dir }), running.socketPath)
    for (const name of [B.socketFileName, B.pidFileName, B.ownerFileName, B.storeFileName]) {
      assert.ok(existsSync(join(running.intercomDir, name)), name)
    }
    assert.ok(statSync(running.socketPath).isSocket())
  } finally {
    running.close()
  }
  // Without an agentDir, the broker takes it from the process environment (Rust's
  // agent_dir_from_env) and the JavaScript socket path must agree: the variable, then the
  // default under $HOME.
  const saved = { agentDir: process.env[B.agentDirEnv], home: process.env.HOME }
  try {
    process.env[B.agentDirEnv] = join(dir, 'by-env')
    let started = broker.startBroker({ idleExitMs: 0, logLevel: 'off' })
    assert.strictEqual(started.socketPath, broker.brokerSocketPath())
    assert.strictEqual(started.socketPath, join(dir, 'by-env', B.intercomDirName, B.socketFileName))
    started.close()
    delete process.env[B.agentDirEnv]
    process.env.HOME = join(dir, 'home')
    started = broker.startBroker({ idleExitMs: 0, logLevel: 'off' })
    assert.strictEqual(started.socketPath, broker.brokerSocketPath())
    assert.strictEqual(started.socketPath, join(dir, 'home', B.defaultAgentDir, B.intercomDirName, B.socketFileName))
    started.close()
  } finally {
    if (saved.agentDir === undefined) delete process.env[B.agentDirEnv]
    else process.env[B.agentDirEnv] = saved.agentDir
    process.env.HOME = saved.home
  }
}))

test('log levels, idle exit and stop reasons are the ones the Rust broker takes and reports', withDir(async (dir) => {
  // Settings are parsed before the start; with a broker running, an accepted one gets as far as
  // BROKER_ALREADY_RUNNING (and starts nothing that would log).
  const closed = broker.startBroker({ agentDir: dir, idleExitMs: 0, logLevel: 'off' })
  const accepted = (options) => throwsCode(assert, () => broker.startBroker({ agentDir: dir, ...options }), 'BROKER_ALREADY_RUNNING')
  for (const logLevel of B.logLevels) accepted({ logLevel })
  const refused = throwsCode(assert, () => broker.startBroker({ agentDir: dir, logLevel: 'loud' }), 'INVALID_ARGUMENT')
  const listed = `${B.logLevels.slice(0, -1).join(', ')} or ${B.logLevels.at(-1)}`
  assert.strictEqual(refused.message, `${B.logLevelKey} is ${listed}, not "loud"`)
  accepted({ idleExitMs: B.maxIdleExitMs })
  const tooLong = throwsCode(assert, () => broker.startBroker({ agentDir: dir, idleExitMs: B.maxIdleExitMs + 1 }), 'INVALID_ARGUMENT')
  assert.ok(tooLong.message.startsWith(`${B.idleExitMsKey} takes a whole number from 0 to ${B.maxIdleExitMs}`), tooLong.message)
  assert.ok(B.defaultIdleExitMs > 0 && B.defaultIdleExitMs <= B.maxIdleExitMs)

  const reason = closed.close()
  assert.ok(B.stopReasons.includes(reason), reason)
  assert.strictEqual(closed.close(), B.alreadyStopped)
  const idle = broker.startBroker({ agentDir: dir, idleExitMs: 1, logLevel: 'off' })
  while (idle.running) await new Promise((resolveWait) => setTimeout(resolveWait, 10))
  const idleReason = idle.close()
  assert.ok(B.stopReasons.includes(idleReason) && idleReason !== reason, idleReason)
  assert.ok(!B.stopReasons.includes(B.alreadyStopped))

  // The declarations carry the same facts: facts.d.ts has them, broker.d.ts imports them.
  const facts = readFileSync(join(root, 'bindings-node', 'facts.d.ts'), 'utf8')
  const dts = readFileSync(join(root, 'bindings-node', 'lib', 'broker.d.ts'), 'utf8')
  const union = (names) => names.map((n) => JSON.stringify(n)).join(' | ')
  assert.ok(facts.includes(`export type LogLevel = ${union(B.logLevels)};`))
  assert.ok(facts.includes(`export type StopReason = ${union(B.stopReasons)};`))
  assert.ok(facts.includes(`export type AlreadyStopped = ${union([B.alreadyStopped])};`))
  assert.ok(facts.includes(`export type DefaultIdleExitMs = ${B.defaultIdleExitMs};`))
  assert.ok(dts.includes('logLevel?: LogLevel;'))
  assert.ok(dts.includes('close(): StopReason | AlreadyStopped;'))
}))

/** The CLI built beside the addon, if any (the newest of debug and release). */
function cliBinary () {
  const built = ['debug', 'release'].map((p) => join(root, 'target', p, 'agent-intercom')).filter((p) => existsSync(p))
  return built.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]
}

test('the scratchpad default path is agent_intercom_scratchpad::default_path, for the addon and the CLI', withDir(async (dir, t) => {
  assert.strictEqual(pad.defaultScratchpadPath({ [B.agentDirEnv]: dir }), join(dir, S.defaultFileName))
  assert.strictEqual(pad.defaultScratchpadPath({ [B.agentDirEnv]: dir, [S.pathEnv]: '  ' }), join(dir, S.defaultFileName))
  assert.strictEqual(pad.defaultScratchpadPath({ [S.pathEnv]: ' rel/pad.sqlite ' }), resolve('rel/pad.sqlite'))
  assert.strictEqual(pad.defaultScratchpadPath({ [S.pathEnv]: join(dir, 'p.sqlite') }), join(dir, 'p.sqlite'))

  const cli = cliBinary()
  if (!cli) return t.skip('the CLI is not built (cargo build -p agent-intercom-cli)')
  // A store operation creates the store before it refuses the arguments.
  const run = (env) => {
    try {
      execFileSync(cli, ['pad', 'unread', '{}'], { env: { PATH: process.env.PATH, ...env }, stdio: 'ignore' })
    } catch {}
  }
  run({ HOME: dir, [B.agentDirEnv]: join(dir, 'agent') })
  assert.ok(existsSync(pad.defaultScratchpadPath({ [B.agentDirEnv]: join(dir, 'agent') })))
  run({ HOME: dir, [S.pathEnv]: ` ${join(dir, 'named.sqlite')} ` })
  assert.ok(existsSync(pad.defaultScratchpadPath({ [S.pathEnv]: ` ${join(dir, 'named.sqlite')} ` })))
}))

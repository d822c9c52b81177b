'use strict'
// `agent-intercom mcp` under the official MCP TypeScript SDK (@modelcontextprotocol/sdk, from the
// npm folder scripts/test-mcp.sh made: MCP_NPM_DIR, default target/mcp-npm), next to sessions of
// the Node broker client (connect() of bindings-node/lib/broker.js). Each test has a world of its
// own: a temporary agent directory and HOME, and a broker it started.
// AIC_BIN is the agent-intercom binary (default target/debug/agent-intercom).
const { spawn, execFileSync } = require('node:child_process')
const { createRequire } = require('node:module')
const { mkdtempSync, mkdirSync, readFileSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join, resolve } = require('node:path')
const { randomBytes } = require('node:crypto')

const root = resolve(__dirname, '..', '..', '..')
const aicBin = process.env.AIC_BIN || join(root, 'target', 'debug', 'agent-intercom')
const npmDir = resolve(process.env.MCP_NPM_DIR || join(root, 'target', 'mcp-npm'))
const sdkRequire = createRequire(join(npmDir, 'package.json'))
const { Client } = sdkRequire('@modelcontextprotocol/sdk/client/index.js')
const { StdioClientTransport } = sdkRequire('@modelcontextprotocol/sdk/client/stdio.js')
const types = sdkRequire('@modelcontextprotocol/sdk/types.js')
const sdkProtocol = sdkRequire('@modelcontextprotocol/sdk/shared/protocol.js')
const { connect } = require(join(root, 'bindings-node', 'lib', 'broker.js'))

// A bound on waiting for something that must happen; never asserted as a duration.
const PATIENCE_MS = 30000

const sleep = (ms) => new Promise((resolveSleep) => setTimeout(resolveSleep, ms))

/** Calls the async `probe` until it returns something truthy; throws after PATIENCE_MS. */
async function eventually (probe, what) {
  const deadline = Date.now() + PATIENCE_MS
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`)
    await sleep(50)
  }
}

/** A fresh scope id (what AGENT_INTERCOM_SCOPE_ID holds). */
const newScope = () => 'scope-' + randomBytes(12).toString('hex')

const alive = (pid) => {
  try {
    process.kill(pid, 0)
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').at(-1).trim()[0] !== 'Z'
  } catch { return false }
}

/** One `agent-intercom mcp` and the SDK's Client on it. */
class Mcp {
  constructor (client, transport, name) {
    this.client = client
    this.transport = transport
    this.name = name
    this.pid = transport.pid
    this.err = ''
    transport.stderr.on('data', (d) => { this.err += d })
    // What the SDK could not read on the server's stdout (stdout is the protocol's alone).
    this.unreadable = []
    client.onerror = (e) => { this.unreadable.push(String(e)) }
  }

  call (name, args, options) {
    return this.client.callTool({ name, arguments: args }, undefined, options)
  }

  /** The structured result of a call that must succeed. */
  async ok (name, args, options) {
    const result = await this.call(name, args, options)
    if (result.isError) throw new Error(`${this.name} ${name}: ${JSON.stringify(result)}`)
    return result.structuredContent
  }

  /** The { code, message } of a call that must be an isError result. */
  async fails (name, args, code) {
    const result = await this.call(name, args)
    if (!result.isError) {
      throw new Error(`${this.name} ${name} succeeded: ${JSON.stringify(result)}`)
    }
    if (code !== undefined && result.structuredContent.code !== code) {
      throw new Error(`${this.name} ${name}: ${JSON.stringify(result.structuredContent)}`)
    }
    return result.structuredContent
  }

  async untilConnected () {
    await eventually(async () => (await this.ok('intercom_whoami')).connected,
      `${this.name} registered`)
  }

  kill9 () { process.kill(this.pid, 'SIGKILL') }

  async close () {
    await this.client.close().catch(() => {})
  }
}

class World {
  constructor () {
    this.dir = mkdtempSync(join(tmpdir(), 'aic-mcp-js-'))
    this.agentDir = join(this.dir, 'agent')
    mkdirSync(this.agentDir)
    this.socketPath = join(this.agentDir, 'intercom', 'broker.sock')
    this.servers = []
    this.nodes = []
    this.brokerErr = ''
  }

  env () { return { PI_CODING_AGENT_DIR: this.agentDir, HOME: this.dir } }

  /** A broker of this world that never exits by itself (`args`: more of its options);
   * resolves once it answers. */
  async startBroker (args = []) {
    this.broker = spawn(aicBin, ['broker', '--idle-exit', '0', ...args], {
      env: { ...process.env, ...this.env() }, stdio: ['ignore', 'ignore', 'pipe'],
    })
    this.broker.stderr.on('data', (d) => { this.brokerErr += d })
    await eventually(async () => {
      try {
        const env = { ...process.env, ...this.env() }
        execFileSync(aicBin, ['broker', 'status'], { env, stdio: 'ignore' })
        return true
      } catch { return false }
    }, 'the broker answering')
  }

  /** An `agent-intercom mcp` started by the SDK's StdioClientTransport, connected. */
  async mcp (name, { sessionId, scope, args = [], env = {} } = {}) {
    const variables = { ...this.env(), AGENT_INTERCOM_SESSION_NAME: name, ...env }
    if (sessionId !== undefined) variables.AGENT_INTERCOM_SESSION_ID = sessionId
    if (scope !== undefined) variables.AGENT_INTERCOM_SCOPE_ID = scope
    const transport = new StdioClientTransport({
      command: aicBin,
      args: ['mcp', '--db', join(this.dir, 'pad.sqlite'), ...args],
      env: variables,
      cwd: this.dir,
      stderr: 'pipe',
    })
    const client = new Client({ name: 'aic-test', version: '1' })
    await client.connect(transport)
    const server = new Mcp(client, transport, name)
    this.servers.push(server)
    return server
  }

  /** A session of the Node broker client, registered (in `scope` when given). */
  async node (name, { sessionId = name, scope } = {}) {
    const client = await connect({ socketPath: this.socketPath })
    const now = Date.now()
    const request = {
      sessionId,
      session: {
        cwd: this.dir, model: 'node', pid: process.pid, startedAt: now, lastActivity: now, name,
      },
    }
    if (scope !== undefined) request.scopeId = scope
    await client.register(request)
    this.nodes.push(client)
    return client
  }

  /** Stops everything this world started; returns the lines of any stderr that tell of a
   * panic, and what the SDK could not read on a server's stdout. */
  async stop () {
    for (const node of this.nodes) node.close()
    for (const server of this.servers) await server.close()
    if (this.broker && this.broker.exitCode === null) this.broker.kill('SIGTERM')
    // A broker a server started (after a broker was killed) is stopped too, if it is ours.
    try {
      const pid = Number(readFileSync(join(this.agentDir, 'intercom', 'broker.pid'), 'utf8'))
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8')
      const ours = environ.includes(`PI_CODING_AGENT_DIR=${this.agentDir}\0`)
      if (alive(pid) && ours) process.kill(pid, 'SIGTERM')
    } catch {}
    const texts = [this.brokerErr, ...this.servers.map((s) => s.err)]
    rmSync(this.dir, { recursive: true, force: true, maxRetries: 3 })
    const panics = texts.flatMap((t) => t.split('\n')).filter((l) => l.includes('panicked'))
    return [...panics, ...this.servers.flatMap((s) => s.unreadable.map((e) => `${s.name}: ${e}`))]
  }
}

module.exports = {
  World, Mcp, eventually, newScope, sleep, types, sdkProtocol, alive, PATIENCE_MS,
}

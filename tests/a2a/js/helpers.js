'use strict'
// Starting `agent-intercom serve` on loopback with a temporary store, and loading the official
// @a2a-js/sdk from the npm folder scripts/test-a2a.sh made (A2A_NPM_DIR, default target/a2a-npm).
// AIC_BIN is the agent-intercom binary (default target/debug/agent-intercom).
const { spawn, execFileSync } = require('node:child_process')
const { createRequire } = require('node:module')
const { mkdtempSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join, resolve } = require('node:path')
const { randomUUID } = require('node:crypto')

const root = resolve(__dirname, '..', '..', '..')
const aicBin = process.env.AIC_BIN || join(root, 'target', 'debug', 'agent-intercom')
const npmDir = resolve(process.env.A2A_NPM_DIR || join(root, 'target', 'a2a-npm'))
const sdkRequire = createRequire(join(npmDir, 'package.json'))
const STARTUP_MS = 60000

/** A module of the SDK, by its public subpath ('@a2a-js/sdk/client', ...). */
function sdk (name) {
  return sdkRequire(name)
}

function tmp () {
  return mkdtempSync(join(tmpdir(), 'aic-a2a-js-'))
}

// A2A_SERVER=sdk runs the portable tests against bench/a2a/sdk_server.py (the a2a-sdk's own
// server, with A2A_PYTHON, default python3): what they expect is then what the SDK does.
const serverKind = process.env.A2A_SERVER || 'serve'
const onlyServe = serverKind === 'serve' ? false : 'needs agent-intercom serve'

/** Starts `agent-intercom serve --listen 127.0.0.1:0 --db DB`; resolves once it printed its
 * address: { baseUrl, rpcUrl, db, proc, stderr(), kill9(), stop() }. */
function startServe (db, extra = []) {
  return startProcess(aicBin, ['serve', '--listen', '127.0.0.1:0', '--db', db, ...extra], db)
}

/** The server the portable tests talk to (see A2A_SERVER). */
function startDefault () {
  if (serverKind === 'sdk') {
    const script = join(root, 'bench', 'a2a', 'sdk_server.py')
    return startProcess(process.env.A2A_PYTHON || 'python3', [script, '--store', 'memory'], null)
  }
  return startServe(join(tmp(), 'store.sqlite'))
}

function startProcess (bin, argv, db) {
  const proc = spawn(bin, argv, { stdio: ['ignore', 'pipe', 'pipe'] })
  let err = ''
  proc.stderr.on('data', (d) => { err += d })
  return new Promise((resolvePromise, reject) => {
    let out = ''
    const timer = setTimeout(() => {
      proc.kill('SIGKILL')
      reject(new Error(`serve did not print its address: ${err.slice(-2000)}`))
    }, STARTUP_MS)
    proc.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`serve exited (${code}) before listening: ${err.slice(-2000)}`))
    })
    proc.stdout.on('data', (d) => {
      out += d
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (!m) return
      clearTimeout(timer)
      proc.removeAllListeners('exit')
      proc.stdout.removeAllListeners('data')
      proc.stdout.resume()
      const exited = new Promise((r) => proc.on('exit', (code, signal) => r({ code, signal })))
      resolvePromise({
        baseUrl: m[1],
        rpcUrl: m[1] + '/a2a',
        db,
        proc,
        exited,
        stderr: () => err,
        alive: () => proc.exitCode === null && proc.signalCode === null,
        kill9: async () => { proc.kill('SIGKILL'); return exited },
        stop: async () => {
          if (proc.exitCode !== null || proc.signalCode !== null) return exited
          proc.kill('SIGTERM')
          const t = setTimeout(() => proc.kill('SIGKILL'), 10000)
          const r = await exited
          clearTimeout(t)
          return r
        }
      })
    })
  })
}

/** `agent-intercom pad --db DB OP JSON`: the parsed result; throws an Error with .code. */
function pad (db, op, args) {
  try {
    return JSON.parse(execFileSync(aicBin, ['pad', '--db', db, op, JSON.stringify(args)], {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']
    }))
  } catch (e) {
    const m = /^agent-intercom: error\[([A-Z_]+)\]: /.exec(String(e.stderr || ''))
    const error = new Error(String(e.stderr || e.message).trim())
    error.code = m ? m[1] : 'UNKNOWN'
    throw error
  }
}

/** A fetch that records what the SDK put on the wire: [{ headers, body }]. */
function recordingFetch () {
  const sent = []
  const impl = async (url, init = {}) => {
    if (init.method === 'POST') {
      sent.push({ headers: new Headers(init.headers), body: JSON.parse(init.body) })
    }
    return fetch(url, init)
  }
  return { sent, impl, last: () => sent[sent.length - 1] }
}

/**
 * A client of the official SDK for the card's JSON-RPC interface of `version` ('1.0' | '0.3').
 * 1.0: ClientFactory.createFromUrl (the SDK resolves the card and picks the 1.0 interface).
 * 0.3: the SDK prefers 1.0 when a card lists both on one URL, so the card it resolved is given
 * to a factory with legacyCompat enabled carrying only its 0.3 interface.
 */
async function clientFor (baseUrl, version, { polling = true } = {}) {
  const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, DefaultAgentCardResolver } =
    sdk('@a2a-js/sdk/client')
  const wire = recordingFetch()
  const legacyCompat = { enabled: version === '0.3' }
  const cardResolver = new DefaultAgentCardResolver({ legacyCompat })
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: wire.impl, legacyCompat })],
    cardResolver,
    clientConfig: { polling }
  }))
  let client
  if (version === '1.0') {
    client = await factory.createFromUrl(baseUrl)
  } else {
    const card = await cardResolver.resolve(baseUrl)
    const keep = card.supportedInterfaces.filter((i) =>
      i.protocolBinding === 'JSONRPC' && /^0\.3(\.|$)/.test(i.protocolVersion))
    if (keep.length === 0) throw new Error('the card has no JSONRPC 0.3 interface')
    client = await factory.createFromAgentCard({ ...card, supportedInterfaces: keep })
  }
  return { client, wire }
}

function textMessage (text, messageId = randomUUID(), contextId) {
  const { Role } = sdk('@a2a-js/sdk')
  const parts = [{ content: { $case: 'text', value: text } }]
  const message = { messageId, role: Role.ROLE_USER, parts }
  if (contextId) message.contextId = contextId
  return message
}

module.exports = {
  root, aicBin, npmDir, sdk, tmp, startServe, startDefault, onlyServe, pad, clientFor, textMessage,
  randomUUID
}

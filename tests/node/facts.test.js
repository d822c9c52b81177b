'use strict'
// One fact, one place: the package's JavaScript reads the broker's and the scratchpad's facts
// from the addon (constants().broker, constants().scratchpad), and the addon reads them from the
// Rust crates. This file fails when a JavaScript file types one of them again, and checks that
// every exported fact is what the Rust side does (a live broker, the Rust option parser, the CLI).
// Likewise the hand-written .d.ts files import their literal types from bindings-node/facts.d.ts
// (written by `cargo xtask gen`, whose --check keeps it fresh): this file fails when one types
// such a literal itself, or when facts.d.ts disagrees with what the package has at run time.
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
const transport = require('@ctliz/agent-intercom-core/transport')
const core = require('@ctliz/agent-intercom-core')
const { constants: C } = require('../../bindings-node/lib/native.js')
const { IntercomError } = core
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
  ['a nesting limit', new RegExp(`\\b(${C.maxDepth}|${C.contractMaxDepth})\\b`)],
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
    "['off', 'error', 'warn', 'info', 'debug']", "setting('log_level', v)", "'AlreadyStopped'", '/^\\[aic:([A-Z_]+)\\]/',
    `const MAX_DEPTH = ${C.contractMaxDepth}`, `depth > ${C.maxDepth}`]
  for (const sample of samples) assert.ok(RETYPED.some(([, p]) => p.test(sample)), sample)
})

/** BOSS_RUN_FEATURE as BossRunFeature: the name of a constant's fact. */
const pascalCase = (name) => name.split('_').map((w) => w[0] + w.slice(1).toLowerCase()).join('')

/** { Name: [value] } for each constant of the contract subpaths that facts.d.ts holds a fact of
 * (by its name in PascalCase): the value the package has at run time. */
function contractConstants () {
  const out = {}
  for (const subpath of ['boss', 'policy', 'team-manifest', 'vectors']) {
    for (const [name, value] of Object.entries(require(`@ctliz/agent-intercom-core/${subpath}`))) {
      if (/^[A-Z][A-Z0-9_]*$/.test(name) && pascalCase(name) in F) out[pascalCase(name)] = [value]
    }
  }
  return out
}

/** bindings-node/facts.d.ts as { Name: its literal values } (one, or the members of a union; a
 * readonly tuple is one value, the array of its members). */
function declaredFacts () {
  const text = readFileSync(join(root, 'bindings-node', 'facts.d.ts'), 'utf8')
  const facts = {}
  for (const [, name, literal] of text.matchAll(/^export type (\w+) = (.+);$/gm)) {
    facts[name] = literal.startsWith('readonly [')
      ? [JSON.parse(literal.slice('readonly '.length))]
      : literal.split(' | ').map((member) => JSON.parse(member))
  }
  assert.strictEqual(Object.keys(facts).length, text.match(/^export /gm).length, 'every fact parses')
  return facts
}
const F = declaredFacts()

test('facts.d.ts holds what the package has at run time', () => {
  const raw = require(join(root, 'bindings-node', 'agent_intercom.node'))
  assert.strictEqual(core.INTERCOM_ERROR_CODES[0], 'OK')
  const expected = {
    ProtocolName: [core.INTERCOM_PROTOCOL_NAME],
    ProtocolVersion: [core.INTERCOM_PROTOCOL_VERSION],
    ScopeEnv: [core.INTERCOM_SCOPE_ENV],
    ScopeIdPatternSource: [core.INTERCOM_SCOPE_ID_PATTERN_SOURCE],
    VectorSchemaVersion: [core.INTERCOM_PROTOCOL_V4_VECTOR_SCHEMA_VERSION],
    ScopeA: [core.PROTOCOL_V4_SCOPE_A],
    ScopeB: [core.PROTOCOL_V4_SCOPE_B],
    VectorsHashDomain: [core.INTERCOM_PROTOCOL_V4_VECTORS_HASH_DOMAIN],
    KnownSemanticsHash: [core.INTERCOM_PROTOCOL_V4_SEMANTICS_HASH],
    VectorCount: [core.INTERCOM_PROTOCOL_V4_VECTORS.length],
    CanonicalEncodingVersion: [core.CANONICAL_ENCODING_VERSION],
    CanonicalFramePrefix: [core.CANONICAL_HASH_FRAME],
    CanonicalUnicodeNormalization: [core.CANONICAL_UNICODE_NORMALIZATION],
    CanonicalMaxDepth: [core.CANONICAL_MAX_DEPTH],
    CoreErrorCode: core.INTERCOM_ERROR_CODES.slice(1),
    LogLevel: B.logLevels,
    StopReason: B.stopReasons,
    DeliveryState: B.deliveryStates,
    AlreadyStopped: [B.alreadyStopped],
    DefaultIdleExitMs: [B.defaultIdleExitMs],
    MaxIdleExitMs: [B.maxIdleExitMs],
    DefaultMaxFrameBytes: [broker.MAX_FRAME_BYTES],
    AgentDirEnv: [B.agentDirEnv],
    DefaultAgentDir: [B.defaultAgentDir],
    IntercomDirName: [B.intercomDirName],
    SocketFileName: [B.socketFileName],
    ScratchpadOperation: [...pad.OPERATIONS],
    ScratchpadCheck: [...pad.CHECKS],
    ScratchpadOptionKey: raw.padOptionKeys(),
    ScratchpadPathEnv: [S.pathEnv],
    ScratchpadDefaultFileName: [S.defaultFileName],
    EnvelopeFormatVersion: [transport.TRANSPORT_ENVELOPE_FORMAT_VERSION],
    MaxEnvelopeBytes: [transport.MAX_ENVELOPE_BYTES],
    MaxEnvelopeLifetimeMs: [transport.MAX_ENVELOPE_LIFETIME_MS],
    DefaultEnvelopeSkewMs: [transport.DEFAULT_ENVELOPE_SKEW_MS],
    MaxEnvelopeSkewMs: [transport.MAX_ENVELOPE_SKEW_MS],
    EnvelopeSigningDomain: [transport.ENVELOPE_SIGNING_DOMAIN],
    EnvelopeHkdfSalt: [transport.ENVELOPE_HKDF_SALT],
    EnvelopeHkdfInfoPrefix: [transport.ENVELOPE_HKDF_INFO_PREFIX],
    EnvelopeContentType: [...transport.ENVELOPE_CONTENT_TYPES],
    EnvelopeSignatureKind: [...transport.ENVELOPE_SIGNATURE_KINDS],
    EnvelopeKindEd25519: [transport.ENVELOPE_SIGNATURE_KINDS[0]],
    EnvelopeKindHmacSha256: [transport.ENVELOPE_SIGNATURE_KINDS[1]],
    ContractOp: raw.contractOperations(),
    ...contractConstants(),
  }
  for (const [name, values] of Object.entries(expected)) assert.deepStrictEqual(F[name], values, name)
  // The others have no run-time twin; xtask reads them from Rust all the same.
  assert.deepStrictEqual(Object.keys(F).filter((name) => !(name in expected)), ['ProtocolV4Operations',
    'ProtocolV4Outcomes', 'NodeErrorCode', 'DefaultLogLevel', 'BrokerHealth',
    'ScratchpadDefaultPerProjectCap', 'ScratchpadDefaultPerRecipientCap', 'ScratchpadDefaultMaxContentBytes',
    'ScratchpadDefaultAllowFullExport'])
  assert.ok(B.logLevels.includes(F.DefaultLogLevel[0]))
  // Every vector the package ships names an operation and an outcome of the corpus facts.
  const { INTERCOM_PROTOCOL_V4_VECTORS } = require('../../bindings-node/protocol-v4/index.js')
  for (const v of INTERCOM_PROTOCOL_V4_VECTORS) {
    assert.ok(F.ProtocolV4Operations.includes(v.operation), v.operation)
    assert.ok(F.ProtocolV4Outcomes.includes(v.expected), v.expected)
  }
})

test('every contract operation the package JavaScript names is one the core has', () => {
  const operations = new Set(require(join(root, 'bindings-node', 'agent_intercom.node')).contractOperations())
  // Each quoted `<module>.<name>` of a module of the table, comments included: whatever reaches
  // call, callFrozen or callReadOnce, directly or through a helper (storeValidator, reading, ...).
  const modules = [...new Set([...operations].map((op) => op.split('.')[0]))].join('|')
  const named = new RegExp(`['"]((?:${modules})\\.[A-Za-z]+)['"]`, 'g')
  const unknown = []
  let count = 0
  for (const file of packageJs()) {
    for (const [, op] of readFileSync(file, 'utf8').matchAll(named)) {
      count++
      if (!operations.has(op)) unknown.push(`${relative(root, file)}: ${op}`)
    }
  }
  assert.ok(count >= 140, `found ${count} operation names`)
  assert.deepStrictEqual(unknown, [], 'renamed in Rust? (tests/types/contract-ops.cjs types the calls)')
})

test('the C doc of aic_pad_request names exactly the scratchpad operations and checks', () => {
  // The header's comment is the one ffi/src/pad.rs writes (cargo xtask gen --check).
  const header = readFileSync(join(root, 'include', 'agent_intercom.h'), 'utf8')
  const doc = header.slice(0, header.indexOf('aic_status aic_pad_request(')).split('\n\n').at(-1)
  const listed = doc.replace(/^\/\/ ?/gm, '').replace(/\s+/g, ' ')
    .match(/`op` is one of (.*?) which needs no store/)[1]
    .split(/[\s,()]+/).filter((word) => word && !['or', 'a', 'rule', 'check'].includes(word))
  assert.deepStrictEqual(listed.sort(), [...pad.OPERATIONS, ...pad.CHECKS].sort())
})

test('the package JavaScript raises only the error codes of facts.d.ts, and each of NodeErrorCode', () => {
  const known = new Set([...F.CoreErrorCode, ...F.NodeErrorCode])
  const raised = new Set()
  for (const file of packageJs()) {
    for (const [, code] of readFileSync(file, 'utf8').matchAll(/'([A-Z][A-Z0-9]*_[A-Z0-9_]+)'/g)) raised.add(code)
  }
  assert.deepStrictEqual([...raised].filter((code) => !known.has(code)), [], 'add it to xtask NODE_ERROR_CODES')
  assert.deepStrictEqual(F.NodeErrorCode.filter((code) => !raised.has(code)), [], 'no longer raised')
  assert.deepStrictEqual(F.NodeErrorCode.filter((code) => F.CoreErrorCode.includes(code)), [])
})

/** The hand-written declarations of the package: every .d.ts under bindings-node but facts.d.ts. */
function handWrittenDts (dir = join(root, 'bindings-node')) {
  const out = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'src') out.push(...handWrittenDts(path))
    } else if (entry.name.endsWith('.d.ts') && path !== join(root, 'bindings-node', 'facts.d.ts')) {
      out.push(path)
    }
  }
  return out
}

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
/** [what, pattern] for each literal of facts.d.ts, typed anywhere (comments included): a string
 * quoted, and bare too when it cannot be an ordinary word or it names a variable; a number from
 * 1000 up. Small numbers, booleans and plain words in prose (an error code a comment names) are
 * not looked for. */
// The corpus vocabulary (operations such as "list", "session_joined", outcomes such as
// "delivered") shares its words with wire frame types and store operations, which the
// declarations name in their own right, and so do the delivery states ("queued", "read",
// "failed" are also event names and participant states): those facts are not searched for.
const VOCABULARY = new Set(['ProtocolV4Operations', 'ProtocolV4Outcomes', 'DeliveryState'])

function retypedFacts () {
  const out = [['a 64-hex digest', /\b[0-9a-f]{64}\b/]]
  for (const [name, values] of Object.entries(F)) {
    if (VOCABULARY.has(name)) continue
    for (const value of values) {
      const what = `${name} ${JSON.stringify(value)}`
      if (typeof value === 'string') {
        out.push([what, new RegExp(`["'\`]${escapeRegExp(value)}["'\`]`)])
        if (/[^A-Za-z_]/.test(value) || name.endsWith('Env')) {
          out.push([`${what} (bare)`, new RegExp(`(?<!\\w)${escapeRegExp(value)}(?!\\w)`)])
        }
      } else if (typeof value === 'number' && value >= 1000) {
        out.push([what, new RegExp(`\\b${value}\\b`)])
      }
    }
  }
  return out
}
// [file, fact]: literals that only share a fact's spelling (the participant and restricted-client
// health severities, 'info' | 'warning' | 'error' | 'critical', are not log levels; a
// participant's state 'unreachable' is no broker health).
const NOT_RETYPED = [
  ['bindings-node/boss/participant.d.ts', 'LogLevel "error"'],
  ['bindings-node/boss/participant.d.ts', 'LogLevel "info"'],
  ['bindings-node/boss/participant.d.ts', 'BrokerHealth "unreachable"'],
  ['bindings-node/boss/participant-vectors.d.ts', 'BrokerHealth "unreachable"'],
  ['bindings-node/boss/service.d.ts', 'LogLevel "error"'],
  ['bindings-node/boss/service.d.ts', 'LogLevel "info"'],
]

test('no hand-written declaration types a literal that facts.d.ts holds', () => {
  const files = handWrittenDts()
  assert.ok(files.length >= 6, `found ${files.length} files`)
  const patterns = retypedFacts()
  const found = []
  for (const file of files) {
    const path = relative(root, file)
    readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      for (const [what, pattern] of patterns) {
        if (pattern.test(line) && !NOT_RETYPED.some(([p, w]) => p === path && w === what)) {
          found.push(`${path}:${i + 1}: ${what}: ${line.trim()}`)
        }
      }
    })
  }
  assert.deepStrictEqual(found, [], 'import it from facts.d.ts instead')
})

test('the declaration guard would catch each known literal, and not prose or API names', () => {
  const patterns = retypedFacts().map(([, pattern]) => pattern)
  const caught = (sample) => patterns.some((pattern) => pattern.test(sample))
  const samples = ['INTERCOM_PROTOCOL_NAME: "pi-intercom";', `asserts ${C.knownSemanticsHash}.`, 'code: "INVALID_SCOPE"',
    '| "NOT_CONNECTED"', "'UNKNOWN_KEY'", 'request(op: "task.create")', 'the task.create operation', '`post`',
    '"off"', '"error"', '"warn"', '"info"', '"debug"', '"Shutdown"', '"Idle"', '"Failed"', '"AlreadyStopped"',
    '(default 5000)', 'MAX_FRAME_BYTES: 1048576;', '$PI_CODING_AGENT_DIR', '~/.pi/agent', '<agentDir>/scratchpad.sqlite',
    'env.AGENT_INTERCOM_SCOPE_ID', '"check.ttl"', 'at most 2592000000']
  assert.deepStrictEqual(samples.filter((sample) => !caught(sample)), [])
  const prose = ['Throws IntercomError with code BROKER_ALREADY_RUNNING, BROKER_STORE', 'list(): Promise<SessionInfo[]>;',
    'readonly events: [IntercomLifecycleEvent, IntercomLifecycleEvent];', '{ max_sessions: 256, rate_capacity: 480 }',
    'export declare const CANONICAL_MAX_DEPTH: CanonicalMaxDepth;', 'close(): StopReason | AlreadyStopped;']
  assert.deepStrictEqual(prose.filter(caught), [])
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
  const found = new Set()
  for (const [i, [reply, expected]] of cases.entries()) {
    const socketPath = join(dir, `fake-${i}.sock`)
    const server = await fakeBroker(socketPath, reply)
    try {
      const health = await broker.brokerHealth(socketPath)
      assert.strictEqual(health, expected, JSON.stringify(reply))
      found.add(health)
    } finally {
      await new Promise((resolveClose) => server.close(resolveClose))
    }
  }
  found.add(await broker.brokerHealth(join(dir, 'nothing.sock')))
  // What brokerHealth finds is BrokerHealth, whose members are the Rust client's Health names.
  assert.deepStrictEqual([...found].sort(), [...F.BrokerHealth].sort())
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

'use strict'
// The access option of register() and accessControl(): what they check before anything is sent,
// how they read the broker's answers (against the broker embedded here, and against a peer that
// answers what a broker should not), and the remote-access flow end to end: enrollment, register
// over the gateway, reconnect with the session credential, child enrollment, inspection,
// revocation.
//
// AIC_REMOTE_AGENT_DIR=<agentDir> runs the remote-flow tests against the broker already running
// there (the Pi adapter's, say) instead.
const test = require('node:test')
const assert = require('node:assert')
const net = require('node:net')
const { mkdtempSync, rmSync, readFileSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { randomUUID } = require('node:crypto')
const { startBroker, connect, accessControl } = require('@ctliz/agent-intercom-core/broker')
const { constants: C } = require('../../bindings-node/lib/native.js')

const REMOTE_ACCESS = JSON.parse(C.broker.healthRemoteAccessJson)
const EXTERNAL = process.env.AIC_REMOTE_AGENT_DIR || null
const GATEWAY_FILE = 'remote-gateway.sock'
const ADMIN_FILE = 'broker-admin.json'

const session = (name) => ({ cwd: '/work', model: 'test', pid: process.pid, startedAt: 1, lastActivity: 1, name })
const once = (emitter, event) => new Promise((resolve) => emitter.once(event, resolve))
const rejectsCode = (promise, code, message) => assert.rejects(promise, (e) => {
  assert.strictEqual(e.code, code, e.message)
  if (message) assert.match(e.message, message)
  return true
})

function withBroker (fn) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aic-node-remote-'))
    const broker = startBroker({ agentDir: dir, idleExitMs: 0, logLevel: 'off' })
    try { await fn(broker, dir) } finally {
      broker.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** A peer on a socket of its own: answer(frame) gives the frames to send back for each frame
 * received (none: stay silent; null: close). */
async function withPeer (answer, fn) {
  const dir = mkdtempSync(join(tmpdir(), 'aic-node-peer-'))
  const socketPath = join(dir, 'peer.sock')
  const received = []
  const server = net.createServer((socket) => {
    let buffer = Buffer.alloc(0)
    socket.on('error', () => {})
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk])
      while (buffer.length >= 4 && buffer.length >= 4 + buffer.readUInt32BE(0)) {
        const frame = JSON.parse(buffer.toString('utf8', 4, 4 + buffer.readUInt32BE(0)))
        buffer = buffer.subarray(4 + buffer.readUInt32BE(0))
        received.push(frame)
        const replies = answer(frame)
        if (replies === null) return socket.destroy()
        for (const reply of replies ?? []) {
          const body = Buffer.from(JSON.stringify(reply))
          const header = Buffer.alloc(4)
          header.writeUInt32BE(body.length)
          socket.write(Buffer.concat([header, body]))
        }
      }
    })
  })
  await new Promise((resolve) => server.listen(socketPath, resolve))
  try { await fn(socketPath, received) } finally {
    await new Promise((resolve) => server.close(resolve))
    rmSync(dir, { recursive: true, force: true })
  }
}

const provenance = (extra) => ({
  origin: 'remote', remoteHostId: 'host', parentSessionId: 'root', rootSessionId: 'root', generation: 1,
  canDelegate: true, depth: 1, maxDepth: 3, maxChildren: 4, ...extra,
})
const registered = (extra) => ({
  type: 'registered', sessionId: 'p1', protocol: C.protocolName, version: C.protocolVersion,
  remoteAccess: REMOTE_ACCESS, access: provenance({ sessionCredential: 'cred' }), ...extra,
})
const ENROLL = { enrollmentToken: 'tok' }
const RECONNECT = { sessionCredential: 'cred', sessionId: 'p1', generation: 1 }

test('a local registration resolves as before: { sessionId } and nothing else', withBroker(async (broker) => {
  const client = await connect({ socketPath: broker.socketPath })
  assert.deepStrictEqual(await client.register({ session: session('local'), sessionId: 'local' }), { sessionId: 'local' })
  assert.strictEqual(client.sessionId, 'local')
  client.close()
}))

test('access is checked before anything is sent', withBroker(async (broker) => {
  const client = await connect({ socketPath: broker.socketPath })
  const s = session('x')
  const bad = [
    ['tok', 'INVALID_ARGUMENT'],
    [null, 'INVALID_ARGUMENT'],
    [[], 'INVALID_ARGUMENT'],
    [{}, 'INVALID_ARGUMENT'],
    [{ enrollmentToken: '' }, 'INVALID_ARGUMENT'],
    [{ enrollmentToken: 'a\0b' }, 'INVALID_ARGUMENT'],
    [{ enrollmentToken: 7 }, 'INVALID_ARGUMENT'],
    [{ enrolmentToken: 'tok' }, 'UNKNOWN_KEY'],
    [{ enrollmentToken: 'tok', sessionId: 'p1' }, 'INVALID_ARGUMENT'],
    [{ sessionCredential: 'c', sessionId: 'p1' }, 'INVALID_ARGUMENT'],
    [{ sessionCredential: 'c', sessionId: 'p1', generation: 0 }, 'INVALID_ARGUMENT'],
    [{ sessionCredential: 'c', sessionId: 'p1', generation: 1.5 }, 'INVALID_ARGUMENT'],
    [{ sessionCredential: 'c', sessionId: 'p1', generation: 2 ** 53 }, 'INVALID_ARGUMENT'],
    [{ sessionCredential: 'c', sessionId: 'p1', generation: '1' }, 'INVALID_ARGUMENT'],
    [{ sessionCredential: 'c', sessionId: '', generation: 1 }, 'INVALID_ARGUMENT'],
    [{ sessionCredential: 'c', sessionId: 'p1', generation: NaN }, 'UNSUPPORTED_VALUE'],
    [{ get enrollmentToken () { return 'tok' } }, 'UNSUPPORTED_VALUE'],
    [new Proxy({ enrollmentToken: 'tok' }, {}), 'UNSUPPORTED_VALUE'],
  ]
  for (const [access, code] of bad) {
    await rejectsCode(client.register({ session: s, access }), code)
  }
  await rejectsCode(client.register({ session: s, sessionId: 'x', access: ENROLL }), 'INVALID_ARGUMENT', /sessionId cannot go with options\.access/)
  await rejectsCode(client.register({ session: s, acess: ENROLL }), 'UNKNOWN_KEY')
  // An undefined field is absent; none of the refusals reached the broker: this one registers.
  await rejectsCode(client.register({ session: s, access: { enrollmentToken: 'tok', sessionId: undefined } }), 'REMOTE_ACCESS_INCOMPATIBLE')
}))

test('access on the local socket: registered locally, so refused by the client, which closes the connection', withBroker(async (broker) => {
  const client = await connect({ socketPath: broker.socketPath })
  const closed = once(client, 'close')
  await rejectsCode(client.register({ session: session('r'), access: ENROLL }), 'REMOTE_ACCESS_INCOMPATIBLE', /contract/)
  await closed
  assert.strictEqual(client.sessionId, undefined)
  // The broker saw the session leave: the id is free again.
  const again = await connect({ socketPath: broker.socketPath })
  assert.deepStrictEqual(await again.register({ session: session('r'), sessionId: 'r' }), { sessionId: 'r' })
  again.close()
}))

test('the broker\'s remote answers are checked (a peer answering as a broker might)', async () => {
  const cases = [
    [ENROLL, registered(), null],
    [RECONNECT, registered({ access: provenance() }), null],
    [ENROLL, registered({ remoteAccess: undefined }), /contract/],
    [ENROLL, registered({ remoteAccess: { ...REMOTE_ACCESS, policySemanticsHash: '0'.repeat(64) } }), /contract/],
    [ENROLL, registered({ remoteAccess: { ...REMOTE_ACCESS, policySemanticsVersion: REMOTE_ACCESS.policySemanticsVersion + 1 } }), /contract/],
    [ENROLL, registered({ access: undefined }), /provenance/],
    [ENROLL, registered({ access: provenance({ origin: 'local', sessionCredential: 'c' }) }), /provenance/],
    [ENROLL, registered({ access: provenance({ generation: 0, sessionCredential: 'c' }) }), /provenance/],
    [ENROLL, registered({ access: provenance({ maxChildren: '4', sessionCredential: 'c' }) }), /provenance/],
    [ENROLL, registered({ access: provenance({ sessionCredential: 7 }) }), /provenance/],
    [ENROLL, registered({ access: provenance() }), /session credential/],
    [RECONNECT, registered({ access: provenance({ generation: 2 }) }), /generation/],
    [RECONNECT, registered({ sessionId: 'p2', access: provenance() }), /generation/],
  ]
  for (const [access, answer, refusal] of cases) {
    const frame = JSON.parse(JSON.stringify(answer)) // drops the undefined fields
    await withPeer(() => [frame], async (socketPath, received) => {
      const client = await connect({ socketPath })
      const registration = client.register({ session: session('r'), access })
      if (refusal === null) {
        const result = await registration
        assert.deepStrictEqual(result, { sessionId: frame.sessionId, access: frame.access, remoteAccess: frame.remoteAccess })
        assert.strictEqual(client.sessionId, frame.sessionId)
        client.close()
      } else {
        const closed = once(client, 'close')
        await rejectsCode(registration, 'REMOTE_ACCESS_INCOMPATIBLE', refusal)
        await closed
      }
      // What went out: the register frame with the credential as given, and no sessionId.
      assert.deepStrictEqual(received[0].access, access)
      assert.strictEqual('sessionId' in received[0], false)
    })
  }
  // Not protocol v4's registered frame, for a local registration too: INVALID_FRAME.
  await withPeer(() => [{ type: 'registered', sessionId: 'p1', protocol: C.protocolName, version: 3 }], async (socketPath) => {
    const client = await connect({ socketPath })
    await rejectsCode(client.register({ session: session('r') }), 'INVALID_FRAME')
    client.close()
  })
  // The broker's refusal, as it words it.
  await withPeer(() => [{ type: 'error', code: 'ACCESS_DENIED', error: 'Remote registration credential was rejected' }], async (socketPath) => {
    const client = await connect({ socketPath })
    await rejectsCode(client.register({ session: session('r'), access: ENROLL }), 'ACCESS_DENIED', /^Remote registration credential was rejected$/)
    client.close()
  })
})

test('accessControl: options and requests are checked before anything is sent', async () => {
  const socketPath = join(tmpdir(), `aic-none-${randomUUID()}.sock`)
  const admin = { adminToken: 't', action: 'inspect_tree', principalId: 'p' }
  await rejectsCode(accessControl(), 'INVALID_ARGUMENT', /options\.request is required/)
  const cases = [
    [{ socketPath, request: admin, timeoutms: 5 }, 'UNKNOWN_KEY'],
    [{ socketPath }, 'INVALID_ARGUMENT'],
    [{ socketPath, request: 'x' }, 'INVALID_ARGUMENT'],
    [{ socketPath: '', request: admin }, 'INVALID_ARGUMENT'],
    [{ socketPath, request: { ...admin, type: 'access_control' } }, 'UNKNOWN_KEY'],
    [{ socketPath, request: { ...admin, principalid: 'p' } }, 'UNKNOWN_KEY'],
    [{ socketPath, request: { adminToken: 't' } }, 'INVALID_ARGUMENT'],
    [{ socketPath, request: { adminToken: 't', action: '' } }, 'INVALID_ARGUMENT'],
    [{ socketPath, request: { ...admin, requestId: 5 } }, 'INVALID_ARGUMENT'],
    [{ socketPath, request: { ...admin, adminToken: 5 } }, 'INVALID_ARGUMENT'],
    [{ socketPath, request: { action: 'inspect_tree' } }, 'INVALID_ARGUMENT'],
    [{ socketPath, request: { ...admin, access: RECONNECT } }, 'INVALID_ARGUMENT'],
    [{ socketPath, request: { action: 'inspect_tree', access: ENROLL } }, 'INVALID_ARGUMENT'],
    [{ socketPath, request: { action: 'inspect_tree', access: { ...RECONNECT, generation: -1 } } }, 'INVALID_ARGUMENT'],
    [{ socketPath, request: { ...admin, enrollment: { ttlMs: Infinity } } }, 'UNSUPPORTED_VALUE'],
    [{ socketPath, request: admin, timeoutMs: -1 }, 'INVALID_ARGUMENT'],
  ]
  for (const [options, code] of cases) await rejectsCode(accessControl(options), code)
  // A good request reaches the connection step.
  await rejectsCode(accessControl({ socketPath, request: admin }), 'NOT_CONNECTED')
  await rejectsCode(accessControl({ socketPath, request: { action: 'inspect_tree', access: RECONNECT } }), 'NOT_CONNECTED')
})

test('accessControl against the broker: a wrong admin token is ACCESS_DENIED', withBroker(async (broker, dir) => {
  const request = { adminToken: 'not-the-token', action: 'inspect_tree', principalId: 'p' }
  await rejectsCode(accessControl({ socketPath: broker.socketPath, request }), 'ACCESS_DENIED')
  await rejectsCode(accessControl({ agentDir: dir, request }), 'ACCESS_DENIED')
}))

test('accessControl reads exactly its own answer', async () => {
  const request = { adminToken: 't', action: 'inspect_tree', principalId: 'p' }
  const result = (r, extra) => ({ type: 'access_control_result', requestId: r.requestId, action: r.action, principals: [], ...extra })
  await withPeer((r) => [result(r)], async (socketPath, received) => {
    const answer = await accessControl({ socketPath, request })
    assert.deepStrictEqual(answer, result(received[0]))
    assert.strictEqual(received[0].type, 'access_control')
    assert.match(received[0].requestId, /^[0-9a-f-]{36}$/)
    assert.deepStrictEqual(request, { adminToken: 't', action: 'inspect_tree', principalId: 'p' }, 'the request is not changed')
    assert.strictEqual((await accessControl({ socketPath, request: { ...request, requestId: 'mine' } })).requestId, 'mine')
  })
  await withPeer((r) => [result(r, { requestId: 'other' })], async (socketPath) => {
    await rejectsCode(accessControl({ socketPath, request }), 'INVALID_FRAME')
  })
  await withPeer((r) => [result(r, { action: 'revoke_subtree' })], async (socketPath) => {
    await rejectsCode(accessControl({ socketPath, request }), 'INVALID_FRAME')
  })
  await withPeer(() => [{ type: 'error', code: 'INVALID_REQUEST', error: 'Invalid remote principal ID' }], async (socketPath) => {
    await rejectsCode(accessControl({ socketPath, request }), 'INVALID_REQUEST', /^Invalid remote principal ID$/)
  })
  await withPeer(() => null, async (socketPath) => {
    await rejectsCode(accessControl({ socketPath, request }), 'NOT_CONNECTED', /without answering/)
  })
  await withPeer(() => [], async (socketPath) => {
    await rejectsCode(accessControl({ socketPath, request, timeoutMs: 20 }), 'NOT_CONNECTED', /did not answer/)
  })
})

// The remote flow, against a broker of ours (or the one AIC_REMOTE_AGENT_DIR names).
function remoteTest (name, fn) {
  test(`remote: ${name}`, { timeout: 60_000 }, async () => {
    let broker = null
    let agentDir = EXTERNAL
    if (!EXTERNAL) {
      agentDir = mkdtempSync(join(tmpdir(), 'aic-node-remote-'))
      broker = startBroker({ agentDir, idleExitMs: 0, logLevel: 'off' })
      assert.strictEqual(broker.gatewayPath, join(agentDir, 'intercom', GATEWAY_FILE))
    }
    const intercomDir = broker ? broker.intercomDir : join(agentDir, 'intercom')
    const clients = []
    const env = {
      agentDir,
      local: broker ? broker.socketPath : join(intercomDir, 'broker.sock'),
      gateway: join(intercomDir, GATEWAY_FILE),
      adminToken: JSON.parse(readFileSync(join(intercomDir, ADMIN_FILE), 'utf8')).adminToken,
      async client (socketPath) {
        const c = await connect({ socketPath })
        clients.push(c)
        return c
      },
    }
    try { await fn(env) } finally {
      for (const c of clients) c.close()
      if (broker) {
        broker.close()
        rmSync(agentDir, { recursive: true, force: true })
      }
    }
  })
}

/** A local root session and an enrollment under it, issued with the admin token. */
async function enrollUnderRoot (env, terms = {}) {
  const rootId = `root-${randomUUID().slice(0, 8)}`
  const root = await env.client(env.local)
  await root.register({ session: session('root'), sessionId: rootId })
  const issued = await accessControl({
    socketPath: env.local,
    request: { adminToken: env.adminToken, action: 'issue_enrollment', enrollment: { name: 'remote', parentSessionId: rootId, rootSessionId: rootId, remoteHostId: 'host-1', ...terms } },
  })
  assert.strictEqual(issued.action, 'issue_enrollment')
  assert.ok(typeof issued.enrollmentToken === 'string' && issued.enrollmentToken.length > 0)
  assert.ok(Number.isSafeInteger(issued.expiresAt))
  return { rootId, root, token: issued.enrollmentToken }
}

/** Waits until the broker no longer counts `principalId` as connected. */
async function disconnected (env, principalId) {
  for (let i = 0; i < 500; i++) {
    const tree = await accessControl({ socketPath: env.local, request: { adminToken: env.adminToken, action: 'inspect_tree', principalId } })
    if (!tree.principals.some((p) => p.id === principalId && p.connected)) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  assert.fail(`${principalId} stayed connected`)
}

remoteTest('enroll over the gateway, reconnect with the session credential; a replay and a live twin are refused', async (env) => {
  const { rootId, token } = await enrollUnderRoot(env, { canDelegate: true, maxDepth: 3, maxChildren: 2 })
  const remote = await env.client(env.gateway)
  const enrolled = await remote.register({ session: session('remote'), access: { enrollmentToken: token } })
  assert.deepStrictEqual(enrolled.remoteAccess, REMOTE_ACCESS)
  const { sessionCredential, ...provenanceFields } = enrolled.access
  assert.ok(typeof sessionCredential === 'string' && sessionCredential.length > 0)
  assert.deepStrictEqual(provenanceFields, {
    origin: 'remote', remoteHostId: 'host-1', parentSessionId: rootId, rootSessionId: rootId,
    generation: enrolled.access.generation, canDelegate: true, depth: 1, maxDepth: 3, maxChildren: 2,
  })
  assert.ok(enrolled.access.generation >= 1)
  assert.strictEqual(remote.sessionId, enrolled.sessionId)

  const replay = await env.client(env.gateway)
  await rejectsCode(replay.register({ session: session('again'), access: { enrollmentToken: token } }), 'ACCESS_DENIED')

  const access = { sessionCredential, sessionId: enrolled.sessionId, generation: enrolled.access.generation }
  const twin = await env.client(env.gateway)
  await rejectsCode(twin.register({ session: session('twin'), access }), 'ACCESS_DENIED')
  remote.close()
  await disconnected(env, enrolled.sessionId)
  const back = await env.client(env.gateway)
  const again = await back.register({ session: session('remote'), access })
  assert.strictEqual(again.sessionId, enrolled.sessionId)
  assert.strictEqual(again.access.generation, enrolled.access.generation)
  assert.strictEqual(again.access.sessionCredential, undefined, 'a reconnect is issued no new credential')
  // A wrong credential is refused.
  const wrong = await env.client(env.gateway)
  await rejectsCode(wrong.register({ session: session('x'), access: { ...access, sessionCredential: 'not-it' } }), 'ACCESS_DENIED')
  // No registration over the gateway without a credential.
  const bare = await env.client(env.gateway)
  await rejectsCode(bare.register({ session: session('bare') }), 'ACCESS_DENIED')
})

remoteTest('connect({ agentDir, access }) dials the gateway and registers with that credential', async (env) => {
  const { rootId, token } = await enrollUnderRoot(env)
  assert.throws(() => connect({ agentDir: env.agentDir, access: { enrollmentToken: '' } }), { code: 'INVALID_ARGUMENT' })
  assert.throws(() => connect({ agentDir: env.agentDir, access: { token } }), { code: 'UNKNOWN_KEY' })
  const remote = await connect({ agentDir: env.agentDir, access: { enrollmentToken: token } })
  try {
    const enrolled = await remote.register({ session: session('remote') })
    assert.strictEqual(enrolled.access.parentSessionId, rootId)
    assert.ok(typeof enrolled.access.sessionCredential === 'string')
  } finally {
    remote.close()
  }
})

remoteTest('child enrollment through the gateway, inspection, and revocation of the subtree', async (env) => {
  const { rootId, token } = await enrollUnderRoot(env, { canDelegate: true, maxDepth: 3, maxChildren: 2 })
  const remote = await env.client(env.gateway)
  const enrolled = await remote.register({ session: session('remote'), access: { enrollmentToken: token } })
  const access = { sessionCredential: enrolled.access.sessionCredential, sessionId: enrolled.sessionId, generation: enrolled.access.generation }

  const childIssued = await accessControl({ socketPath: env.gateway, request: { access, action: 'issue_child_enrollment', enrollment: { name: 'child' } } })
  assert.strictEqual(childIssued.action, 'issue_child_enrollment')
  assert.strictEqual(childIssued.parentSessionId, enrolled.sessionId)
  const child = await env.client(env.gateway)
  const childReg = await child.register({ session: session('child'), access: { enrollmentToken: childIssued.enrollmentToken } })
  assert.strictEqual(childReg.access.parentSessionId, enrolled.sessionId)
  assert.strictEqual(childReg.access.rootSessionId, rootId)
  assert.strictEqual(childReg.access.depth, 2)

  const seen = await accessControl({ socketPath: env.gateway, request: { access, action: 'inspect_tree' } })
  assert.deepStrictEqual(seen.principals.map((p) => p.id).sort(), [enrolled.sessionId, childReg.sessionId].sort())
  assert.ok(seen.principals.every((p) => p.policy === 'remote-tree' && p.state === 'active' && p.connected === true))
  const byAdmin = await accessControl({ socketPath: env.local, request: { adminToken: env.adminToken, action: 'inspect_tree', principalId: enrolled.sessionId } })
  assert.strictEqual(byAdmin.principals.length, 2)
  await rejectsCode(accessControl({ socketPath: env.gateway, request: { access: { ...access, sessionCredential: 'nope' }, action: 'inspect_tree' } }), 'ACCESS_DENIED')
  await rejectsCode(accessControl({ socketPath: env.local, request: { adminToken: 'nope', action: 'inspect_tree', principalId: enrolled.sessionId } }), 'ACCESS_DENIED')

  const childClosed = once(child, 'close')
  const remoteClosed = once(remote, 'close')
  const revoked = await accessControl({ socketPath: env.local, request: { adminToken: env.adminToken, action: 'revoke_subtree', principalId: enrolled.sessionId } })
  assert.deepStrictEqual(revoked.changedPrincipalIds.slice().sort(), [enrolled.sessionId, childReg.sessionId].sort())
  await Promise.all([childClosed, remoteClosed])
  const after = await env.client(env.gateway)
  await rejectsCode(after.register({ session: session('remote'), access }), 'ACCESS_DENIED')
  await rejectsCode(accessControl({ socketPath: env.gateway, request: { access, action: 'inspect_tree' } }), 'ACCESS_DENIED')
})

// Runs in a fresh folder where the packed tarballs (the main package and the host's platform
// package) were installed by scripts/pack-accept.sh: the package is used exactly as users get it.
import test from 'node:test'
import assert from 'node:assert'
import { createRequire } from 'node:module'
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as esmRoot from '@ctliz/agent-intercom-core'
import * as esmProtocol from '@ctliz/agent-intercom-core/protocol-v4'
import * as esmCanonical from '@ctliz/agent-intercom-core/canonical'
import * as esmVendor from '@ctliz/agent-intercom-core/vendor/protocol-v4'

const require = createRequire(join(process.cwd(), 'noop.js'))
function filesUnder (dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath ?? e.path, e.name))
}
const HASH = 'ef23cae55b3cca7683fee60e5f2421350cde731dc5424c82286a33a8b9cdf6cb'

test('installed from the tarballs: the main package is JavaScript, the addon is the platform package', () => {
  const pkgDir = join(process.cwd(), 'node_modules', '@ctliz', 'agent-intercom-core')
  const main = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'))
  const rows = JSON.parse(readFileSync(join(pkgDir, 'bindings-node', 'npm', 'platforms.json'), 'utf8')).platforms
  assert.strictEqual(main.version, '0.3.0')
  assert.strictEqual(main.os, undefined)
  assert.strictEqual(main.cpu, undefined)
  assert.deepStrictEqual(main.optionalDependencies, Object.fromEntries(rows.map((r) => [`${main.name}-${r.id}`, main.version])))
  assert.ok(!existsSync(join(pkgDir, 'Cargo.toml')), 'the tarball ships no Rust sources')
  assert.deepStrictEqual(filesUnder(pkgDir).filter((f) => f.endsWith('.node')), [], 'the main package ships no addon')
  const platformDir = join(process.cwd(), 'node_modules', '@ctliz', 'agent-intercom-core-linux-x64-gnu')
  const platform = JSON.parse(readFileSync(join(platformDir, 'package.json'), 'utf8'))
  assert.strictEqual(platform.version, main.version)
  assert.deepStrictEqual([platform.os, platform.cpu, platform.libc], [['linux'], ['x64'], ['glibc']])
  assert.strictEqual(platform.main, 'agent_intercom.linux-x64-gnu.node')
  assert.ok(existsSync(join(platformDir, 'agent_intercom.linux-x64-gnu.node')))
  assert.ok(existsSync(join(platformDir, 'LICENSE-MIT')) && existsSync(join(platformDir, 'LICENSE-APACHE')))
  // The loader took the addon from the platform package, and both are this release.
  const addonFile = realpathSync(join(platformDir, platform.main))
  const loaded = Object.keys(require.cache).map((f) => realpathSync(f))
  assert.ok(loaded.includes(addonFile), `${addonFile} is not among the loaded modules`)
  assert.strictEqual(esmRoot.AGENT_INTERCOM_CORE_VERSION, main.version)
})

/** Runs `require(<the installed package>)` in a child with `preload` run first (to pose as another
 * platform); returns the error it threw, as JSON. */
function loadFailure (preload, cwd = process.cwd()) {
  const script = `${preload}
    try { require(${JSON.stringify(join(cwd, 'node_modules', '@ctliz', 'agent-intercom-core'))}); console.log('null') }
    catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message, platform: e.platform, supportedPlatforms: e.supportedPlatforms })) }`
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd, encoding: 'utf8' }))
}

test('on an unsupported platform the package says which platform it looked for and which exist', () => {
  for (const [preload, host] of [
    ["require('node:os').machine = () => 'riscv64'", 'linux-riscv64-gnu'],
    ["require('node:os').type = () => 'FreeBSD'", 'freebsd-x64'],
  ]) {
    const error = loadFailure(preload)
    assert.strictEqual(error.name, 'IntercomError')
    assert.strictEqual(error.code, 'NATIVE_ADDON_UNAVAILABLE')
    assert.strictEqual(error.platform, host)
    assert.deepStrictEqual(error.supportedPlatforms, ['linux-x64-gnu'])
    assert.ok(error.message.startsWith(`@ctliz/agent-intercom-core 0.3.0: no native addon is built for ${host}.`), error.message)
    assert.ok(error.message.includes('Supported platforms: linux-x64-gnu (@ctliz/agent-intercom-core-linux-x64-gnu)'), error.message)
  }
})

test('the addon is chosen for the machine, not for a redefined process.platform or process.arch', () => {
  // The Pi adapter's tests run its TypeScript broker posing as win32 this way.
  const preload = "Object.defineProperty(process, 'platform', { value: 'win32' }); Object.defineProperty(process, 'arch', { value: 'arm64' })"
  assert.strictEqual(loadFailure(preload), null)
})

test('without its platform package the package names the package to install', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aic-accept-noplatform-'))
  try {
    cpSync(join(process.cwd(), 'node_modules', '@ctliz', 'agent-intercom-core'), join(dir, 'node_modules', '@ctliz', 'agent-intercom-core'), { recursive: true })
    const error = loadFailure('', dir)
    assert.strictEqual(error.code, 'NATIVE_ADDON_UNAVAILABLE')
    assert.strictEqual(error.platform, 'linux-x64-gnu')
    assert.match(error.message, /the package @ctliz\/agent-intercom-core-linux-x64-gnu, which is not installed .*npm install @ctliz\/agent-intercom-core-linux-x64-gnu@0\.3\.0/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('every subpath works from CommonJS and ESM', () => {
  const cjsRoot = require('@ctliz/agent-intercom-core')
  const cjsProtocol = require('@ctliz/agent-intercom-core/protocol-v4')
  const cjsCanonical = require('@ctliz/agent-intercom-core/canonical')
  for (const mod of [cjsRoot, cjsProtocol, esmRoot, esmProtocol, esmVendor]) {
    assert.strictEqual(mod.INTERCOM_PROTOCOL_V4_SEMANTICS_HASH, HASH)
    assert.strictEqual(mod.INTERCOM_PROTOCOL_V4_VECTORS.length, 48)
    assert.strictEqual(mod.parseIntercomScopeId('Scope_AAAAAAAAAA'), 'Scope_AAAAAAAAAA')
    assert.throws(() => mod.parseIntercomScopeId('nope', 'x'), { code: 'INVALID_SCOPE', message: 'x must match ^[A-Za-z0-9_-]{16,128}$' })
  }
  for (const mod of [cjsRoot, cjsCanonical, esmRoot, esmCanonical]) {
    assert.strictEqual(mod.canonicalHash('boss-test-v1', { b: 2, a: 1 }), '4ff6c078039d0d494b220a4dafa919c183136d4cf7e303eed1bc642ab0b8e4c2')
    assert.strictEqual(mod.canonicalHash('agent-intercom-core/protocol-v4/acceptance-vectors', { version: 2, vectors: esmProtocol.INTERCOM_PROTOCOL_V4_VECTORS }), HASH)
    assert.throws(() => mod.canonicalJson({ a: -0 }), { code: 'UNSUPPORTED_NUMBER' })
  }
  const cjsVendor = require('@ctliz/agent-intercom-core/vendor/protocol-v4')
  assert.strictEqual(cjsVendor.INTERCOM_PROTOCOL_V4_SEMANTICS_HASH, HASH)
  assert.deepStrictEqual(Object.keys(cjsVendor).sort(), Object.keys(esmVendor).sort())
  assert.strictEqual(esmRoot.default, cjsRoot)
  assert.strictEqual(esmProtocol.default, cjsProtocol)
  assert.deepStrictEqual(cjsRoot.resolveIntercomTarget({ candidates: [{ id: 'abc-1', scope: null }], selector: 'abc' }), { kind: 'same_scope_prefix', targetIds: ['abc-1'] })
})

test('the installed vendored module passes the drift check, via the function and the bin', () => {
  const dir = join(process.cwd(), 'node_modules', '@ctliz', 'agent-intercom-core', 'vendor')
  for (const file of ['agent-intercom-protocol-v4.mjs', 'agent-intercom-protocol-v4.cjs']) {
    const report = esmRoot.checkVendoredProtocolV4(join(dir, file))
    assert.strictEqual(report.ok, true, report.problems.join('; '))
    assert.strictEqual(report.matchedFile, file)
    const out = execFileSync(join(process.cwd(), 'node_modules', '.bin', 'agent-intercom-core'), ['check-vendored', join(dir, file)], { encoding: 'utf8' })
    assert.match(out, /^ok: /)
  }
})

test('the installed package runs a broker and talks to it', async () => {
  const { startBroker, connect } = await import('@ctliz/agent-intercom-core/broker')
  const dir = mkdtempSync(join(tmpdir(), 'aic-accept-broker-'))
  const broker = startBroker({ agentDir: dir, idleExitMs: 0, logLevel: 'off' })
  try {
    const session = { cwd: '/w', model: 'm', pid: process.pid, startedAt: 1, lastActivity: 1 }
    const a = await connect({ agentDir: dir })
    const b = await connect({ agentDir: dir })
    await a.register({ session, sessionId: 'a' })
    await b.register({ session: { ...session, runtimeInstanceId: 'b' }, sessionId: 'b' })
    const got = new Promise((resolve) => b.once('message', resolve))
    await a.send('b', 'from the tarball')
    assert.strictEqual((await got).message.content.text, 'from the tarball')
    a.close()
    b.close()
  } finally {
    broker.close()
    rmSync(dir, { recursive: true, force: true })
  }
  const cjs = require('@ctliz/agent-intercom-core/broker')
  assert.strictEqual(typeof cjs.startBroker, 'function')
})

test('the installed package opens a scratchpad store from ESM and CommonJS', async () => {
  const esm = await import('@ctliz/agent-intercom-core/scratchpad')
  const cjs = require('@ctliz/agent-intercom-core/scratchpad')
  assert.strictEqual(esm.default, cjs)
  const dir = mkdtempSync(join(tmpdir(), 'aic-accept-pad-'))
  try {
    const pad = esm.openScratchpad({ path: join(dir, 'pad.sqlite') })
    const { id } = pad.post({ from: 'a', to: 'b', privacy: 'private', content: 'Bearer abcdefghijklmnop' })
    assert.deepStrictEqual(pad.unread({ agent: 'b' }).map((m) => m.id), [id])
    assert.deepStrictEqual(pad.unread({ agent: 'b' }), [])
    assert.throws(() => pad.post({ from: 'a', content: 'x', ttl_hours: 0 }), { code: 'INVALID_TTL' })
    pad.close()
    assert.deepStrictEqual(cjs.checkRule('check.ttl', {}), { hours: 24 })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the installed package signs and verifies transport envelopes from ESM and CommonJS', async () => {
  const esm = await import('@ctliz/agent-intercom-core/transport')
  const cjs = require('@ctliz/agent-intercom-core/transport')
  assert.strictEqual(esm.default, cjs)
  const secret = Buffer.alloc(32, 7).toString('base64')
  const key = { kind: 'hmac-sha256', key_id: 'k', secret }
  const fields = {
    format_version: 1,
    sent_at: '2026-05-01T12:00:00.000Z',
    sender: { agent_id: 'a', agent_type: 't', daemon_fingerprint: 'f', capabilities: [] },
    recipient: null,
    content_type: 'a2a_task',
    payload: { title: 'x' },
    metadata: {},
    nonce: 'nonce-from-the-tarball',
    expires_at: '2026-05-01T12:10:00.000Z',
  }
  const text = esm.signEnvelope(fields, key)
  const now = Date.parse(fields.sent_at)
  assert.strictEqual(cjs.verifyEnvelope(text, { 'hmac-sha256': { k: secret } }, { now }).key_id, 'k')
  assert.throws(() => esm.verifyEnvelope(text.replace('"x"', '"y"'), { 'hmac-sha256': { k: secret } }, { now }), { code: 'SIGNATURE_INVALID' })
  const [, second] = cjs.verifyEnvelopeSequence([text, text], { 'hmac-sha256': { k: secret } }, { now })
  assert.strictEqual(second.code, 'REPLAYED')
})

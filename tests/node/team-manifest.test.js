'use strict'
// ./team-manifest: the parser's rules and refusals, proxies and accessors never entered, and the
// file rules on real files (modes, owners, symlinks, sizes), sync and async alike.
const test = require('node:test')
const assert = require('node:assert')
const fs = require('node:fs')
const os = require('node:os')
const { join } = require('node:path')
const { execFileSync } = require('node:child_process')
const tm = require('@ctliz/agent-intercom-core/team-manifest')
const { call } = require('../../bindings-node/lib/contract.js')

const {
  parseTeamManifest, readTeamManifest, readTeamManifestAsync, TeamManifestError,
  MAX_TEAM_MANIFEST_BYTES, MAX_TEAM_MANIFEST_MEMBERS,
} = tm

const INVALID = 'ERR_TEAM_MANIFEST_INVALID'
const UNAVAILABLE = 'ERR_TEAM_MANIFEST_UNAVAILABLE'
const RUN = 'team_1a2b3c4d-5e6f-47a8-b9c0-d1e2f3a4b5c6'
const LEAD = 'tmuxdeck-c8f1e03a-9b4d-4c7e-81f6-a8b0c3d5e7f9'
const W1 = 'tmuxdeck-9a1b3c5d-7e9f-4a2b-84cc-8f1e03a9b4d2'
const W2 = 'tmuxdeck-3e5f7a9b-1c2d-4e6f-8a0b-2c4d6e8f0a1b'
const SECRET = 'secret-7a4b8c9d0e1f'

function manifest (over = {}) {
  return {
    version: 'tmuxdeck.team.v1',
    backend: 'tmuxdeck',
    runId: RUN,
    leadId: LEAD,
    members: [
      { sessionId: LEAD, role: 'lead' },
      { sessionId: W1, role: 'worker' },
      { sessionId: W2, role: 'worker' },
    ],
    createdAt: 1723680000000,
    capabilities: [],
    ...over,
  }
}

function workers (n) {
  return Array.from({ length: n }, (_, i) => ({
    sessionId: `tmuxdeck-${String(i + 1).padStart(8, '0')}-0000-4000-8000-000000000000`,
    role: 'worker',
  }))
}

/** The error fn throws: a TeamManifestError whose message is exactly `code`. */
function refused (fn, code, name = '') {
  let caught
  try { fn() } catch (error) { caught = error }
  assert.ok(caught instanceof TeamManifestError, `${name}: expected TeamManifestError, got ${caught}`)
  assert.strictEqual(caught.code, code)
  assert.strictEqual(caught.message, code)
  assert.strictEqual(caught.name, 'TeamManifestError')
  assert.ok(!String(caught.stack).includes(SECRET), 'the stack does not echo a value')
  return caught
}

async function refusedAsync (promise, code) {
  let caught
  try { await promise } catch (error) { caught = error }
  assert.ok(caught instanceof TeamManifestError, `expected TeamManifestError, got ${caught}`)
  assert.strictEqual(caught.code, code)
  assert.strictEqual(caught.message, code)
}

test('constants', () => {
  assert.strictEqual(tm.TMUXDECK_TEAM_MANIFEST_VERSION, 'tmuxdeck.team.v1')
  assert.strictEqual(tm.TMUXDECK_TEAM_MANIFEST_BACKEND, 'tmuxdeck')
  assert.strictEqual(MAX_TEAM_MANIFEST_BYTES, 65536)
  assert.strictEqual(MAX_TEAM_MANIFEST_MEMBERS, 64)
})

test('TeamManifestError is constructible by adapters, as the TypeScript class', () => {
  const error = new TeamManifestError(INVALID)
  assert.ok(error instanceof Error)
  assert.strictEqual(error.message, INVALID)
  assert.strictEqual(error.code, INVALID)
  assert.strictEqual(error.name, 'TeamManifestError')
  assert.deepStrictEqual(Object.keys(error), ['code', 'name'])
})

test('valid manifests: objects, texts, null prototypes; the answer is a fresh object', () => {
  const input = manifest()
  const out = parseTeamManifest(input)
  assert.deepStrictEqual(out, input)
  assert.notStrictEqual(out, input)
  assert.notStrictEqual(out.members, input.members)
  assert.notStrictEqual(out.members[0], input.members[0])
  assert.notStrictEqual(out.capabilities, input.capabilities)
  assert.deepStrictEqual(Object.keys(out), ['version', 'backend', 'runId', 'leadId', 'members', 'createdAt', 'capabilities'])
  assert.ok(!Object.isFrozen(out), 'as in TypeScript, a plain mutable object')
  assert.deepStrictEqual(parseTeamManifest(JSON.stringify(input)), out)
  assert.deepStrictEqual(parseTeamManifest(JSON.stringify(input, null, 2)), out)

  // Key order of the input does not matter; the answer has the TypeScript order.
  const reversed = Object.fromEntries(Object.entries(input).reverse())
  assert.deepStrictEqual(Object.keys(parseTeamManifest(reversed)), Object.keys(out))

  const bare = Object.assign(Object.create(null), manifest({
    members: [Object.assign(Object.create(null), { sessionId: LEAD, role: 'lead' })],
  }))
  assert.strictEqual(parseTeamManifest(bare).members.length, 1)

  assert.strictEqual(parseTeamManifest(manifest({ members: [{ role: 'lead', sessionId: LEAD }] })).members.length, 1)
  const full = manifest({ members: [{ sessionId: LEAD, role: 'lead' }, ...workers(MAX_TEAM_MANIFEST_MEMBERS - 1)] })
  assert.strictEqual(parseTeamManifest(full).members.length, 64)
  // The lead need not come first.
  assert.ok(parseTeamManifest(manifest({ members: [{ sessionId: W1, role: 'worker' }, { sessionId: LEAD, role: 'lead' }] })))
  assert.strictEqual(parseTeamManifest(manifest({ createdAt: 1 })).createdAt, 1)
  assert.strictEqual(parseTeamManifest(manifest({ createdAt: Number.MAX_SAFE_INTEGER })).createdAt, Number.MAX_SAFE_INTEGER)

  // JSON.parse semantics: a repeated key keeps its last value; 1.0 is the integer 1.
  const text = JSON.stringify(manifest()).replace('"runId":', `"runId":"${SECRET}","runId":`)
  assert.strictEqual(parseTeamManifest(text).runId, RUN)
  assert.strictEqual(parseTeamManifest(JSON.stringify(manifest()).replace('1723680000000', '1723680000000.0')).createdAt, 1723680000000)
})

test('every rule refuses with ERR_TEAM_MANIFEST_INVALID and echoes nothing', () => {
  const lead = { sessionId: LEAD, role: 'lead' }
  const cases = {
    'unknown top-level key': manifest({ scope: SECRET }),
    'cwd key': manifest({ cwd: `/Users/${SECRET}` }),
    'missing version': (() => { const m = manifest(); delete m.version; return m })(),
    'missing capabilities': (() => { const m = manifest(); delete m.capabilities; return m })(),
    'version v2': manifest({ version: 'tmuxdeck.team.v2' }),
    'backend': manifest({ backend: SECRET }),
    'runId uppercase': manifest({ runId: RUN.toUpperCase().replace('TEAM_', 'team_') }),
    'runId not v4': manifest({ runId: RUN.replace('-47a8', '-57a8') }),
    'runId variant': manifest({ runId: RUN.replace('-b9c0', '-c9c0') }),
    'runId trailing newline': manifest({ runId: RUN + '\n' }),
    'runId number': manifest({ runId: 1 }),
    'leadId prefix': manifest({ leadId: LEAD.replace('tmuxdeck-', 'tmux-') }),
    'leadId boxed string': manifest({ leadId: Object(LEAD) }),
    'members empty': manifest({ members: [] }),
    'members too many': manifest({ members: [lead, ...workers(MAX_TEAM_MANIFEST_MEMBERS)] }),
    'members object': manifest({ members: { 0: lead } }),
    'member unknown key': manifest({ members: [lead, { sessionId: W1, role: 'worker', extra: SECRET }] }),
    'member missing role': manifest({ members: [lead, { sessionId: W1 }] }),
    'member bad role': manifest({ members: [lead, { sessionId: W1, role: 'boss' }] }),
    'member bad id': manifest({ members: [lead, { sessionId: SECRET, role: 'worker' }] }),
    'member array': manifest({ members: [lead, [W1, 'worker']] }),
    'member null': manifest({ members: [lead, null] }),
    'duplicate member': manifest({ members: [lead, { sessionId: W1, role: 'worker' }, { sessionId: W1, role: 'worker' }] }),
    'duplicate lead': manifest({ members: [lead, lead] }),
    'no lead': manifest({ members: [{ sessionId: W1, role: 'worker' }] }),
    'lead as worker': manifest({ members: [{ sessionId: LEAD, role: 'worker' }] }),
    'worker as lead': manifest({ members: [lead, { sessionId: W1, role: 'lead' }] }),
    'createdAt 0': manifest({ createdAt: 0 }),
    'createdAt -0': manifest({ createdAt: -0 }),
    'createdAt negative': manifest({ createdAt: -5 }),
    'createdAt fraction': manifest({ createdAt: 1.5 }),
    'createdAt unsafe': manifest({ createdAt: 2 ** 53 }),
    'createdAt NaN': manifest({ createdAt: NaN }),
    'createdAt Infinity': manifest({ createdAt: Infinity }),
    'createdAt string': manifest({ createdAt: '1723680000000' }),
    'createdAt bigint': manifest({ createdAt: 1723680000000n }),
    'capabilities non-empty': manifest({ capabilities: ['inbox_inspection_authorized'] }),
    'capabilities object': manifest({ capabilities: {} }),
    'class instance': new (class Manifest { constructor () { Object.assign(this, manifest()) } })(),
    'array': [manifest()],
    'null': null,
    'undefined': undefined,
    'number': 1,
    'function': () => manifest(),
    'text of a string': JSON.stringify(JSON.stringify(manifest())),
    'text not JSON': `{${SECRET}`,
    'text with BOM': '\ufeff' + JSON.stringify(manifest()),
    'text with trailing data': JSON.stringify(manifest()) + 'x',
    'text __proto__ key': JSON.stringify(manifest()).replace('"scope"', '').replace('"runId":', '"__proto__":{},"runId":'),
    'text lone surrogate': JSON.stringify(manifest({ runId: RUN + '\ud800' })),
    'empty text': '',
  }
  for (const [name, value] of Object.entries(cases)) {
    refused(() => parseTeamManifest(value), INVALID, name)
  }
})

test('proxies are refused and never entered; accessors are refused and never run', () => {
  let entered = 0
  const handler = {}
  for (const trap of ['get', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf', 'defineProperty', 'set', 'deleteProperty', 'isExtensible', 'preventExtensions', 'setPrototypeOf', 'apply', 'construct']) {
    handler[trap] = (...args) => { entered++; return Reflect[trap](...args) }
  }
  const proxied = [
    new Proxy(manifest(), handler),
    manifest({ members: new Proxy(manifest().members, handler) }),
    manifest({ members: [new Proxy({ sessionId: LEAD, role: 'lead' }, handler)] }),
    manifest({ capabilities: new Proxy([], handler) }),
    manifest({ runId: new Proxy({}, handler) }),
    manifest({ extra: new Proxy(() => {}, handler) }),
  ]
  for (const value of proxied) refused(() => parseTeamManifest(value), INVALID)
  assert.strictEqual(entered, 0, 'no trap ran')

  let ran = 0
  const getter = (value) => ({ get () { ran++; return value }, enumerable: true, configurable: true })
  const root = manifest()
  Object.defineProperty(root, 'leadId', getter(LEAD))
  const member = { role: 'worker' }
  Object.defineProperty(member, 'sessionId', getter(W1))
  const elements = [{ sessionId: LEAD, role: 'lead' }]
  Object.defineProperty(elements, '1', getter({ sessionId: W1, role: 'worker' }))
  const setterOnly = manifest()
  Object.defineProperty(setterOnly, 'createdAt', { set () { ran++ }, enumerable: true })
  const hidden = manifest()
  Object.defineProperty(hidden, 'runId', { value: RUN, enumerable: false })
  const json = manifest({ toJSON () { ran++; return manifest() } })
  for (const value of [root, manifest({ members: [{ sessionId: LEAD, role: 'lead' }, member] }), manifest({ members: elements }), setterOnly, hidden, json]) {
    refused(() => parseTeamManifest(value), INVALID)
  }
  assert.strictEqual(ran, 0, 'no getter, setter or toJSON ran')
})

test('sparse arrays, extra array keys, symbol keys and cycles are refused', () => {
  const sparse = [{ sessionId: LEAD, role: 'lead' }, undefined, { sessionId: W1, role: 'worker' }]
  delete sparse[1]
  const trailingHole = [{ sessionId: LEAD, role: 'lead' }]
  trailingHole.length = 2
  const extra = manifest().members
  extra.meta = SECRET
  const symbolOnArray = []
  symbolOnArray[Symbol('evil')] = true
  const symbolOnObject = manifest()
  symbolOnObject[Symbol('evil')] = true
  const symbolOnMember = { sessionId: LEAD, role: 'lead', [Symbol('x')]: 1 }
  const cyclic = manifest()
  cyclic.members[1].self = cyclic
  const deep = manifest()
  let nest = deep
  for (let i = 0; i < 600; i++) nest = (nest.next = {})
  for (const value of [
    manifest({ members: sparse }),
    manifest({ members: trailingHole }),
    manifest({ members: extra }),
    manifest({ capabilities: symbolOnArray }),
    symbolOnObject,
    manifest({ members: [symbolOnMember] }),
    manifest({ capabilities: new Array(3) }),
    cyclic,
    deep,
  ]) {
    refused(() => parseTeamManifest(value), INVALID)
  }
  // An array whose prototype is not Array.prototype is still an array (TypeScript reads it too).
  const members = [{ sessionId: LEAD, role: 'lead' }]
  Object.setPrototypeOf(members, null)
  assert.strictEqual(parseTeamManifest(manifest({ members })).members.length, 1)
})

test('the core checks, called directly: identity of the opened file and bad facts', () => {
  const uid = 1000
  const file = { directory: false, file: true, symlink: false, mode: 0o100600, uid, size: 10, dev: 1n, ino: 2n }
  const dir = { directory: true, file: false, symlink: false, mode: 0o40700, uid, dev: 1, ino: 9 }
  assert.strictEqual(call('team.checkFile', [file, uid]), undefined)
  assert.strictEqual(call('team.checkFile', [file, uid, { ...file }]), undefined)
  refused(() => call('team.checkFile', [file, uid, { ...file, ino: 3n }]), UNAVAILABLE)
  refused(() => call('team.checkFile', [{ ...file, dev: 2n ** 63n }, uid, file]), UNAVAILABLE)
  refused(() => call('team.checkFile', [{ ...file, size: MAX_TEAM_MANIFEST_BYTES + 1 }, uid]), UNAVAILABLE)
  assert.strictEqual(call('team.checkFile', [{ ...file, size: MAX_TEAM_MANIFEST_BYTES }, uid]), undefined)
  assert.strictEqual(call('team.checkFile', [{ ...file, uid: 7 }]), undefined, 'no uid: no ownership check')
  assert.strictEqual(call('team.checkDirectory', [dir, uid, dir]), undefined)
  refused(() => call('team.checkDirectory', [dir, uid, { ...dir, ino: 10 }]), UNAVAILABLE)
  refused(() => call('team.checkLength', [MAX_TEAM_MANIFEST_BYTES + 1]), UNAVAILABLE)
  assert.throws(() => call('team.checkFile', [{ ...file, mode: '384' }, uid]), TypeError)
  assert.throws(() => call('team.checkFile', [file, null]), TypeError)
  assert.throws(() => call('team.checkDirectory', [null, uid]), TypeError)
  assert.deepStrictEqual(call('team.resolvePath', ['\ufeff /a/b\u3000']), { path: '/a/b', parent: '/a' })
})

test('paths: absent or blank is undefined; relative is INVALID; trim is JavaScript\'s', async () => {
  for (const absent of [undefined, null, '', '   ', '\t\n', '\ufeff', '\u3000\u2028', 1, {}, ['/a']]) {
    assert.strictEqual(readTeamManifest(absent), undefined)
    assert.strictEqual(await readTeamManifestAsync(absent), undefined)
  }
  assert.strictEqual(readTeamManifest(), undefined)
  for (const relative of ['team.json', `some/${SECRET}/team.json`, './x', '~/x', '\u0085/tmp/x']) {
    refused(() => readTeamManifest(relative), INVALID)
    await refusedAsync(readTeamManifestAsync(relative), INVALID)
  }
  const dirname = require('node:path').dirname
  for (const path of ['/', '/a', '/a/', '/a/b//', '//a', '///a', '/a//b', '//', '/a/./b', '/a/../b']) {
    assert.strictEqual(call('team.resolvePath', [path]).parent, dirname(path), path)
  }
})

// Real files. Each case is read sync and async, which must agree.
test('files: modes, owners, symlinks, sizes, kinds; sync and async agree', async (t) => {
  const base = fs.mkdtempSync(join(os.tmpdir(), 'aic-team-'))
  t.after(() => fs.rmSync(base, { recursive: true, force: true }))
  const dir = (name, mode = 0o700) => {
    const path = join(base, name)
    fs.mkdirSync(path)
    fs.chmodSync(path, mode)
    return path
  }
  const put = (path, text, mode = 0o600) => {
    fs.writeFileSync(path, text)
    fs.chmodSync(path, mode)
    return path
  }
  const teams = dir('teams')
  const text = JSON.stringify(manifest(), null, 2)
  const good = put(join(teams, 'team.json'), text)
  const expected = parseTeamManifest(text)

  const cases = []
  const ok = (name, path) => cases.push({ name, path, ok: true })
  const no = (name, path, code) => cases.push({ name, path, code })

  ok('valid', good)
  ok('padded path', `\ufeff ${good}\n`)
  ok('exactly the limit', put(join(teams, 'limit.json'), text.padEnd(MAX_TEAM_MANIFEST_BYTES, ' ')))
  no('one byte over', put(join(teams, 'over.json'), text.padEnd(MAX_TEAM_MANIFEST_BYTES + 1, ' ')), UNAVAILABLE)
  no('oversized JSON', put(join(teams, 'big.json'), JSON.stringify(manifest({ padding: 'X'.repeat(MAX_TEAM_MANIFEST_BYTES + 10) }))), UNAVAILABLE)
  no('missing file', join(teams, 'missing.json'), UNAVAILABLE)
  no('missing directory', join(base, 'nowhere', 'team.json'), UNAVAILABLE)
  no('a directory', dir('teams/sub'), UNAVAILABLE)
  no('file below a file', join(good, 'x'), UNAVAILABLE)
  no('trailing slash', good + '/', UNAVAILABLE)
  for (const mode of [0o400, 0o644, 0o640, 0o666, 0o700, 0o000]) {
    no(`file mode ${mode.toString(8)}`, put(join(teams, `mode-${mode.toString(8)}.json`), text, mode), UNAVAILABLE)
  }
  // Only the permission bits (mode & 0o777) are compared, as in TypeScript: setuid or sticky
  // bits do not matter.
  ok('file mode 4600', put(join(teams, 'mode-4600.json'), text, 0o4600))
  const linkToFile = join(teams, 'link.json')
  fs.symlinkSync(good, linkToFile)
  no('symlinked file', linkToFile, UNAVAILABLE)
  const linkToDir = join(base, 'teams-link')
  fs.symlinkSync(teams, linkToDir)
  no('symlinked directory', join(linkToDir, 'team.json'), UNAVAILABLE)
  for (const mode of [0o755, 0o750, 0o711, 0o500, 0o600]) {
    const d = dir(`dir-${mode.toString(8)}`, 0o700)
    put(join(d, 'team.json'), text)
    fs.chmodSync(d, mode)
    no(`directory mode ${mode.toString(8)}`, join(d, 'team.json'), UNAVAILABLE)
  }
  const sticky = dir('dir-1700')
  put(join(sticky, 'team.json'), text)
  fs.chmodSync(sticky, 0o1700)
  ok('directory mode 1700', join(sticky, 'team.json'))
  no('invalid manifest', put(join(teams, 'invalid.json'), JSON.stringify(manifest({ cwd: SECRET }))), INVALID)
  no('not JSON', put(join(teams, 'garbage.json'), `${SECRET}{`), INVALID)
  no('BOM', put(join(teams, 'bom.json'), '\ufeff' + text), INVALID)
  no('empty file', put(join(teams, 'empty.json'), ''), INVALID)
  const badUtf8 = join(teams, 'utf8.json')
  const bytes = Buffer.from(text.replace(RUN, RUN.slice(0, -1) + '#'))
  bytes[bytes.indexOf('#')] = 0xff // becomes U+FFFD, as readFileSync 'utf8' decodes it
  fs.writeFileSync(badUtf8, bytes)
  fs.chmodSync(badUtf8, 0o600)
  no('invalid UTF-8 in a value', badUtf8, INVALID)
  const fifo = join(teams, 'fifo.json')
  execFileSync('mkfifo', ['-m', '600', fifo])
  no('a FIFO', fifo, UNAVAILABLE)
  // A lone surrogate reaches the file system as U+FFFD, as Node's fs encodes it.
  put(join(teams, '\ufffd.json'), text)
  ok('lone surrogate in the name', join(teams, '\ud800.json'))

  const root = typeof process.getuid === 'function' && process.getuid() === 0
  if (root) {
    const theirs = put(join(teams, 'theirs.json'), text)
    fs.chownSync(theirs, 12345, 12345)
    no('file of another user', theirs, UNAVAILABLE)
    const theirDir = dir('their-dir')
    put(join(theirDir, 'team.json'), text)
    fs.chownSync(theirDir, 12345, 12345)
    no('directory of another user', join(theirDir, 'team.json'), UNAVAILABLE)
  }

  let checked = 0
  for (const c of cases) {
    if (c.ok) {
      assert.deepStrictEqual(readTeamManifest(c.path), expected, c.name)
      assert.deepStrictEqual(await readTeamManifestAsync(c.path), expected, c.name)
    } else {
      const e = refused(() => readTeamManifest(c.path), c.code, c.name)
      assert.ok(!e.stack.includes(base), `${c.name}: the path is not echoed`)
      await refusedAsync(readTeamManifestAsync(c.path), c.code)
    }
    checked++
  }
  assert.strictEqual(checked, cases.length)
  if (!root) t.diagnostic('not root: the other-owner cases were skipped')
  t.diagnostic(`${cases.length} file cases, each sync and async`)
})

// Optional differential check against the TypeScript core's build: AIC_TS_CORE=<dist dir>.
test('agrees with the TypeScript core (AIC_TS_CORE)', { skip: !process.env.AIC_TS_CORE && 'AIC_TS_CORE not set' }, async () => {
  const ts = await import(join(process.env.AIC_TS_CORE, 'team-manifest.js'))
  const outcome = (fn) => { try { return { ok: fn() } } catch (e) { return { code: e.code, name: e.name, message: e.message } } }
  const values = [manifest(), manifest({ x: 1 }), manifest({ members: [] }), manifest({ createdAt: -0 }),
    manifest({ members: [{ sessionId: W1, role: 'worker' }, { sessionId: LEAD, role: 'lead' }] }),
    JSON.stringify(manifest()), '{', 'null', manifest({ capabilities: [1] })]
  for (const field of Object.keys(manifest())) {
    for (const v of [undefined, null, 0, 1, '', 'x', [], {}, true, LEAD, RUN]) values.push(manifest({ [field]: v }))
  }
  for (const value of values) {
    assert.deepStrictEqual(outcome(() => parseTeamManifest(value)), outcome(() => ts.parseTeamManifest(value)))
  }
})

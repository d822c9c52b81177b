'use strict'
// @ctliz/agent-intercom-core/scratchpad: vectors/scratchpad-v1.json through checkRule, and a real
// SQLite store (also from two Node processes) through openScratchpad.
const { test } = require('node:test')
const assert = require('node:assert')
const { mkdtempSync, rmSync, writeFileSync, readFileSync, symlinkSync, existsSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { execFileSync } = require('node:child_process')
const { readVectors, throwsCode, root, describeVectors } = require('./helpers.js')
const pad = require('../../bindings-node/lib/scratchpad.js')

function tmp () {
  return mkdtempSync(join(tmpdir(), 'aic-pad-node-'))
}

/** One vector case as a rule check; returns [op, args, judge(result|error)]. */
function asCheck (c) {
  switch (c.kind) {
    case 'visibility': {
      const m = c.message; const r = c.reader
      return ['check.visible', {
        message: { from: m.from, to: m.to, privacy: m.privacy, sender_team: m.senderTeam, project_root: m.projectRoot, expires_at: m.expiresAt },
        reader: { agent: r.agent, team: r.team, project_root: r.projectRoot },
        now: c.now
      }, (res) => res.visible === c.visible]
    }
    case 'ttl':
      // ttlJson: number text canonical JSON cannot hold (0.5, 1e300), as a JS number.
      return ['check.ttl', { ttl_hours: c.ttlJson !== undefined ? JSON.parse(c.ttlJson) : c.ttlHours }, (res, err) => typeof c.expected === 'number' ? res && res.hours === c.expected : err && err.code === c.expected]
    case 'transition':
      return ['check.transition', { from: c.from, to: c.to }, (res, err) => c.allowed ? !!res : err && err.code === 'INVALID_TRANSITION']
    case 'addressing':
      return ['check.addressing', { privacy: c.privacy, to: c.to }, (res, err) => c.expected === 'ok' ? !!res : err && err.code === c.expected]
    case 'task_read':
      return ['check.task_read', { task: { creator: c.task.creator, assignee: c.task.assignee }, agent: c.agent }, (res, err) => c.expected === 'ok' ? !!res : err && err.code === c.expected]
    case 'redaction':
      return ['check.redact', { text: c.text, project_root: c.projectRoot }, (res) => res && res.text === c.expected]
    case 'rate':
      return ['check.rate', { per_minute: c.perMinute, takes: c.takes }, (res) => res && JSON.stringify(res.map((x) => x.allowed ? { allowed: true } : { allowed: false, retryAfterMs: x.retry_after_ms })) === JSON.stringify(c.expected)]
    default:
      return null
  }
}

/** Runs a store scenario against a fresh store in `dir`. */
function runScenario (c, dir, n) {
  const opts = { path: join(dir, `${n}.sqlite`) }
  for (const [k, v] of Object.entries(c.options)) opts[k.replace(/_([a-z])/g, (_, x) => x.toUpperCase())] = v
  const s = pad.openScratchpad(opts)
  const names = new Map()
  const label = (v) => names.get(typeof v === 'string' ? v : v.id) ?? '?'
  try {
    c.steps.forEach((step, i) => {
      const where = `${c.id} step ${i}: ${step.op}`
      const expect = step.expect || {}
      if (expect.error) {
        throwsCode(assert, () => s.request(step.op, step.args), expect.error)
        return
      }
      const res = s.request(step.op, step.args)
      if (step.label) names.set(res.id, step.label)
      if (expect.ids) assert.deepStrictEqual((Array.isArray(res) ? res : res.messages).map(label), expect.ids, where)
      if (expect.evicted) assert.deepStrictEqual(res.evicted.map(label), expect.evicted, where)
    })
  } finally {
    s.close()
  }
}

// Every case, one sub-test each: rules through checkRule, scenarios on real stores.
const padDoc = readVectors('scratchpad-v1.json')
test('scratchpad-v1.json: counted', () => assert.strictEqual(padDoc.count, padDoc.cases.length))
describeVectors('scratchpad-v1.json', padDoc.cases, {
  run (c) {
    if (c.kind === 'scenario') {
      const dir = tmp()
      try { runScenario(c, dir, 0) } finally { rmSync(dir, { recursive: true, force: true }) }
      return
    }
    const check = asCheck(c)
    assert.ok(check !== null, `${c.id}: unknown kind ${c.kind}: neither executed nor skipped`)
    const [op, args, judge] = check
    let res = null; let err = null
    try { res = pad.checkRule(op, args) } catch (e) { err = e }
    assert.ok(judge(res, err), `${c.id}: ${err ? err.code + ' ' + err.message : JSON.stringify(res)}`)
  },
  done (counts) {
    assert.strictEqual(counts.skipped, 0)
  }
})

test('post, unread once, privacy, tasks and costs against a real store', () => {
  const dir = tmp()
  try {
    const s = pad.openScratchpad({ path: join(dir, 'sub', 'pad.sqlite') })
    assert.strictEqual(s.closed, false)
    s.register({ agent: 'a', team: 'blue' })
    const posted = s.post({ from: 'a', to: 'b', privacy: 'private', content: 'hi ✓', metadata: { n: 1 } })
    assert.match(posted.id, /^[0-9a-f-]{36}$/)
    assert.deepStrictEqual(posted.evicted, [])
    const got = s.unread({ agent: 'b' })
    assert.strictEqual(got.length, 1)
    assert.strictEqual(got[0].content, 'hi ✓')
    assert.deepStrictEqual(got[0].metadata, { n: 1 })
    assert.deepStrictEqual(s.unread({ agent: 'b' }), [], 'read once')
    assert.deepStrictEqual(s.list({ agent: 'c' }).messages, [], 'private stays private')
    const task = s.taskCreate({ creator: 'a', assignee: 'b', title: 'review' })
    assert.strictEqual(task.state, 'submitted')
    assert.strictEqual(s.taskTransition({ id: task.id, by: 'b', to: 'working' }).state, 'working')
    const refused = throwsCode(assert, () => s.taskTransition({ id: task.id, by: 'b', to: 'submitted' }), 'INVALID_TRANSITION')
    assert.match(refused.message, /working/)
    assert.match(refused.message, /submitted/)
    s.taskArtifact({ id: task.id, by: 'b', name: 'notes', content: 'the plan' })
    assert.strictEqual(s.taskArtifacts({ id: task.id, agent: 'a' })[0].content, 'the plan')
    assert.strictEqual(s.taskHistory({ id: task.id, agent: 'b' }).length, 2)
    for (const read of ['taskGet', 'taskHistory', 'taskArtifacts']) {
      throwsCode(assert, () => s[read]({ id: task.id, agent: 'c' }), 'FORBIDDEN')
      throwsCode(assert, () => s[read]({ id: task.id }), 'INVALID_ARGUMENT')
    }
    s.costRecord({ agent: 'a', tool: 'read', input_tokens: 1000, pricing: { input_per_million_micros: 3000000 } })
    assert.strictEqual(s.costList()[0].cost_micros, 3000)
    const snapshot = s.export({ agent: 'a' })
    assert.strictEqual(snapshot.schema_version, 1)
    s.close()
    s.close()
    assert.strictEqual(s.closed, true)
    throwsCode(assert, () => s.list({ agent: 'a' }), 'INVALID_ARGUMENT')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('bad input: stable codes, wrong JS types, nothing stored', () => {
  const dir = tmp()
  try {
    const s = pad.openScratchpad({ path: join(dir, 'pad.sqlite'), maxContentBytes: 16 })
    throwsCode(assert, () => s.post({ from: 'a', content: 'x', ttl_hours: 0 }), 'INVALID_TTL')
    throwsCode(assert, () => s.post({ from: 'a', content: 'x', ttl_hours: 1e300 }), 'INVALID_TTL')
    throwsCode(assert, () => s.post({ from: 'a', content: 'x', ttl_hours: 0.5 }), 'INVALID_TTL')
    throwsCode(assert, () => s.post({ from: 'a', content: 'x', privacy: 'private' }), 'PRIVATE_WITHOUT_RECIPIENT')
    throwsCode(assert, () => s.post({ from: 'a', content: 'x', privacy: 'whisper' }), 'INVALID_ARGUMENT')
    throwsCode(assert, () => s.post({ from: 'a', content: 'x'.repeat(17) }), 'CONTENT_TOO_LARGE')
    throwsCode(assert, () => s.post({ from: 42, content: 'x' }), 'INVALID_ARGUMENT')
    const typo = throwsCode(assert, () => s.post({ from: 'a', to: 'b', Privacy: 'private', content: 'x' }), 'UNKNOWN_KEY')
    assert.match(typo.message, /"Privacy"/)
    throwsCode(assert, () => s.post({ from: 'a', content: 'x', ttl: 1 }), 'UNKNOWN_KEY')
    // A sliced emoji: JSON.stringify writes the lone surrogate as \ud83d, which UTF-8 cannot hold.
    const half = throwsCode(assert, () => s.post({ from: 'a', content: 'smile '.concat('\u{1F600}'.slice(0, 1)) }), 'UNPAIRED_SURROGATE')
    assert.match(half.message, /content/)
    throwsCode(assert, () => s.post({ from: 'a', content: 'x', n: 10n }), 'UNSUPPORTED_VALUE')
    const cyclic = { from: 'a', content: 'x' }; cyclic.self = cyclic
    throwsCode(assert, () => s.post(cyclic), 'UNSUPPORTED_VALUE')
    throwsCode(assert, () => s.post('from=a'), 'INVALID_ARGUMENT')
    throwsCode(assert, () => s.post([1]), 'INVALID_ARGUMENT')
    throwsCode(assert, () => s.request(7, {}), 'INVALID_ARGUMENT')
    throwsCode(assert, () => s.request('nope', {}), 'INVALID_ARGUMENT')
    throwsCode(assert, () => s.taskGet({ id: 'missing', agent: 'a' }), 'NOT_FOUND')
    throwsCode(assert, () => s.list({ agent: 'a', project_root: '' }), 'INVALID_ARGUMENT')
    throwsCode(assert, () => s.events({ agent: 'a', kinds: ['message.post'] }), 'INVALID_ARGUMENT')
    throwsCode(assert, () => s.events({ agent: 'a', after: -1 }), 'INVALID_ARGUMENT')
    assert.deepStrictEqual(s.list({ agent: 'a' }).messages, [], 'no refused post was stored')
    s.close()
    throwsCode(assert, () => pad.openScratchpad({ path: join(dir, 'p2.sqlite'), perProjectCap: 0 }), 'INVALID_ARGUMENT')
    throwsCode(assert, () => pad.openScratchpad({ path: join(dir, 'p2.sqlite'), colour: 'red' }), 'UNKNOWN_KEY')
    throwsCode(assert, () => pad.openScratchpad({ path: 5 }), 'INVALID_ARGUMENT')
    throwsCode(assert, () => pad.openScratchpad(null), 'INVALID_ARGUMENT')
    throwsCode(assert, () => pad.checkRule('post', {}), 'INVALID_ARGUMENT')
    const junk = join(dir, 'junk.sqlite')
    const bytes = 'not a database at all, and it must stay exactly like this, byte for byte'
    writeFileSync(junk, bytes)
    throwsCode(assert, () => pad.openScratchpad({ path: junk }), 'STORE_CORRUPT')
    assert.strictEqual(readFileSync(junk, 'utf8'), bytes, 'the corrupt file was left untouched')
    const link = join(dir, 'linked.sqlite')
    symlinkSync(join(dir, 'elsewhere.sqlite'), link)
    throwsCode(assert, () => pad.openScratchpad({ path: link }), 'STORE_IO')
    assert.strictEqual(existsSync(join(dir, 'elsewhere.sqlite')), false, 'nothing created through the link')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('two Node processes share one store without losing a post', () => {
  const dir = tmp()
  const path = join(dir, 'pad.sqlite')
  const script = `
    const pad = require(${JSON.stringify(join(root, 'bindings-node', 'lib', 'scratchpad.js'))})
    const s = pad.openScratchpad({ path: process.argv[1] })
    for (let i = 0; i < 300; i++) s.post({ from: process.argv[2], content: String(i) })
    s.close()`
  try {
    const { spawn } = require('node:child_process')
    const runs = ['w1', 'w2'].map((who) => new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['-e', script, path, who], { stdio: 'inherit' })
      child.on('exit', (code) => code === 0 ? resolve() : reject(new Error(`${who} exited ${code}`)))
    }))
    return Promise.all(runs).then(() => {
      const s = pad.openScratchpad({ path })
      let n = 0; let after
      for (;;) {
        const page = s.list({ agent: 'reader', limit: 1000, after })
        n += page.messages.length
        if (!page.next) break
        after = page.next
      }
      s.close()
      assert.strictEqual(n, 600)
    }).finally(() => rmSync(dir, { recursive: true, force: true }))
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
})

test('ESM subpath exposes the same names', () => {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e',
    "import * as m from '@ctliz/agent-intercom-core/scratchpad'; console.log(Object.keys(m).sort().join(','))"],
  { cwd: root, encoding: 'utf8' })
  assert.strictEqual(out.trim(), [...Object.keys(pad), 'default'].sort().join(','))
})

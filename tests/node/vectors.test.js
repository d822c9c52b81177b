'use strict'
// Runs vectors/*.json through the package: every pure-rule vector through the public API, the
// JavaScript fast paths against the native core, and the core's own runner. Each vector is a
// sub-test named by its name (or id); counts what ran, skipped and was filtered (AIC_VECTOR).
const test = require('node:test')
const assert = require('node:assert')
const pkg = require('@ctliz/agent-intercom-core')
const { addon } = require('../../bindings-node/lib/native.js')
const { readVectors, throwsCode, describeVectors } = require('./helpers.js')

const WIRE = new Set(['send', 'ask', 'reply', 'cancel_ask', 'defer_ask'])

function label (scope) {
  if (scope === null || scope === undefined) return 'U'
  return scope === pkg.PROTOCOL_V4_SCOPE_A ? 'A' : scope === pkg.PROTOCOL_V4_SCOPE_B ? 'B' : '?'
}

/** Executes one vector through the public API; returns false when skipped. */
function execute (v) {
  switch (v.operation) {
    case 'validate_scope': {
      const hasInput = Object.hasOwn(v, 'scopeInput')
      let jsOutcome
      try {
        jsOutcome = pkg.parseIntercomScopeId(hasInput ? v.scopeInput : undefined) === undefined ? 'valid_unscoped' : 'valid_scoped'
      } catch (error) {
        assert.strictEqual(error.code, 'INVALID_SCOPE')
        assert.match(error.message, /^scopeId must match /)
        jsOutcome = 'invalid_scope'
      }
      assert.strictEqual(jsOutcome, v.expected, v.name)
      // The native path (the core's rule, any JavaScript type) must agree.
      {
        let nativeOutcome
        try {
          nativeOutcome = addon.parseScope(hasInput ? v.scopeInput : undefined, 'scopeId') ? 'valid_scoped' : 'valid_unscoped'
        } catch (error) {
          assert.ok(error instanceof pkg.IntercomError, 'the addon throws an IntercomError')
          assert.strictEqual(error.code, 'INVALID_SCOPE')
          assert.match(error.message, /^scopeId must match /)
          nativeOutcome = 'invalid_scope'
        }
        assert.strictEqual(nativeOutcome, jsOutcome, `native/JS disagree on ${v.name}`)
      }
      return true
    }
    case 'list':
      assert.strictEqual(v.expected, 'visible')
      assert.deepStrictEqual(pkg.listVisibleIntercomSessions({ candidates: v.candidates, actorId: v.actorId, actorScope: v.actorScope }), v.expectedTargetIds, v.name)
      return true
    case 'session_joined':
    case 'session_left':
    case 'presence_update': {
      assert.strictEqual(v.expected, 'visible')
      const ids = pkg.intercomEventAudience({ event: v.operation, candidates: v.candidates, subjectId: v.subjectId, subjectScope: v.subjectScope })
      assert.deepStrictEqual(ids, v.expectedAudienceIds, v.name)
      // An adapter filter narrows, never widens.
      assert.deepStrictEqual(pkg.narrowIntercomAudience(ids, [...ids.slice(1), 'not-a-session']), ids.slice(1))
      return true
    }
    case 'resolve': {
      const r = pkg.resolveIntercomTarget({ candidates: v.candidates, actorScope: v.actorScope, selector: v.selector })
      assert.strictEqual(r.kind, v.expected, v.name)
      assert.deepStrictEqual(r.targetIds, v.expectedTargetIds ?? [], v.name)
      return true
    }
    case 'replace': {
      const plan = pkg.planIntercomReplacement({ sessionId: v.subjectId, oldScope: v.actorScope, newScope: v.subjectScope })
      assert.strictEqual(plan.kind, v.expected, v.name)
      assert.deepStrictEqual(plan.events.map((e) => `${e.kind}:${e.sessionId}:${label(e.scope)}`), v.expectedEvents, v.name)
      return true
    }
    case 'late_frame': {
      // The old connection held generation 1; the replacement installed generation 2.
      const disposition = pkg.intercomFrameDisposition(1, 2)
      assert.strictEqual(disposition, v.expected, v.name)
      assert.deepStrictEqual([], v.expectedEvents)
      assert.strictEqual(pkg.intercomFrameDisposition(2, 2), 'accept')
      return true
    }
    default:
      if (WIRE.has(v.operation)) return false
      throw new Error(`unknown operation ${v.operation} in ${v.name}`)
  }
}

for (const file of ['protocol-v4.json', 'protocol-v4-local.json']) {
  const doc = readVectors(file)
  test(`${file}: counted`, () => assert.strictEqual(doc.vectors.length, doc.count))
  // Through the public API and the core runner.
  describeVectors(file, doc.vectors, {
    id: (v) => v.name,
    run (v) {
      const ran = execute(v)
      const core = addon.runVectorText(JSON.stringify(v))
      if (ran) {
        assert.strictEqual(core, 'pass', `core runner on ${v.name}`)
        return
      }
      assert.match(core, /^skip: /, `core runner on ${v.name}`)
      return core.slice('skip: '.length)
    },
    done (counts) {
      if (file === 'protocol-v4.json') assert.deepStrictEqual([counts.executed, counts.skipped], [43, 5])
    }
  })
}

test('the package vectors are the corpus file and hash to the published hash', () => {
  const doc = readVectors('protocol-v4.json')
  assert.strictEqual(pkg.INTERCOM_PROTOCOL_V4_VECTORS.length, 48)
  assert.deepStrictEqual(JSON.parse(JSON.stringify(pkg.INTERCOM_PROTOCOL_V4_VECTORS)), doc.vectors)
  const hash = pkg.canonicalHash(pkg.INTERCOM_PROTOCOL_V4_VECTORS_HASH_DOMAIN, { version: pkg.INTERCOM_PROTOCOL_V4_VECTOR_SCHEMA_VERSION, vectors: pkg.INTERCOM_PROTOCOL_V4_VECTORS })
  assert.strictEqual(hash, 'ef23cae55b3cca7683fee60e5f2421350cde731dc5424c82286a33a8b9cdf6cb')
  assert.strictEqual(pkg.INTERCOM_PROTOCOL_V4_SEMANTICS_HASH, hash)
  assert.strictEqual(doc.semanticsHash, hash)
})

const canonicalDoc = readVectors('canonical.json')
test('canonical.json: counted', () => assert.strictEqual(canonicalDoc.cases.length, canonicalDoc.count))
let reference
// Known answers: text API, value API, and an independent JS reference.
describeVectors('canonical.json', canonicalDoc.cases, {
  async run (c) {
    reference ??= await import('./reference.mjs')
    const domain = c.domain ?? 'agent-intercom-test'
    if (c.json !== undefined) {
      if (c.error) {
        throwsCode(assert, () => pkg.canonicalHashFromText(domain, c.json), c.error)
        // The value path sees JSON.parse's result; a repeated key is already gone there.
        if (!c.textOnly) throwsCode(assert, () => pkg.canonicalHash(domain, JSON.parse(c.json)), c.error)
      } else {
        assert.strictEqual(pkg.canonicalJsonFromText(c.json), c.canonical, c.id)
        assert.strictEqual(pkg.canonicalHashFromText(domain, c.json), c.hash, c.id)
        const value = JSON.parse(c.json)
        assert.strictEqual(pkg.canonicalJson(value), c.canonical, c.id)
        assert.strictEqual(pkg.canonicalHash(domain, value), c.hash, c.id)
        assert.strictEqual(reference.canonicalHash(domain, value), c.hash, `reference on ${c.id}`)
        const frame = pkg.canonicalFrame(domain, value)
        assert.ok(frame instanceof Uint8Array)
        assert.deepStrictEqual(Buffer.from(frame), reference.canonicalFrame(domain, value))
      }
    } else if (c.js !== undefined) {
      // eslint-disable-next-line no-new-func
      const value = new Function(`return (${c.js})`)()
      const error = throwsCode(assert, () => pkg.canonicalHash('agent-intercom-test', value), c.error)
      throwsCode(assert, () => pkg.canonicalJson(value), c.error)
      assert.ok(error.message.startsWith('$'), `message names a path: ${error.message}`)
    } else {
      return 'neither json nor js'
    }
  },
  done (counts) {
    assert.strictEqual(counts.skipped, 0)
  }
})

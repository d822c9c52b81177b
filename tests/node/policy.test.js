'use strict'
// The policy kernel through the package: vectors/policy-v2.json (one sub-test per vector,
// counted; AIC_VECTOR selects), the semantics hash, the root's names, and the behaviour the
// TypeScript core has and the places where ours is deliberately stricter (docs/policy.md).
const test = require('node:test')
const assert = require('node:assert/strict')
const { createHash } = require('node:crypto')
const { readFileSync } = require('node:fs')
const { join } = require('node:path')
const policy = require('@ctliz/agent-intercom-core/policy')
const vectors = require('@ctliz/agent-intercom-core/vectors')
const root = require('@ctliz/agent-intercom-core')
const { ContractValidationError } = require('../../bindings-node/lib/contract.js')
const { root: repo, readVectors, describeVectors } = require('./helpers.js')

const { authorize, isAncestor, isDirectParentPair, revokeSubtree, adoptSubtree } = policy
const { POLICY_VECTORS, stateForVector, POLICY_SEMANTICS_HASH, POLICY_VECTOR_SCHEMA_VERSION } = vectors

/** The published hash (the known answer; the package computes it in the core). */
const PUBLISHED_HASH = 'f3b00e503631bc91123aedfbcf1df72cc9913e1893c09728b2c598f3dcdfdfe0'

const label = (decision) => (decision.allowed ? decision.reason : decision.code)

describeVectors('policy-v2.json', readVectors('policy-v2.json').vectors, {
  id: (v) => v.name,
  run (v) {
    const decision = authorize(stateForVector(v), v.actorId, v.action, v.targetId, v.context)
    assert.equal(decision.allowed, v.expectedAllowed)
    assert.equal(label(decision), v.expectedReasonOrCode)
    assert.deepEqual(Object.keys(decision), ['allowed', decision.allowed ? 'reason' : 'code'])
  },
  done (counts) {
    assert.deepEqual([counts.executed, counts.skipped], [12, 0])
  },
})

test('the semantics hash is the SHA-256 of the corpus text, computed by the core', () => {
  const file = readFileSync(join(repo, 'vectors', 'policy-v2.json'), 'utf8')
  const payload = JSON.stringify({ version: POLICY_VECTOR_SCHEMA_VERSION, vectors: POLICY_VECTORS })
  assert.equal(payload, file)
  assert.equal(createHash('sha256').update(payload).digest('hex'), POLICY_SEMANTICS_HASH)
  assert.equal(POLICY_SEMANTICS_HASH, PUBLISHED_HASH)
  assert.equal(policy.POLICY_SEMANTICS_VERSION, 2)
  assert.equal(POLICY_VECTOR_SCHEMA_VERSION, 2)
  assert.equal(POLICY_VECTORS.length, 12)
})

/** The runtime names of the TypeScript core's root (src/index.ts: policy, policy-vectors,
 * team-manifest), written out so that a change on either side is seen. */
const TS_ROOT_NAMES = [
  'MAX_TEAM_MANIFEST_BYTES', 'MAX_TEAM_MANIFEST_MEMBERS', 'POLICY_SEMANTICS_HASH',
  'POLICY_SEMANTICS_VERSION', 'POLICY_VECTORS', 'POLICY_VECTOR_SCHEMA_VERSION',
  'TMUXDECK_TEAM_MANIFEST_BACKEND', 'TMUXDECK_TEAM_MANIFEST_VERSION', 'TeamManifestError',
  'adoptSubtree', 'authorize', 'isAncestor', 'isDirectParentPair', 'parseTeamManifest',
  'readTeamManifest', 'readTeamManifestAsync', 'revokeSubtree', 'stateForVector',
]
/** Our own root names beyond the TypeScript root's modules. */
const OWN_ROOT_NAMES = ['IntercomError', 'AGENT_INTERCOM_CORE_VERSION', 'INTERCOM_ERROR_CODES']

test('the root has every name of the TypeScript root, and no two modules share a name', () => {
  const teamManifest = require('@ctliz/agent-intercom-core/team-manifest')
  const modules = {
    policy,
    vectors,
    teamManifest,
    protocolV4: require('@ctliz/agent-intercom-core/protocol-v4'),
    canonical: require('@ctliz/agent-intercom-core/canonical'),
    drift: require('../../bindings-node/lib/drift.js'),
    own: Object.fromEntries(OWN_ROOT_NAMES.map((name) => [name, root[name]])),
  }
  const owner = new Map()
  for (const [module, exports] of Object.entries(modules)) {
    for (const name of Object.keys(exports)) {
      assert.ok(!owner.has(name), `${name} is exported by both ${owner.get(name)} and ${module}`)
      owner.set(name, module)
      assert.equal(root[name], exports[name], `root.${name} is ${module}'s`)
    }
  }
  assert.deepEqual(Object.keys(root).sort(), [...owner.keys()].sort())
  // The team manifest's names arrive with its module (a placeholder until it lands).
  const pending = Object.keys(teamManifest).length === 0 ? new Set(Object.keys(TS_TEAM_NAMES)) : new Set()
  for (const name of TS_ROOT_NAMES) {
    if (pending.has(name)) continue
    assert.ok(Object.hasOwn(root, name), `root lacks ${name}`)
  }
  for (const name of ['authorize', 'isAncestor', 'isDirectParentPair', 'revokeSubtree', 'adoptSubtree', 'POLICY_SEMANTICS_VERSION']) {
    assert.equal(root[name], policy[name])
  }
  for (const name of ['POLICY_VECTORS', 'stateForVector', 'POLICY_VECTOR_SCHEMA_VERSION', 'POLICY_SEMANTICS_HASH']) {
    assert.equal(root[name], vectors[name])
  }
})

const TS_TEAM_NAMES = {
  MAX_TEAM_MANIFEST_BYTES: 1,
  MAX_TEAM_MANIFEST_MEMBERS: 1,
  TMUXDECK_TEAM_MANIFEST_BACKEND: 1,
  TMUXDECK_TEAM_MANIFEST_VERSION: 1,
  TeamManifestError: 1,
  parseTeamManifest: 1,
  readTeamManifest: 1,
  readTeamManifestAsync: 1,
}

function principal (input) {
  return { kind: 'remote', state: 'active', generation: 1, policy: 'remote-tree', rootSessionId: 'root', ...input }
}

function hierarchy () {
  const list = [
    principal({ id: 'root', kind: 'local', policy: 'local-public' }),
    principal({ id: 'manager', parentSessionId: 'root' }),
    principal({ id: 'lead', parentSessionId: 'manager' }),
    principal({ id: 'worker', parentSessionId: 'lead' }),
  ]
  return { principals: Object.fromEntries(list.map((p) => [p.id, p])) }
}

test('ancestry and direct parents', () => {
  const state = hierarchy()
  assert.equal(isAncestor(state, 'root', 'worker'), true)
  assert.equal(isAncestor(state, 'worker', 'root'), false)
  assert.equal(isAncestor(state, 'worker', 'worker'), false)
  state.principals.root.parentSessionId = 'worker'
  assert.equal(isAncestor(state, 'unrelated', 'worker'), false)
  assert.equal(isDirectParentPair(state.principals.lead, state.principals.worker), true)
  assert.equal(isDirectParentPair(state.principals.worker, state.principals.lead), true)
  assert.equal(isDirectParentPair(state.principals.manager, state.principals.worker), false)
})

test('transitions work on a copy, breadth-first, one generation up', () => {
  const state = hierarchy()
  state.principals.sibling = principal({ id: 'sibling', parentSessionId: 'manager' })
  const before = structuredClone(state)
  const revoked = revokeSubtree(state, 'manager')
  assert.deepEqual(revoked.changedPrincipalIds, ['manager', 'lead', 'sibling', 'worker'])
  assert.deepEqual(state, before)
  assert.equal(revoked.state.principals.worker.state, 'revoked')
  assert.equal(revoked.state.principals.worker.generation, 2)
  assert.deepEqual(revoked.state.principals.root, state.principals.root)
  assert.deepEqual(revokeSubtree(state, 'ghost'), { state: before, changedPrincipalIds: [] })
  state.principals.other = principal({ id: 'other', kind: 'local', policy: 'local-public', rootSessionId: 'other' })
  const adopted = adoptSubtree(state, 'lead', 'other', 'other')
  assert.deepEqual(adopted.changedPrincipalIds, ['lead', 'worker'])
  assert.deepEqual(adopted.state.principals.lead, { ...state.principals.lead, parentSessionId: 'other', rootSessionId: 'other', generation: 2 })
  assert.equal(state.principals.lead.parentSessionId, 'manager')
})

test('adoption refuses with the TypeScript messages, as plain Errors', () => {
  const state = hierarchy()
  const refuses = (args, message) => assert.throws(() => adoptSubtree(state, ...args), (error) => {
    assert.equal(error.constructor, Error)
    assert.equal(error.message, message)
    return true
  })
  refuses(['ghost', 'root', 'root'], 'Unknown principal: ghost')
  refuses(['lead', 'nobody', 'root'], 'Unknown parent principal: nobody')
  refuses(['manager', 'worker', 'root'], 'Adoption would create an ownership cycle')
  refuses(['lead', 'lead', 'root'], 'Adoption would create an ownership cycle')
})

test('the decision order: unknown, revoked, stale, then the rules', () => {
  const state = hierarchy()
  assert.deepEqual(authorize(state, 'ghost', 'send', 'root'), { allowed: false, code: 'UNKNOWN_PRINCIPAL' })
  state.principals.worker.state = 'revoked'
  assert.deepEqual(authorize(state, 'worker', 'send', 'worker', { actorGeneration: 5 }), { allowed: false, code: 'REVOKED_PRINCIPAL' })
  assert.deepEqual(authorize(state, 'lead', 'send', 'lead', { targetGeneration: 5 }), { allowed: false, code: 'STALE_GENERATION' })
  assert.deepEqual(authorize(state, 'lead', 'delegate_child', 'lead', { actorGeneration: 1 }), { allowed: true, reason: 'self' })
  assert.deepEqual(authorize(state, 'manager', 'revoke', 'lead'), { allowed: true, reason: 'ancestor-control' })
  assert.deepEqual(authorize(state, 'lead', 'revoke', 'manager'), { allowed: false, code: 'POLICY_DENIED' })
  assert.equal(authorize.length, 4, 'context is optional, as in TypeScript')
})

test('stateForVector gives a fresh state on every call', () => {
  const v = POLICY_VECTORS[3]
  const a = stateForVector(v)
  const b = stateForVector(v)
  assert.notEqual(a, b)
  assert.deepEqual(a, b)
  a.principals['remote-child'].generation = 99
  assert.equal(stateForVector(v).principals['remote-child'].generation, 1)
  assert.deepEqual(Object.keys(a.principals), v.principals.map((p) => p.id))
})

test('prototype members are never principals (TypeScript reads through the prototype)', () => {
  // TypeScript answers REVOKED_PRINCIPAL here (Object.prototype.toString has no state "active").
  assert.deepEqual(authorize({ principals: {} }, 'toString', 'send', 'toString'), { allowed: false, code: 'UNKNOWN_PRINCIPAL' })
  assert.equal(isAncestor({ principals: {} }, 'constructor', '__proto__'), false)
  assert.deepEqual(revokeSubtree({ principals: {} }, 'constructor').changedPrincipalIds, [])
  assert.throws(() => adoptSubtree(hierarchy(), 'lead', 'hasOwnProperty', 'root'), /^Error: Unknown parent principal: hasOwnProperty$/)
  // A null-prototype principals map is read like a plain one.
  const bare = Object.assign(Object.create(null), hierarchy().principals)
  assert.deepEqual(authorize({ principals: bare }, 'worker', 'send', 'root'), { allowed: true, reason: 'ancestor-chain' })
})

test('malformed arguments are refused with a path, never read through', () => {
  const refused = (fn, message) => assert.throws(fn, (error) => {
    assert.ok(error instanceof ContractValidationError, `${error}`)
    assert.equal(error.message, message)
    return true
  })
  refused(() => authorize(undefined, 'a', 'send', 'b'), '$.state: must be a plain object')
  refused(() => authorize({}, 'a', 'send', 'b'), '$.state.principals: is required')
  refused(() => authorize({ principals: null }, 'a', 'send', 'b'), '$.state.principals: must be a plain object')
  refused(() => authorize(hierarchy(), 'root', 'control', 'root'),
    '$.action: must be one of: discover, send, ask, reply, inspect_tree, delegate_child, revoke, adopt')
  refused(() => authorize(hierarchy(), 1, 'send', 'root'), '$.actorId: must be a string')
  refused(() => authorize(hierarchy(), 'root', 'send', 'root', null), '$.context: must be a plain object')
  refused(() => authorize(hierarchy(), 'root', 'send', 'root', { actorGen: 1 }), '$.context.actorGen: is not supported')
  refused(() => authorize(hierarchy(), 'root', 'send', 'root', { actorGeneration: '1' }), '$.context.actorGeneration: must be a safe integer >= 0')
  const state = hierarchy()
  state.principals.lead.state = 'paused'
  refused(() => authorize(state, 'root', 'send', 'root'), '$.state.principals.lead.state: must be one of: active, revoked')
  const extra = hierarchy()
  extra.principals.lead.note = 'x'
  refused(() => revokeSubtree(extra, 'lead'), '$.state.principals.lead.note: is not supported')
  let ran = false
  const getter = hierarchy()
  Object.defineProperty(getter.principals, 'spy', { enumerable: true, get () { ran = true; return principal({ id: 'spy' }) } })
  refused(() => authorize(getter, 'root', 'send', 'root'), '$.state.principals.spy: must be an enumerable data property')
  assert.equal(ran, false, 'the getter never ran')
  refused(() => authorize({ principals: new Proxy({}, {}) }, 'a', 'send', 'b'), '$.state.principals: must be a plain object')
  refused(() => adoptSubtree(hierarchy(), 'lead', 'root', ''), '$.newRootSessionId: must be a non-empty string')
  // parentSessionId: undefined is absent, as an adapter building principals may write it.
  const loose = hierarchy()
  loose.principals.root.parentSessionId = undefined
  assert.deepEqual(authorize(loose, 'worker', 'send', 'root'), { allowed: true, reason: 'ancestor-chain' })
})

'use strict'
// Runs vectors/boss-policy-v1.json and vectors/feature-routing-v1.json through the package (one
// sub-test per vector, counted; AIC_VECTOR=<name substring> selects), and checks the
// ./boss/policy subpath's constants, parsers and refusals against the TypeScript contract.
const test = require('node:test')
const assert = require('node:assert')
const bossPolicy = require('@ctliz/agent-intercom-core/boss/policy')
const feature = require('../../bindings-node/boss/feature.js')
const vectors = require('../../bindings-node/boss/vectors.js')
const { call, ContractValidationError } = require('../../bindings-node/lib/contract.js')
const { readVectors, describeVectors } = require('./helpers.js')

const policyFile = readVectors('boss-policy-v1.json')
const routingFile = readVectors('feature-routing-v1.json')

describeVectors('boss-policy-v1.json', policyFile.vectors, {
  id: (v) => v.name,
  run (v) {
    const state = vectors.bossPolicyStateForVector(v)
    const decision = bossPolicy.authorizeBossPolicy(state, v.actorId, v.action, v.targetId, v.context)
    assert.strictEqual(decision.allowed, v.expectedAllowed)
    assert.strictEqual(decision.allowed ? decision.reason : decision.code, v.expectedReasonOrCode)
  },
  done (counts) {
    assert.strictEqual(counts.executed, 523)
  },
})

describeVectors('feature-routing-v1.json', routingFile.vectors, {
  id: (v) => v.name,
  run (v) {
    // The core builds the scenario the vector names; the public function decides it.
    const { entryPoint, args, expected } = call('boss.featureRoutingCaseForVector', [v])
    const run = () => feature[entryPoint](...args)
    if (expected.throws) {
      assert.throws(run, (e) => e instanceof ContractValidationError && e.name === expected.throws)
      return
    }
    const decision = run()
    assert.strictEqual(decision.allowed, expected.allowed)
    if (expected.reason) assert.strictEqual(decision.reason, expected.reason)
    if (expected.code) assert.strictEqual(decision.code, expected.code)
  },
  done (counts) {
    assert.strictEqual(counts.executed, 45)
  },
})

test('the corpora are the shipped files and hash to the published values', () => {
  assert.deepStrictEqual(vectors.BOSS_POLICY_VECTORS, policyFile.vectors)
  assert.deepStrictEqual(vectors.FEATURE_ROUTING_VECTORS, routingFile.vectors)
  assert.strictEqual(vectors.BOSS_ROLE_EDGE_VECTORS.length, 49)
  assert.strictEqual(vectors.BOSS_CONTROL_EDGE_VECTORS.length, 441)
  assert.strictEqual(vectors.BOSS_POLICY_VECTOR_SCHEMA_VERSION, 1)
  assert.strictEqual(vectors.FEATURE_ROUTING_VECTOR_SCHEMA_VERSION, 1)
  assert.strictEqual(vectors.BOSS_POLICY_SEMANTICS_HASH, '5fe94cc2c81bba8b50c6d6cd31487231ebfa10ee2d05495c2b088b12e2958dfa')
  assert.strictEqual(vectors.FEATURE_ROUTING_SEMANTICS_HASH, 'e8ddde569a188a122b6ba0e257e23ba203bbf0897dcb3c84994be3390e26e63f')
  assert.strictEqual(policyFile.semanticsHash, vectors.BOSS_POLICY_SEMANTICS_HASH)
})

test('./boss/policy has the TypeScript names and constants', () => {
  assert.deepStrictEqual(Object.keys(bossPolicy).sort(), [
    'BOSS_CONTROL_KINDS', 'BOSS_DIRECTIONAL_CONTROL_KIND_MATRIX', 'BOSS_POLICY_ACTIONS',
    'BOSS_POLICY_PRINCIPAL_VERSION', 'BOSS_POLICY_ROLES', 'BOSS_POLICY_SEMANTICS_VERSION',
    'authorizeBossPolicy', 'parseBossPolicyPrincipal',
  ])
  assert.strictEqual(bossPolicy.BOSS_POLICY_SEMANTICS_VERSION, 1)
  assert.strictEqual(bossPolicy.BOSS_POLICY_PRINCIPAL_VERSION, 'boss.policy-principal.v1')
  assert.deepStrictEqual(bossPolicy.BOSS_POLICY_ACTIONS, ['discover', 'send', 'ask', 'reply', 'control'])
  assert.deepStrictEqual(bossPolicy.BOSS_DIRECTIONAL_CONTROL_KIND_MATRIX.council, { boss: ['health', 'review_result'], controller: ['health', 'review_result'] })
  assert.deepStrictEqual(feature.LEGACY_POLICY_ACTIONS, ['discover', 'send', 'ask', 'reply', 'inspect_tree', 'delegate_child', 'revoke', 'adopt'])
})

test('parseBossPolicyPrincipal returns a fresh record and throws the contract messages', () => {
  const principal = vectors.bossPolicyStateForVector(policyFile.vectors[0]).principals.manager
  const parsed = bossPolicy.parseBossPolicyPrincipal(principal)
  assert.notStrictEqual(parsed, principal)
  assert.deepStrictEqual(parsed, principal)
  assert.throws(() => bossPolicy.parseBossPolicyPrincipal({ ...principal, assignedParticipantIds: ['a', 'a'] }),
    { name: 'ContractValidationError', path: '$.assignedParticipantIds', message: '$.assignedParticipantIds: must not contain duplicates' })
  let touched = false
  const accessor = { ...principal }
  Object.defineProperty(accessor, 'role', { enumerable: true, get () { touched = true; return 'manager' } })
  assert.throws(() => bossPolicy.parseBossPolicyPrincipal(accessor), { message: '$.role: must be an enumerable data property' })
  assert.strictEqual(touched, false)
})

test('authorizeBossPolicy never throws and denies in the TypeScript order', () => {
  const state = vectors.bossPolicyStateForVector(policyFile.vectors[0])
  const epochs = { actorBindingEpoch: 1, targetBindingEpoch: 1 }
  assert.deepStrictEqual(bossPolicy.authorizeBossPolicy(state, 'boss', 'fly', 'manager', epochs), { allowed: false, code: 'POLICY_DENIED' })
  assert.deepStrictEqual(bossPolicy.authorizeBossPolicy(state, 1, 'send', 'manager', epochs), { allowed: false, code: 'UNKNOWN_PRINCIPAL' })
  assert.deepStrictEqual(bossPolicy.authorizeBossPolicy(state, 'boss', 'send', 'manager'), { allowed: false, code: 'STALE_BINDING_EPOCH' })
  assert.deepStrictEqual(bossPolicy.authorizeBossPolicy(new Proxy(state, {}), 'boss', 'send', 'manager', epochs), { allowed: false, code: 'UNKNOWN_PRINCIPAL' })
  const cyclic = { principals: {} }
  cyclic.principals.self = cyclic
  assert.deepStrictEqual(bossPolicy.authorizeBossPolicy(cyclic, 'boss', 'send', 'manager', epochs), { allowed: false, code: 'POLICY_DENIED' })
  assert.deepStrictEqual(bossPolicy.authorizeBossPolicy(state, 'boss', 'send', 'manager', epochs), { allowed: true, reason: 'communication-profile' })
})

test('feature parsers are exact and keep the caller\'s feature contract', () => {
  const { args } = call('boss.featureRoutingCaseForVector', [routingFile.vectors.find((v) => v.name === 'Boss peers use run-scoped policy')])
  const registration = args[0].registrations.boss
  const parsed = feature.parseFeatureRegistration(registration)
  assert.notStrictEqual(parsed, registration)
  assert.deepStrictEqual(parsed, registration)
  assert.strictEqual(parsed.featureContract, registration.featureContract)
  assert.throws(() => feature.parseFeatureRegistration({ ...registration, extra: 1 }, '$.r'), { message: '$.r.extra: is not supported' })
  assert.throws(() => feature.parseFeatureRegistration({ ...registration, featureContract: { ...registration.featureContract, version: 2 } }),
    { message: '$.version: unsupported Boss feature version: 2' })
  const request = { actorId: 'a', targetId: 'b', action: 'x', bossContext: { correlated: true } }
  assert.deepStrictEqual(feature.parseFeatureAwareAuthorizationRequest(request), request)
  assert.throws(() => feature.parseFeatureAwareAuthorizationRequest({ ...request, actorId: 'a b' }),
    { message: '$.actorId: identifier must not contain ASCII whitespace or control characters' })
})

// Benchmarks the TypeScript core's contract functions (policy, team manifest, canonical readers,
// Boss records and policies) in this package against the TypeScript core 0.2.0 itself, on the same
// inputs, and prints a Markdown table. Not a test: nothing here asserts a time.
//
//   npm run build
//   node bench/contract.bench.mjs --ts-core DIR [--quick] [--cpu]   (--cpu: CPU time, bench/measure.mjs)
//
// DIR is the TypeScript core's built `dist/` folder (an export of ctliz/agent-intercom-core with
// `npx tsc -p tsconfig.build.json` run in it). Nothing of it is part of this repository.
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { timer, fmt, loadavg } from './measure.mjs'
import { teamManifest } from './inputs.mjs'

const require = createRequire(import.meta.url)
const args = process.argv.slice(2)
const measure = timer(args.includes('--quick'), args.includes('--cpu'))
const at = args.indexOf('--ts-core')
if (at < 0 || !args[at + 1]) {
  console.error('usage: node bench/contract.bench.mjs --ts-core DIR [--quick]  (DIR: the TypeScript core\'s dist/)')
  process.exit(2)
}
const tsDir = resolve(args[at + 1])
const tsModule = (name) => import(pathToFileURL(join(tsDir, `${name}.js`)).href)

const ours = {
  root: require('../bindings-node/index.js'),
  canonical: require('../bindings-node/canonical/index.js'),
  boss: require('../bindings-node/boss/index.js'),
  bossPolicy: require('../bindings-node/boss/policy.js'),
  team: require('../bindings-node/team-manifest/index.js'),
}
const theirs = {
  root: await tsModule('index'),
  canonical: await tsModule('canonical'),
  boss: await tsModule('boss'),
  bossPolicy: await tsModule('boss-policy'),
  team: await tsModule('team-manifest'),
}

function swallow (f) { return () => { try { f() } catch { /* the throw is what is measured */ } } }

/** Each case: [name, (impl) => () => work]; built for both implementations from the same inputs. */
function cases (m) {
  const out = []
  const v = m.root.POLICY_VECTORS
  const states = v.map((x) => m.root.stateForVector(x))
  out.push(['authorize (12 policy vectors, one batch)', () => {
    for (let i = 0; i < v.length; i++) m.root.authorize(states[i], v[i].actorId, v[i].action, v[i].targetId, v[i].context)
  }])
  out.push(['revokeSubtree (vector 0 state)', () => m.root.revokeSubtree(states[0], v[0].actorId)])
  const manifest = teamManifest(m.team)
  const manifestText = JSON.stringify(manifest)
  out.push(['parseTeamManifest (object, 2 members)', () => m.team.parseTeamManifest(manifest)])
  out.push(['parseTeamManifest (JSON text)', () => m.team.parseTeamManifest(manifestText)])
  out.push(['readTimestamp', () => m.canonical.readTimestamp('2026-12-01T12:00:00.000Z', '$.at')])
  out.push(['readTimestamp (invalid, throws)', swallow(() => m.canonical.readTimestamp('2026-02-30T12:00:00.000Z', '$.at'))])
  const record = { a: 1, b: 'x', c: true }
  out.push(['assertExactKeys (3 keys)', () => m.canonical.assertExactKeys(record, ['a', 'b'], ['c'], '$')])
  out.push(['canonicalHash (Boss feature contract)', () => m.canonical.canonicalHash('bench/v1', m.boss.BOSS_RUN_FEATURE_CONTRACT)])
  out.push(['parseBossRunFeatureContract', () => m.boss.parseBossRunFeatureContract(m.boss.BOSS_RUN_FEATURE_CONTRACT)])
  const features = [{
    version: m.boss.BROKER_FEATURE_ATTESTATION_VERSION,
    feature: m.boss.BOSS_RUN_FEATURE,
    featureVersion: m.boss.BOSS_RUN_FEATURE_VERSION,
    semanticsHash: m.boss.BOSS_RUN_FEATURE_SEMANTICS_HASH,
    controlEnvelopeVersion: m.boss.BOSS_CONTROL_ENVELOPE_VERSION,
    capabilityDigest: m.boss.BOSS_CAPABILITY_FEATURE_DIGEST,
  }]
  out.push(['brokerFeatureSetHash ([])', () => m.boss.brokerFeatureSetHash([])])
  out.push(['brokerFeatureSetHash ([boss-run-v1])', swallow(() => m.boss.brokerFeatureSetHash(features))])
  const dormant = { baseProtocolVersion: m.boss.INTERCOM_BASE_PROTOCOL_VERSION, features: [] }
  out.push(['parseBrokerCapabilityAdvertisement (dormant)', () => m.boss.parseBrokerCapabilityAdvertisement(dormant)])
  out.push(['evaluateBrokerCompatibility (ordinary)', () => m.boss.evaluateBrokerCompatibility(
    { mode: 'ordinary', supportedBaseProtocolVersions: [4] }, dormant)])
  const bv = m.boss.BOSS_POLICY_VECTORS
  const bstates = bv.map((x) => m.boss.bossPolicyStateForVector(x))
  out.push([`authorizeBossPolicy (${bv.length} vectors, one batch)`, () => {
    for (let i = 0; i < bv.length; i++) m.bossPolicy.authorizeBossPolicy(bstates[i], bv[i].actorId, bv[i].action, bv[i].targetId, bv[i].context)
  }])
  out.push(['workerIdentityFromEnvironment (no Boss keys)', swallow(() => m.boss.workerIdentityFromEnvironment({ PATH: '/usr/bin', HOME: '/root' }))])
  out.push(['parseParticipantState', () => m.boss.parseParticipantState('ready')])
  // The heavier validators and authorizers of issue 11, on each implementation's own corpus.
  const transitions = m.boss.PARTICIPANT_STATE_TRANSITION_VECTOR_CORPUS.transitionVectors
  out.push([`validateParticipantStateTransition (${transitions.length} vectors, one batch)`, () => {
    for (const t of transitions) swallow(() => m.boss.validateParticipantStateTransition(t.input))()
  }])
  const migrations = m.boss.FULL_WORKER_STORE_MIGRATION_VECTORS
  out.push([`migrateFullWorkerStoreV1 (${migrations.length} vectors, one batch)`, () => {
    for (const w of migrations) m.boss.migrateFullWorkerStoreV1(w.input)
  }])
  const acl = m.boss.SUPERVISOR_ACL_VECTORS
  const aclState = m.boss.stateForSupervisorAclVector()
  out.push([`authorizeSupervisorSubscription (${acl.length} vectors, one batch)`, () => {
    for (const v of acl) m.boss.authorizeSupervisorSubscription(aclState, v.request)
  }])
  out.push(['parseLifecycleSubscription', () => m.boss.parseLifecycleSubscription(m.boss.MANAGER_WORKER_SUBSCRIPTION_VECTOR)])
  out.push(['parseSubscriberRebindMigration (committed)', () => m.boss.parseSubscriberRebindMigration(m.boss.COMMITTED_REBIND_MIGRATION_VECTOR)])
  return out
}

const mine = cases(ours)
const twin = cases(theirs)
const version = ours.root.AGENT_INTERCOM_CORE_VERSION
console.log(`node ${process.version}, ${process.platform}-${process.arch}, @ctliz/agent-intercom-core ${version} vs the TypeScript core 0.2.0; ${args.includes('--cpu') ? 'CPU' : 'wall'} time per call; ${await loadavg()}\n`)
console.log('| function | package (Rust core) | TypeScript core | TypeScript / package |')
console.log('| --- | ---: | ---: | ---: |')
for (let i = 0; i < mine.length; i++) {
  const [name, fnOurs] = mine[i]
  const fnTheirs = twin[i][1]
  const a = measure(fnOurs)
  const b = measure(fnTheirs)
  console.log(`| ${name} | ${fmt(a)} | ${fmt(b)} | ${(b / a).toFixed(2)}x |`)
}
console.log(`\n${await loadavg()} at the end`)

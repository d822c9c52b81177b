// Benchmarks every ./protocol-v4 and ./canonical function of the package against the
// straightforward pure-JavaScript implementation in tests/node/reference.mjs, in one run, and prints a
// Markdown table. Not a test: nothing here asserts a time.
//
//   npm run build && node bench/protocol-v4.bench.mjs [--quick] [--cpu]   (--cpu: CPU time, bench/measure.mjs)
import { createRequire } from 'node:module'
import * as ref from '../tests/node/reference.mjs'
import { timer, fmt, loadavg } from './measure.mjs'

const require = createRequire(import.meta.url)
const pkg = require('../bindings-node/index.js')
const measure = timer(process.argv.includes('--quick'), process.argv.includes('--cpu'))
const A = pkg.PROTOCOL_V4_SCOPE_A
const corpus = { version: pkg.INTERCOM_PROTOCOL_V4_VECTOR_SCHEMA_VERSION, vectors: pkg.INTERCOM_PROTOCOL_V4_VECTORS }
const unfrozen = JSON.parse(JSON.stringify(corpus)) // same data, not frozen: no reuse of checks or texts
const domain = pkg.INTERCOM_PROTOCOL_V4_VECTORS_HASH_DOMAIN
const candidates = pkg.INTERCOM_PROTOCOL_V4_VECTORS[12].candidates
const small = { b: 2, a: 1 }
const env = { AGENT_INTERCOM_SCOPE_ID: A }

function swallow (f) { return () => { try { f() } catch { /* the throw is what is measured */ } } }

const cases = [
  ['parseIntercomScopeId (valid)', () => pkg.parseIntercomScopeId(A), () => ref.parseIntercomScopeId(A)],
  ['parseIntercomScopeId (invalid, throws)', swallow(() => pkg.parseIntercomScopeId('bad scope')), swallow(() => ref.parseIntercomScopeId('bad scope'))],
  ['intercomScopeIdFromEnv', () => pkg.intercomScopeIdFromEnv(env), () => ref.intercomScopeIdFromEnv(env)],
  ['sameIntercomScope', () => pkg.sameIntercomScope(A, 'Scope_BBBBBBBBBB'), () => ref.sameIntercomScope(A, 'Scope_BBBBBBBBBB')],
  ['resolveIntercomTarget (9 candidates)', () => pkg.resolveIntercomTarget({ candidates, actorScope: A, selector: 'abcde1' }), () => ref.resolveIntercomTarget({ candidates, actorScope: A, selector: 'abcde1' })],
  ['listVisibleIntercomSessions (9)', () => pkg.listVisibleIntercomSessions({ candidates, actorId: candidates[0].id, actorScope: A }), () => ref.listVisibleIntercomSessions({ candidates, actorId: candidates[0].id, actorScope: A })],
  ['intercomEventAudience (9)', () => pkg.intercomEventAudience({ event: 'session_joined', candidates, subjectId: candidates[1].id, subjectScope: A }), () => ref.intercomEventAudience({ candidates, subjectId: candidates[1].id, subjectScope: A })],
  ['canonicalJson {b,a}', () => pkg.canonicalJson(small), () => ref.canonicalJson(small)],
  ['canonicalHash {b,a}', () => pkg.canonicalHash('boss-test-v1', small), () => ref.canonicalHash('boss-test-v1', small)],
  ['canonicalJson (48-vector corpus)', () => pkg.canonicalJson(corpus), () => ref.canonicalJson(corpus)],
  ['canonicalFrame (48-vector corpus)', () => pkg.canonicalFrame(domain, corpus), () => ref.canonicalFrame(domain, corpus)],
  ['canonicalHash (48-vector corpus)', () => pkg.canonicalHash(domain, corpus), () => ref.canonicalHash(domain, corpus)],
  ['canonicalJson (corpus, unfrozen copy)', () => pkg.canonicalJson(unfrozen), () => ref.canonicalJson(unfrozen)],
  ['canonicalHash (corpus, unfrozen copy)', () => pkg.canonicalHash(domain, unfrozen), () => ref.canonicalHash(domain, unfrozen)],
]

// Both implementations must agree before they are timed.
if (pkg.canonicalHash(domain, corpus) !== ref.canonicalHash(domain, corpus)) throw new Error('implementations disagree')

console.log(`node ${process.version}, ${process.platform}-${process.arch}, @ctliz/agent-intercom-core ${pkg.AGENT_INTERCOM_CORE_VERSION}; ${process.argv.includes('--cpu') ? 'CPU' : 'wall'} time per call; ${await loadavg()}`)
console.log('')
console.log('| function | package (Rust core) | pure JS | pure JS / package |')
console.log('| --- | ---: | ---: | ---: |')
for (const [name, ours, theirs] of cases) {
  const a = measure(ours)
  const b = measure(theirs)
  console.log(`| ${name} | ${fmt(a)} | ${fmt(b)} | ${(b / a).toFixed(2)}x |`)
}
console.log(`\n${await loadavg()} at the end`)

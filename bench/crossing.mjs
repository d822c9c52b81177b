// The contract crossing alone (lib/contract.js `call`, over the same addon), for the three small
// calls issue 23 measures: `authorize` over the 12 policy vectors, `revokeSubtree`, and
// `parseTeamManifest` of an object, each passed the same objects call after call as the contract
// benchmark does; and `authorize` of a state parsed from JSON for each call (its JSON.parse
// included), which the call has never seen. CPU time per call (bench/measure.mjs), in interleaved rounds,
// so that two versions of lib/contract.js measured in one run compare fairly. Not a test.
//
//   node bench/crossing.mjs [--rounds N] [CONTRACT_JS ...]
//
// Each CONTRACT_JS is a version of lib/contract.js placed in bindings-node/lib/ (it requires
// ./native.js), for instance
//   git show REV:bindings-node/lib/contract.js > bindings-node/lib/contract-before.js
// Without one, the package's own lib/contract.js is measured. A version must call the addon as
// the one built does: those before commit ab82580 passed the text as a string, which the addon
// no longer takes (measure them with a build of their own commit).
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import { timer, fmt, loadavg } from './measure.mjs'
import { teamManifest } from './inputs.mjs'

const require = createRequire(import.meta.url)
let rounds = 3
const files = []
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === '--rounds') rounds = Number(process.argv[++i])
  else files.push(process.argv[i])
}
if (!(rounds >= 1)) {
  console.error('usage: node bench/crossing.mjs [--rounds N] [CONTRACT_JS ...]')
  process.exit(2)
}
const paths = files.length ? files.map((f) => resolve(f)) : [require.resolve('../bindings-node/lib/contract.js')]

const root = require('../bindings-node/index.js')
const team = require('../bindings-node/team-manifest/index.js')
const vectors = root.POLICY_VECTORS
const states = vectors.map((v) => root.stateForVector(v))
const texts = states.map((state) => JSON.stringify(state))
const manifest = teamManifest(team)

/** The three calls through one version's `call`; `authorize` is one call (the vectors in turn). */
function cases ({ call }) {
  let k = 0
  return [
    ['authorize', () => {
      const v = vectors[k]
      call('policy.authorize', [states[k], v.actorId, v.action, v.targetId, v.context])
      k = (k + 1) % vectors.length
    }],
    // A state the call has never seen (as an adapter that parses each state it receives).
    ['authorize (new state)', () => {
      const v = vectors[k]
      call('policy.authorize', [JSON.parse(texts[k]), v.actorId, v.action, v.targetId, v.context])
      k = (k + 1) % vectors.length
    }],
    ['revokeSubtree', () => call('policy.revokeSubtree', [states[0], vectors[0].actorId])],
    ['parseTeamManifest (object)', () => call('team.parse', [manifest])],
  ]
}

const versions = paths.map((path) => ({ path, cases: cases(require(path)) }))
const measure = timer(false, true)
console.log(`node ${process.version}; CPU time per call; ${rounds} rounds; ${await loadavg()}\n`)
console.log(`| round | ${versions.flatMap((v) => v.cases.map(([name]) => `${name} (${v.path.split('/').pop()})`)).join(' | ')} |`)
console.log(`| --- | ${versions.flatMap((v) => v.cases.map(() => '---:')).join(' | ')} |`)
for (let r = 1; r <= rounds; r++) {
  const cells = versions.flatMap((v) => v.cases.map(([, fn]) => fmt(measure(fn))))
  console.log(`| ${r} | ${cells.join(' | ')} |`)
}
console.log(`\n${await loadavg()} at the end`)

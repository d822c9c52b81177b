// Regenerates vectors/boss-participant-state-v1.json and
// vectors/boss-participant-state-transition-v1.json from the TypeScript core 0.2.0's built dist:
// the two corpora (PARTICIPANT_STATE_VECTOR_CORPUS, PARTICIPANT_STATE_TRANSITION_VECTOR_CORPUS)
// are written as data, member for member, with a header (corpus domain, count, the published
// digest as a known answer) that is not hashed. One vector or table row per line.
//   AIC_TS_CORE_DIST=/path/to/agent-intercom-core/dist node scripts/gen-participant-state-vectors.mjs
import { writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const dist = process.env.AIC_TS_CORE_DIST || '/work/ext/core/dist'
const m = await import(`${dist}/boss-vectors.js`)
const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'vectors')

const line = (value) => JSON.stringify(value)

/** `"key": [` one element per line `]`, or `"key": {` one member per line `}`. */
function block (key, value) {
  if (Array.isArray(value)) {
    return `  ${line(key)}: [\n${value.map((v) => `    ${line(v)}`).join(',\n')}\n  ]`
  }
  const rows = Object.entries(value).map(([k, v]) => `    ${line(k)}: ${line(v)}`)
  return `  ${line(key)}: {\n${rows.join(',\n')}\n  }`
}

function write (name, header, corpus, counted) {
  const { corpus: domain, ...rest } = header
  const top = { corpus: domain, version: corpus.version, ...rest }
  const members = Object.entries(top).map(([k, v]) => `  ${line(k)}: ${line(v)}`)
  for (const [key, value] of Object.entries(corpus)) {
    if (key !== 'version') members.push(block(key, value))
  }
  const text = `{\n${members.join(',\n')}\n}\n`
  const parsed = JSON.parse(text)
  if (parsed.count !== counted) throw new Error(`${name}: count`)
  writeFileSync(join(out, name), text)
}

const state = m.PARTICIPANT_STATE_VECTOR_CORPUS
write('boss-participant-state-v1.json', {
  corpus: m.PARTICIPANT_STATE_VECTOR_HASH_DOMAIN,
  description: 'The participant-state corpus of @ctliz/agent-intercom-core 0.2.0 ' +
    '(PARTICIPANT_STATE_VECTOR_CORPUS): one migration vector per legacy WorkerStore v1 state ' +
    '(migrateLegacyWorkerRecordV1(input) is expected, and parseMigratedWorkerRecordV2 keeps it), ' +
    'the four legacy stopping reconciliations (reconcileLegacyStoppingWorker(pending, evidence) ' +
    'settles expectedState with expectedReason) and one health event ' +
    '(parseParticipantHealthEventV1 keeps it). PARTICIPANT_STATE_VECTORS_HASH = ' +
    'canonicalHash("agent-intercom-core/boss-participant-state-v1", {version, migrationVectors, ' +
    'stoppingReconciliationVectors, healthEvent}); `corpus`, `description`, `count` (the cases: ' +
    'every migration and stopping vector and the health event) and `semanticsHash` (the ' +
    'published digest, a known answer) are not hashed.',
  count: state.migrationVectors.length + state.stoppingReconciliationVectors.length + 1,
  semanticsHash: m.PARTICIPANT_STATE_VECTORS_HASH,
}, state, 14)

const transition = m.PARTICIPANT_STATE_TRANSITION_VECTOR_CORPUS
write('boss-participant-state-transition-v1.json', {
  corpus: m.PARTICIPANT_STATE_TRANSITION_VECTOR_HASH_DOMAIN,
  description: 'The participant-state transition corpus of @ctliz/agent-intercom-core 0.2.0 ' +
    '(PARTICIPANT_STATE_TRANSITION_VECTOR_CORPUS): the same-generation table (previous state -> ' +
    'state -> the evidence kind the edge requires, or null for a denied edge), the ' +
    'new-generation table (previous state -> the states one fresh worker generation may ' +
    'reach) and the positive transition vectors (validateParticipantStateTransition(input) ' +
    'accepts each, and parseParticipantStateTransitionContextV1 keeps it). The tables are the ' +
    "core's own (the runners compare them); the cases are the transition vectors. " +
    'PARTICIPANT_STATE_TRANSITION_VECTORS_HASH = canonicalHash(' +
    '"agent-intercom-core/boss-participant-state-transition-v1", {version, ' +
    'sameGenerationTransitionTable, newGenerationTransitionTable, transitionVectors}); ' +
    '`corpus`, `description`, `count` and `semanticsHash` (the published digest, a known ' +
    'answer) are not hashed.',
  count: transition.transitionVectors.length,
  semanticsHash: m.PARTICIPANT_STATE_TRANSITION_VECTORS_HASH,
}, transition, 12)

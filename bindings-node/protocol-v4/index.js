'use strict'
// @ctliz/agent-intercom-core/protocol-v4: a drop-in for the TypeScript core's module of the
// same name, backed by the Rust core. Constants come from the core. parseIntercomScopeId and
// sameIntercomScope evaluate in JavaScript from the core's constants (one N-API crossing costs
// more than a regex test); the test suite runs every vector through both paths.
const { addon, constants: C, fail, IntercomError } = require('../lib/native.js')
const { DATA, RECORDS, checkPlain, jsonText, optionsOf } = require('../lib/plain.js')

function deepFreeze (value) {
  if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) deepFreeze(value[key])
    Object.freeze(value)
  }
  return value
}

const SCOPE_ID_PATTERN = new RegExp(C.scopeIdPatternSource)

function scopeError (path) {
  // The core's message: the path and the pattern, never the value.
  throw new IntercomError('INVALID_SCOPE', `${path}${C.invalidScopeMessageSuffix}`)
}

function parseIntercomScopeId (value, path = 'scopeId') {
  if (value === undefined || value === '') return undefined
  if (typeof value !== 'string' || !SCOPE_ID_PATTERN.test(value)) scopeError(path)
  return value
}

function intercomScopeIdFromEnv (env = process.env) {
  if (env === null || typeof env !== 'object') fail('INVALID_ARGUMENT', 'env must be an object such as process.env')
  return parseIntercomScopeId(env[C.scopeEnv], C.scopeEnv)
}

function sameIntercomScope (left, right) {
  return left === right
}

// Scopes given to the routing functions: undefined, null and "" are the unscoped group.
function scopeArg (value, path) {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string') scopeError(path)
  return value
}

function stringArg (value, path) {
  if (typeof value !== 'string') fail('INVALID_ARGUMENT', `${path} must be a string`)
  // The addon would turn an unpaired surrogate into U+FFFD: another id. UNPAIRED_SURROGATE.
  checkPlain(value, DATA, path)
  return value
}

// Candidates reach the core as JSON text, plain JSON data only (lib/plain.js); an undefined field
// of a candidate is absent, as in the TypeScript core. A deep-frozen list (the vectors' own, a
// caller's frozen roster) cannot change: it is checked and read once, and the core keeps what it
// read (an External) for every later call with the same list.
const keptCandidates = new WeakMap()

function candidatesArg (candidates) {
  if (candidates === null || typeof candidates !== 'object') fail('INVALID_ARGUMENT', 'candidates must be an array of {id, name?, scope?}')
  const kept = keptCandidates.get(candidates)
  if (kept !== undefined) return kept
  const text = jsonText(candidates, RECORDS, 'candidates')
  if (!Array.isArray(candidates)) fail('INVALID_ARGUMENT', 'candidates must be an array of {id, name?, scope?}')
  if (!deepFrozen(candidates)) return text
  const read = addon.keepCandidates(text)
  keptCandidates.set(candidates, read)
  return read
}

/** Whether checked plain data (no accessor, no proxy: jsonText refused those) is frozen all the
 * way down. */
function deepFrozen (value) {
  if (value === null || typeof value !== 'object') return true
  if (!Object.isFrozen(value)) return false
  for (const key of Object.keys(value)) if (!deepFrozen(value[key])) return false
  return true
}

// An options object is required; its own keys only, each one the function takes (UNKNOWN_KEY
// otherwise: a misspelt actorScope must not silently mean unscoped). Its values are checked where
// they are used.
function optionsArg (options, name, keys) {
  if (options === undefined) fail('INVALID_ARGUMENT', `${name} takes an options object`)
  return optionsOf(options, keys, name, false)
}

/** Resolves a send.to selector: global exact id, then exact (case-sensitive) name in the actor's
 * scope, then unique id prefix in the actor's scope. */
function resolveIntercomTarget (options) {
  const { candidates, actorScope, selector } = optionsArg(options, 'resolveIntercomTarget', ['candidates', 'actorScope', 'selector'])
  const text = candidatesArg(candidates)
  const scope = scopeArg(actorScope, 'actorScope')
  const sel = stringArg(selector, 'selector')
  return addon.resolveTarget(text, scope, sel)
}

/** The ids a list request from the actor returns: itself plus its scope. */
function listVisibleIntercomSessions (options) {
  const { candidates, actorId, actorScope } = optionsArg(options, 'listVisibleIntercomSessions', ['candidates', 'actorId', 'actorScope'])
  const text = candidatesArg(candidates)
  const scope = scopeArg(actorScope, 'actorScope')
  const id = stringArg(actorId, 'actorId')
  return addon.listVisible(text, id, scope)
}

/** Who hears session_joined / session_left / presence_update about the subject. */
function intercomEventAudience (options) {
  const { event, candidates, subjectId, subjectScope } = optionsArg(options, 'intercomEventAudience', ['event', 'candidates', 'subjectId', 'subjectScope'])
  const ev = stringArg(event, 'event')
  const text = candidatesArg(candidates)
  const scope = scopeArg(subjectScope, 'subjectScope')
  const id = stringArg(subjectId, 'subjectId')
  return addon.audience(ev, text, id, scope)
}

function idsArg (ids, path) {
  // Plain arrays only: the addon reads them element by element, and an Array subclass or proxy
  // would run the caller's code (a species constructor, traps).
  const notArray = () => fail('INVALID_ARGUMENT', 'base and kept must be arrays of ids')
  if (ids === null || typeof ids !== 'object') notArray()
  checkPlain(ids, DATA, path)
  if (!Array.isArray(ids)) notArray()
  const out = new Array(ids.length)
  for (let i = 0; i < ids.length; i++) out[i] = stringArg(ids[i], `${path}[${i}]`)
  return out
}

/** Applies an adapter filter to a computed id set: it may narrow the set, never widen it. */
function narrowIntercomAudience (base, kept) {
  const b = idsArg(base, 'base')
  const k = idsArg(kept, 'kept')
  return addon.narrow(b, k)
}

/** Orders a session-id replacement: left (old scope) strictly before joined (new scope). */
function planIntercomReplacement (options) {
  const { sessionId, oldScope, newScope } = optionsArg(options, 'planIntercomReplacement', ['sessionId', 'oldScope', 'newScope'])
  const id = stringArg(sessionId, 'sessionId')
  const from = scopeArg(oldScope, 'oldScope')
  const to = scopeArg(newScope, 'newScope')
  const plan = addon.planReplacement(id, from, to)
  for (const event of plan.events) if (event.scope === undefined || event.scope === null) event.scope = null
  return plan
}

function generationArg (value, path) {
  if (!Number.isSafeInteger(value) || value < 0) fail('INVALID_ARGUMENT', `${path} must be a non-negative safe integer`)
  return value
}

/** "accept" when the frame arrived on the session's current binding, else "discard". */
function intercomFrameDisposition (connectionGeneration, currentGeneration) {
  const conn = generationArg(connectionGeneration, 'connectionGeneration')
  const current = currentGeneration === undefined || currentGeneration === null ? null : generationArg(currentGeneration, 'currentGeneration')
  return addon.frameDisposition(conn, current)
}

const corpus = JSON.parse(C.corpusJson)

module.exports = {
  INTERCOM_PROTOCOL_NAME: C.protocolName,
  INTERCOM_PROTOCOL_VERSION: C.protocolVersion,
  INTERCOM_SCOPE_ENV: C.scopeEnv,
  INTERCOM_SCOPE_ID_PATTERN_SOURCE: C.scopeIdPatternSource,
  INTERCOM_SCOPE_ID_PATTERN: new RegExp(C.scopeIdPatternSource),
  INTERCOM_PROTOCOL_V4_VECTOR_SCHEMA_VERSION: C.vectorSchemaVersion,
  PROTOCOL_V4_SCOPE_A: C.scopeA,
  PROTOCOL_V4_SCOPE_B: C.scopeB,
  INTERCOM_PROTOCOL_V4_VECTORS: deepFreeze(corpus.vectors),
  INTERCOM_PROTOCOL_V4_SEMANTICS_HASH: C.semanticsHash,
  INTERCOM_PROTOCOL_V4_VECTORS_HASH_DOMAIN: C.vectorsHashDomain,
  parseIntercomScopeId,
  intercomScopeIdFromEnv,
  sameIntercomScope,
  resolveIntercomTarget,
  listVisibleIntercomSessions,
  intercomEventAudience,
  narrowIntercomAudience,
  planIntercomReplacement,
  intercomFrameDisposition,
}

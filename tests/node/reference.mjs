// A straightforward pure-JavaScript implementation of the ./protocol-v4 and ./canonical
// functions, with the same semantics as the package (same rejections), written here for
// comparison only: benchmarks and an independent cross-check in the tests. The package never
// loads it.
import { createHash } from 'node:crypto'

export const PATTERN = /^[A-Za-z0-9_-]{16,128}$/

export function parseIntercomScopeId (value, path = 'scopeId') {
  if (value === undefined || value === '') return undefined
  if (typeof value !== 'string' || !PATTERN.test(value)) throw new Error(`${path} must match ${PATTERN.source}`)
  return value
}

export function intercomScopeIdFromEnv (env = process.env) {
  return parseIntercomScopeId(env.AGENT_INTERCOM_SCOPE_ID, 'AGENT_INTERCOM_SCOPE_ID')
}

export function sameIntercomScope (a, b) { return a === b }

const scopeOf = (s) => (s === undefined || s === null || s === '') ? null : s

export function resolveIntercomTarget ({ candidates, actorScope, selector }) {
  const scope = scopeOf(actorScope)
  const inScope = (c) => scopeOf(c.scope) === scope
  if (selector !== '') {
    const steps = [
      ['global_exact_id', (c) => c.id === selector],
      ['same_scope_name', (c) => inScope(c) && c.name === selector],
      ['same_scope_prefix', (c) => inScope(c) && c.id.startsWith(selector)],
    ]
    for (const [kind, match] of steps) {
      const ids = candidates.filter(match).map((c) => c.id)
      if (ids.length === 1) return { kind, targetIds: ids }
      if (ids.length > 1) return { kind: 'AMBIGUOUS_TARGET', targetIds: ids }
    }
  }
  return { kind: 'SESSION_NOT_FOUND', targetIds: [] }
}

export function listVisibleIntercomSessions ({ candidates, actorId, actorScope }) {
  const scope = scopeOf(actorScope)
  return candidates.filter((c) => c.id === actorId || scopeOf(c.scope) === scope).map((c) => c.id)
}

export function intercomEventAudience ({ candidates, subjectId, subjectScope }) {
  const scope = scopeOf(subjectScope)
  return candidates.filter((c) => c.id !== subjectId && scopeOf(c.scope) === scope).map((c) => c.id)
}

function fail (path, message) { throw new Error(`${path}: ${message}`) }

function normalize (value, path, depth) {
  if (value === null || typeof value === 'boolean') return value
  if (typeof value === 'string') {
    if (!value.isWellFormed()) fail(path, 'string contains an unpaired surrogate')
    return value
  }
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || Object.is(value, -0)) fail(path, 'number must be a safe integer')
    return value
  }
  if (typeof value !== 'object') fail(path, 'unsupported value')
  if (depth > 128) fail(path, 'nesting too deep')
  const keys = Reflect.ownKeys(value)
  if (Array.isArray(value)) {
    if (keys.length !== value.length + 1) fail(path, 'sparse array or extra properties')
    const out = new Array(value.length)
    for (let i = 0; i < value.length; i++) {
      const d = Object.getOwnPropertyDescriptor(value, i)
      if (d === undefined || !('value' in d)) fail(`${path}[${i}]`, 'not a data element')
      out[i] = normalize(d.value, `${path}[${i}]`, depth + 1)
    }
    return out
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) fail(path, 'not a plain object')
  const out = {}
  for (const key of keys.sort()) {
    if (typeof key !== 'string') fail(path, 'symbol key')
    if (!key.isWellFormed()) fail(path, 'key contains an unpaired surrogate')
    const d = Object.getOwnPropertyDescriptor(value, key)
    if (!d.enumerable || !('value' in d)) fail(`${path}.${key}`, 'not an enumerable data property')
    out[key] = normalize(d.value, `${path}.${key}`, depth + 1)
  }
  return out
}

export function canonicalJson (value) {
  if (value === undefined) fail('$', 'undefined')
  return JSON.stringify(normalize(value, '$', 1))
}

export function canonicalFrame (domain, value) {
  if (typeof domain !== 'string' || !/^[\x21-\x7e]+$/.test(domain)) throw new Error('domain must be non-empty printable ASCII without whitespace')
  const payload = Buffer.from(canonicalJson(value), 'utf8')
  return Buffer.concat([Buffer.from(`agent-intercom-canonical-frame-v1:${domain.length}:${domain}:${payload.length}:`), payload])
}

export function canonicalHash (domain, value) {
  return createHash('sha256').update(canonicalFrame(domain, value)).digest('hex')
}

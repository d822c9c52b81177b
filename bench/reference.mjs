// A straightforward pure-JavaScript implementation of the ./protocol-v4 and ./canonical
// functions, written here for comparison only (benchmarks and cross-checks). The package never
// loads it.
import { createHash } from 'node:crypto'

export const PATTERN = /^[A-Za-z0-9_-]{16,128}$/

export function parseScope (value, path = 'scopeId') {
  if (value === undefined || value === '') return undefined
  if (typeof value !== 'string' || !PATTERN.test(value)) throw new Error(`${path} must match ${PATTERN.source}`)
  return value
}

export function sameScope (a, b) { return a === b }

function check (value, path) {
  if (value === null || typeof value === 'boolean') return value
  if (typeof value === 'string') {
    if (!value.isWellFormed()) throw new Error(`${path}: string contains an unpaired surrogate`)
    return value
  }
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || Object.is(value, -0)) throw new Error(`${path}: number must be a safe integer`)
    return value
  }
  if (Array.isArray(value)) return value.map((item, i) => check(item, `${path}[${i}]`))
  if (typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) throw new Error(`${path}: unsupported value`)
  const out = {}
  for (const key of Object.keys(value).sort()) {
    if (!key.isWellFormed()) throw new Error(`${path}: key contains an unpaired surrogate`)
    if (value[key] === undefined) throw new Error(`${path}.${key}: undefined`)
    out[key] = check(value[key], `${path}.${key}`)
  }
  return out
}

export function canonicalJson (value) {
  if (value === undefined) throw new Error('$: undefined')
  return JSON.stringify(check(value, '$'))
}

export function canonicalFrame (domain, value) {
  if (!/^[\x21-\x7e]+$/.test(domain)) throw new Error('domain must be non-empty printable ASCII without whitespace')
  const payload = Buffer.from(canonicalJson(value), 'utf8')
  return Buffer.concat([Buffer.from(`agent-intercom-canonical-frame-v1:${domain.length}:${domain}:${payload.length}:`), payload])
}

export function canonicalHash (domain, value) {
  return createHash('sha256').update(canonicalFrame(domain, value)).digest('hex')
}

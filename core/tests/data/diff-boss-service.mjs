// Differential check of the broker and restricted-client functions against the TypeScript core:
// every case of boss_service_cases.json (but those needing other modules) with each member, to
// three levels, deleted or replaced by one of a few values; this package (the checkout's
// bindings-node, built) and the TypeScript dist must give the same value or the same error.
// Not a test (it needs the TypeScript dist); prints the variants that differ and the count.
// Usage: AIC_TS_CORE_DIST=/path/to/agent-intercom-core/dist node core/tests/data/diff-boss-service.mjs
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
const require = createRequire(import.meta.url)
const ours = require('../../../bindings-node/boss/index.js')
const ts = await import(`${process.env.AIC_TS_CORE_DIST || '/work/ext/core/dist'}/boss.js`)
const data = JSON.parse(readFileSync(new URL('./boss_service_cases.json', import.meta.url), 'utf8'))
const isRef = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && typeof v.$ref === 'string'
const resolve = (v) => isRef(v) ? resolve(data.bases[v.$ref]) : Array.isArray(v) ? v.map(resolve) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)])) : v
const outcome = (f, args) => { try { const v = f(...args); return v instanceof Uint8Array ? 'bytes:' + Buffer.from(v).toString('hex') : JSON.stringify(v) } catch (e) { return `E ${e.name}: ${e.message}${e.code && e.name !== 'ContractValidationError' ? ' ' + e.code : ''}` } }
const replacements = [undefined, null, 0, -1, 1.5, '', 'x', [], {}, true, 'A'.repeat(64), 'a'.repeat(64), '2026-07-28T12:00:00.000Z', 3]
let n = 0, bad = 0
const seen = new Set()
for (const c of data.cases) {
  if (c.requires) continue
  const name = c.op.slice(5)
  const args = resolve(c.args)
  const variants = []
  args.forEach((arg, i) => {
    const walk = (obj, path, depth) => {
      if (obj === null || typeof obj !== 'object' || depth > 2) return
      for (const k of Object.keys(obj)) {
        for (const r of [...replacements, 'DELETE']) variants.push([i, [...path, k], r])
        walk(obj[k], [...path, k], depth + 1)
      }
    }
    walk(arg, [], 0)
  })
  for (const [i, path, r] of variants) {
    const copy = structuredClone(args)
    let at = copy[i]
    for (const k of path.slice(0, -1)) at = at[k]
    const last = path[path.length - 1]
    if (r === 'DELETE') delete at[last]; else at[last] = r
    const key = name + JSON.stringify(copy)
    if (seen.has(key)) continue
    seen.add(key)
    n++
    const a = outcome(ts[name], copy), b = outcome(ours[name], copy)
    if (a !== b) { bad++; if (bad <= 40) console.log(`${c.id} ${path.join('.')}=${JSON.stringify(r)}\n  ts:   ${a.slice(0, 200)}\n  ours: ${b.slice(0, 200)}`) }
  }
}
console.log(`${n} variants, ${bad} differ`)

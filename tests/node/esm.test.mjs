// The package by its own name, as ESM: every subpath, named and default imports, and the same
// instances CommonJS consumers get.
import test from 'node:test'
import assert from 'node:assert'
import { createRequire } from 'node:module'
import root, { canonicalHash, parseIntercomScopeId, INTERCOM_PROTOCOL_V4_SEMANTICS_HASH } from '@ctliz/agent-intercom-core'
import * as protocolV4 from '@ctliz/agent-intercom-core/protocol-v4'
import * as canonical from '@ctliz/agent-intercom-core/canonical'
import * as vendored from '@ctliz/agent-intercom-core/vendor/protocol-v4'

const require = createRequire(import.meta.url)

test('ESM and CommonJS expose the same names and instances', () => {
  for (const [esm, id] of [[protocolV4, '@ctliz/agent-intercom-core/protocol-v4'], [canonical, '@ctliz/agent-intercom-core/canonical']]) {
    const cjs = require(id)
    assert.deepStrictEqual(Object.keys(esm).filter((k) => k !== 'default').sort(), Object.keys(cjs).sort())
    for (const key of Object.keys(cjs)) assert.strictEqual(esm[key], cjs[key], key)
  }
  assert.strictEqual(root, require('@ctliz/agent-intercom-core'))
  assert.strictEqual(canonicalHash('boss-test-v1', { b: 2, a: 1 }).slice(0, 8), '4ff6c078')
  assert.strictEqual(parseIntercomScopeId('Scope_AAAAAAAAAA'), 'Scope_AAAAAAAAAA')
})

test('the vendorable module agrees with the package', () => {
  for (const key of Object.keys(vendored)) {
    if (typeof vendored[key] === 'function' || vendored[key] instanceof RegExp) continue
    assert.deepStrictEqual(vendored[key], protocolV4[key], key)
  }
  assert.strictEqual(vendored.INTERCOM_PROTOCOL_V4_SEMANTICS_HASH, INTERCOM_PROTOCOL_V4_SEMANTICS_HASH)
  assert.strictEqual(canonicalHash(protocolV4.INTERCOM_PROTOCOL_V4_VECTORS_HASH_DOMAIN, { version: 2, vectors: vendored.INTERCOM_PROTOCOL_V4_VECTORS }), INTERCOM_PROTOCOL_V4_SEMANTICS_HASH)
  for (const v of protocolV4.INTERCOM_PROTOCOL_V4_VECTORS.filter((x) => x.operation === 'validate_scope')) {
    const outcome = (f) => { try { return f(v.scopeInput) === undefined ? 'valid_unscoped' : 'valid_scoped' } catch (e) { return e.code } }
    assert.strictEqual(outcome(vendored.parseIntercomScopeId), outcome(protocolV4.parseIntercomScopeId), v.name)
  }
  const error = (() => { try { vendored.parseIntercomScopeId('bad', 'p') } catch (e) { return e } })()
  assert.strictEqual(error.message, 'p must match ^[A-Za-z0-9_-]{16,128}$')
  assert.strictEqual(error.code, 'INVALID_SCOPE')
})

test('deep imports are blocked by the export map', () => {
  assert.throws(() => require('@ctliz/agent-intercom-core/lib/native.js'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' })
})

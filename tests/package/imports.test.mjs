// Runs in the folder where scripts/pack-accept.sh installed the tarballs. Every (subpath, name)
// pair that an adapter imports from the TypeScript core 0.2.0 at runtime must resolve from the
// installed package, from ESM and from CommonJS, to something other than undefined (and to the
// same value from both).
//
// The list: /work/shared/notes/core-parity-inventory.md §2 (which covers pi, claude, codex and the
// orchestrator), checked against the imports of pi and claude (agent-intercom-pi at 4206096,
// agent-intercom-claude; every `import`/`export ... from "@ctliz/agent-intercom-core..."` outside
// *.d.ts). Users: pi, claude, codex, orch(estrator); "(test)" = imported only by that adapter's
// tests. Type-only imports are checked by tests/types/adapters.mts (scripts/test-types.sh).
import test from 'node:test'
import assert from 'node:assert'
import { createRequire } from 'node:module'
import { join } from 'node:path'

const require = createRequire(join(process.cwd(), 'noop.js'))

const IMPORTS = {
  '.': [
    ['POLICY_SEMANTICS_HASH', 'claude, codex, orch'],
    ['POLICY_SEMANTICS_VERSION', 'claude, codex, orch'],
    ['authorize', 'claude'],
  ],
  './policy': [
    ['authorize', 'pi'],
    ['POLICY_SEMANTICS_VERSION', 'pi'],
  ],
  './vectors': [
    ['POLICY_SEMANTICS_HASH', 'pi'],
  ],
  './team-manifest': [
    ['readTeamManifest', 'pi'],
    ['readTeamManifestAsync', 'claude, codex'],
    ['TeamManifestError', 'pi, claude, codex'],
  ],
  './canonical': [
    ['ContractValidationError', 'pi, claude, codex'],
    ['assertRecord', 'pi, claude, codex'],
    ['assertExactKeys', 'pi, claude, codex'],
    ['readHexDigest', 'pi, claude'],
    ['canonicalJson', 'pi, codex, orch'],
    ['canonicalHash', 'codex'],
    ['brokerGeneration', 'claude (test)'],
    ['participantBindingEpoch', 'claude (test)'],
    ['workerGeneration', 'claude (test)'],
  ],
  './protocol-v4': [
    ['INTERCOM_PROTOCOL_NAME', 'pi, claude, codex'],
    ['INTERCOM_PROTOCOL_VERSION', 'pi, claude, codex'],
    ['INTERCOM_SCOPE_ENV', 'pi, claude, codex'],
    ['INTERCOM_SCOPE_ID_PATTERN', 'pi, claude, codex'],
    ['INTERCOM_SCOPE_ID_PATTERN_SOURCE', 'pi, claude, codex'],
    ['INTERCOM_PROTOCOL_V4_VECTOR_SCHEMA_VERSION', 'pi, claude, codex'],
    ['INTERCOM_PROTOCOL_V4_VECTORS', 'pi, claude, codex'],
    ['INTERCOM_PROTOCOL_V4_SEMANTICS_HASH', 'pi, claude, codex'],
    ['parseIntercomScopeId', 'pi, claude, codex'],
    ['intercomScopeIdFromEnv', 'pi, claude, codex'],
    ['sameIntercomScope', 'pi, claude, codex'],
    // the orchestrator re-exports the whole subpath (`export *`): the other two of its 13 names
    ['PROTOCOL_V4_SCOPE_A', 'orch'],
    ['PROTOCOL_V4_SCOPE_B', 'orch'],
  ],
  './boss/policy': [
    ['parseBossPolicyPrincipal', 'pi'],
    ['BOSS_POLICY_PRINCIPAL_VERSION', 'pi (test)'],
  ],
  './boss': [
    // constants
    ['INTERCOM_BASE_PROTOCOL_VERSION', 'pi, claude, codex, orch'],
    ['BOSS_RUN_FEATURE', 'pi, claude, codex, orch'],
    ['BOSS_RUN_FEATURE_CONTRACT', 'pi, claude, codex, orch'],
    ['BOSS_RUN_PROTOCOL_FEATURE_CONTRACT_HASH', 'pi, claude (test), codex, orch'],
    ['BOSS_CAPABILITY_FEATURE_DIGEST', 'pi, claude, codex, orch'],
    ['BOSS_CONTROL_ENVELOPE_VERSION', 'pi, claude (test), codex, orch'],
    ['BROKER_FEATURE_ATTESTATION_VERSION', 'pi, claude (test), codex, orch'],
    ['BOSS_RUN_FEATURE_SEMANTICS_HASH', 'pi, codex, orch'],
    ['BOSS_RUN_FEATURE_VERSION', 'pi, codex, orch'],
    ['BOSS_POLICY_SEMANTICS_HASH', 'pi, claude, codex'],
    ['BROKER_PROTECTED_PROVIDER_ROOT', 'pi, claude, orch'],
    ['BOSS_POLICY_PRINCIPAL_VERSION', 'codex, claude (test)'],
    ['BOSS_PARTICIPANT_ROLES', 'codex'],
    ['PARTICIPANT_STATES', 'claude'],
    ['TERMINAL_PARTICIPANT_STATES', 'claude'],
    ['BROKER_PEER_EXPECTATION_VERSION', 'orch'],
    // functions
    ['brokerFeatureSetHash', 'pi, claude (test), codex, orch (test)'],
    ['parseBossRunFeatureContract', 'pi, claude, codex, orch'],
    ['parseBrokerCapabilityAdvertisement', 'pi, claude, codex'],
    ['parseBossControlEnvelope', 'pi, claude, codex'],
    ['parseBossParticipantBinding', 'pi, claude, codex'],
    ['parseBossParticipantCredentialEnvelope', 'pi, claude, codex'],
    ['authorizeFeatureAware', 'pi, claude, codex'],
    ['evaluateBrokerCompatibility', 'pi, claude'],
    ['parseParticipantState', 'claude, codex'],
    ['parseWorkerIdentityV2', 'claude, codex'],
    ['parseBossPolicyPrincipal', 'claude'],
    ['isTerminalParticipantState', 'claude'],
    ['workerIdentityFromEnvironment', 'codex'],
    ['parseAuthorityTransitionRecord', 'orch'],
    ['parseAuthorityTransitionEvent', 'orch'],
    ['parseAuthorityTransitionRequest', 'orch'],
    ['parseBossRunAuthorityIdentity', 'orch'],
    ['parseBrokerCompatibilityRequest', 'orch'],
    ['parseBrokerIdentityRecord', 'orch'],
    ['parseBrokerPeerExpectation', 'orch'],
    ['parseObservedBrokerPeer', 'orch'],
    ['authorizeBrokerPeer', 'orch'],
    ['verifyProtectedBrokerIdentity', 'orch'],
    // imported only by tests
    ['AUTHORITY_EVENT_VERSION', 'orch (test)'],
    ['AUTHORITY_REQUEST_VERSION', 'orch (test)'],
    ['AUTHORITY_TRANSITION_VERSION', 'orch (test)'],
    ['BOSS_RUN_AUTHORITY_IDENTITY_VERSION', 'orch (test)'],
    ['BROKER_IDENTITY_RECORD_VERSION', 'orch (test)'],
    ['BROKER_PROVIDER_ATTESTATION_VERSION', 'orch (test)'],
    ['brokerIdentitySigningBytes', 'orch (test)'],
    ['brokerProviderAttestationSigningBytes', 'orch (test)'],
    ['BOSS_CONTROL_TYPES', 'claude (test)'],
    ['WORKER_IDENTITY_VERSION', 'claude (test)'],
    ['BOSS_PARTICIPANT_BINDING_VERSION', 'pi (test), claude (test)'],
    ['BOSS_PARTICIPANT_CREDENTIAL_VERSION', 'pi (test), claude (test)'],
  ],
}

const specifier = (subpath) => `@ctliz/agent-intercom-core${subpath.slice(1)}`

/** The names of `pairs` that `mod` lacks (or holds as undefined), with their users; or the reason
 * the subpath itself does not load. */
function missing (mod, pairs) {
  return pairs.filter(([name]) => mod[name] === undefined).map(([name, users]) => `${name} (${users})`)
}

function loadCjs (subpath) {
  try {
    return { mod: require(specifier(subpath)) }
  } catch (error) {
    return { error: `${specifier(subpath)} does not load from CommonJS: ${error.code ?? ''} ${error.message}` }
  }
}

async function loadEsm (subpath) {
  try {
    return { mod: await import(specifier(subpath)) }
  } catch (error) {
    return { error: `${specifier(subpath)} does not load from ESM: ${error.code ?? ''} ${error.message}` }
  }
}

test('the list names each pair once', () => {
  for (const [subpath, pairs] of Object.entries(IMPORTS)) {
    const names = pairs.map(([name]) => name)
    assert.deepStrictEqual(names.filter((n, i) => names.indexOf(n) !== i), [], subpath)
  }
  assert.strictEqual(Object.values(IMPORTS).flat().length, 84)
})

// The Orchestrator's own subset (authority transitions, broker identity and peers) is issue 11's
// work: pairs only the orchestrator imports are reported as todo while missing, never failed.
const ORCHESTRATOR_ONLY = (users) => users.split(', ').every((u) => u.startsWith('orch'))

for (const [subpath, all] of Object.entries(IMPORTS)) {
  const pairs = all.filter(([, users]) => !ORCHESTRATOR_ONLY(users))
  const later = all.filter(([, users]) => ORCHESTRATOR_ONLY(users))
  test(`${specifier(subpath)}: the ${pairs.length} names pi, claude and codex import, from ESM`, async () => {
    const { mod, error } = await loadEsm(subpath)
    assert.ok(mod, error)
    assert.deepStrictEqual(missing(mod, pairs), [], `missing from ESM ${specifier(subpath)}`)
  })

  test(`${specifier(subpath)}: the ${pairs.length} names pi, claude and codex import, from CommonJS`, () => {
    const { mod, error } = loadCjs(subpath)
    assert.ok(mod, error)
    assert.deepStrictEqual(missing(mod, pairs), [], `missing from CommonJS ${specifier(subpath)}`)
  })

  if (later.length > 0) {
    const cjs = loadCjs(subpath).mod ?? {}
    const absent = missing(cjs, later)
    test(`${specifier(subpath)}: the ${later.length} names only the orchestrator imports`,
      absent.length > 0 ? { todo: `issue 11; missing: ${absent.join(', ')}` } : {}, async () => {
        const esm = (await loadEsm(subpath)).mod ?? {}
        assert.deepStrictEqual(missing(esm, later), [], `missing from ESM ${specifier(subpath)}`)
        assert.deepStrictEqual(missing(cjs, later), [], `missing from CommonJS ${specifier(subpath)}`)
      })
  }

  test(`${specifier(subpath)}: ESM and CommonJS give the same values`, async () => {
    const esm = await loadEsm(subpath)
    const cjs = loadCjs(subpath)
    assert.ok(esm.mod && cjs.mod, esm.error ?? cjs.error)
    const differ = all.map(([name]) => name)
      .filter((name) => esm.mod[name] !== undefined && cjs.mod[name] !== undefined && esm.mod[name] !== cjs.mod[name])
    assert.deepStrictEqual(differ, [], `${specifier(subpath)}: one value from ESM, another from CommonJS`)
  })
}

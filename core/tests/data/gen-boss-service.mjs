// Regenerates core/tests/data/boss_service_cases.json: this repository's cases for the broker
// and restricted-client part of ./boss (boss-service.ts of the TypeScript core 0.2.0), each run
// through the TypeScript core's dist here and stored with the outcome it gives there.
//
// The signed records are real: Ed25519 keys made from fixed seeds with node:crypto, the
// identities and provider attestations signed over brokerIdentitySigningBytes /
// brokerProviderAttestationSigningBytes. Keys reach the cases as PEM text (JSON holds no
// KeyObject): SPKI public keys, a PKCS#8 private key (whose public half createPublicKey takes)
// and an RSA key (a public key that verifies no Ed25519 signature).
//
// Usage (from the repository root):
//   AIC_TS_CORE_DIST=/path/to/agent-intercom-core/dist node core/tests/data/gen-boss-service.mjs
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign } from 'node:crypto'
import { writeFileSync } from 'node:fs'

const dist = process.env.AIC_TS_CORE_DIST || '/work/ext/core/dist'
const m = await import(`${dist}/boss.js`)
const out = new URL('./boss_service_cases.json', import.meta.url)

// Ed25519 keys from fixed seeds (PKCS#8: a fixed prefix, then the 32-byte seed).
function keyPair (seedByte) {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.alloc(32, seedByte)])
  const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })
  return { privateKey, publicKey: createPublicKey(privateKey) }
}
const pem = (key) => key.export({ type: key.type === 'public' ? 'spki' : 'pkcs8', format: 'pem' })
const identityKeys = keyPair(1)
const otherIdentityKeys = keyPair(2)
const providerKeys = keyPair(3)
const otherProviderKeys = keyPair(4)
// RSA keys cannot come from a seed; this one is fixed in the file once made (the outcome does not
// depend on which RSA key it is).
const rsaPem = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' })

const feature = {
  version: m.BROKER_FEATURE_ATTESTATION_VERSION,
  feature: m.BOSS_RUN_FEATURE_CONTRACT.feature,
  featureVersion: m.BOSS_RUN_FEATURE_CONTRACT.version,
  semanticsHash: m.BOSS_RUN_FEATURE_CONTRACT.semanticsHash,
  controlEnvelopeVersion: m.BOSS_RUN_FEATURE_CONTRACT.controlEnvelopeVersion,
  capabilityDigest: m.BOSS_CAPABILITY_FEATURE_DIGEST,
}
const optionalFeature = {
  version: m.BROKER_FEATURE_ATTESTATION_VERSION,
  feature: 'future-extra',
  featureVersion: 1,
  semanticsHash: 'b'.repeat(64),
  optional: true,
}
const bound = (features) => ({
  baseProtocolVersion: m.INTERCOM_BASE_PROTOCOL_VERSION,
  features,
  protocolFeatureContractHash: m.BOSS_RUN_PROTOCOL_FEATURE_CONTRACT_HASH,
  featureSetHash: m.brokerFeatureSetHash(features),
  controlEnvelopeVersion: m.BOSS_CONTROL_ENVELOPE_VERSION,
  capabilityDigest: m.BOSS_CAPABILITY_FEATURE_DIGEST,
})
const advertisement = bound([feature])

function signedProvider (overrides = {}, key = providerKeys.privateKey) {
  const unsigned = {
    version: m.BROKER_PROVIDER_ATTESTATION_VERSION,
    providerPackage: '@ctliz/agent-intercom-pi',
    providerVersion: '1.0.0',
    providerDigest: 'a'.repeat(64),
    artifactPath: '/usr/lib/agent-intercom/providers/pi-broker',
    artifactOwnerUid: 0,
    artifactOwnerGid: 0,
    artifactMode: '0755',
    userWritable: false,
    attestedAt: '2026-07-28T12:00:00.000Z',
    attestationKeyId: 'provider-root-1',
    ...overrides,
    signature: '',
  }
  return { ...unsigned, signature: sign(null, m.brokerProviderAttestationSigningBytes(unsigned), key).toString('base64') }
}
const provider = signedProvider()

function signedIdentity (overrides = {}, key = identityKeys.privateKey) {
  const unsigned = {
    version: m.BROKER_IDENTITY_RECORD_VERSION,
    owningProviderPackage: provider.providerPackage,
    providerDigest: provider.providerDigest,
    providerVersion: provider.providerVersion,
    baseProtocolVersion: advertisement.baseProtocolVersion,
    features: advertisement.features,
    protocolFeatureContractHash: advertisement.protocolFeatureContractHash,
    featureSetHash: advertisement.featureSetHash,
    controlEnvelopeVersion: advertisement.controlEnvelopeVersion,
    capabilityDigest: advertisement.capabilityDigest,
    protectedServiceUid: 991,
    ownerUid: 1000,
    bootInstance: 'boot-1',
    processId: 123,
    brokerGeneration: 4,
    publicEndpoint: '/run/agent-intercom/1000/public.sock',
    authorityEndpoint: '/run/agent-intercom/1000/authority.sock',
    identityKeyId: 'identity-key-1',
    ...overrides,
    signature: '',
  }
  return { ...unsigned, signature: sign(null, m.brokerIdentitySigningBytes(unsigned), key).toString('base64') }
}
const identity = signedIdentity()

const identityVerification = {
  expectedProviderPackage: identity.owningProviderPackage,
  expectedProviderVersion: identity.providerVersion,
  expectedProviderDigest: identity.providerDigest,
  expectedProviderArtifactRoot: m.BROKER_PROTECTED_PROVIDER_ROOT,
  expectedProviderArtifactOwnerUid: 0,
  expectedProviderArtifactOwnerGid: 0,
  expectedProviderArtifactMode: provider.artifactMode,
  expectedOwnerUid: identity.ownerUid,
  expectedBrokerServiceUid: identity.protectedServiceUid,
  expectedBootInstance: identity.bootInstance,
  minimumBrokerGeneration: identity.brokerGeneration,
  expectedPublicEndpoint: identity.publicEndpoint,
  expectedAuthorityEndpoint: identity.authorityEndpoint,
  trustedIdentityKeys: { [identity.identityKeyId]: pem(identityKeys.publicKey) },
  trustedProviderKeys: { [provider.attestationKeyId]: pem(providerKeys.publicKey) },
  providerAttestation: provider,
}
const providerVerification = {
  expectedProviderPackage: provider.providerPackage,
  expectedProviderVersion: provider.providerVersion,
  expectedProviderDigest: provider.providerDigest,
  expectedArtifactRoot: m.BROKER_PROTECTED_PROVIDER_ROOT,
  expectedArtifactOwnerUid: 0,
  expectedArtifactOwnerGid: 0,
  expectedArtifactMode: provider.artifactMode,
  trustedProviderKeys: { [provider.attestationKeyId]: pem(providerKeys.publicKey) },
}
const publicPeer = {
  version: m.BROKER_PEER_EXPECTATION_VERSION,
  endpointClass: 'public',
  ownerUid: 1000,
  expectedBrokerServiceUid: 991,
  expectedBrokerProcessId: 123,
  expectedClientUid: 1000,
  requiresKernelPeerCredentials: true,
  requiresServiceCapability: false,
}
const observedPeer = {
  kernelPeerCredentialsPresent: true,
  endpointClass: 'public',
  brokerServiceUid: 991,
  brokerProcessId: 123,
  clientUid: 1000,
  serviceCapabilityPresented: false,
}
const bossRequest = (overrides = {}) => ({
  clientKind: 'boss',
  supportedBaseProtocolVersions: [m.INTERCOM_BASE_PROTOCOL_VERSION],
  requiredFeature: 'boss-run-v1',
  expectedProtectedOwnerUid: 1000,
  identityVerification,
  peerExpectation: publicPeer,
  observedPeer,
  ...overrides,
})
const withIdentityContext = (overrides) => bossRequest({ identityVerification: { ...identityVerification, ...overrides } })

const cases = []
// A case: `op` of `args`, with the TypeScript core's outcome. `requires` names the operations of
// other ./boss modules the case needs (a runner skips it, counted, when the build lacks one).
function add (id, name, args, requires) {
  let expect
  try {
    const value = m[name](...args)
    if (value instanceof Uint8Array) expect = { kind: 'bytes', text: new TextDecoder().decode(value) }
    else if (value === undefined) expect = { kind: 'undefined' }
    else expect = { kind: 'value', value }
  } catch (e) {
    expect = {
      kind: 'error',
      class: e.name,
      ...(e.path === undefined ? {} : { path: e.path }),
      message: e.message,
      ...(e.code === undefined ? {} : { code: e.code }),
    }
  }
  // A NUL in a string: C runners whose JSON reader ends strings there skip the case.
  const nul = JSON.stringify(args).includes('\\u0000') ? { nul: true } : {}
  cases.push({ id, op: `boss.${name}`, ...(requires ? { requires } : {}), ...nul, args, expect })
}

// Signing bytes.
add('signing/provider', 'brokerProviderAttestationSigningBytes', [provider])
add('signing/identity', 'brokerIdentitySigningBytes', [identity])
add('signing/unsigned-any-record', 'brokerIdentitySigningBytes', [{ b: [1, { c: 'x' }], a: null }])
add('signing/array', 'brokerIdentitySigningBytes', [[provider]])
add('signing/string', 'brokerProviderAttestationSigningBytes', ['record'])
add('signing/float', 'brokerProviderAttestationSigningBytes', [{ a: 1.5 }])

// Provider attestations.
const verifyProvider = (id, attestation, context = providerVerification) =>
  add(`provider/${id}`, 'verifyBrokerProviderAttestation', [attestation, context])
verifyProvider('accepted', provider)
verifyProvider('unsigned', (({ signature, ...rest }) => rest)(provider))
verifyProvider('empty-key-id', { ...provider, attestationKeyId: '' })
verifyProvider('malformed', { ...provider, userWritable: true })
verifyProvider('tampered', { ...provider, providerVersion: '1.0.1' })
verifyProvider('other-key', signedProvider({}, otherProviderKeys.privateKey))
verifyProvider('loose-signature', { ...provider, signature: provider.signature.replace(/.=$/, (s) => String.fromCharCode(s.charCodeAt(0) + 1) + '=') })
verifyProvider('short-signature', { ...provider, signature: 'AAAA' })
verifyProvider('key-unknown', provider, { ...providerVerification, trustedProviderKeys: {} })
verifyProvider('key-not-pem', provider, { ...providerVerification, trustedProviderKeys: { [provider.attestationKeyId]: 'not a key' } })
verifyProvider('key-empty-id', provider, { ...providerVerification, trustedProviderKeys: { '': pem(providerKeys.publicKey) } })
verifyProvider('key-number', provider, { ...providerVerification, trustedProviderKeys: { [provider.attestationKeyId]: 7 } })
verifyProvider('key-private-pem', provider, { ...providerVerification, trustedProviderKeys: { [provider.attestationKeyId]: pem(providerKeys.privateKey) } })
verifyProvider('key-rsa', provider, { ...providerVerification, trustedProviderKeys: { [provider.attestationKeyId]: rsaPem } })
verifyProvider('key-crlf-pem', provider, { ...providerVerification, trustedProviderKeys: { [provider.attestationKeyId]: pem(providerKeys.publicKey).replace(/\n/g, '\r\n') } })
verifyProvider('key-other', provider, { ...providerVerification, trustedProviderKeys: { [provider.attestationKeyId]: pem(otherProviderKeys.publicKey) } })
verifyProvider('context-extra', provider, { ...providerVerification, extra: true })
verifyProvider('context-trust-extra', provider, { ...providerVerification, trustedProviderKeysExtra: {} })
verifyProvider('context-missing', provider, (({ expectedArtifactMode, ...rest }) => rest)(providerVerification))
verifyProvider('package-mismatch', provider, { ...providerVerification, expectedProviderPackage: 'other' })
verifyProvider('digest-mismatch', provider, { ...providerVerification, expectedProviderDigest: 'c'.repeat(64) })
verifyProvider('mode-mismatch', provider, { ...providerVerification, expectedArtifactMode: '0555' })
verifyProvider('root-mismatch', provider, { ...providerVerification, expectedArtifactRoot: '/usr/lib/' })
verifyProvider('writable-mode', provider, { ...providerVerification, expectedArtifactMode: '0777' })
verifyProvider('not-an-object', 'attestation')

// Broker identities.
const verifyIdentity = (id, record, context = identityVerification) =>
  add(`identity/${id}`, 'verifyProtectedBrokerIdentity', [record, context])
verifyIdentity('accepted', identity)
const supersetAdvertisement = bound([feature, optionalFeature])
verifyIdentity('superset', signedIdentity({ features: supersetAdvertisement.features, featureSetHash: supersetAdvertisement.featureSetHash }))
verifyIdentity('unsigned', (({ signature, ...rest }) => rest)(identity))
verifyIdentity('malformed', { identityKeyId: 'malformed', signature: 'malformed' })
verifyIdentity('base-protocol', signedIdentity({ baseProtocolVersion: 3 }))
verifyIdentity('key-unknown', identity, { ...identityVerification, trustedIdentityKeys: {} })
verifyIdentity('key-other', identity, { ...identityVerification, trustedIdentityKeys: { [identity.identityKeyId]: pem(otherIdentityKeys.publicKey) } })
verifyIdentity('signed-by-other', signedIdentity({}, otherIdentityKeys.privateKey))
verifyIdentity('identity-key-bad', identity, { ...identityVerification, trustedIdentityKeys: { [identity.identityKeyId]: false } })
verifyIdentity('provider-key-bad', identity, { ...identityVerification, trustedProviderKeys: { [provider.attestationKeyId]: 'x' } })
verifyIdentity('context-extra', identity, { ...identityVerification, extra: 1 })
verifyIdentity('attestation-required', identity, (({ providerAttestation, ...rest }) => rest)(identityVerification))
verifyIdentity('attestation-unsigned', identity, { ...identityVerification, providerAttestation: (({ signature, ...rest }) => rest)(provider) })
verifyIdentity('attestation-malformed', identity, { ...identityVerification, providerAttestation: { ...provider, artifactMode: '0775' } })
verifyIdentity('provider-key-unknown', identity, { ...identityVerification, trustedProviderKeys: {} })
verifyIdentity('provider-signature', identity, { ...identityVerification, trustedProviderKeys: { [provider.attestationKeyId]: pem(otherProviderKeys.publicKey) } })
verifyIdentity('provider-mismatch', identity, { ...identityVerification, expectedProviderVersion: '2.0.0' })
verifyIdentity('artifact-mismatch', identity, { ...identityVerification, expectedProviderArtifactMode: '0555' })
verifyIdentity('identity-provider-mismatch', signedIdentity({ owningProviderPackage: 'other' }))
verifyIdentity('owner-mismatch', signedIdentity({ ownerUid: 1001 }))
verifyIdentity('service-mismatch', identity, { ...identityVerification, expectedBrokerServiceUid: 1000 })
verifyIdentity('service-is-owner', signedIdentity({ protectedServiceUid: 1000 }), { ...identityVerification, expectedBrokerServiceUid: 1000 })
verifyIdentity('stale-boot', identity, { ...identityVerification, expectedBootInstance: 'old-boot' })
verifyIdentity('regressed-generation', identity, { ...identityVerification, minimumBrokerGeneration: 5 })
verifyIdentity('endpoint-record', signedIdentity({ publicEndpoint: '/run/agent-intercom/1000/other.sock' }))
verifyIdentity('endpoint-context', identity, { ...identityVerification, expectedPublicEndpoint: '/tmp/public.sock' })
verifyIdentity('not-an-object', null)

// Compatibility: the Boss path.
const evaluate = (id, request, adv = advertisement, record = identity) =>
  add(`compatibility/${id}`, 'evaluateBrokerCompatibility', record === undefined ? [request, adv] : [request, adv, record])
evaluate('boss', bossRequest())
evaluate('boss-superset', bossRequest(), supersetAdvertisement, signedIdentity({ features: supersetAdvertisement.features, featureSetHash: supersetAdvertisement.featureSetHash }))
evaluate('boss-more-versions', bossRequest({ supportedBaseProtocolVersions: [1, 2, 4] }))
evaluate('identity-required', bossRequest(), advertisement, undefined)
evaluate('identity-unsigned', bossRequest(), advertisement, (({ signature, ...rest }) => rest)(identity))
evaluate('identity-key-unknown', withIdentityContext({ trustedIdentityKeys: {} }))
evaluate('identity-signature', withIdentityContext({ trustedIdentityKeys: { [identity.identityKeyId]: pem(otherIdentityKeys.publicKey) } }))
evaluate('attestation-missing', withIdentityContext({ providerAttestation: undefined }))
evaluate('provider-key-unknown', withIdentityContext({ trustedProviderKeys: {} }))
evaluate('provider-signature', withIdentityContext({ trustedProviderKeys: { [provider.attestationKeyId]: pem(otherProviderKeys.publicKey) } }))
evaluate('provider-mismatch', withIdentityContext({ expectedProviderVersion: '2.0.0' }))
evaluate('artifact-mismatch', withIdentityContext({ expectedProviderArtifactMode: '0555' }))
evaluate('stale-boot', withIdentityContext({ expectedBootInstance: 'old-boot' }))
evaluate('regressed-generation', withIdentityContext({ minimumBrokerGeneration: 5 }))
evaluate('endpoint', bossRequest(), advertisement, signedIdentity({ publicEndpoint: '/run/agent-intercom/1000/other.sock' }))
evaluate('endpoint-relative', bossRequest(), advertisement, signedIdentity({ publicEndpoint: 'run/public.sock' }))
evaluate('owner', bossRequest(), advertisement, signedIdentity({ ownerUid: 1001 }))
evaluate('divergence', bossRequest(), advertisement, signedIdentity({ features: supersetAdvertisement.features, featureSetHash: supersetAdvertisement.featureSetHash }))
evaluate('peer-credentials', bossRequest({ observedPeer: { ...observedPeer, kernelPeerCredentialsPresent: false } }))
evaluate('peer-broker-uid', bossRequest({ observedPeer: { ...observedPeer, brokerServiceUid: 1000 } }))
evaluate('peer-pid', bossRequest({ observedPeer: { ...observedPeer, brokerProcessId: 124 } }))
evaluate('peer-capability', bossRequest({ observedPeer: { ...observedPeer, serviceCapabilityPresented: true } }))
evaluate('peer-expected-pid', bossRequest({ peerExpectation: { ...publicPeer, expectedBrokerProcessId: 124 }, observedPeer: { ...observedPeer, brokerProcessId: 124 } }))
evaluate('service-uid', withIdentityContext({ expectedBrokerServiceUid: 992 }))
add('compatibility/parse-request-boss', 'parseBrokerCompatibilityRequest', [bossRequest()])
add('compatibility/parse-request-private-key', 'parseBrokerCompatibilityRequest', [withIdentityContext({ trustedIdentityKeys: { k: pem(identityKeys.privateKey) } })])
add('compatibility/parse-request-bad-key', 'parseBrokerCompatibilityRequest', [withIdentityContext({ trustedIdentityKeys: { k: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n' } })])

// Legacy admin migration and journal recovery.
const migration = {
  version: m.LEGACY_ADMIN_MIGRATION_VERSION,
  ownerUid: 1000,
  legacyAdminDigest: 'b'.repeat(64),
  remoteAccessRegistrationsImported: 3,
  remoteAccessSemanticsVersion: 2,
  legacyAdminState: 'revoked_and_removed',
  compatibilityProxyMode: 'ordinary_data_only',
  bossFeatureAdvertisedByProxy: false,
  protectedRegistryPath: '/var/lib/agent-intercom/brokers/1000/remote-access-registry.json',
  migratedAt: '2026-07-28T12:01:00.000Z',
  auditEventId: 'audit-migration-1',
}
const parseMigration = (id, value) => add(`migration/${id}`, 'parseLegacyAdminMigrationRecord', [value])
parseMigration('valid', migration)
parseMigration('nested', { ...migration, protectedRegistryPath: '/var/lib/agent-intercom/brokers/1000/a/..b/c' })
parseMigration('semantics', { ...migration, remoteAccessSemanticsVersion: 1 })
parseMigration('state', { ...migration, legacyAdminState: 'active' })
parseMigration('proxy', { ...migration, bossFeatureAdvertisedByProxy: true })
parseMigration('owner', { ...migration, ownerUid: -1 })
parseMigration('digest', { ...migration, legacyAdminDigest: 'B'.repeat(64) })
parseMigration('imported', { ...migration, remoteAccessRegistrationsImported: 1.5 })
parseMigration('migrated-at', { ...migration, migratedAt: '2026-07-28' })
parseMigration('extra', { ...migration, extra: true })
parseMigration('version', { ...migration, version: 'intercom.legacy-admin-migration.v2' })
for (const [i, path] of [
  '/var/lib/agent-intercom/brokers/1000/../1001/registry.json',
  '/var/lib/agent-intercom/brokers/1000/./registry.json',
  '/var/lib/agent-intercom/brokers/1000//registry.json',
  '/var/lib/agent-intercom/brokers/1000-extra/registry.json',
  '/var/lib/agent-intercom/brokers/1000',
  '/var/lib/agent-intercom/brokers/1000/',
  '//var/lib/agent-intercom/brokers/1000/registry.json',
  '/var/lib/agent-intercom/brokers/1000\\registry.json',
  '/var/lib/agent-intercom/brokers/1000/registry\0.json',
  '/var/lib/agent-intercom/brokers/1001/registry.json',
  'var/lib/agent-intercom/brokers/1000/registry.json',
].entries()) parseMigration(`registry-path-${i}`, { ...migration, protectedRegistryPath: path })
const recovery = {
  version: m.BROKER_JOURNAL_RECOVERY_VERSION,
  providerDigest: 'a'.repeat(64),
  bootInstance: 'boot-1',
  brokerGeneration: 4,
  committedBrokerRevision: 9,
  recoveredAuthorityTransitionIds: ['transition-a'],
  state: 'reconciled',
  recoveredAt: '2026-07-28T12:00:00.000Z',
}
const parseRecovery = (id, value) => add(`recovery/${id}`, 'parseBrokerJournalRecoveryRecord', [value])
parseRecovery('valid', recovery)
parseRecovery('quarantined', { ...recovery, state: 'quarantined', reason: 'journal tail corrupt' })
parseRecovery('quarantined-no-reason', { ...recovery, state: 'quarantined' })
parseRecovery('reason-when-reconciled', { ...recovery, reason: 'x' })
parseRecovery('duplicate-ids', { ...recovery, recoveredAuthorityTransitionIds: ['a', 'a'] })
parseRecovery('empty-ids', { ...recovery, recoveredAuthorityTransitionIds: [] })
parseRecovery('id-not-string', { ...recovery, recoveredAuthorityTransitionIds: [1] })
parseRecovery('revision-zero', { ...recovery, committedBrokerRevision: 0 })
parseRecovery('generation-zero', { ...recovery, brokerGeneration: 0 })
parseRecovery('state', { ...recovery, state: 'lost' })

// The store validators.
const store = (id, name, value) => add(`store/${id}`, name, [value])
store('provider-valid', 'validateBrokerProviderAttestationStore', provider)
store('provider-newer', 'validateBrokerProviderAttestationStore', { ...provider, version: 'intercom.broker-provider-attestation.v2' })
store('provider-corrupt', 'validateBrokerProviderAttestationStore', { ...provider, artifactMode: '0777' })
store('identity-valid', 'validateBrokerIdentityStore', identity)
store('identity-divergent', 'validateBrokerIdentityStore', signedIdentity({ capabilityDigest: 'c'.repeat(64) }))
store('identity-foreign', 'validateBrokerIdentityStore', { ...identity, version: 7 })
store('identity-array', 'validateBrokerIdentityStore', [identity])
store('migration-valid', 'validateLegacyAdminMigrationStore', migration)
store('migration-older', 'validateLegacyAdminMigrationStore', { ...migration, version: 'intercom.legacy-admin-migration.v0' })
store('migration-no-version', 'validateLegacyAdminMigrationStore', (({ version, ...rest }) => rest)(migration))
store('recovery-valid', 'validateBrokerJournalRecoveryStore', recovery)
store('recovery-foreign', 'validateBrokerJournalRecoveryStore', { ...recovery, version: 'other.thing.v1' })
store('recovery-corrupt', 'validateBrokerJournalRecoveryStore', { ...recovery, state: 'quarantined' })

// Restricted client requests.
const epoch = 2
const base = { version: m.BOSS_RESTRICTED_CLIENT_REQUEST_VERSION, bossRunId: 'run-a', bindingEpoch: epoch }
const managerRequest = (operation, payload, n = operation) => ({
  ...base, client: 'boss_manager', managerParticipantId: 'manager-a', requestId: `request-${n}`, idempotencyKey: `idem-${n}`, operation, payload,
})
const participantRequest = (operation, payload, n = operation) => ({
  ...base, client: 'boss_participant', participantId: 'worker-a', requestId: `request-${n}`, idempotencyKey: `idem-${n}`, operation, payload,
})
const reviewerRequest = (operation, payload, n = operation) => ({
  ...base, client: 'boss_reviewer', participantId: 'adversary-a', requestId: `request-${n}`, idempotencyKey: `idem-${n}`, operation, payload,
})
const checkpoint = { assignmentId: 'assignment-a', checkpointId: 'checkpoint-a', summary: 'summary', occurredAt: '2026-07-28T12:05:00.000Z' }
const health = { state: 'ready', severity: 'info', observedAt: '2026-07-28T12:06:00.000Z' }
const subscription = {
  version: 'orc.lifecycle-subscription.v1',
  subscriptionId: 'subscription-a',
  subscriberPrincipalId: 'principal-manager-a',
  subscriberBindingEpoch: 2,
  subscriberBindingGeneration: 1,
  lastSubscriberAuthorityTransitionId: 'transition-m',
  bossRunId: 'run-a',
  target: { kind: 'role', bossRunId: 'run-a', role: 'worker' },
  followReplacement: true,
  predicates: [{ kind: 'state_in', states: ['blocked'] }],
  cooldownMs: 0,
  delivery: 'status_only',
  state: 'armed',
  triggerGeneration: 0,
  createdAt: '2026-07-28T12:00:00.000Z',
  updatedAt: '2026-07-28T12:00:00.000Z',
}
const requests = {
  manager_get_status: managerRequest('manager_get_status', {}),
  manager_request_staff: managerRequest('manager_request_staff', { role: 'worker', count: 2 }),
  manager_create_assignment: managerRequest('manager_create_assignment', { assignmentId: 'assignment-new', participantId: 'worker-a', objective: 'build' }),
  manager_cancel_assignment: managerRequest('manager_cancel_assignment', { assignmentId: 'assignment-a', reason: 'done' }),
  manager_create_subscription: managerRequest('manager_create_subscription', subscription),
  manager_list_subscriptions: managerRequest('manager_list_subscriptions', {}),
  manager_cancel_subscription: managerRequest('manager_cancel_subscription', { subscriptionId: 'subscription-stored' }),
  manager_submit_checkpoint: managerRequest('manager_submit_checkpoint', checkpoint),
  manager_report_blocker: managerRequest('manager_report_blocker', { blockerId: 'blocker-a', reason: 'stuck' }),
  manager_submit_proof: managerRequest('manager_submit_proof', { proofId: 'proof-m', digest: 'd'.repeat(64) }),
  manager_request_adversary_review: managerRequest('manager_request_adversary_review', { proofId: 'proof-m' }),
  manager_request_council: managerRequest('manager_request_council', { question: 'why?' }),
  participant_accept_assignment: participantRequest('participant_accept_assignment', { assignmentId: 'assignment-a' }),
  participant_reject_assignment: participantRequest('participant_reject_assignment', { assignmentId: 'assignment-a', reason: 'busy' }),
  participant_submit_checkpoint: participantRequest('participant_submit_checkpoint', checkpoint),
  participant_submit_assignment: participantRequest('participant_submit_assignment', { assignmentId: 'assignment-a', resultDigest: 'e'.repeat(64) }),
  participant_report_blocker: participantRequest('participant_report_blocker', { assignmentId: 'assignment-a', reason: 'stuck' }),
  participant_report_health: participantRequest('participant_report_health', health),
  reviewer_get_proof: reviewerRequest('reviewer_get_proof', { proofId: 'proof-m' }),
  reviewer_submit_review: reviewerRequest('reviewer_submit_review', { reviewId: 'review-a', proofId: 'proof-m', decision: 'approved', reason: 'fine' }),
  reviewer_submit_proof: reviewerRequest('reviewer_submit_proof', { proofId: 'proof-r', digest: 'f'.repeat(64) }),
  reviewer_get_objection_status: reviewerRequest('reviewer_get_objection_status', { reviewId: 'review-a' }),
  reviewer_report_health: reviewerRequest('reviewer_report_health', health),
}
const SUPERVISION = ['boss.parseLifecycleSubscription']
const needs = (request) => request.operation.includes('subscription') ? SUPERVISION : undefined
for (const [operation, request] of Object.entries(requests)) {
  add(`request/${operation}`, 'parseBossRestrictedClientRequest', [request], operation === 'manager_create_subscription' ? SUPERVISION : undefined)
}
const p = requests.participant_submit_checkpoint
for (const [id, value] of Object.entries({
  'wrong-client': { ...p, client: 'boss_manager' },
  'unknown-operation': { ...p, operation: 'unknown_operation' },
  'other-client-operation': { ...p, operation: 'manager_create_assignment' },
  extra: { ...p, extra: true },
  'payload-extra': { ...p, payload: { ...p.payload, extra: true } },
  'payload-empty': { ...p, payload: {} },
  'payload-timestamp': { ...p, payload: { ...p.payload, occurredAt: 'not-a-timestamp' } },
  'payload-array': { ...p, payload: [] },
  epoch: { ...p, bindingEpoch: 0 },
  version: { ...p, version: 'boss.restricted-client-request.v2' },
  'health-state': { ...requests.participant_report_health, payload: { ...health, state: 'unknown' } },
  'staff-count': { ...requests.manager_request_staff, payload: { role: 'worker', count: 0 } },
  'staff-role': { ...requests.manager_request_staff, payload: { role: 'boss', count: 1 } },
  'digest-upper': { ...requests.manager_submit_proof, payload: { proofId: 'proof-m', digest: 'D'.repeat(64) } },
  'review-decision': { ...requests.reviewer_submit_review, payload: { ...requests.reviewer_submit_review.payload, decision: 'maybe' } },
  'subscription-triggered': { ...requests.manager_create_subscription, payload: { ...subscription, state: 'triggered' } },
  'subscription-generation': { ...requests.manager_create_subscription, payload: { ...subscription, triggerGeneration: 1 } },
  'subscription-updated': { ...requests.manager_create_subscription, payload: { ...subscription, updatedAt: '2026-07-28T12:00:01.000Z' } },
  'subscription-due': { ...requests.manager_create_subscription, payload: { ...subscription, dueAt: '2026-07-28T12:00:01.000Z' } },
  'not-an-object': 7,
})) add(`request/invalid-${id}`, 'parseBossRestrictedClientRequest', [value], id.startsWith('subscription') ? SUPERVISION : undefined)
add('idempotency/scope', 'bossRestrictedClientIdempotencyScope', [p])
add('idempotency/record', 'createBossRestrictedClientIdempotencyRecord', [p])
add('idempotency/record-manager', 'createBossRestrictedClientIdempotencyRecord', [requests.manager_report_blocker])
add('idempotency/record-invalid', 'createBossRestrictedClientIdempotencyRecord', [{ ...p, requestId: '' }])

// Authorization.
const principal = (id, fields) => ({ version: m.BOSS_POLICY_PRINCIPAL_VERSION, principalId: id, principalClass: 'boss-private', state: 'active', bossRunId: 'run-a', bindingEpoch: epoch, ...fields })
const policy = {
  principals: {
    'principal-manager-a': principal('principal-manager-a', { participantId: 'manager-a', role: 'manager', assignedParticipantIds: ['worker-a', 'worker-b'] }),
    'principal-worker-a': principal('principal-worker-a', { participantId: 'worker-a', role: 'worker', assignedManagerParticipantId: 'manager-a' }),
    'principal-worker-b': principal('principal-worker-b', { participantId: 'worker-b', role: 'worker', assignedManagerParticipantId: 'manager-a' }),
    'principal-adversary-a': principal('principal-adversary-a', { participantId: 'adversary-a', role: 'adversary' }),
    'principal-revoked': { ...principal('principal-revoked', { participantId: 'worker-c', role: 'worker', assignedManagerParticipantId: 'manager-a' }), state: 'revoked' },
  },
}
const binding = (participantId, role, fields = {}) => ({
  version: m.BOSS_PARTICIPANT_BINDING_VERSION,
  bossRunId: 'run-a',
  participantId,
  role,
  communicationProfile: role,
  bindingEpoch: epoch,
  sessionId: `session-${participantId}`,
  brokerGeneration: 4,
  brokerBootInstance: 'boot-1',
  state: 'active',
  ...(role === 'worker' ? { assignedManagerParticipantId: 'manager-a' } : {}),
  authorityTransitionId: participantId === 'manager-a' ? 'transition-m' : 'transition-a',
  ...fields,
})
const evidence = {
  assignments: [
    { bossRunId: 'run-a', assignmentId: 'assignment-a', managerParticipantId: 'manager-a', participantId: 'worker-a' },
  ],
  proofs: [
    { bossRunId: 'run-a', proofId: 'proof-m', ownerParticipantId: 'manager-a', reviewerParticipantIds: ['adversary-a'] },
    { bossRunId: 'run-a', proofId: 'proof-r', ownerParticipantId: 'adversary-a', reviewerParticipantIds: [] },
  ],
  reviews: [
    { bossRunId: 'run-a', reviewId: 'review-a', proofId: 'proof-m', requesterParticipantId: 'manager-a', reviewerParticipantId: 'adversary-a', state: 'pending' },
  ],
  supervision: [{
    bossRunId: 'run-a',
    subscriberPrincipalId: 'principal-manager-a',
    subscriberParticipantId: 'manager-a',
    subscriberBindingEpoch: 2,
    subscriberBindingGeneration: 1,
    target: { kind: 'role', bossRunId: 'run-a', role: 'worker' },
    targetParticipantIds: ['worker-a', 'worker-b'],
  }],
  subscriptions: [{ ...subscription, subscriptionId: 'subscription-stored' }],
}
const contextFor = (client) => client === 'boss_manager'
  ? { policy, principalId: 'principal-manager-a', currentBinding: binding('manager-a', 'manager'), ...evidence }
  : client === 'boss_participant'
    ? { policy, principalId: 'principal-worker-a', currentBinding: binding('worker-a', 'worker'), ...evidence }
    : { policy, principalId: 'principal-adversary-a', currentBinding: binding('adversary-a', 'adversary'), ...evidence }
const authorize = (id, request, context = contextFor(request.client), requires = needs(request)) =>
  add(`authorize/${id}`, 'authorizeBossRestrictedClientRequest', [request, context], requires)
for (const [operation, request] of Object.entries(requests)) authorize(operation, request)
const worker = contextFor('boss_participant')
const without = (context, key) => { const copy = { ...context }; delete copy[key]; return copy }
for (const [operation, key] of [
  ['participant_accept_assignment', 'assignments'],
  ['manager_submit_proof', 'proofs'],
  ['reviewer_submit_review', 'reviews'],
  ['manager_create_subscription', 'supervision'],
  ['manager_cancel_subscription', 'subscriptions'],
]) authorize(`${operation}-without-${key}`, requests[operation], without(contextFor(requests[operation].client), key))
authorize('unknown-principal', p, { ...worker, principalId: 'principal-nobody' })
authorize('policy-not-exact', p, { ...worker, policy: { principals: policy.principals, extra: {} } })
authorize('principal-not-active', p, { ...worker, principalId: 'principal-revoked', currentBinding: binding('worker-c', 'worker') })
authorize('principal-not-object', p, { ...worker, policy: { principals: { ...policy.principals, 'principal-worker-a': 'x' } } })
authorize('principal-filed-elsewhere', p, { ...worker, principalId: 'principal-x', policy: { principals: { ...policy.principals, 'principal-x': policy.principals['principal-worker-a'] } } })
authorize('binding-malformed', p, { ...worker, currentBinding: { ...worker.currentBinding, extra: 1 } })
authorize('binding-not-active', p, { ...worker, currentBinding: binding('worker-a', 'worker', { state: 'revoked' }) })
authorize('binding-mismatch', p, { ...worker, currentBinding: binding('worker-a', 'worker', { bindingEpoch: 3 }) })
authorize('unauthorized-role', { ...p, client: 'boss_reviewer', operation: 'reviewer_report_health', payload: health }, worker)
authorize('participant-mismatch', { ...p, participantId: 'worker-b' })
authorize('stale-epoch', { ...p, bindingEpoch: 1 })
authorize('cross-run', { ...p, bossRunId: 'run-b' })
authorize('assignment-other-worker', participantRequest('participant_accept_assignment', { assignmentId: 'assignment-a' }, 'x'), { ...worker, assignments: [{ ...evidence.assignments[0], participantId: 'worker-b' }] })
authorize('assignment-missing', participantRequest('participant_accept_assignment', { assignmentId: 'assignment-z' }, 'x'))
authorize('assignment-duplicate', participantRequest('participant_accept_assignment', { assignmentId: 'assignment-a' }, 'x'), { ...worker, assignments: [evidence.assignments[0], evidence.assignments[0]] })
authorize('assignment-malformed', participantRequest('participant_accept_assignment', { assignmentId: 'assignment-a' }, 'x'), { ...worker, assignments: [{ ...evidence.assignments[0], extra: 1 }] })
authorize('create-assignment-collision', managerRequest('manager_create_assignment', { assignmentId: 'assignment-a', participantId: 'worker-a', objective: 'x' }, 'x'))
authorize('create-assignment-unassigned', managerRequest('manager_create_assignment', { assignmentId: 'assignment-n', participantId: 'worker-c', objective: 'x' }, 'x'))
authorize('adversary-review-no-adversary', requests.manager_request_adversary_review, { ...contextFor('boss_manager'), proofs: [{ ...evidence.proofs[0], reviewerParticipantIds: ['worker-a'] }] })
authorize('review-not-pending', requests.reviewer_submit_review, { ...contextFor('boss_reviewer'), reviews: [{ ...evidence.reviews[0], state: 'submitted' }] })
authorize('objection-status-submitted', requests.reviewer_get_objection_status, { ...contextFor('boss_reviewer'), reviews: [{ ...evidence.reviews[0], state: 'submitted' }] })
authorize('subscription-collision', requests.manager_create_subscription, { ...contextFor('boss_manager'), subscriptions: [subscription] })
authorize('subscription-worker-target-subset', requests.manager_create_subscription, { ...contextFor('boss_manager'), supervision: [{ ...evidence.supervision[0], targetParticipantIds: ['worker-a'] }] })
const record = m.createBossRestrictedClientIdempotencyRecord(p)
authorize('replay', p, { ...worker, idempotencyRecords: [record] })
authorize('replay-without-evidence', p, { ...without(worker, 'assignments'), idempotencyRecords: [record] })
authorize('request-id-conflict', { ...p, idempotencyKey: 'idem-other' }, { ...worker, idempotencyRecords: [record] })
authorize('idempotency-conflict', { ...p, requestId: 'request-other' }, { ...worker, idempotencyRecords: [record] })
authorize('request-id-cross-run', p, { ...worker, idempotencyRecords: [m.createBossRestrictedClientIdempotencyRecord({ ...p, bossRunId: 'run-b' })] })
authorize('idempotency-record-unbound', p, { ...worker, idempotencyRecords: [{ ...record, scope: '0'.repeat(64) }] })
authorize('idempotency-record-malformed', p, { ...worker, idempotencyRecords: [{ ...record, extra: true }] })
authorize('context-extra', p, { ...worker, extra: true })
authorize('context-principal-id', p, { ...worker, principalId: '' })
authorize('request-malformed', { ...p, payload: {} })

// Restricted results.
const result = (request, status, outcome) => ({
  version: m.BOSS_RESTRICTED_CLIENT_RESULT_VERSION,
  bossRunId: request.bossRunId,
  client: request.client,
  ...(request.client === 'boss_manager' ? { managerParticipantId: request.managerParticipantId } : { participantId: request.participantId }),
  bindingEpoch: request.bindingEpoch,
  requestId: request.requestId,
  idempotencyKey: request.idempotencyKey,
  operation: request.operation,
  status,
  ...outcome,
})
const okPayloads = {
  manager_get_status: { status: 'running' },
  manager_request_staff: { staffRequestId: 'staff-a' },
  manager_create_assignment: { assignmentId: 'assignment-new' },
  manager_cancel_assignment: { assignmentId: 'assignment-a' },
  manager_create_subscription: { subscriptionId: 'subscription-a' },
  manager_list_subscriptions: { subscriptionIds: ['subscription-a'] },
  manager_cancel_subscription: { subscriptionId: 'subscription-stored' },
  manager_submit_checkpoint: { assignmentId: 'assignment-a', checkpointId: 'checkpoint-a', recordedAt: '2026-07-28T12:07:00.000Z' },
  manager_report_blocker: { blockerId: 'blocker-a' },
  manager_submit_proof: { proofId: 'proof-m' },
  manager_request_adversary_review: { reviewId: 'review-a' },
  participant_accept_assignment: { assignmentId: 'assignment-a' },
  participant_reject_assignment: { assignmentId: 'assignment-a' },
  participant_submit_checkpoint: { assignmentId: 'assignment-a', checkpointId: 'checkpoint-a', recordedAt: '2026-07-28T12:07:00.000Z' },
  participant_submit_assignment: { assignmentId: 'assignment-a' },
  participant_report_blocker: { blockerId: 'blocker-a' },
  participant_report_health: { healthEventId: 'health-a' },
  reviewer_get_proof: { proofId: 'proof-m', digest: 'd'.repeat(64) },
  reviewer_submit_review: { reviewId: 'review-a' },
  reviewer_submit_proof: { proofId: 'proof-r' },
  reviewer_get_objection_status: { reviewId: 'review-a', status: 'open' },
  reviewer_report_health: { healthEventId: 'health-r' },
}
for (const [operation, payload] of Object.entries(okPayloads)) {
  const request = requests[operation]
  add(`result/${operation}`, 'parseBossRestrictedClientResult', [result(request, 'ok', { payload }), request], needs(request))
}
const pr = requests.participant_submit_checkpoint
const okResult = result(pr, 'ok', { payload: okPayloads.participant_submit_checkpoint })
add('result/unbound', 'parseBossRestrictedClientResult', [okResult])
add('result/unauthorized', 'parseBossRestrictedClientResult', [result(pr, 'unauthorized', { denialCode: 'STALE_BINDING_EPOCH' }), pr])
add('result/unauthorized-unknown-code', 'parseBossRestrictedClientResult', [result(pr, 'unauthorized', { denialCode: 'NOPE' })])
add('result/rejected', 'parseBossRestrictedClientResult', [result(pr, 'rejected', { errorCode: 'nope' })])
add('result/conflict-with-payload', 'parseBossRestrictedClientResult', [result(pr, 'conflict', { payload: {} })])
add('result/council', 'parseBossRestrictedClientResult', [result(requests.manager_request_council, 'feature_not_enabled', { errorCode: 'feature_not_enabled' }), requests.manager_request_council])
add('result/council-ok', 'parseBossRestrictedClientResult', [result(requests.manager_request_council, 'ok', { payload: {} })])
add('result/council-other-code', 'parseBossRestrictedClientResult', [result(requests.manager_request_council, 'feature_not_enabled', { errorCode: 'other' })])
add('result/other-request', 'parseBossRestrictedClientResult', [okResult, { ...pr, requestId: 'request-other' }])
add('result/echo-mismatch', 'parseBossRestrictedClientResult', [result(pr, 'ok', { payload: { ...okPayloads.participant_submit_checkpoint, checkpointId: 'checkpoint-b' } }), pr])
add('result/digest', 'parseBossRestrictedClientResult', [result(requests.reviewer_get_proof, 'ok', { payload: { proofId: 'proof-m', digest: 'A'.repeat(64) } })])
add('result/status', 'parseBossRestrictedClientResult', [result(pr, 'done', {})])
add('binding/ok', 'assertBossRestrictedClientResultBinding', [okResult, pr])
add('binding/epoch', 'assertBossRestrictedClientResultBinding', [{ ...okResult, bindingEpoch: 3 }, pr])
add('binding/echo', 'assertBossRestrictedClientResultBinding', [result(pr, 'ok', { payload: { ...okPayloads.participant_submit_checkpoint, assignmentId: 'assignment-b' } }), pr])
add('binding/error-result', 'assertBossRestrictedClientResultBinding', [result(pr, 'rejected', { errorCode: 'x' }), pr])
add('binding/bad-request', 'assertBossRestrictedClientResultBinding', [okResult, { ...pr, payload: {} }])

const ids = new Set()
for (const c of cases) {
  if (ids.has(c.id)) throw new Error(`duplicate case id ${c.id}`)
  ids.add(c.id)
}
// Shared parts: an object or array whose JSON text is long and occurs more than once is stored
// once in `bases` and replaced by {"$ref": name} wherever it occurs (bases may refer to bases).
const counts = new Map()
const walk = (v) => {
  if (v === null || typeof v !== 'object') return
  const text = JSON.stringify(v)
  if (text.length >= 100) counts.set(text, (counts.get(text) || 0) + 1)
  for (const item of Object.values(v)) walk(item)
}
for (const c of cases) { walk(c.args); walk(c.expect) }
const names = new Map()
const bases = {}
const hoist = (v) => {
  if (v === null || typeof v !== 'object') return v
  const text = JSON.stringify(v)
  const shared = (counts.get(text) || 0) > 1
  if (shared && names.has(text)) return { $ref: names.get(text) }
  const copy = Array.isArray(v) ? v.map(hoist) : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, hoist(x)]))
  if (!shared) return copy
  const name = `b${names.size}`
  names.set(text, name)
  bases[name] = copy
  return { $ref: name }
}
const stored = cases.map((c) => ({ ...c, args: c.args.map(hoist), expect: hoist(c.expect) }))

const header = {
  version: 1,
  source: 'outcomes of @ctliz/agent-intercom-core 0.2.0 (dist); regenerate with core/tests/data/gen-boss-service.mjs',
  description: 'Each case calls `op` (a ./boss operation of boss-service.ts) with `args` and gets `expect`, ' +
    'what the TypeScript core gives: {kind: "value", value} (compared with its member order), {kind: "bytes", text} ' +
    '(a Uint8Array: the UTF-8 text of the frame), {kind: "undefined"}, or {kind: "error", class, path?, message, code?}. ' +
    'Anywhere in a case (and in `bases`), {"$ref": name} stands for a copy of `bases[name]`. ' +
    'Signatures are real Ed25519 signatures by keys made from fixed seeds; trust stores hold PEM text. A case with ' +
    '`requires` needs those operations of other ./boss modules (a runner skips it, counted, when the build lacks one); ' +
    'a case with `nul: true` has a NUL character in a string argument.',
  count: cases.length,
}
const line = (x) => JSON.stringify(x)
writeFileSync(out, JSON.stringify(header, null, 1).replace(/\n}$/, ',\n "bases": {\n') +
  Object.entries(bases).map(([k, v]) => `  ${line(k)}: ${line(v)}`).join(',\n') + '\n },\n "cases": [\n' +
  stored.map((c) => '  ' + line(c)).join(',\n') + '\n ]\n}\n')
console.log(`${out.pathname}: ${cases.length} cases, ${names.size} shared parts`)

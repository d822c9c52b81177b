'use strict'
// The broker and restricted-client part of @ctliz/agent-intercom-core/boss (boss-service.ts of the
// TypeScript core): feature attestations, capability advertisements and compatibility, protected
// broker identities and provider attestations with their Ed25519 verification, the legacy admin
// migration and journal recovery records, the four store validators, and restricted Boss client
// requests, results and their authorization. Every rule is the Rust core's
// (core/src/boss/service/); each function is one call into it.
//
// Trust stores may hold node:crypto KeyObjects, which the snapshot does not enter: beside the
// arguments, the core is handed a table of the KeyObjects found (by descriptor, never by a getter)
// at each trust-store entry, with the SPKI DER of the public ones (core/src/boss/service/keys.rs).
const { types: { isProxy, isKeyObject } } = require('node:util')
const { call, registerError, ContractValidationError } = require('../lib/contract.js')
const { validateVersionedStoreRecord } = require('../canonical/index.js')
const C = require('./constants.js')

const { getOwnPropertyDescriptor } = Object
const { ownKeys } = Reflect
const encoder = new TextEncoder()

/** A capability advertisement refusal: a ContractValidationError with a denial `code`. */
class BrokerCapabilityAdvertisementError extends ContractValidationError {
  constructor (path, message, code) {
    super(path, message)
    this.name = 'BrokerCapabilityAdvertisementError'
    this.code = code
  }
}

registerError('BrokerCapabilityAdvertisementError', (f) => new BrokerCapabilityAdvertisementError(f.path, f.detail, f.code))

/** An own data property's value (undefined for an accessor, a proxy or a non-object). */
function own (value, key) {
  if (typeof value !== 'object' || value === null || isProxy(value)) return undefined
  const descriptor = getOwnPropertyDescriptor(value, key)
  return descriptor !== undefined && 'value' in descriptor ? descriptor.value : undefined
}

// A KeyObject cannot change: its SPKI export is kept.
const spkiOf = new WeakMap()
function spki (key) {
  let der = spkiOf.get(key)
  if (der === undefined) {
    der = key.export({ type: 'spki', format: 'der' }).toString('base64')
    spkiOf.set(key, der)
  }
  return der
}

const STORES = ['trustedIdentityKeys', 'trustedProviderKeys']

/** The KeyObjects at the trust-store entries of a verification context: [table, found]. */
function keyObjects (context) {
  const table = []
  const found = []
  for (const field of STORES) {
    const store = own(context, field)
    if (typeof store !== 'object' || store === null || isProxy(store)) continue
    for (const id of ownKeys(store)) {
      if (typeof id !== 'string') continue
      const key = own(store, id)
      if (!isKeyObject(key)) continue
      const type = key.type
      table.push({ field, id, type, spki: type === 'public' ? spki(key) : undefined })
      found.push([field, id, key])
    }
  }
  return [table, found]
}

const parseBrokerFeatureAttestation = (value) => call('boss.parseBrokerFeatureAttestation', [value])
const brokerFeatureSetHash = (features) => call('boss.brokerFeatureSetHash', [features])
const parseBrokerCapabilityAdvertisement = (value) => call('boss.parseBrokerCapabilityAdvertisement', [value])
const parseBrokerIdentityRecord = (value) => call('boss.parseBrokerIdentityRecord', [value])
const parseBrokerProviderAttestation = (value) => call('boss.parseBrokerProviderAttestation', [value])
const parseBrokerPeerExpectation = (value) => call('boss.parseBrokerPeerExpectation', [value])
const parseObservedBrokerPeer = (value) => call('boss.parseObservedBrokerPeer', [value])
const authorizeBrokerPeer = (expectation, observed) => call('boss.authorizeBrokerPeer', [expectation, observed])

/** A fresh request; a trust store's KeyObjects are the caller's own objects. */
function parseBrokerCompatibilityRequest (value) {
  const [table, found] = keyObjects(own(value, 'identityVerification'))
  const request = call('boss.parseBrokerCompatibilityRequest', [value, table])
  const context = request.identityVerification
  if (context !== undefined) for (const [field, id, key] of found) context[field][id] = key
  return request
}

function evaluateBrokerCompatibility (request, advertisement, identity) {
  const [table] = keyObjects(own(request, 'identityVerification'))
  return call('boss.evaluateBrokerCompatibility', [request, advertisement, identity, table])
}

function verifyBrokerProviderAttestation (attestation, context) {
  return call('boss.verifyBrokerProviderAttestation', [attestation, context, keyObjects(context)[0]])
}

function verifyProtectedBrokerIdentity (identity, context) {
  return call('boss.verifyProtectedBrokerIdentity', [identity, context, keyObjects(context)[0]])
}

/** canonicalFrame(BROKER_PROVIDER_ATTESTATION_SIGNATURE_DOMAIN, the record without its signature). */
function brokerProviderAttestationSigningBytes (value) {
  return encoder.encode(call('boss.brokerProviderAttestationSigningBytes', [value]))
}

/** canonicalFrame(BROKER_IDENTITY_SIGNATURE_DOMAIN, the record without its signature). */
function brokerIdentitySigningBytes (value) {
  return encoder.encode(call('boss.brokerIdentitySigningBytes', [value]))
}

const parseLegacyAdminMigrationRecord = (value) => call('boss.parseLegacyAdminMigrationRecord', [value])
const parseBrokerJournalRecoveryRecord = (value) => call('boss.parseBrokerJournalRecoveryRecord', [value])

const validateBrokerProviderAttestationStore = (value) =>
  validateVersionedStoreRecord(value, C.BROKER_PROVIDER_ATTESTATION_VERSION, parseBrokerProviderAttestation)
const validateBrokerIdentityStore = (value) =>
  validateVersionedStoreRecord(value, C.BROKER_IDENTITY_RECORD_VERSION, parseBrokerIdentityRecord)
const validateLegacyAdminMigrationStore = (value) =>
  validateVersionedStoreRecord(value, C.LEGACY_ADMIN_MIGRATION_VERSION, parseLegacyAdminMigrationRecord)
const validateBrokerJournalRecoveryStore = (value) =>
  validateVersionedStoreRecord(value, C.BROKER_JOURNAL_RECOVERY_VERSION, parseBrokerJournalRecoveryRecord)

const parseBossRestrictedClientRequest = (value) => call('boss.parseBossRestrictedClientRequest', [value])
const bossRestrictedClientIdempotencyScope = (request) => call('boss.bossRestrictedClientIdempotencyScope', [request])
const createBossRestrictedClientIdempotencyRecord = (request) =>
  call('boss.createBossRestrictedClientIdempotencyRecord', [request])
const authorizeBossRestrictedClientRequest = (request, context) =>
  call('boss.authorizeBossRestrictedClientRequest', [request, context])
const parseBossRestrictedClientResult = (value, request) => call('boss.parseBossRestrictedClientResult', [value, request])
const assertBossRestrictedClientResultBinding = (result, request) =>
  call('boss.assertBossRestrictedClientResultBinding', [result, request])

module.exports = {
  BROKER_FEATURE_ATTESTATION_VERSION: C.BROKER_FEATURE_ATTESTATION_VERSION,
  BROKER_IDENTITY_RECORD_VERSION: C.BROKER_IDENTITY_RECORD_VERSION,
  BROKER_PROVIDER_ATTESTATION_VERSION: C.BROKER_PROVIDER_ATTESTATION_VERSION,
  BROKER_PEER_EXPECTATION_VERSION: C.BROKER_PEER_EXPECTATION_VERSION,
  LEGACY_ADMIN_MIGRATION_VERSION: C.LEGACY_ADMIN_MIGRATION_VERSION,
  BROKER_JOURNAL_RECOVERY_VERSION: C.BROKER_JOURNAL_RECOVERY_VERSION,
  BOSS_RESTRICTED_CLIENT_REQUEST_VERSION: C.BOSS_RESTRICTED_CLIENT_REQUEST_VERSION,
  BOSS_RESTRICTED_CLIENT_RESULT_VERSION: C.BOSS_RESTRICTED_CLIENT_RESULT_VERSION,
  BROKER_FEATURE_SET_HASH_DOMAIN: C.BROKER_FEATURE_SET_HASH_DOMAIN,
  BROKER_IDENTITY_SIGNATURE_DOMAIN: C.BROKER_IDENTITY_SIGNATURE_DOMAIN,
  BROKER_PROVIDER_ATTESTATION_SIGNATURE_DOMAIN: C.BROKER_PROVIDER_ATTESTATION_SIGNATURE_DOMAIN,
  BROKER_PROTECTED_PROVIDER_ROOT: C.BROKER_PROTECTED_PROVIDER_ROOT,
  BOSS_MANAGER_OPERATIONS: C.BOSS_MANAGER_OPERATIONS,
  BOSS_PARTICIPANT_OPERATIONS: C.BOSS_PARTICIPANT_OPERATIONS,
  BOSS_REVIEWER_OPERATIONS: C.BOSS_REVIEWER_OPERATIONS,
  BOSS_RESTRICTED_AUTHORIZATION_DENIAL_CODES: C.BOSS_RESTRICTED_AUTHORIZATION_DENIAL_CODES,
  RESTRICTED_RESULT_STATUSES: C.RESTRICTED_RESULT_STATUSES,
  BrokerCapabilityAdvertisementError,
  parseBrokerFeatureAttestation,
  brokerFeatureSetHash,
  parseBrokerCapabilityAdvertisement,
  parseBrokerCompatibilityRequest,
  evaluateBrokerCompatibility,
  brokerProviderAttestationSigningBytes,
  parseBrokerProviderAttestation,
  verifyBrokerProviderAttestation,
  parseBrokerIdentityRecord,
  brokerIdentitySigningBytes,
  parseBrokerPeerExpectation,
  parseObservedBrokerPeer,
  authorizeBrokerPeer,
  verifyProtectedBrokerIdentity,
  parseLegacyAdminMigrationRecord,
  parseBrokerJournalRecoveryRecord,
  parseBossRestrictedClientRequest,
  bossRestrictedClientIdempotencyScope,
  createBossRestrictedClientIdempotencyRecord,
  authorizeBossRestrictedClientRequest,
  parseBossRestrictedClientResult,
  assertBossRestrictedClientResultBinding,
  validateBrokerProviderAttestationStore,
  validateBrokerIdentityStore,
  validateLegacyAdminMigrationStore,
  validateBrokerJournalRecoveryStore,
}

'use strict'
// @ctliz/agent-intercom-core/boss: the Boss run contract. Constants are read once from the Rust
// core at load; every function is one call into it (lib/contract.js), which snapshots the
// arguments without running a getter or entering a proxy and throws the error the core names.
const { call } = require('../lib/contract.js')
const policy = require('./policy.js')
const feature = require('./feature.js')
const vectors = require('./vectors.js')
const workerStore = require('./worker-store.js')
const participant = require('./participant.js')
const credential = require('./credential.js')
const authority = require('./authority.js')
const supervision = require('./supervision.js')
const delivery = require('./delivery.js')
const service = require('./service.js')

const C = require('./constants.js')

// One array, two names, as in the TypeScript core.
const roles = C.BOSS_PARTICIPANT_ROLES

const parseBossRunFeatureContract = (value) => call('boss.parseBossRunFeatureContract', [value])
const parseBossRunAuthorityIdentity = (value) => call('boss.parseBossRunAuthorityIdentity', [value])
const parseBossParticipantBinding = (value) => call('boss.parseBossParticipantBinding', [value])
const parseBossParticipantCredentialEnvelope = (value) => call('boss.parseBossParticipantCredentialEnvelope', [value])
const credentialDigest = (envelope) => call('boss.credentialDigest', [envelope])
const parseBossControlEnvelope = (value) => call('boss.parseBossControlEnvelope', [value])
const parseWorkerIdentityV2 = (value) => call('boss.parseWorkerIdentityV2', [value])
const workerIdentityFromEnvironment = (value) => call('boss.workerIdentityFromEnvironment', [value])
const parseWorkerEventIdentityV2 = (value) => call('boss.parseWorkerEventIdentityV2', [value])

module.exports = {
  ...policy,
  ...feature,
  ...vectors,
  ...workerStore,
  ...participant,
  ...credential,
  ...authority,
  ...supervision,
  ...delivery,
  ...service,
  INTERCOM_BASE_PROTOCOL_VERSION: C.INTERCOM_BASE_PROTOCOL_VERSION,
  BOSS_RUN_FEATURE: C.BOSS_RUN_FEATURE,
  BOSS_RUN_FEATURE_VERSION: C.BOSS_RUN_FEATURE_VERSION,
  BOSS_CONTROL_ENVELOPE_VERSION: C.BOSS_CONTROL_ENVELOPE_VERSION,
  BOSS_RUN_FEATURE_SEMANTICS_CORPUS: C.BOSS_RUN_FEATURE_SEMANTICS_CORPUS,
  BOSS_RUN_FEATURE_SEMANTICS_HASH: C.BOSS_RUN_FEATURE_SEMANTICS_HASH,
  BOSS_RUN_FEATURE_CONTRACT: C.BOSS_RUN_FEATURE_CONTRACT,
  BOSS_RUN_PROTOCOL_FEATURE_CONTRACT_HASH: C.BOSS_RUN_PROTOCOL_FEATURE_CONTRACT_HASH,
  BOSS_CAPABILITY_FEATURE_CONTRACT_VERSION: C.BOSS_CAPABILITY_FEATURE_CONTRACT_VERSION,
  BOSS_CAPABILITY_FEATURE_DIGEST: C.BOSS_CAPABILITY_FEATURE_DIGEST,
  BOSS_PARTICIPANT_ROLES: roles,
  BOSS_COMMUNICATION_PROFILES: roles,
  BOSS_BINDING_STATES: C.BOSS_BINDING_STATES,
  BOSS_CREDENTIAL_KINDS: C.BOSS_CREDENTIAL_KINDS,
  BOSS_CONTROL_TYPES: C.BOSS_CONTROL_TYPES,
  BOSS_RUN_AUTHORITY_IDENTITY_VERSION: C.BOSS_RUN_AUTHORITY_IDENTITY_VERSION,
  BOSS_PARTICIPANT_BINDING_VERSION: C.BOSS_PARTICIPANT_BINDING_VERSION,
  BOSS_PARTICIPANT_CREDENTIAL_VERSION: C.BOSS_PARTICIPANT_CREDENTIAL_VERSION,
  BOSS_CREDENTIAL_DIGEST_RECORD_VERSION: C.BOSS_CREDENTIAL_DIGEST_RECORD_VERSION,
  BOSS_CREDENTIAL_AUDIT_EVENT_VERSION: C.BOSS_CREDENTIAL_AUDIT_EVENT_VERSION,
  AUTHORITY_TRANSITION_VERSION: C.AUTHORITY_TRANSITION_VERSION,
  AUTHORITY_EVENT_VERSION: C.AUTHORITY_EVENT_VERSION,
  AUTHORITY_REQUEST_VERSION: C.AUTHORITY_REQUEST_VERSION,

  WORKER_IDENTITY_VERSION: C.WORKER_IDENTITY_VERSION,
  parseBossRunFeatureContract,
  parseBossRunAuthorityIdentity,
  parseBossParticipantBinding,
  parseBossParticipantCredentialEnvelope,
  credentialDigest,
  parseBossControlEnvelope,
  parseWorkerIdentityV2,
  workerIdentityFromEnvironment,
  parseWorkerEventIdentityV2,
}

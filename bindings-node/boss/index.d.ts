// @ctliz/agent-intercom-core/boss: the Boss run contract's wire records, broker capability
// negotiation and worker identity (this file), participant state (./participant), and the Boss
// policy (./policy). The names and shapes are those of the TypeScript core 0.2.0.
import type { CanonicalValue } from '../canonical/index.js'
import { ContractValidationError } from '../canonical/index.js'

export * from './policy.js'
export * from './feature.js'
export * from './vectors.js'
export * from './worker-store.js'
export * from './participant.js'
export * from './credential.js'
export * from './authority.js'
export * from './supervision.js'
export * from './delivery.js'

type ParticipantBindingEpoch = number
type BrokerGeneration = number
type WorkerGeneration = number
type ControllerGeneration = number
type BrokerRevision = number
type BossBindingEpoch = number

export declare const INTERCOM_BASE_PROTOCOL_VERSION: 4
export declare const BOSS_RUN_FEATURE: 'boss-run-v1'
export declare const BOSS_RUN_FEATURE_VERSION: 1
export declare const BOSS_CONTROL_ENVELOPE_VERSION: 1
export declare const BOSS_CAPABILITY_FEATURE_CONTRACT_VERSION: 1
/** Computed by the core: canonicalHash(".../boss-run-v1/feature-semantics", BOSS_RUN_FEATURE_SEMANTICS_CORPUS). */
export declare const BOSS_RUN_FEATURE_SEMANTICS_HASH: string
/** Computed by the core: canonicalHash(".../boss-run-v1/protocol-feature-contract", BOSS_RUN_FEATURE_CONTRACT). */
export declare const BOSS_RUN_PROTOCOL_FEATURE_CONTRACT_HASH: string
/** Computed by the core: canonicalHash(".../boss-run-v1/capability-feature-digest", the capability binding). */
export declare const BOSS_CAPABILITY_FEATURE_DIGEST: string
export declare const BOSS_RUN_FEATURE_SEMANTICS_CORPUS: {
  readonly feature: typeof BOSS_RUN_FEATURE
  readonly version: typeof BOSS_RUN_FEATURE_VERSION
  readonly baseProtocolVersion: typeof INTERCOM_BASE_PROTOCOL_VERSION
  readonly controlEnvelopeVersion: typeof BOSS_CONTROL_ENVELOPE_VERSION
  readonly [key: string]: string | number
}

export interface BossRunFeatureContract {
  feature: typeof BOSS_RUN_FEATURE
  version: typeof BOSS_RUN_FEATURE_VERSION
  baseProtocolVersion: typeof INTERCOM_BASE_PROTOCOL_VERSION
  semanticsHash: string
  controlEnvelopeVersion: typeof BOSS_CONTROL_ENVELOPE_VERSION
}
export declare const BOSS_RUN_FEATURE_CONTRACT: BossRunFeatureContract
/** Returns `value` itself when it is exactly the Boss feature contract. */
export declare function parseBossRunFeatureContract(value: unknown): BossRunFeatureContract

export declare const BOSS_PARTICIPANT_ROLES: readonly ['boss', 'manager', 'adversary', 'scout', 'worker', 'council']
export type BossParticipantRole = (typeof BOSS_PARTICIPANT_ROLES)[number]
export declare const BOSS_COMMUNICATION_PROFILES: typeof BOSS_PARTICIPANT_ROLES
export type BossCommunicationProfile = BossParticipantRole

export declare const BOSS_RUN_AUTHORITY_IDENTITY_VERSION: 'boss.run-authority.v1'
export interface BossRunAuthorityIdentity {
  version: typeof BOSS_RUN_AUTHORITY_IDENTITY_VERSION
  controllerPrincipalId: string
  bossRunId: string
  controllerGeneration: ControllerGeneration
  authorityTransitionRevision: BrokerRevision
  activeBossSessionId?: string
  bossBindingEpoch: BossBindingEpoch
}
/** Returns `value` itself. */
export declare function parseBossRunAuthorityIdentity(value: unknown): BossRunAuthorityIdentity

export declare const BOSS_PARTICIPANT_BINDING_VERSION: 'boss.participant-binding.v1'
export declare const BOSS_BINDING_STATES: readonly ['active', 'revoked', 'replaced']
export type BossBindingState = (typeof BOSS_BINDING_STATES)[number]
export interface BossParticipantBinding {
  version: typeof BOSS_PARTICIPANT_BINDING_VERSION
  bossRunId: string
  participantId: string
  role: BossParticipantRole
  communicationProfile: BossCommunicationProfile
  bindingEpoch: ParticipantBindingEpoch
  sessionId: string
  brokerGeneration: BrokerGeneration
  brokerBootInstance: string
  state: BossBindingState
  assignedManagerParticipantId?: string
  authorityTransitionId: string
}
/** Returns `value` itself. */
export declare function parseBossParticipantBinding(value: unknown): BossParticipantBinding

export declare const BOSS_PARTICIPANT_CREDENTIAL_VERSION: 'boss.participant-credential.v1'
export declare const BOSS_CREDENTIAL_KINDS: readonly ['enrollment', 'reconnect']
export type BossCredentialKind = (typeof BOSS_CREDENTIAL_KINDS)[number]
export interface BossParticipantCredentialEnvelope {
  version: typeof BOSS_PARTICIPANT_CREDENTIAL_VERSION
  namespace: typeof BOSS_RUN_FEATURE
  credentialKind: BossCredentialKind
  credentialId: string
  credential: string
  bossRunId: string
  participantId: string
  role: BossParticipantRole
  communicationProfile: BossCommunicationProfile
  bindingEpoch: ParticipantBindingEpoch
  issuedAt: string
  expiresAt: string
  nonce: string
}
/** Returns `value` itself. */
export declare function parseBossParticipantCredentialEnvelope(value: unknown): BossParticipantCredentialEnvelope
/** canonicalHash("agent-intercom-core/boss-run-v1/participant-credential", envelope), after parsing it. */
export declare function credentialDigest(envelope: BossParticipantCredentialEnvelope): string

export declare const BOSS_CREDENTIAL_DIGEST_RECORD_VERSION: 'boss.credential-digest.v1'
export declare const BOSS_CREDENTIAL_AUDIT_EVENT_VERSION: 'boss.credential-audit-event.v1'
export declare const AUTHORITY_TRANSITION_VERSION: 'boss.authority-transition.v1'
export declare const AUTHORITY_EVENT_VERSION: 'boss.authority-event.v1'
export declare const AUTHORITY_REQUEST_VERSION: 'boss.authority-request.v1'

export declare const BOSS_CONTROL_TYPES: readonly [
  'boss.assignment.created',
  'boss.assignment.accepted',
  'boss.assignment.checkpoint',
  'boss.assignment.submitted',
  'boss.assignment.rejected',
  'boss.assignment.cancelled',
  'boss.staffing.requested',
  'boss.staffing.resolved',
  'boss.review.requested',
  'boss.review.submitted',
  'boss.council.requested',
  'boss.council.submitted',
  'boss.proof.submitted',
  'boss.worker.health',
  'boss.worker.blocked',
  'boss.worker.failed',
  'boss.worker.notice',
  'boss.worker.notice_delivery_failed',
  'boss.decision.required',
]
export type BossControlType = (typeof BOSS_CONTROL_TYPES)[number]
export interface BossControlEnvelope<TPayload extends CanonicalValue = CanonicalValue> {
  type: BossControlType
  version: typeof BOSS_CONTROL_ENVELOPE_VERSION
  messageId: string
  bossRunId: string
  participantId: string
  bindingEpoch: ParticipantBindingEpoch
  causationId?: string
  replyTo?: string
  idempotencyKey: string
  payload: TPayload
}
/** Returns `value` itself; the payload must be canonical JSON data. */
export declare function parseBossControlEnvelope(value: unknown): BossControlEnvelope

export declare const WORKER_IDENTITY_VERSION: 'orc.worker-identity.v2'
export interface OrdinaryWorkerIdentityV2 {
  version: typeof WORKER_IDENTITY_VERSION
  workerId: string
  workerIncarnationId: string
  workerGeneration: WorkerGeneration
}
export interface BossWorkerIdentityV2 extends OrdinaryWorkerIdentityV2 {
  bossRunId: string
  participantId: string
  bindingEpoch: ParticipantBindingEpoch
}
export type WorkerIdentityV2 = OrdinaryWorkerIdentityV2 | BossWorkerIdentityV2
export interface WorkerIdentityEnvironment {
  AGENT_INTERCOM_WORKER_ID: string
  AGENT_INTERCOM_WORKER_INCARNATION_ID?: string
  AGENT_INTERCOM_WORKER_GENERATION: string
  AGENT_INTERCOM_BOSS_RUN_ID?: string
  AGENT_INTERCOM_PARTICIPANT_ID?: string
  AGENT_INTERCOM_BINDING_EPOCH?: string
  /** Deprecated v1 incarnation name. It is never Boss authority. */
  AGENT_INTERCOM_RUN_ID?: string
}
export interface WorkerEventIdentityV2 {
  workerId: string
  workerIncarnationId: string
  workerGeneration: WorkerGeneration
  bossRunId?: string
  participantId?: string
  bindingEpoch?: ParticipantBindingEpoch
}
/** A fresh identity. */
export declare function parseWorkerIdentityV2(value: unknown): WorkerIdentityV2
/** A fresh identity from an environment object (e.g. process.env); unrelated keys are ignored. */
export declare function workerIdentityFromEnvironment(value: unknown): WorkerIdentityV2
/** A fresh event identity (no version). */
export declare function parseWorkerEventIdentityV2(value: unknown): WorkerEventIdentityV2

export declare const BROKER_FEATURE_ATTESTATION_VERSION: 'intercom.broker-feature.v1'
export declare const BROKER_IDENTITY_RECORD_VERSION: 'intercom.broker-identity.v1'
export declare const BROKER_PROVIDER_ATTESTATION_VERSION: 'intercom.broker-provider-attestation.v1'
export declare const BROKER_PEER_EXPECTATION_VERSION: 'intercom.broker-peer-expectation.v1'
export declare const LEGACY_ADMIN_MIGRATION_VERSION: 'intercom.legacy-admin-migration.v1'
export declare const BROKER_JOURNAL_RECOVERY_VERSION: 'intercom.broker-journal-recovery.v1'
export declare const BOSS_RESTRICTED_CLIENT_REQUEST_VERSION: 'boss.restricted-client-request.v1'
export declare const BOSS_RESTRICTED_CLIENT_RESULT_VERSION: 'boss.restricted-client-result.v1'
export declare const BROKER_FEATURE_SET_HASH_DOMAIN: 'agent-intercom-core/broker-feature-set/v1'
export declare const BROKER_IDENTITY_SIGNATURE_DOMAIN: 'agent-intercom-core/broker-identity/v1'
export declare const BROKER_PROVIDER_ATTESTATION_SIGNATURE_DOMAIN: 'agent-intercom-core/broker-provider-attestation/v1'
export declare const BROKER_PROTECTED_PROVIDER_ROOT: '/usr/lib/agent-intercom/providers/'

export interface BrokerFeatureAttestation {
  version: typeof BROKER_FEATURE_ATTESTATION_VERSION
  feature: string
  featureVersion: number
  semanticsHash: string
  controlEnvelopeVersion?: number
  capabilityDigest?: string
  optional?: true
}
/** A fresh attestation. */
export declare function parseBrokerFeatureAttestation(value: unknown): BrokerFeatureAttestation
/** canonicalHash("agent-intercom-core/broker-feature-set/v1", the parsed features sorted by name in UTF-16 order). */
export declare function brokerFeatureSetHash(features: unknown): string

export interface BrokerCapabilityAdvertisement {
  baseProtocolVersion: number
  features: BrokerFeatureAttestation[]
  protocolFeatureContractHash?: string
  featureSetHash?: string
  controlEnvelopeVersion?: number
  capabilityDigest?: string
}
export type BrokerCapabilityAdvertisementDenialCode = 'UNKNOWN_FEATURE' | 'DUPLICATE_FEATURE' | 'FEATURE_DIVERGENCE'
export declare class BrokerCapabilityAdvertisementError extends ContractValidationError {
  readonly code: BrokerCapabilityAdvertisementDenialCode
  constructor (path: string, message: string, code: BrokerCapabilityAdvertisementDenialCode)
}
/** A fresh advertisement, every feature parsed. */
export declare function parseBrokerCapabilityAdvertisement(value: unknown): BrokerCapabilityAdvertisement

export interface BrokerProviderAttestation {
  version: typeof BROKER_PROVIDER_ATTESTATION_VERSION
  providerPackage: string
  providerVersion: string
  providerDigest: string
  artifactPath: string
  artifactOwnerUid: number
  artifactOwnerGid: number
  artifactMode: string
  userWritable: false
  attestedAt: string
  attestationKeyId: string
  signature: string
}
/** node:crypto's KeyObject, by the shape this declaration needs (no dependency on @types/node). */
interface KeyObjectShape {
  readonly type: 'secret' | 'public' | 'private'
}
/** A public key: PEM text, or a public `KeyObject` (node:crypto). */
export type BrokerPublicKey = KeyObjectShape | string
export type BrokerPublicKeyTrustStore = Readonly<Record<string, BrokerPublicKey | undefined>>
export interface BrokerIdentityVerificationContext {
  expectedProviderPackage: string
  expectedProviderVersion: string
  expectedProviderDigest: string
  expectedProviderArtifactRoot: string
  expectedProviderArtifactOwnerUid: number
  expectedProviderArtifactOwnerGid: number
  expectedProviderArtifactMode: string
  expectedOwnerUid: number
  expectedBrokerServiceUid: number
  expectedBootInstance: string
  minimumBrokerGeneration: BrokerGeneration
  expectedPublicEndpoint: string
  expectedAuthorityEndpoint: string
  trustedIdentityKeys: BrokerPublicKeyTrustStore
  trustedProviderKeys: BrokerPublicKeyTrustStore
  providerAttestation?: unknown
}
export interface BrokerPeerExpectation {
  version: typeof BROKER_PEER_EXPECTATION_VERSION
  endpointClass: 'public' | 'authority'
  ownerUid: number
  expectedBrokerServiceUid: number
  expectedBrokerProcessId: number
  expectedClientUid: number
  expectedControllerUid?: number
  requiresKernelPeerCredentials: true
  requiresServiceCapability: boolean
}
export interface ObservedBrokerPeer {
  kernelPeerCredentialsPresent: boolean
  endpointClass: 'public' | 'authority'
  brokerServiceUid: number
  brokerProcessId: number
  clientUid: number
  serviceCapabilityPresented: boolean
}
export interface BrokerIdentityRecord {
  version: typeof BROKER_IDENTITY_RECORD_VERSION
  owningProviderPackage: string
  providerDigest: string
  providerVersion: string
  baseProtocolVersion: number
  features: BrokerFeatureAttestation[]
  protocolFeatureContractHash: string
  featureSetHash: string
  controlEnvelopeVersion: number
  capabilityDigest: string
  protectedServiceUid: number
  ownerUid: number
  bootInstance: string
  processId: number
  brokerGeneration: BrokerGeneration
  publicEndpoint: string
  authorityEndpoint: string
  identityKeyId: string
  signature: string
}
export type BrokerCompatibilityRequest =
  | { clientKind: 'ordinary'; supportedBaseProtocolVersions: number[] }
  | {
      clientKind: 'boss'
      supportedBaseProtocolVersions: number[]
      requiredFeature: typeof BOSS_RUN_FEATURE
      expectedProtectedOwnerUid: number
      identityVerification: BrokerIdentityVerificationContext
      peerExpectation: BrokerPeerExpectation
      observedPeer: ObservedBrokerPeer
    }
export type BrokerCompatibilityDecision =
  | { compatible: true; mode: 'ordinary' | 'boss' }
  | {
      compatible: false
      code:
        | 'BASE_PROTOCOL_UNSUPPORTED'
        | 'INVALID_COMPATIBILITY_REQUEST'
        | 'BOSS_FEATURE_REQUIRED'
        | BrokerCapabilityAdvertisementDenialCode
        | 'PROTECTED_IDENTITY_REQUIRED'
        | 'IDENTITY_UNSIGNED'
        | 'IDENTITY_KEY_UNKNOWN'
        | 'IDENTITY_SIGNATURE_INVALID'
        | 'IDENTITY_RECORD_INVALID'
        | 'PROVIDER_ATTESTATION_REQUIRED'
        | 'PROVIDER_ATTESTATION_UNSIGNED'
        | 'PROVIDER_KEY_UNKNOWN'
        | 'PROVIDER_SIGNATURE_INVALID'
        | 'PROVIDER_MISMATCH'
        | 'PROVIDER_ARTIFACT_MISMATCH'
        | 'OWNER_UID_MISMATCH'
        | 'PROTECTED_SERVICE_MISMATCH'
        | 'STALE_BOOT_INSTANCE'
        | 'REGRESSED_BROKER_GENERATION'
        | 'ENDPOINT_MISMATCH'
        | 'PEER_CREDENTIALS_MISSING'
        | 'PEER_MISMATCH'
    }
/** A fresh record: exact keys, the canonical Boss feature contract, absolute distinct endpoints. */
export declare function parseBrokerIdentityRecord(value: unknown): BrokerIdentityRecord
/** A fresh attestation of a root-owned, not group/other-writable artifact beneath the provider root. */
export declare function parseBrokerProviderAttestation(value: unknown): BrokerProviderAttestation
/** A fresh expectation. */
export declare function parseBrokerPeerExpectation(value: unknown): BrokerPeerExpectation
/** A fresh observation. */
export declare function parseObservedBrokerPeer(value: unknown): ObservedBrokerPeer
export type BrokerPeerDecision =
  | { allowed: true }
  | {
      allowed: false
      code:
        | 'KERNEL_PEER_CREDENTIALS_REQUIRED'
        | 'ENDPOINT_CLASS_MISMATCH'
        | 'BROKER_UID_MISMATCH'
        | 'BROKER_PID_MISMATCH'
        | 'CLIENT_UID_MISMATCH'
        | 'SERVICE_CAPABILITY_REQUIRED'
        | 'UNEXPECTED_SERVICE_CAPABILITY'
    }
/** Throws for a malformed expectation; a malformed observation is KERNEL_PEER_CREDENTIALS_REQUIRED. */
export declare function authorizeBrokerPeer(expectationValue: unknown, observedValue: unknown): BrokerPeerDecision
/** A fresh request. A Boss request whose trust store holds a KeyObject cannot be returned (Error). */
export declare function parseBrokerCompatibilityRequest(value: unknown): BrokerCompatibilityRequest
/**
 * Never throws. Complete for ordinary clients; a Boss client is refused at the identity signature
 * (IDENTITY_SIGNATURE_INVALID) because this port does not verify Ed25519 yet (docs/boss.md).
 */
export declare function evaluateBrokerCompatibility(
  requestValue: unknown,
  advertisement: BrokerCapabilityAdvertisement,
  identity?: BrokerIdentityRecord,
): BrokerCompatibilityDecision

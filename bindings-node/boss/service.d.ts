// The broker and restricted-client part of @ctliz/agent-intercom-core/boss (boss-service.ts of the
// TypeScript core 0.2.0): broker capability negotiation, protected broker identities and provider
// attestations, the legacy admin migration and journal recovery records with their store
// validators, and restricted Boss client requests and results. Re-exported by ./index.d.ts.
import type {
  BossManagerOperations, BossParticipantOperations, BossRestrictedAuthorizationDenialCodes,
  BossRestrictedClientRequestVersion, BossRestrictedClientResultVersion, BossReviewerOperations,
  BrokerFeatureAttestationVersion, BrokerFeatureSetHashDomain, BrokerIdentityRecordVersion,
  BrokerIdentitySignatureDomain, BrokerJournalRecoveryVersion, BrokerPeerExpectationVersion,
  BrokerProtectedProviderRoot, BrokerProviderAttestationSignatureDomain,
  BrokerProviderAttestationVersion, LegacyAdminMigrationVersion, RestrictedResultStatuses,
} from '../facts.js'
import { ContractValidationError } from '../canonical/index.js'
import type { StoreValidationResult } from '../canonical/index.js'
import type { BossPolicyState } from './policy.js'
import type { BOSS_RUN_FEATURE, BossParticipantBinding, ParticipantState } from './index.js'

type ParticipantBindingEpoch = number
type BrokerGeneration = number
type BrokerRevision = number
type SubscriberBindingEpoch = number
type SubscriberBindingGeneration = number

export declare const BROKER_FEATURE_ATTESTATION_VERSION: BrokerFeatureAttestationVersion
export declare const BROKER_IDENTITY_RECORD_VERSION: BrokerIdentityRecordVersion
export declare const BROKER_PROVIDER_ATTESTATION_VERSION: BrokerProviderAttestationVersion
export declare const BROKER_PEER_EXPECTATION_VERSION: BrokerPeerExpectationVersion
export declare const LEGACY_ADMIN_MIGRATION_VERSION: LegacyAdminMigrationVersion
export declare const BROKER_JOURNAL_RECOVERY_VERSION: BrokerJournalRecoveryVersion
export declare const BOSS_RESTRICTED_CLIENT_REQUEST_VERSION: BossRestrictedClientRequestVersion
export declare const BOSS_RESTRICTED_CLIENT_RESULT_VERSION: BossRestrictedClientResultVersion
export declare const BROKER_FEATURE_SET_HASH_DOMAIN: BrokerFeatureSetHashDomain
export declare const BROKER_IDENTITY_SIGNATURE_DOMAIN: BrokerIdentitySignatureDomain
export declare const BROKER_PROVIDER_ATTESTATION_SIGNATURE_DOMAIN: BrokerProviderAttestationSignatureDomain
export declare const BROKER_PROTECTED_PROVIDER_ROOT: BrokerProtectedProviderRoot

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
/** canonicalHash(BROKER_FEATURE_SET_HASH_DOMAIN, the parsed features sorted by name in UTF-16 order). */
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
/** A fresh request (a trust store's KeyObjects are the caller's own objects). */
export declare function parseBrokerCompatibilityRequest(value: unknown): BrokerCompatibilityRequest
/** Never throws: the request, the advertisement, the signed identity and provider, the peer. */
export declare function evaluateBrokerCompatibility(
  requestValue: unknown,
  advertisement: BrokerCapabilityAdvertisement,
  identity?: BrokerIdentityRecord,
): BrokerCompatibilityDecision

/** canonicalFrame(BROKER_PROVIDER_ATTESTATION_SIGNATURE_DOMAIN, the record without `signature`). */
export declare function brokerProviderAttestationSigningBytes(value: unknown): Uint8Array
/** canonicalFrame(BROKER_IDENTITY_SIGNATURE_DOMAIN, the record without `signature`). */
export declare function brokerIdentitySigningBytes(value: unknown): Uint8Array

export interface BrokerProviderVerificationContext {
  expectedProviderPackage: string
  expectedProviderVersion: string
  expectedProviderDigest: string
  expectedArtifactRoot: string
  expectedArtifactOwnerUid: number
  expectedArtifactOwnerGid: number
  expectedArtifactMode: string
  trustedProviderKeys: BrokerPublicKeyTrustStore
}
export type BrokerProviderVerificationDecision =
  | { accepted: true }
  | {
      accepted: false
      code:
        | 'PROVIDER_ATTESTATION_UNSIGNED'
        | 'PROVIDER_KEY_UNKNOWN'
        | 'PROVIDER_SIGNATURE_INVALID'
        | 'PROVIDER_MISMATCH'
        | 'PROVIDER_ARTIFACT_MISMATCH'
    }
/** Never throws: the attestation, the context, the trusted key, the Ed25519 signature, the artifact. */
export declare function verifyBrokerProviderAttestation(
  attestationValue: unknown,
  contextValue: BrokerProviderVerificationContext,
): BrokerProviderVerificationDecision
export type BrokerIdentityVerificationDecision =
  | { accepted: true }
  | {
      accepted: false
      code:
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
    }
/** Never throws: the identity and its Ed25519 signature, then its provider attestation and bindings. */
export declare function verifyProtectedBrokerIdentity(
  identityValue: unknown,
  contextValue: BrokerIdentityVerificationContext,
): BrokerIdentityVerificationDecision

export interface LegacyAdminMigrationRecord {
  version: typeof LEGACY_ADMIN_MIGRATION_VERSION
  ownerUid: number
  legacyAdminDigest: string
  remoteAccessRegistrationsImported: number
  remoteAccessSemanticsVersion: 2
  legacyAdminState: 'revoked_and_removed'
  compatibilityProxyMode: 'ordinary_data_only'
  bossFeatureAdvertisedByProxy: false
  protectedRegistryPath: string
  migratedAt: string
  auditEventId: string
}
/** A fresh record; the registry path is canonical and strictly beneath the owner's state root. */
export declare function parseLegacyAdminMigrationRecord(value: unknown): LegacyAdminMigrationRecord
export interface BrokerJournalRecoveryRecord {
  version: typeof BROKER_JOURNAL_RECOVERY_VERSION
  providerDigest: string
  bootInstance: string
  brokerGeneration: BrokerGeneration
  committedBrokerRevision: BrokerRevision
  recoveredAuthorityTransitionIds: string[]
  state: 'reconciled' | 'quarantined'
  reason?: string
  recoveredAt: string
}
/** A fresh record; `reason` exactly when quarantined. */
export declare function parseBrokerJournalRecoveryRecord(value: unknown): BrokerJournalRecoveryRecord

export declare const validateBrokerProviderAttestationStore: (value: unknown) => StoreValidationResult<BrokerProviderAttestation>
export declare const validateBrokerIdentityStore: (value: unknown) => StoreValidationResult<BrokerIdentityRecord>
export declare const validateLegacyAdminMigrationStore: (value: unknown) => StoreValidationResult<LegacyAdminMigrationRecord>
export declare const validateBrokerJournalRecoveryStore: (value: unknown) => StoreValidationResult<BrokerJournalRecoveryRecord>

export declare const BOSS_MANAGER_OPERATIONS: BossManagerOperations
export type BossManagerOperation = (typeof BOSS_MANAGER_OPERATIONS)[number]
export declare const BOSS_PARTICIPANT_OPERATIONS: BossParticipantOperations
export type BossParticipantOperation = (typeof BOSS_PARTICIPANT_OPERATIONS)[number]
export declare const BOSS_REVIEWER_OPERATIONS: BossReviewerOperations
export type BossReviewerOperation = (typeof BOSS_REVIEWER_OPERATIONS)[number]
export type BossRestrictedClient = 'boss_manager' | 'boss_participant' | 'boss_reviewer'
export type BossRestrictedOperation = BossManagerOperation | BossParticipantOperation | BossReviewerOperation

export interface BossCheckpointPayload {
  assignmentId: string
  checkpointId: string
  summary: string
  occurredAt: string
}
export interface BossHealthPayload {
  state: ParticipantState
  severity: 'info' | 'warning' | 'error' | 'critical'
  observedAt: string
}
/** A lifecycle subscription record (supervision's `LifecycleSubscriptionRecord`), as created. */
type LifecycleSubscriptionPayload = { readonly version: string; readonly subscriptionId: string } & Readonly<Record<string, unknown>>
/** A lifecycle target (supervision's `LifecycleTarget`). */
type LifecycleTargetRecord =
  | { kind: 'worker'; workerId: string; workerGeneration: number }
  | { kind: 'role'; bossRunId: string; role: string }
export interface BossRestrictedRequestPayloadByOperation {
  manager_get_status: Record<string, never>
  manager_request_staff: { role: 'scout' | 'worker'; count: number }
  manager_create_assignment: { assignmentId: string; participantId: string; objective: string }
  manager_cancel_assignment: { assignmentId: string; reason: string }
  manager_create_subscription: LifecycleSubscriptionPayload
  manager_list_subscriptions: Record<string, never>
  manager_cancel_subscription: { subscriptionId: string }
  manager_submit_checkpoint: BossCheckpointPayload
  manager_report_blocker: { blockerId: string; reason: string }
  manager_submit_proof: { proofId: string; digest: string }
  manager_request_adversary_review: { proofId: string }
  manager_request_council: { question: string }
  participant_accept_assignment: { assignmentId: string }
  participant_reject_assignment: { assignmentId: string; reason: string }
  participant_submit_checkpoint: BossCheckpointPayload
  participant_submit_assignment: { assignmentId: string; resultDigest: string }
  participant_report_blocker: { assignmentId: string; reason: string }
  participant_report_health: BossHealthPayload
  reviewer_get_proof: { proofId: string }
  reviewer_submit_review: { reviewId: string; proofId: string; decision: 'approved' | 'changes_requested' | 'rejected'; reason: string }
  reviewer_submit_proof: { proofId: string; digest: string }
  reviewer_get_objection_status: { reviewId: string }
  reviewer_report_health: BossHealthPayload
}
export interface BossRestrictedResultPayloadByOperation {
  manager_get_status: { status: string }
  manager_request_staff: { staffRequestId: string }
  manager_create_assignment: { assignmentId: string }
  manager_cancel_assignment: { assignmentId: string }
  manager_create_subscription: { subscriptionId: string }
  manager_list_subscriptions: { subscriptionIds: string[] }
  manager_cancel_subscription: { subscriptionId: string }
  manager_submit_checkpoint: { assignmentId: string; checkpointId: string; recordedAt: string }
  manager_report_blocker: { blockerId: string }
  manager_submit_proof: { proofId: string }
  manager_request_adversary_review: { reviewId: string }
  manager_request_council: Record<string, never>
  participant_accept_assignment: { assignmentId: string }
  participant_reject_assignment: { assignmentId: string }
  participant_submit_checkpoint: { assignmentId: string; checkpointId: string; recordedAt: string }
  participant_submit_assignment: { assignmentId: string }
  participant_report_blocker: { blockerId: string }
  participant_report_health: { healthEventId: string }
  reviewer_get_proof: { proofId: string; digest: string }
  reviewer_submit_review: { reviewId: string }
  reviewer_submit_proof: { proofId: string }
  reviewer_get_objection_status: { reviewId: string; status: string }
  reviewer_report_health: { healthEventId: string }
}
interface RestrictedRequestBase {
  version: typeof BOSS_RESTRICTED_CLIENT_REQUEST_VERSION
  bossRunId: string
  bindingEpoch: ParticipantBindingEpoch
  requestId: string
  idempotencyKey: string
}
type ManagerRequestFor<O extends BossManagerOperation> = RestrictedRequestBase & {
  client: 'boss_manager'
  managerParticipantId: string
  operation: O
  payload: BossRestrictedRequestPayloadByOperation[O]
}
type ParticipantRequestFor<O extends BossParticipantOperation> = RestrictedRequestBase & {
  client: 'boss_participant'
  participantId: string
  operation: O
  payload: BossRestrictedRequestPayloadByOperation[O]
}
type ReviewerRequestFor<O extends BossReviewerOperation> = RestrictedRequestBase & {
  client: 'boss_reviewer'
  participantId: string
  operation: O
  payload: BossRestrictedRequestPayloadByOperation[O]
}
export type BossManagerRequest = { [O in BossManagerOperation]: ManagerRequestFor<O> }[BossManagerOperation]
export type BossParticipantRequest = { [O in BossParticipantOperation]: ParticipantRequestFor<O> }[BossParticipantOperation]
export type BossReviewerRequest = { [O in BossReviewerOperation]: ReviewerRequestFor<O> }[BossReviewerOperation]
export type BossRestrictedClientRequest = BossManagerRequest | BossParticipantRequest | BossReviewerRequest
/** A fresh request: the exact record for its client, operation and payload. */
export declare function parseBossRestrictedClientRequest(value: unknown): BossRestrictedClientRequest

export declare const BOSS_RESTRICTED_AUTHORIZATION_DENIAL_CODES: BossRestrictedAuthorizationDenialCodes
export type BossRestrictedAuthorizationDenialCode = (typeof BOSS_RESTRICTED_AUTHORIZATION_DENIAL_CODES)[number]
export interface BossRestrictedClientIdempotencyRecord {
  scope: string
  bossRunId: string
  client: BossRestrictedClient
  participantId: string
  bindingEpoch: ParticipantBindingEpoch
  operation: BossRestrictedOperation
  requestId: string
  idempotencyKey: string
  requestDigest: string
}
export interface BossRestrictedAssignmentAuthorizationRecord {
  bossRunId: string
  assignmentId: string
  managerParticipantId: string
  participantId: string
}
export interface BossRestrictedProofAuthorizationRecord {
  bossRunId: string
  proofId: string
  ownerParticipantId: string
  reviewerParticipantIds: string[]
}
export interface BossRestrictedReviewAuthorizationRecord {
  bossRunId: string
  reviewId: string
  proofId: string
  requesterParticipantId: string
  reviewerParticipantId: string
  state: 'pending' | 'submitted' | 'cancelled'
}
export interface BossRestrictedSupervisionAuthorizationRecord {
  bossRunId: string
  subscriberPrincipalId: string
  subscriberParticipantId: string
  subscriberBindingEpoch: SubscriberBindingEpoch
  subscriberBindingGeneration: SubscriberBindingGeneration
  target: LifecycleTargetRecord
  targetParticipantIds: string[]
}
export interface BossRestrictedClientAuthorizationContext {
  policy: BossPolicyState
  principalId: string
  currentBinding: BossParticipantBinding
  assignments?: readonly BossRestrictedAssignmentAuthorizationRecord[]
  proofs?: readonly BossRestrictedProofAuthorizationRecord[]
  reviews?: readonly BossRestrictedReviewAuthorizationRecord[]
  supervision?: readonly BossRestrictedSupervisionAuthorizationRecord[]
  subscriptions?: readonly LifecycleSubscriptionPayload[]
  idempotencyRecords?: readonly BossRestrictedClientIdempotencyRecord[]
}
export type BossRestrictedClientAuthorizationDecision =
  | { allowed: true; idempotency: 'new' | 'replay'; record: BossRestrictedClientIdempotencyRecord }
  | { allowed: false; code: BossRestrictedAuthorizationDenialCode }
/** canonicalHash of the request's run, client, participant and binding epoch. */
export declare function bossRestrictedClientIdempotencyScope(requestValue: unknown): string
/** The record a new request would store (its scope and its canonical request digest). */
export declare function createBossRestrictedClientIdempotencyRecord(requestValue: unknown): BossRestrictedClientIdempotencyRecord
/** Throws for a malformed context, request or idempotency record; otherwise a decision. */
export declare function authorizeBossRestrictedClientRequest(
  requestValue: unknown,
  contextValue: BossRestrictedClientAuthorizationContext,
): BossRestrictedClientAuthorizationDecision

export declare const RESTRICTED_RESULT_STATUSES: RestrictedResultStatuses
export type BossRestrictedResultStatus = (typeof RESTRICTED_RESULT_STATUSES)[number]
interface RestrictedResultBinding {
  version: typeof BOSS_RESTRICTED_CLIENT_RESULT_VERSION
  bossRunId: string
  bindingEpoch: ParticipantBindingEpoch
  requestId: string
  idempotencyKey: string
}
type RestrictedSuccessResult<O extends BossRestrictedOperation> = RestrictedResultBinding & {
  operation: O
  status: 'ok'
  payload: BossRestrictedResultPayloadByOperation[O]
}
type RestrictedErrorResult<O extends BossRestrictedOperation> = RestrictedResultBinding & {
  operation: O
  status: 'rejected' | 'feature_not_enabled' | 'conflict'
  errorCode: string
}
type RestrictedUnauthorizedResult<O extends BossRestrictedOperation> = RestrictedResultBinding & {
  operation: O
  status: 'unauthorized'
  denialCode: BossRestrictedAuthorizationDenialCode
}
type AnyResult<O extends BossRestrictedOperation> =
  | RestrictedSuccessResult<O>
  | RestrictedErrorResult<O>
  | RestrictedUnauthorizedResult<O>
export type BossRestrictedClientResult =
  | { [O in BossManagerOperation]: AnyResult<O> & { client: 'boss_manager'; managerParticipantId: string } }[BossManagerOperation]
  | { [O in BossParticipantOperation]: AnyResult<O> & { client: 'boss_participant'; participantId: string } }[BossParticipantOperation]
  | { [O in BossReviewerOperation]: AnyResult<O> & { client: 'boss_reviewer'; participantId: string } }[BossReviewerOperation]
/** A fresh result; with a request, it must also be bound to it (assertBossRestrictedClientResultBinding). */
export declare function parseBossRestrictedClientResult(value: unknown, requestValue?: unknown): BossRestrictedClientResult
/** Throws unless the result answers exactly this request (and echoes its resource identities). */
export declare function assertBossRestrictedClientResultBinding(resultValue: unknown, requestValue: unknown): void

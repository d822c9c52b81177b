// @ctliz/agent-intercom-core/boss: the Boss run contract's wire records, broker capability
// negotiation and worker identity (this file), participant state (./participant), and the Boss
// policy (./policy). The names and shapes are those of the TypeScript core 0.2.0. The constants'
// literal types, here and in the other files of ./boss, come from ../facts.js, which
// `cargo xtask gen` writes from what the Rust core answers.
import type {
  AuthorityEventVersion, AuthorityRequestVersion, AuthorityTransitionVersion, BossBindingStates,
  BossCapabilityFeatureContractVersion, BossControlEnvelopeVersion, BossControlTypes,
  BossCredentialAuditEventVersion, BossCredentialDigestRecordVersion, BossCredentialKinds,
  BossParticipantBindingVersion, BossParticipantCredentialVersion, BossParticipantRoles,
  BossRunAuthorityIdentityVersion, BossRunFeature, BossRunFeatureVersion,
  IntercomBaseProtocolVersion, WorkerIdentityVersion,
} from '../facts.js'
import type { CanonicalValue } from '../canonical/index.js'

export * from './policy.js'
export * from './feature.js'
export * from './vectors.js'
export * from './worker-store.js'
export * from './participant.js'
export * from './credential.js'
export * from './authority.js'
export * from './supervision.js'
export * from './delivery.js'
export * from './service.js'

type ParticipantBindingEpoch = number
type BrokerGeneration = number
type WorkerGeneration = number
type ControllerGeneration = number
type BrokerRevision = number
type BossBindingEpoch = number

export declare const INTERCOM_BASE_PROTOCOL_VERSION: IntercomBaseProtocolVersion
export declare const BOSS_RUN_FEATURE: BossRunFeature
export declare const BOSS_RUN_FEATURE_VERSION: BossRunFeatureVersion
export declare const BOSS_CONTROL_ENVELOPE_VERSION: BossControlEnvelopeVersion
export declare const BOSS_CAPABILITY_FEATURE_CONTRACT_VERSION: BossCapabilityFeatureContractVersion
/** Computed by the core: canonicalHash(`.../${BOSS_RUN_FEATURE}/feature-semantics`, BOSS_RUN_FEATURE_SEMANTICS_CORPUS). */
export declare const BOSS_RUN_FEATURE_SEMANTICS_HASH: string
/** Computed by the core: canonicalHash(`.../${BOSS_RUN_FEATURE}/protocol-feature-contract`, BOSS_RUN_FEATURE_CONTRACT). */
export declare const BOSS_RUN_PROTOCOL_FEATURE_CONTRACT_HASH: string
/** Computed by the core: canonicalHash(`.../${BOSS_RUN_FEATURE}/capability-feature-digest`, the capability binding). */
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

export declare const BOSS_PARTICIPANT_ROLES: BossParticipantRoles
export type BossParticipantRole = (typeof BOSS_PARTICIPANT_ROLES)[number]
export declare const BOSS_COMMUNICATION_PROFILES: typeof BOSS_PARTICIPANT_ROLES
export type BossCommunicationProfile = BossParticipantRole

export declare const BOSS_RUN_AUTHORITY_IDENTITY_VERSION: BossRunAuthorityIdentityVersion
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

export declare const BOSS_PARTICIPANT_BINDING_VERSION: BossParticipantBindingVersion
export declare const BOSS_BINDING_STATES: BossBindingStates
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

export declare const BOSS_PARTICIPANT_CREDENTIAL_VERSION: BossParticipantCredentialVersion
export declare const BOSS_CREDENTIAL_KINDS: BossCredentialKinds
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
/** canonicalHash(`agent-intercom-core/${BOSS_RUN_FEATURE}/participant-credential`, envelope), after parsing it. */
export declare function credentialDigest(envelope: BossParticipantCredentialEnvelope): string

export declare const BOSS_CREDENTIAL_DIGEST_RECORD_VERSION: BossCredentialDigestRecordVersion
export declare const BOSS_CREDENTIAL_AUDIT_EVENT_VERSION: BossCredentialAuditEventVersion
export declare const AUTHORITY_TRANSITION_VERSION: AuthorityTransitionVersion
export declare const AUTHORITY_EVENT_VERSION: AuthorityEventVersion
export declare const AUTHORITY_REQUEST_VERSION: AuthorityRequestVersion

export declare const BOSS_CONTROL_TYPES: BossControlTypes
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

export declare const WORKER_IDENTITY_VERSION: WorkerIdentityVersion
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

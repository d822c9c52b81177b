// @ctliz/agent-intercom-core/boss: the Boss run contract's wire records, broker capability
// negotiation and worker identity (this file), participant state (./participant), and the Boss
// policy (./policy). The names and shapes are those of the TypeScript core 0.2.0.
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

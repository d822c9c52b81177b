// Boss participant credentials on the broker side (exported by @ctliz/agent-intercom-core/boss).
import type { BossCredentialAuditOperations, BossCredentialStates } from '../facts.js'
import type { ParticipantBindingEpoch, StoreValidationResult } from '../canonical/index.js'
import type {
  BOSS_CREDENTIAL_AUDIT_EVENT_VERSION, BOSS_CREDENTIAL_DIGEST_RECORD_VERSION, BOSS_RUN_FEATURE,
  BossCredentialKind, BossParticipantBinding, BossParticipantRole,
} from './index.js'

export declare const BOSS_CREDENTIAL_STATES: BossCredentialStates
export type BossCredentialState = (typeof BOSS_CREDENTIAL_STATES)[number]

export interface BossCredentialDigestRecord {
  version: typeof BOSS_CREDENTIAL_DIGEST_RECORD_VERSION
  namespace: typeof BOSS_RUN_FEATURE
  credentialKind: BossCredentialKind
  credentialId: string
  digest: string
  bossRunId: string
  participantId: string
  role: BossParticipantRole
  bindingEpoch: ParticipantBindingEpoch
  nonce: string
  issuedAt: string
  expiresAt: string
  state: BossCredentialState
  consumedAt?: string
  revokedAt?: string
  auditEventId: string
}
/** Returns `value` itself. */
export declare function parseBossCredentialDigestRecord(value: unknown): BossCredentialDigestRecord

export interface BossCredentialUseContext {
  now: string
  credentialKind: BossCredentialKind
  bossRunId: string
  participantId: string
  role: BossParticipantRole
  bindingEpoch: ParticipantBindingEpoch
  nonce: string
}
export type BossCredentialDenialCode =
  | 'DIGEST_MISMATCH'
  | 'NOT_YET_VALID'
  | 'EXPIRED'
  | 'ALREADY_CONSUMED'
  | 'REVOKED'
  | 'RUN_SUBSTITUTION'
  | 'PARTICIPANT_SUBSTITUTION'
  | 'ROLE_SUBSTITUTION'
  | 'EPOCH_MISMATCH'
  | 'NONCE_MISMATCH'
  | 'KIND_MISMATCH'
  | 'REGISTRY_MISMATCH'
export type BossCredentialUseDecision =
  | { accepted: true; credentialId: string; auditEventId: string }
  | { accepted: false; code: BossCredentialDenialCode; auditEventId: string }
/** A fresh decision; throws only when the envelope, the record or the context does not parse.
 * Callers persist consumption and its audit event atomically. */
export declare function authorizeBossCredentialUse(
  envelopeValue: unknown,
  recordValue: unknown,
  contextValue: unknown,
): BossCredentialUseDecision

export declare const BOSS_CREDENTIAL_AUDIT_OPERATIONS: BossCredentialAuditOperations
export interface BossCredentialAuditEvent {
  version: typeof BOSS_CREDENTIAL_AUDIT_EVENT_VERSION
  eventId: string
  credentialId: string
  credentialKind: BossCredentialKind
  bossRunId: string
  participantId: string
  presentedBindingEpoch: ParticipantBindingEpoch
  operation: (typeof BOSS_CREDENTIAL_AUDIT_OPERATIONS)[number]
  outcome: 'accepted' | BossCredentialDenialCode
  nonceDigest: string
  authorityTransitionId?: string
  occurredAt: string
}
/** A fresh event. */
export declare function parseBossCredentialAuditEvent(value: unknown): BossCredentialAuditEvent

/** Never throws; `value` is the record itself. */
export declare function validateBossParticipantBindingStore(value: unknown): StoreValidationResult<BossParticipantBinding>
/** Never throws; `value` is the record itself. */
export declare function validateBossCredentialDigestStore(value: unknown): StoreValidationResult<BossCredentialDigestRecord>

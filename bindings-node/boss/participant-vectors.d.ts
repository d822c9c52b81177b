// @ctliz/agent-intercom-core/boss/vectors (also ./boss), participant state: the two corpora, as
// the package's vector files hold them, and the hashes the core computes from those files.
import type {
  ParticipantStateTransitionVectorHashDomain, ParticipantStateTransitionVectorSchemaVersion,
  ParticipantStateVectorHashDomain, ParticipantStateVectorSchemaVersion,
} from '../facts.js'
import type {
  LegacyStoppingReconciliationV1, LegacyWorkerMigrationInputV1, MigratedWorkerRecordV2,
  ParticipantHealthEventV1, ParticipantStateTransitionContextV1,
  PARTICIPANT_NEW_GENERATION_TRANSITIONS, PARTICIPANT_STATE_TRANSITION_TABLE,
} from './participant.js'

export declare const PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION: ParticipantStateVectorSchemaVersion
/** canonicalHash(PARTICIPANT_STATE_VECTOR_HASH_DOMAIN, PARTICIPANT_STATE_VECTOR_CORPUS). */
export declare const PARTICIPANT_STATE_VECTORS_HASH: string
export declare const PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION: ParticipantStateTransitionVectorSchemaVersion
/** canonicalHash(PARTICIPANT_STATE_TRANSITION_VECTOR_HASH_DOMAIN, PARTICIPANT_STATE_TRANSITION_VECTOR_CORPUS). */
export declare const PARTICIPANT_STATE_TRANSITION_VECTORS_HASH: string
export declare const PARTICIPANT_STATE_VECTOR_HASH_DOMAIN: ParticipantStateVectorHashDomain
export declare const PARTICIPANT_STATE_TRANSITION_VECTOR_HASH_DOMAIN: ParticipantStateTransitionVectorHashDomain

export interface ParticipantStateMigrationVector {
  name: string
  input: LegacyWorkerMigrationInputV1
  expected: MigratedWorkerRecordV2
}
/** One vector per WorkerStore v1 state (9). */
export declare const PARTICIPANT_STATE_MIGRATION_VECTORS: readonly ParticipantStateMigrationVector[]

export interface StoppingReconciliationVector {
  name: string
  pending: MigratedWorkerRecordV2
  evidence: LegacyStoppingReconciliationV1
  expectedState: 'stopped' | 'failed' | 'lost' | 'unreachable'
  expectedReason: string | null
}
/** The four ways direct evidence settles a pending legacy `stopping` worker. */
export declare const STOPPING_RECONCILIATION_VECTORS: readonly StoppingReconciliationVector[]
export declare const PARTICIPANT_HEALTH_EVENT_VECTOR: ParticipantHealthEventV1

export interface ParticipantStateTransitionVector {
  name: string
  input: ParticipantStateTransitionContextV1
}
/** Positive cases for every guarded recovery path (12). */
export declare const PARTICIPANT_STATE_TRANSITION_VECTORS: readonly ParticipantStateTransitionVector[]

export declare const PARTICIPANT_STATE_TRANSITION_VECTOR_CORPUS: {
  readonly version: typeof PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION
  readonly sameGenerationTransitionTable: typeof PARTICIPANT_STATE_TRANSITION_TABLE
  readonly newGenerationTransitionTable: typeof PARTICIPANT_NEW_GENERATION_TRANSITIONS
  readonly transitionVectors: typeof PARTICIPANT_STATE_TRANSITION_VECTORS
}
export declare const PARTICIPANT_STATE_VECTOR_CORPUS: {
  readonly version: typeof PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION
  readonly migrationVectors: typeof PARTICIPANT_STATE_MIGRATION_VECTORS
  readonly stoppingReconciliationVectors: typeof STOPPING_RECONCILIATION_VECTORS
  readonly healthEvent: typeof PARTICIPANT_HEALTH_EVENT_VECTOR
}

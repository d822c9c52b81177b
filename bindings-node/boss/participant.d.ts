// @ctliz/agent-intercom-core/boss, participant state: the states and dispatch gates, health
// events, the WorkerStore v1 -> v2 migration and legacy `stopping` reconciliation, the
// evidence-guarded transition tables and the store validators. Names and shapes are those of
// the TypeScript core 0.2.0; every reader returns a fresh object.
import type {
  BlockedResumeStates, CanonicalWorkerStoreSchemaVersion, LegacyWorkerStates,
  LegacyWorkerStoreSchemaVersion, ParticipantDispatchableStates, ParticipantHealthEventVersion,
  ParticipantHealthSeverities, ParticipantReadOnlyStates, ParticipantStateTransitionContractVersion,
  ParticipantStateTransitionEvidenceKinds, ParticipantStates, StalledResumeStates,
  StoppingEvidenceSources, StoppingReconciliationOutcomes, TerminalParticipantStates,
  WorkerStateMigrationContractVersion,
} from '../facts.js'
import type {
  ParticipantBindingEpoch, StoreValidationResult, StringEnum, WorkerGeneration,
} from '../canonical/index.js'

export declare const PARTICIPANT_STATES: ParticipantStates
export type ParticipantState = StringEnum<typeof PARTICIPANT_STATES>
export declare const TERMINAL_PARTICIPANT_STATES: TerminalParticipantStates
export type TerminalParticipantState = StringEnum<typeof TERMINAL_PARTICIPANT_STATES>
export declare const LEGACY_WORKER_STATES: LegacyWorkerStates
export type LegacyWorkerState = StringEnum<typeof LEGACY_WORKER_STATES>

export declare const PARTICIPANT_HEALTH_EVENT_VERSION: ParticipantHealthEventVersion
export declare const WORKER_STATE_MIGRATION_CONTRACT_VERSION: WorkerStateMigrationContractVersion
export declare const LEGACY_WORKER_STORE_SCHEMA_VERSION: LegacyWorkerStoreSchemaVersion
export declare const CANONICAL_WORKER_STORE_SCHEMA_VERSION: CanonicalWorkerStoreSchemaVersion
export declare const PARTICIPANT_STATE_TRANSITION_CONTRACT_VERSION: ParticipantStateTransitionContractVersion

export declare const PARTICIPANT_HEALTH_SEVERITIES: ParticipantHealthSeverities
export type ParticipantHealthSeverity = StringEnum<typeof PARTICIPANT_HEALTH_SEVERITIES>

export interface ParticipantHealthEventV1 {
  version: typeof PARTICIPANT_HEALTH_EVENT_VERSION
  eventId: string
  bossRunId: string
  participantId: string
  bindingEpoch: ParticipantBindingEpoch
  previousState: ParticipantState
  state: ParticipantState
  severity: ParticipantHealthSeverity
  /** Required for `failed`. */
  failureCode: string | null
  /** Required for blocked, failed, lost and unreachable. */
  reason: string | null
  suggestedRecovery: string | null
  occurredAt: string
  /** Not before `occurredAt`. */
  acknowledgedAt?: string
}

export interface LegacyWorkerMigrationInputV1 {
  version: typeof WORKER_STATE_MIGRATION_CONTRACT_VERSION
  sourceStoreVersion: typeof LEGACY_WORKER_STORE_SCHEMA_VERSION
  targetStoreVersion: typeof CANONICAL_WORKER_STORE_SCHEMA_VERSION
  workerId: string
  /** The legacy WorkerStore `runId`: an incarnation id, never Boss authority. */
  legacyRunId: string
  /** Audit only: the deprecated environment value never becomes `bossRunId`. */
  deprecatedAgentIntercomRunId: string | null
  legacyState: LegacyWorkerState
  legacyOutcome: string | null
  /** The highest generation already persisted for this worker, or 0. */
  workerGenerationFloor: number
  /** Greater than the floor. */
  assignedWorkerGeneration: WorkerGeneration
  migratedAt: string
}

export type WorkerMigrationStatus = 'complete' | 'pending_stopping_reconciliation'

export interface WorkerStateMigrationAuditV1 {
  version: typeof WORKER_STATE_MIGRATION_CONTRACT_VERSION
  sourceStoreVersion: typeof LEGACY_WORKER_STORE_SCHEMA_VERSION
  targetStoreVersion: typeof CANONICAL_WORKER_STORE_SCHEMA_VERSION
  sourceIncarnationField: 'runId'
  originalRunId: string
  originalDeprecatedAgentIntercomRunId: string | null
  originalState: LegacyWorkerState
  originalOutcome: string | null
  workerGenerationFloor: number
  migratedAt: string
}

export declare const STOPPING_RECONCILIATION_OUTCOMES: StoppingReconciliationOutcomes
export type StoppingReconciliationOutcome = StringEnum<typeof STOPPING_RECONCILIATION_OUTCOMES>
export declare const STOPPING_EVIDENCE_SOURCES: StoppingEvidenceSources
export type StoppingEvidenceSource = StringEnum<typeof STOPPING_EVIDENCE_SOURCES>

export interface LegacyStoppingReconciliationV1 {
  version: typeof WORKER_STATE_MIGRATION_CONTRACT_VERSION
  workerId: string
  workerIncarnationId: string
  workerGeneration: WorkerGeneration
  observationId: string
  evidenceSource: StoppingEvidenceSource
  outcome: StoppingReconciliationOutcome
  /** True exactly for `unresolved_after_settle`. */
  boundedSettleWindowExpired: boolean
  observedAt: string
}

export declare const BLOCKED_RESUME_STATES: BlockedResumeStates
export type BlockedResumeState = StringEnum<typeof BLOCKED_RESUME_STATES>
export declare const STALLED_RESUME_STATES: StalledResumeStates
export type StalledResumeState = StringEnum<typeof STALLED_RESUME_STATES>

export interface MigratedWorkerRecordV2 {
  schemaVersion: typeof CANONICAL_WORKER_STORE_SCHEMA_VERSION
  workerId: string
  workerIncarnationId: string
  workerGeneration: WorkerGeneration
  /** Null only while legacy `stopping` awaits direct process reconciliation. */
  state: ParticipantState | null
  /** Non-null exactly while the state is `blocked`. */
  resumeState: BlockedResumeState | null
  reason: string | null
  terminalOutcome: string | null
  requiresReadinessReconciliation: boolean
  legacyIdleHint: boolean
  migrationStatus: WorkerMigrationStatus
  readOnly: boolean
  dispatchAllowed: false
  migrationAudit: WorkerStateMigrationAuditV1
  stoppingReconciliation: LegacyStoppingReconciliationV1 | null
}

export declare const PARTICIPANT_STATE_TRANSITION_EVIDENCE_KINDS: ParticipantStateTransitionEvidenceKinds
export type ParticipantStateTransitionEvidenceKind = StringEnum<typeof PARTICIPANT_STATE_TRANSITION_EVIDENCE_KINDS>

interface TransitionEvidenceBase<K extends ParticipantStateTransitionEvidenceKind> {
  kind: K
  evidenceId: string
}

interface ReadinessAssertions {
  adapterStartupReady: true
  brokerRegistrationReady: true
  bindingAttested: true
  capabilityProfileAttested: true
  assignmentControlSupported: true
}

export type ParticipantStateTransitionEvidence =
  | TransitionEvidenceBase<'state_confirmation'>
  | TransitionEvidenceBase<'registration_started'>
  | (TransitionEvidenceBase<'readiness_reconciled'> & ReadinessAssertions)
  | (TransitionEvidenceBase<'legacy_idle_reconciled'> & ReadinessAssertions & { legacyIdleHint: true; noActiveTurn: true })
  | (TransitionEvidenceBase<'turn_started'> & { turnId: string })
  | (TransitionEvidenceBase<'turn_settled'> & { turnId: string; noActiveTurn: true })
  | (TransitionEvidenceBase<'intentional_pause'> & { checkpointId: string })
  | (TransitionEvidenceBase<'parked_resume'> & ReadinessAssertions & {
    resumableState: 'ready' | 'waiting'
    parkedProcessConfirmed: true
    noActiveTurn: true
  })
  | (TransitionEvidenceBase<'blocker_detected'> & { resumeState: BlockedResumeState; reason: string })
  | (TransitionEvidenceBase<'blocked_reaffirmed'> & { storedResumeState: BlockedResumeState; reason: string })
  | (TransitionEvidenceBase<'blocker_cleared'> & { storedResumeState: BlockedResumeState; blockerClearConfirmed: true })
  | (TransitionEvidenceBase<'controller_liveness_stalled'> & { controllerParticipantId: string; livenessDeadlineExceeded: true })
  | (TransitionEvidenceBase<'controller_liveness_recovered'> & {
    controllerParticipantId: string
    resumableState: StalledResumeState
    positiveStateEvidenceId: string
  })
  | (TransitionEvidenceBase<'connectivity_recovered'> & { freshReadinessReconciliationRequired: true })
  | (TransitionEvidenceBase<'failure_observed'> & { outcome: 'failed' | 'lost' | 'unreachable' })
  | TransitionEvidenceBase<'stop_observed'>
  | TransitionEvidenceBase<'new_generation_provisioned'>

export interface ParticipantStateTransitionContextV1 {
  version: typeof PARTICIPANT_STATE_TRANSITION_CONTRACT_VERSION
  previousState: ParticipantState
  /** Present exactly when `previousState` is `blocked`. */
  previousResumeState?: BlockedResumeState
  state: ParticipantState
  previousWorkerGeneration: WorkerGeneration
  workerGeneration: WorkerGeneration
  evidence: ParticipantStateTransitionEvidence
}
/** The v1 transition contract's older name. */
export type ParticipantStateTransitionContext = ParticipantStateTransitionContextV1

/** Every same-generation pair: the evidence kind the edge requires, or null (denied). */
export declare const PARTICIPANT_STATE_TRANSITION_TABLE: {
  readonly [From in ParticipantState]: { readonly [To in ParticipantState]: ParticipantStateTransitionEvidenceKind | null }
}
/** The only transitions that may cross exactly one worker generation. */
export declare const PARTICIPANT_NEW_GENERATION_TRANSITIONS: {
  readonly provisioning: readonly []
  readonly registering: readonly []
  readonly ready: readonly []
  readonly working: readonly []
  readonly waiting: readonly []
  readonly paused: readonly ['ready', 'waiting']
  readonly stalled: readonly []
  readonly blocked: readonly []
  readonly failed: readonly ['provisioning']
  readonly lost: readonly ['provisioning']
  readonly unreachable: readonly []
  readonly stopped: readonly ['provisioning']
}
export declare const PARTICIPANT_DISPATCHABLE_STATES: ParticipantDispatchableStates
export declare const PARTICIPANT_READ_ONLY_STATES: ParticipantReadOnlyStates

/** The state itself (path defaults to "$.state"). */
export declare function parseParticipantState(value: unknown, path?: string): ParticipantState
/** Membership only: no validation. */
export declare function isTerminalParticipantState(state: ParticipantState): state is TerminalParticipantState
export declare function parseParticipantHealthEventV1(value: unknown, path?: string): ParticipantHealthEventV1
export declare function parseLegacyWorkerMigrationInputV1(value: unknown, path?: string): LegacyWorkerMigrationInputV1
/** The frozen v1 projection; validate the complete source record first. */
export declare function migrateLegacyWorkerRecordV1(value: unknown): MigratedWorkerRecordV2
export declare function parseLegacyStoppingReconciliationV1(value: unknown, path?: string): LegacyStoppingReconciliationV1
/** Settles a pending legacy `stopping` record with matching direct evidence. */
export declare function reconcileLegacyStoppingWorker(pendingValue: unknown, evidenceValue: unknown): MigratedWorkerRecordV2
export declare function parseMigratedWorkerRecordV2(value: unknown, path?: string): MigratedWorkerRecordV2
/** Path defaults to "$.evidence". */
export declare function parseParticipantStateTransitionEvidence(value: unknown, path?: string): ParticipantStateTransitionEvidence
export declare function parseParticipantStateTransitionContextV1(value: unknown, path?: string): ParticipantStateTransitionContextV1
/** Throws ContractValidationError unless the transition, its generation step and evidence are canonical. */
export declare function validateParticipantStateTransition(value: unknown): void
/** ready or waiting; throws for an unknown state. */
export declare function canDispatchParticipantState(value: unknown): boolean
/** unreachable; throws for an unknown state. */
export declare function isParticipantStateReadOnly(value: unknown): boolean
export declare function requiresDirectProcessEvidenceForCleanup(_state: ParticipantState): true
/** Validates the record; no migrated record is dispatchable. */
export declare function canDispatchMigratedWorker(record: MigratedWorkerRecordV2): false
export declare const validateParticipantHealthEventStore: (value: unknown) => StoreValidationResult<ParticipantHealthEventV1>
export declare const validateLegacyWorkerMigrationInputStore: (value: unknown) => StoreValidationResult<LegacyWorkerMigrationInputV1>
export declare const validateLegacyStoppingReconciliationStore: (value: unknown) => StoreValidationResult<LegacyStoppingReconciliationV1>

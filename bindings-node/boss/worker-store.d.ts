// The full worker-store migration (exported by @ctliz/agent-intercom-core/boss): a legacy
// WorkerStore worker and its compatibility fields become a record of version
// FULL_WORKER_STORE_V2_RECORD_VERSION.
import type {
  FullWorkerStoreMigrationVersion, FullWorkerStoreV2RecordVersion,
  WorkerStoreManagerRecipientContexts,
} from '../facts.js'
import type { ParticipantBindingEpoch, StoreValidationResult, WorkerGeneration } from '../canonical/index.js'
import type { ParticipantState } from './index.js'

export declare const FULL_WORKER_STORE_MIGRATION_VERSION: FullWorkerStoreMigrationVersion
export declare const FULL_WORKER_STORE_V2_RECORD_VERSION: FullWorkerStoreV2RecordVersion
export declare const WORKER_STORE_MANAGER_RECIPIENT_CONTEXTS: WorkerStoreManagerRecipientContexts
export type WorkerStoreManagerRecipientContext = (typeof WORKER_STORE_MANAGER_RECIPIENT_CONTEXTS)[number]

// The legacy worker's part, as the participant-state contract defines it (kept local here).
type LegacyWorkerState =
  | 'provisioning' | 'running' | 'idle' | 'needs_attention' | 'completed' | 'failed' | 'stopped' | 'lost'
  | 'stopping'
interface LegacyWorkerMigrationInput {
  version: 1
  sourceStoreVersion: 1
  targetStoreVersion: 2
  workerId: string
  /** The legacy `runId`: an incarnation id, never Boss authority. */
  legacyRunId: string
  deprecatedAgentIntercomRunId: string | null
  legacyState: LegacyWorkerState
  legacyOutcome: string | null
  workerGenerationFloor: number
  assignedWorkerGeneration: WorkerGeneration
  migratedAt: string
}
interface LegacyStoppingReconciliation {
  version: 1
  workerId: string
  workerIncarnationId: string
  workerGeneration: WorkerGeneration
  observationId: string
  evidenceSource: 'systemd' | 'cgroup' | 'systemd_and_cgroup'
  outcome: 'stopped' | 'failed' | 'lost' | 'unresolved_after_settle'
  boundedSettleWindowExpired: boolean
  observedAt: string
}
interface MigratedWorkerRecord {
  schemaVersion: 2
  workerId: string
  workerIncarnationId: string
  workerGeneration: WorkerGeneration
  /** Null only while a legacy `stopping` worker awaits its direct process evidence. */
  state: ParticipantState | null
  resumeState: 'registering' | 'ready' | 'working' | 'waiting' | 'paused' | null
  reason: string | null
  terminalOutcome: string | null
  requiresReadinessReconciliation: boolean
  legacyIdleHint: boolean
  migrationStatus: 'complete' | 'pending_stopping_reconciliation'
  readOnly: boolean
  dispatchAllowed: false
  migrationAudit: {
    version: 1
    sourceStoreVersion: 1
    targetStoreVersion: 2
    sourceIncarnationField: 'runId'
    originalRunId: string
    originalDeprecatedAgentIntercomRunId: string | null
    originalState: LegacyWorkerState
    originalOutcome: string | null
    workerGenerationFloor: number
    migratedAt: string
  }
  stoppingReconciliation: LegacyStoppingReconciliation | null
}

/** A Manager in Pi or OpenCode: bound to its authenticated session. */
export interface InteractiveOwningManagerRecipientV1 {
  recipientPrincipalId: string
  recipientBindingEpoch: ParticipantBindingEpoch
  recipientContext: 'pi' | 'opencode'
  recipientSessionId: string
  recipientTargetSessionId?: string
}
/** A headless Manager: no session. */
export interface HeadlessOwningManagerRecipientV1 {
  recipientPrincipalId: string
  recipientBindingEpoch: ParticipantBindingEpoch
  recipientContext: 'headless_cli'
}
export type OwningManagerRecipientV1 = InteractiveOwningManagerRecipientV1 | HeadlessOwningManagerRecipientV1

/** The groups a migration carries over. */
export interface LegacyWorkerCompatibilityFieldsV1 {
  environment: { AGENT_INTERCOM_WORKER_ID: string; AGENT_INTERCOM_RUN_ID: string; workspacePath?: string }
  health: { observedLegacyState: LegacyWorkerState; lastConfirmedAt?: string; failureCode?: string }
  runtime: { runtimeId: string; processId?: number; leaseExpiresAt?: string; maxRuntimeAt?: string }
  adapter: { adapterId: string; adapterVersion: string; sessionId?: string; readinessReported: boolean }
  systemd: { unitName: string; activeState: string; subState: string; observedAt: string }
  notice: { pendingNoticeIds: string[]; lastDeliveredNoticeId?: string; owningManagerRecipient: OwningManagerRecipientV1 }
  controller: { projectionId?: string; revision: number }
}

export interface FullWorkerStoreMigrationInputV1 extends LegacyWorkerCompatibilityFieldsV1 {
  version: typeof FULL_WORKER_STORE_MIGRATION_VERSION
  worker: LegacyWorkerMigrationInput
}

/** What binds a group of a v2 record to the migrated worker. */
export interface WorkerStoreSurfaceIdentityV2 {
  workerIncarnationId: string
  workerGeneration: WorkerGeneration
}

type Bound<K extends keyof LegacyWorkerCompatibilityFieldsV1> = WorkerStoreSurfaceIdentityV2 & LegacyWorkerCompatibilityFieldsV1[K]

export interface WorkerStoreRecordV2 {
  version: typeof FULL_WORKER_STORE_V2_RECORD_VERSION
  /** Never with a `bossRunId`: a migrated worker stays an ordinary worker. */
  worker: MigratedWorkerRecord
  environment: {
    AGENT_INTERCOM_WORKER_ID: string
    AGENT_INTERCOM_WORKER_INCARNATION_ID: string
    AGENT_INTERCOM_WORKER_GENERATION: string
    /** Deprecated: the incarnation again, byte for byte, for the v2 rollout only. */
    AGENT_INTERCOM_RUN_ID: string
    workspacePath?: string
  }
  health: WorkerStoreSurfaceIdentityV2 & {
    originalLegacyState: LegacyWorkerState
    canonicalState: ParticipantState | null
    lastConfirmedAt?: string
    failureCode?: string
  }
  runtime: Bound<'runtime'>
  adapter: Bound<'adapter'>
  systemd: Bound<'systemd'>
  notice: Bound<'notice'>
  controller: Bound<'controller'>
  compatibilityAudit: {
    sourceEnvironmentIncarnationField: 'AGENT_INTERCOM_RUN_ID'
    targetEnvironmentIncarnationField: 'AGENT_INTERCOM_WORKER_INCARNATION_ID'
    deprecatedEnvironmentAliasLastSupportedVersion: typeof FULL_WORKER_STORE_V2_RECORD_VERSION
    bossRunIdDerived: false
    preservedFieldGroups: ['environment', 'health', 'runtime', 'adapter', 'systemd', 'notice', 'controller']
  }
}

/** A fresh, exact copy of a migration input, or a ContractValidationError. */
export declare function parseFullWorkerStoreMigrationInputV1(value: unknown): FullWorkerStoreMigrationInputV1
/** The v2 record of a migration input (a fresh object), or a ContractValidationError. */
export declare function migrateFullWorkerStoreV1(value: unknown): WorkerStoreRecordV2
/** A fresh, exact copy of a v2 record, or a ContractValidationError. */
export declare function parseWorkerStoreRecordV2(value: unknown): WorkerStoreRecordV2
/** The store gate over parseFullWorkerStoreMigrationInputV1 (expected version 1). */
export declare const validateFullWorkerStoreMigrationInputV1: (value: unknown) => StoreValidationResult<FullWorkerStoreMigrationInputV1>
/** The store gate over parseWorkerStoreRecordV2 (expected version FULL_WORKER_STORE_V2_RECORD_VERSION). */
export declare const validateWorkerStoreRecordV2: (value: unknown) => StoreValidationResult<WorkerStoreRecordV2>

// Only what is declared exported above is exported (the local worker types stay local).
export {}

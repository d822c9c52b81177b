// Supervision, part of @ctliz/agent-intercom-core/boss: lifecycle subscriptions, activity,
// leases, triggers, inactivity edges, subscriber rebind migrations, the supervisor ACL and the
// store validators. The names and shapes are those of the TypeScript core 0.2.0.
import type {
  ActiveOperationLeaseVersion, ActivityBases, ActivityKinds, ActivityRecordVersion, ActivityTypes,
  ExternalWaitLeaseVersion, InactivityModes, LifecycleSubscriptionVersion,
  LifecycleTriggerSchemaVersion, LifecycleTriggerVersion, OperationLeaseStates,
  RebindMigrationStates, SubscriberRebindMigrationVersion, SubscriptionStates, SupervisedRoles,
  SupervisorPrincipalKinds, WaitLeaseStates, WaitSourceKinds,
} from '../facts.js'
import type {
  DeliveryClaimGeneration, ParticipantBindingEpoch, RecipientTransferGeneration,
  StoreValidationResult, SubscriberBindingEpoch, SubscriberBindingGeneration, TriggerGeneration,
  WorkerGeneration,
} from '../canonical/index.js'
import type { ParticipantState } from './index.js'

// The delivery records a migration link carries: the delivery part of ./boss declares them.
import type { DeliveryIntent, DeliveryEquivalenceKey, DeliveryGroupRecord, DeliveryClaimRecord } from './delivery.js'

export declare const LIFECYCLE_SUBSCRIPTION_VERSION: LifecycleSubscriptionVersion
export declare const ACTIVITY_RECORD_VERSION: ActivityRecordVersion
export declare const ACTIVE_OPERATION_LEASE_VERSION: ActiveOperationLeaseVersion
export declare const EXTERNAL_WAIT_LEASE_VERSION: ExternalWaitLeaseVersion
export declare const SUBSCRIBER_REBIND_MIGRATION_VERSION: SubscriberRebindMigrationVersion
export declare const LIFECYCLE_TRIGGER_SCHEMA_VERSION: LifecycleTriggerSchemaVersion
export declare const LIFECYCLE_TRIGGER_VERSION: LifecycleTriggerVersion
/** Two hours in milliseconds: the default ceiling of an external wait. */
export declare const MAX_EXTERNAL_WAIT_LEASE_MS_DEFAULT: number

export declare const SUBSCRIPTION_STATES: SubscriptionStates
export type SubscriptionState = (typeof SUBSCRIPTION_STATES)[number]
export declare const INACTIVITY_MODES: InactivityModes
export type InactivityMode = (typeof INACTIVITY_MODES)[number]
export declare const ACTIVITY_BASES: ActivityBases
export type ActivityBasis = (typeof ACTIVITY_BASES)[number]
export declare const SUPERVISED_ROLES: SupervisedRoles
export type SupervisedRole = (typeof SUPERVISED_ROLES)[number]

export type LifecycleTarget =
  | { kind: 'worker'; workerId: string; workerGeneration: WorkerGeneration }
  | { kind: 'role'; bossRunId: string; role: SupervisedRole }

export type LifecyclePredicate =
  | { kind: 'state_changed' }
  | { kind: 'state_in'; states: ParticipantState[] }
  | { kind: 'failed' }
  | { kind: 'stopped' }
  | { kind: 'turn_settled' }
  | { kind: 'inactive_for' }

export interface LifecycleSubscriptionRecord {
  version: typeof LIFECYCLE_SUBSCRIPTION_VERSION
  subscriptionId: string
  subscriberPrincipalId: string
  subscriberBindingEpoch: SubscriberBindingEpoch
  subscriberBindingGeneration: SubscriberBindingGeneration
  lastSubscriberAuthorityTransitionId?: string
  bossRunId?: string
  target: LifecycleTarget
  followReplacement: boolean
  predicates: LifecyclePredicate[]
  inactivityMode?: InactivityMode
  inactiveAfterMs?: number
  activityBasis?: ActivityBasis
  cooldownMs: number
  maxFires?: number
  expiresAt?: string
  delivery: DeliveryIntent
  state: SubscriptionState
  triggerGeneration: TriggerGeneration
  lastActivityAt?: string
  dueAt?: string
  lastSourceEventId?: string
  createdAt: string
  updatedAt: string
}

/** A fresh exact worker or role target; throws ContractValidationError at `path` (default `$`). */
export declare function parseLifecycleTarget(value: unknown, path?: string): LifecycleTarget
/** A fresh subscription: unique predicates, complete inactivity settings exactly for
 * inactive_for, a due time no earlier than the last activity plus the inactivity period. */
export declare function parseLifecycleSubscription(value: unknown): LifecycleSubscriptionRecord

export declare const ACTIVITY_KINDS: ActivityKinds
export type ActivityKind = (typeof ACTIVITY_KINDS)[number]
export declare const ACTIVITY_TYPES: ActivityTypes
export type ActivityType = (typeof ACTIVITY_TYPES)[number]

export interface AuthenticatedActivityRecord {
  version: typeof ACTIVITY_RECORD_VERSION
  activityId: string
  workerId: string
  workerGeneration: WorkerGeneration
  sourceEventId: string
  participantId: string
  bindingEpoch: ParticipantBindingEpoch
  kind: ActivityKind
  activityType: ActivityType
  occurredAt: string
}

/** A fresh activity record whose kind matches its type. */
export declare function parseAuthenticatedActivity(value: unknown): AuthenticatedActivityRecord

export declare const OPERATION_LEASE_STATES: OperationLeaseStates
export type OperationLeaseState = (typeof OPERATION_LEASE_STATES)[number]

export interface ActiveOperationLease {
  version: typeof ACTIVE_OPERATION_LEASE_VERSION
  leaseId: string
  workerId: string
  workerGeneration: WorkerGeneration
  invocationId: string
  processId: number
  cgroupIdentity: string
  startedAt: string
  renewBy: string
  maxUntil: string
  hardWorkerLeaseExpiresAt: string
  maxRuntimeAt: string
  state: OperationLeaseState
}

/** A fresh lease with startedAt <= renewBy <= maxUntil <= min(hard worker lease, MaxRuntime). */
export declare function parseActiveOperationLease(value: unknown): ActiveOperationLease

export declare const WAIT_SOURCE_KINDS: WaitSourceKinds
export type WaitSourceKind = (typeof WAIT_SOURCE_KINDS)[number]
export declare const WAIT_LEASE_STATES: WaitLeaseStates
export type WaitLeaseState = (typeof WAIT_LEASE_STATES)[number]

export interface ExternalWaitLease {
  version: typeof EXTERNAL_WAIT_LEASE_VERSION
  leaseId: string
  workerId: string
  workerGeneration: WorkerGeneration
  sourceKind: WaitSourceKind
  sourceRefHash: string
  processIdentity?: string
  startedAt: string
  renewBy: string
  maxUntil: string
  expectedWakeAt?: string
  hardWorkerLeaseExpiresAt: string
  maxRuntimeAt: string
  state: WaitLeaseState
}

/** A fresh wait lease bounded by the ceiling (default MAX_EXTERNAL_WAIT_LEASE_MS_DEFAULT), the
 * hard worker lease and MaxRuntime; process waits name their process. */
export declare function parseExternalWaitLease(value: unknown, maxExternalWaitLeaseMs?: number): ExternalWaitLease
/** The parsed next lease, when only renewBy (not backwards) and an active state may change. */
export declare function validateActiveOperationLeaseRenewal(previousValue: unknown, nextValue: unknown): ActiveOperationLease
/** The parsed next wait lease, when only renewBy, expectedWakeAt and an active state may change. */
export declare function validateExternalWaitLeaseRenewal(
  previousValue: unknown,
  nextValue: unknown,
  maxExternalWaitLeaseMs?: number,
): ExternalWaitLease

export interface SmartInactivityEvidence {
  workerId: string
  workerGeneration: WorkerGeneration
  now: string
  currentOperation?: {
    invocationId: string
    processId: number
    cgroupIdentity: string
    live: boolean
  }
  activeOperation?: ActiveOperationLease
  externalWait?: ExternalWaitLease
  externalWaitSourceTerminal?: boolean
}

/** Whether a current live operation, or a current external wait whose source has not ended,
 * suppresses smart inactivity for this worker generation now. */
export declare function isSmartInactivitySuppressed(evidence: SmartInactivityEvidence): boolean

export interface LifecycleTriggerRecord {
  version: typeof LIFECYCLE_TRIGGER_VERSION
  triggerId: string
  subscriptionId: string
  triggerGeneration: TriggerGeneration
  targetWorkerId: string
  targetWorkerGeneration: WorkerGeneration
  predicateEdge: string
  sourceEventId: string
  transitionId: string
  subscriberBindingEpoch: SubscriberBindingEpoch
  subscriberBindingGeneration: SubscriberBindingGeneration
  deliveryGroupId: string
  deliveryGroupMembershipRevision: number
  noticeId?: string
  satisfiedByNoticeId?: string
  successorDeliveryGroupId?: string
  recipientTransferGeneration: RecipientTransferGeneration
  createdAt: string
  acknowledgedAt?: string
}

/** A fresh trigger record. */
export declare function parseLifecycleTrigger(value: unknown): LifecycleTriggerRecord

export interface InactivityEdgeKey {
  workerId: string
  workerGeneration: WorkerGeneration
  inactivityEpochId: string
  inactivityMode: InactivityMode
  activityBasis: ActivityBasis
  inactiveAfterMs: number
  dueAt: string
}

/** A fresh edge key with every dimension. */
export declare function parseInactivityEdgeKey(value: unknown): InactivityEdgeKey
/** canonicalHash("orc-inactivity-edge-v1", the parsed key). */
export declare function inactivityTransitionId(key: InactivityEdgeKey): string

export declare const REBIND_MIGRATION_STATES: RebindMigrationStates
export type RebindMigrationState = (typeof REBIND_MIGRATION_STATES)[number]

export interface RebindCurrentClaimEvidence {
  status: 'unclaimed' | 'claimed'
  observedAt: string
  claim?: DeliveryClaimRecord
}

export interface RebindTargetLedgerEvidence {
  deliveryGroupId: string
  membershipRevision: number
  recipientPrincipalId: string
  recipientBindingEpoch: SubscriberBindingEpoch
  recipientTransferGeneration: RecipientTransferGeneration
  state: 'absent' | 'inserting' | 'inserted' | 'ambiguous'
  checkedAt: string
  targetLedgerEntryId?: string
  insertedAt?: string
}

export interface RebindDeliveryReceiptEvidence {
  deliveryClaimId: string
  claimGeneration: DeliveryClaimGeneration
  deliveryGroupId: string
  membershipRevision: number
  recipientPrincipalId: string
  recipientBindingEpoch: SubscriberBindingEpoch
  recipientTransferGeneration: RecipientTransferGeneration
  deliveryReceiptId: string
  targetLedgerEntryId: string
  insertedAt: string
  deliveredAt: string
}

export interface RebindDrainBarrierEvidence {
  deliveryGroupId: string
  membershipRevision: number
  recipientPrincipalId: string
  recipientBindingEpoch: SubscriberBindingEpoch
  recipientTransferGeneration: RecipientTransferGeneration
  barrierId: string
  noSessionEntry: true
  noAdapterQueue: true
  noInflightInvocation: true
  operativePathsDrained: true
  establishedAt: string
}

export interface RebindAcknowledgmentEvidence {
  deliveryGroupId: string
  noticeIds: string[]
  recipientPrincipalId: string
  recipientBindingEpoch: SubscriberBindingEpoch
  acknowledgedAt: string
}

/** What one authenticated authority-socket projection says about an old delivery group. */
export interface RebindMigrationLinkEvidence {
  authorityPrincipalId: string
  authoritySessionId: string
  authenticatedAt: string
  evidenceDigest: string
  oldGroup: DeliveryGroupRecord
  currentClaim: RebindCurrentClaimEvidence
  targetLedger: RebindTargetLedgerEvidence
  receipt?: RebindDeliveryReceiptEvidence
  drainBarrier?: RebindDrainBarrierEvidence
  acknowledgment?: RebindAcknowledgmentEvidence
}

/** canonicalHash("orc-subscriber-rebind-authoritative-evidence-v1", evidence). */
export declare function rebindMigrationEvidenceDigest(evidence: Omit<RebindMigrationLinkEvidence, 'evidenceDigest'>): string

export interface DeliveryGroupMigrationLink {
  oldDeliveryGroupId: string
  oldEquivalenceKey: DeliveryEquivalenceKey
  successorDeliveryGroupId?: string
  successorEquivalenceKey?: DeliveryEquivalenceKey
  disposition: 'migrated' | 'delivered_old_epoch' | 'blocked_ambiguous' | 'not_replayed'
  previousRecipientTransferGeneration: RecipientTransferGeneration
  recipientTransferGeneration: RecipientTransferGeneration
  evidence: RebindMigrationLinkEvidence
}

export interface SubscriberRebindMigrationRecord {
  version: typeof SUBSCRIBER_REBIND_MIGRATION_VERSION
  authorityTransitionId: string
  subscriptionId: string
  stableSubscriberPrincipalId: string
  oldSubscriberBindingEpoch: SubscriberBindingEpoch
  newSubscriberBindingEpoch: SubscriberBindingEpoch
  oldSubscriberBindingGeneration: SubscriberBindingGeneration
  newSubscriberBindingGeneration: SubscriberBindingGeneration
  reauthorized: boolean
  resultingSubscriptionState: SubscriptionState
  deliveryGroups: DeliveryGroupMigrationLink[]
  state: RebindMigrationState
  createdAt: string
  committedAt?: string
}

/** A fresh migration record whose every old group is proved migrated, delivered, not replayed
 * or blocked by its authenticated evidence. */
export declare function parseSubscriberRebindMigration(value: unknown): SubscriberRebindMigrationRecord

export declare const SUPERVISOR_PRINCIPAL_KINDS: SupervisorPrincipalKinds
export type SupervisorPrincipalKind = (typeof SUPERVISOR_PRINCIPAL_KINDS)[number]

export interface SupervisorPrincipal {
  principalId: string
  kind: SupervisorPrincipalKind
  state: 'active' | 'revoked'
  bindingEpoch: SubscriberBindingEpoch
  bindingGeneration: SubscriberBindingGeneration
  participantId?: string
  bossRunId?: string
  ownedWorkerIds?: string[]
  assignedParticipantIds?: string[]
}

export interface SupervisionWorker {
  workerId: string
  workerGeneration: WorkerGeneration
  participantId?: string
  role?: SupervisedRole
  bossRunId?: string
  active: boolean
}

export interface SupervisorAclState {
  principals: Record<string, SupervisorPrincipal>
  workers: Record<string, SupervisionWorker>
  currentManagerByRun: Record<string, string>
}

export interface SupervisorAuthorizationRequest {
  actorPrincipalId: string
  actorBindingEpoch: SubscriberBindingEpoch
  actorBindingGeneration: SubscriberBindingGeneration
  target: LifecycleTarget
  followReplacement: boolean
}

export type SupervisorDenialCode =
  | 'UNKNOWN_SUBSCRIBER'
  | 'REVOKED_SUBSCRIBER'
  | 'STALE_SUBSCRIBER_BINDING'
  | 'UNKNOWN_TARGET'
  | 'STALE_TARGET_GENERATION'
  | 'CROSS_RUN_DENIED'
  | 'ROLE_SELECTOR_DENIED'
  | 'FOLLOW_REPLACEMENT_DENIED'
  | 'SUPERVISION_EDGE_DENIED'
export type SupervisorAuthorizationDecision =
  | { allowed: true; reason: 'owner_to_worker' | 'manager_to_assignment' | 'boss_to_manager' | 'controller_to_participant' }
  | { allowed: false; code: SupervisorDenialCode }

/** Never throws: a malformed state or request is denied. */
export declare function authorizeSupervisorSubscription(
  state: SupervisorAclState,
  request: SupervisorAuthorizationRequest,
): SupervisorAuthorizationDecision
/** wake > follow_up > status_only (the answer for no intents). */
export declare function aggregateDeliveryIntent(intents: readonly DeliveryIntent[]): DeliveryIntent

export declare function validateLifecycleSubscriptionStore(value: unknown): StoreValidationResult<LifecycleSubscriptionRecord>
export declare function validateAuthenticatedActivityStore(value: unknown): StoreValidationResult<AuthenticatedActivityRecord>
export declare function validateActiveOperationLeaseStore(value: unknown): StoreValidationResult<ActiveOperationLease>
export declare function validateExternalWaitLeaseStore(value: unknown): StoreValidationResult<ExternalWaitLease>
export declare function validateLifecycleTriggerStore(value: unknown): StoreValidationResult<LifecycleTriggerRecord>
export declare function validateSubscriberRebindMigrationStore(value: unknown): StoreValidationResult<SubscriberRebindMigrationRecord>

// Lifecycle notices and their delivery (exported by @ctliz/agent-intercom-core/boss). The names
// and shapes are those of the TypeScript core 0.2.0.
import type {
  DeliveryClaimStates, DeliveryClaimVersion, DeliveryGroupAssemblyVersion,
  DeliveryGroupMembershipStates, DeliveryGroupStates, DeliveryGroupVersion, DeliveryIntents,
  DeliveryModes, LifecycleNoticeVersion, NoticeDeliveryClaimStates,
  NoticeRecipientIngressOperations, NoticeRecipientIngressVersion, RecipientContexts,
  TargetLedgerResultVersion, TargetLedgerStates,
} from '../facts.js'
import type {
  CanonicalValue, ControllerGeneration, DeliveryClaimGeneration, JournalGeneration,
  RecipientTransferGeneration, SchedulerGeneration, StoreValidationResult, TransitionVersion,
  TriggerGeneration, WatchdogGeneration, WorkerGeneration,
} from '../canonical/index.js'

export declare const LIFECYCLE_NOTICE_VERSION: LifecycleNoticeVersion
export declare const DELIVERY_GROUP_VERSION: DeliveryGroupVersion
export declare const DELIVERY_CLAIM_VERSION: DeliveryClaimVersion
export declare const NOTICE_RECIPIENT_INGRESS_VERSION: NoticeRecipientIngressVersion
export declare const TARGET_LEDGER_RESULT_VERSION: TargetLedgerResultVersion
export declare const DELIVERY_GROUP_ASSEMBLY_VERSION: DeliveryGroupAssemblyVersion
export declare const DELIVERY_INTENTS: DeliveryIntents
export type DeliveryIntent = (typeof DELIVERY_INTENTS)[number]
export declare const RECIPIENT_CONTEXTS: RecipientContexts
export type RecipientContext = (typeof RECIPIENT_CONTEXTS)[number]
export declare const DELIVERY_CLAIM_STATES: DeliveryClaimStates
export type DeliveryClaimState = (typeof DELIVERY_CLAIM_STATES)[number]
export declare const NOTICE_DELIVERY_CLAIM_STATES: NoticeDeliveryClaimStates
export type NoticeDeliveryClaimState = (typeof NOTICE_DELIVERY_CLAIM_STATES)[number]
export declare const DELIVERY_MODES: DeliveryModes
export type DeliveryMode = (typeof DELIVERY_MODES)[number]
export declare const DELIVERY_GROUP_MEMBERSHIP_STATES: DeliveryGroupMembershipStates
export declare const DELIVERY_GROUP_STATES: DeliveryGroupStates
export type DeliveryGroupState = (typeof DELIVERY_GROUP_STATES)[number]

export interface LifecycleNoticeLogicalKey {
  workerId: string
  workerGeneration: WorkerGeneration
  transitionId: string
  transitionVersion: TransitionVersion
  kind: string
  assignmentId?: string
  watchdogGeneration?: WatchdogGeneration
  subscriptionId?: string
  subscriptionTriggerGeneration?: TriggerGeneration
}
/** canonicalHash("orc-notice-v1", key), after checking the key. */
export declare function lifecycleNoticeId(key: LifecycleNoticeLogicalKey): string

export interface LifecycleNotice {
  version: typeof LIFECYCLE_NOTICE_VERSION
  noticeId: string
  deliveryGroupId: string
  deliveryGroupMembershipRevision: number
  requestedDeliveryIntent?: DeliveryIntent
  sourceEventId: string
  transitionId: string
  transitionVersion: TransitionVersion
  bossRunId?: string
  workerId: string
  workerIncarnationId: string
  assignmentId?: string
  turnId?: string
  watchdogGeneration?: WatchdogGeneration
  subscriptionId?: string
  subscriptionTriggerGeneration?: TriggerGeneration
  causationId?: string
  resultMessageId?: string
  recipientSessionId?: string
  recipientTargetSessionId?: string
  recipientPrincipalId?: string
  recipientBindingEpoch?: number
  workerGeneration: WorkerGeneration
  kind: string
  severity: string
  observedState: string
  reason: string
  createdAt: string
  deliveryAttemptedAt?: string
  deliveryClaimId?: string
  deliveryClaimGeneration?: DeliveryClaimGeneration
  deliveryClaimExpiresAt?: string
  deliveryClaimState?: NoticeDeliveryClaimState
  recipientContext: RecipientContext
  deliveredAt?: string
  deliveryMode?: DeliveryMode
  deliveryReceiptId?: string
  coalescedByResult?: boolean
  acknowledgedAt?: string
}
/** Returns `value` itself when it is a valid notice whose id is its logical key's. */
export declare function parseLifecycleNotice(value: unknown): LifecycleNotice

export type SourceAuthorityId =
  | { kind: 'worker_store'; workerStoreId: string; journalGeneration: JournalGeneration }
  | { kind: 'controller'; bossRunId: string; controllerGeneration: ControllerGeneration }
  | { kind: 'orc_scheduler'; ownerUid: number; schedulerGeneration: SchedulerGeneration }

export interface DeliveryEquivalenceKey {
  recipientPrincipalId: string
  recipientBindingEpoch: number
  sourceAuthorityId: SourceAuthorityId
  sourceEventId: string
  bossRunId?: string
  workerId: string
  workerGeneration: WorkerGeneration
  transitionId: string
  transitionVersion: TransitionVersion
  assignmentId?: string
  turnId?: string
  watchdogGeneration?: WatchdogGeneration
}
/** Returns `value` itself when it is a valid key (failure paths start at `path`, default `$`). */
export declare function parseDeliveryEquivalenceKey(value: unknown, path?: string): DeliveryEquivalenceKey
/** canonicalHash("orc-delivery-group-v1", key), after checking the key. */
export declare function deliveryGroupId(key: DeliveryEquivalenceKey): string
/** The strongest intent present: wake > follow_up > status_only (status_only for none). */
export declare function effectiveDeliveryIntent(intents: readonly DeliveryIntent[]): DeliveryIntent

export interface DeliveryGroupAssemblyMember {
  noticeId: string
  requestedDeliveryIntent: DeliveryIntent
}
export interface DeliveryGroupAssemblyInput {
  version: typeof DELIVERY_GROUP_ASSEMBLY_VERSION
  equivalenceKey: DeliveryEquivalenceKey
  subscriptionRegistryRevision: number
  membershipRevision: number
  primaryNoticeId: string
  members: DeliveryGroupAssemblyMember[]
  recipientTransferGeneration: RecipientTransferGeneration
}
/** A fresh member; a built-in member defaults to `wake`, a subscription member must declare its intent. */
export declare function mintDeliveryGroupAssemblyMember(value: unknown): DeliveryGroupAssemblyMember
/** A fresh input (fresh members; the equivalence key is the caller's). */
export declare function parseDeliveryGroupAssemblyInput(value: unknown): DeliveryGroupAssemblyInput
/** The sealed, pending group of the input, members in notice-id (UTF-16 code unit) order. */
export declare function assembleDeliveryGroup(value: unknown): DeliveryGroupRecord

export interface DeliveryGroupRecord {
  version: typeof DELIVERY_GROUP_VERSION
  deliveryGroupId: string
  equivalenceKey: DeliveryEquivalenceKey
  subscriptionRegistryRevision: number
  membershipRevision: number
  membershipState: (typeof DELIVERY_GROUP_MEMBERSHIP_STATES)[number]
  primaryNoticeId: string
  memberNoticeIds: string[]
  requestedIntents: DeliveryIntent[]
  effectiveDeliveryIntent: DeliveryIntent
  operativeActivationConsumedAt?: string
  recipientTransferGeneration: RecipientTransferGeneration
  supersedesDeliveryGroupId?: string
  successorDeliveryGroupId?: string
  authorityTransitionId?: string
  state: DeliveryGroupState
}
/** Returns `value` itself when it is a valid group record. */
export declare function parseDeliveryGroupRecord(value: unknown): DeliveryGroupRecord

export interface DeliveryClaimReleaseProof {
  deliveryClaimId: string
  claimGeneration: DeliveryClaimGeneration
  recipientSessionId: string
  recipientTargetSessionId?: string
  recipientBindingEpoch: number
  barrierId: string
  noSessionEntry: true
  noAdapterQueue: true
  noInflightInvocation: true
  noPiFollowUp: true
  noOpenCodePendingPrompt: true
  establishedAt: string
}
export interface DeliveryClaimRecord {
  version: typeof DELIVERY_CLAIM_VERSION
  deliveryClaimId: string
  deliveryGroupId: string
  membershipRevision: number
  effectiveDeliveryIntent: DeliveryIntent
  primaryNoticeId: string
  memberNoticeIds: string[]
  claimGeneration: DeliveryClaimGeneration
  expiresAt: string
  recipientContext: Exclude<RecipientContext, 'headless_cli'>
  recipientSessionId: string
  recipientTargetSessionId?: string
  recipientPrincipalId: string
  recipientBindingEpoch: number
  recipientTransferGeneration: RecipientTransferGeneration
  workerId: string
  workerGeneration: WorkerGeneration
  transitionId: string
  transitionVersion: TransitionVersion
  assignmentId?: string
  turnId?: string
  watchdogGeneration?: WatchdogGeneration
  ingressMode: DeliveryMode
  state: DeliveryClaimState
  deliveryAttemptedAt?: string
  targetLedgerEntryId?: string
  insertedAt?: string
  deliveredAt?: string
  deliveryReceiptId?: string
  resultMessageId?: string
  coalescedByResult?: boolean
  blockedReason?: string
  releaseProof?: DeliveryClaimReleaseProof
  releasedAt?: string
}
/** Returns `value` itself when it is a valid claim record. */
export declare function parseDeliveryClaimRecord(value: unknown): DeliveryClaimRecord

export declare const NOTICE_RECIPIENT_INGRESS_OPERATIONS: NoticeRecipientIngressOperations
export type NoticeRecipientIngressOperation = (typeof NOTICE_RECIPIENT_INGRESS_OPERATIONS)[number]
export type NoticeRecipientIngressEnvelope = {
  version: typeof NOTICE_RECIPIENT_INGRESS_VERSION
  operation: NoticeRecipientIngressOperation
  requestId: string
  idempotencyKey: string
  payload: CanonicalValue
}
/** Returns `value` itself when the envelope and its operation's payload are valid. */
export declare function parseNoticeRecipientIngressEnvelope(value: unknown): NoticeRecipientIngressEnvelope

export declare const TARGET_LEDGER_STATES: TargetLedgerStates
export interface TargetLedgerLookupResult {
  version: typeof TARGET_LEDGER_RESULT_VERSION
  deliveryClaimId: string
  claimGeneration: DeliveryClaimGeneration
  state: (typeof TARGET_LEDGER_STATES)[number]
  checkedAt: string
  targetLedgerEntryId?: string
  insertedAt?: string
}
/** Returns `value` itself when it is a valid lookup result. */
export declare function parseTargetLedgerLookupResult(value: unknown): TargetLedgerLookupResult

/** validateVersionedStoreRecord(value, LIFECYCLE_NOTICE_VERSION, parseLifecycleNotice); never throws. */
export declare const validateLifecycleNoticeStore: (value: unknown) => StoreValidationResult<LifecycleNotice>
/** validateVersionedStoreRecord(value, DELIVERY_GROUP_VERSION, parseDeliveryGroupRecord); never throws. */
export declare const validateDeliveryGroupStore: (value: unknown) => StoreValidationResult<DeliveryGroupRecord>
/** validateVersionedStoreRecord(value, DELIVERY_CLAIM_VERSION, parseDeliveryClaimRecord); never throws. */
export declare const validateDeliveryClaimStore: (value: unknown) => StoreValidationResult<DeliveryClaimRecord>
/** validateVersionedStoreRecord(value, TARGET_LEDGER_RESULT_VERSION, parseTargetLedgerLookupResult); never throws. */
export declare const validateTargetLedgerStore: (value: unknown) => StoreValidationResult<TargetLedgerLookupResult>

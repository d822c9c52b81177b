// The supervision corpus, part of @ctliz/agent-intercom-core/boss/vectors (and ./boss):
// vectors/orc-supervision-v1.json as the TypeScript core 0.2.0's supervision-vectors exports it.
import type { SupervisionVectorHashDomain } from '../facts.js'
import type {
  ActiveOperationLease, AuthenticatedActivityRecord, ExternalWaitLease, InactivityEdgeKey,
  LifecycleSubscriptionRecord, LifecycleTriggerRecord, SubscriberRebindMigrationRecord,
  SupervisorAclState, SupervisorAuthorizationDecision, SupervisorAuthorizationRequest,
} from './supervision.js'

/** The domain of SUPERVISION_VECTORS_HASH. */
export declare const SUPERVISION_VECTOR_HASH_DOMAIN: SupervisionVectorHashDomain

export declare const MANAGER_WORKER_SUBSCRIPTION_VECTOR: LifecycleSubscriptionRecord
export declare const BOSS_MANAGER_SUBSCRIPTION_VECTOR: LifecycleSubscriptionRecord
/** Persisted scheduler states a subscription parser and store must refuse (4). */
export declare const LIFECYCLE_SUBSCRIPTION_SCHEDULER_NEGATIVE_VECTORS: readonly { name: string; value: unknown }[]
export declare const AUTHENTICATED_ACTIVITY_VECTOR: AuthenticatedActivityRecord
export declare const ACTIVE_OPERATION_LEASE_VECTOR: ActiveOperationLease
export declare const EXTERNAL_WAIT_LEASE_VECTOR: ExternalWaitLease
export declare const LIFECYCLE_TRIGGER_VECTOR: LifecycleTriggerRecord
export declare const INACTIVITY_EDGE_VECTORS: readonly InactivityEdgeKey[]
export declare const COMMITTED_REBIND_MIGRATION_VECTOR: SubscriberRebindMigrationRecord
export declare const BLOCKED_REBIND_MIGRATION_VECTOR: SubscriberRebindMigrationRecord
/** Migration records the parser must refuse (8; not part of the hashed corpus). */
export declare const REBIND_MIGRATION_NEGATIVE_VECTORS: readonly { name: string; value: unknown }[]
export declare const SUPERVISOR_ACL_STATE: SupervisorAclState

export interface SupervisorAclVector {
  name: string
  request: SupervisorAuthorizationRequest
  expected: SupervisorAuthorizationDecision
}

/** Every permitted edge and every denial code (26). */
export declare const SUPERVISOR_ACL_VECTORS: readonly SupervisorAclVector[]
/** A fresh, mutable copy of SUPERVISOR_ACL_STATE. */
export declare function stateForSupervisorAclVector(): SupervisorAclState

/** The hashed corpus: SUPERVISION_VECTORS_HASH = canonicalHash(SUPERVISION_VECTOR_HASH_DOMAIN, it). */
export declare const SUPERVISION_VECTOR_CORPUS: {
  readonly version: 1
  readonly subscriptions: readonly LifecycleSubscriptionRecord[]
  readonly subscriptionSchedulerNegativeVectors: readonly { name: string; value: unknown }[]
  readonly activity: AuthenticatedActivityRecord
  readonly operationLease: ActiveOperationLease
  readonly externalWaitLease: ExternalWaitLease
  readonly trigger: LifecycleTriggerRecord
  readonly inactivityEdges: readonly InactivityEdgeKey[]
  readonly rebindMigrations: readonly SubscriberRebindMigrationRecord[]
  readonly aclState: SupervisorAclState
  readonly aclVectors: readonly SupervisorAclVector[]
}

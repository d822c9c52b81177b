// @ctliz/agent-intercom-core/boss/vectors (also exported by ./boss): the Boss policy and
// feature-routing corpora, the participant-state corpora (./participant-vectors), and the
// semantics hashes of the other Boss corpora.
import type {
  BossPolicyVectorSchemaVersion, FeatureRoutingVectorSchemaVersion, SupervisionVectorSchemaVersion,
} from '../facts.js'
import type {
  BossAuthorizationContext, BossControlKind, BossPolicyAction, BossPolicyPrincipal, BossPolicyRole,
  BossPolicyState,
} from './policy.js'

export * from './supervision-vectors.js'

export declare const BOSS_POLICY_VECTOR_SCHEMA_VERSION: BossPolicyVectorSchemaVersion

export interface BossPolicyVector {
  name: string
  actorId: string
  action: BossPolicyAction
  targetId: string
  context?: BossAuthorizationContext
  expectedAllowed: boolean
  expectedReasonOrCode: string
  principalOverride?: BossPolicyPrincipal
  additionalPrincipals?: readonly BossPolicyPrincipal[]
}

/** Every ordered role pair, discovery: the generic communication table (49). */
export declare const BOSS_ROLE_EDGE_VECTORS: readonly BossPolicyVector[]

export interface BossControlEdgeVector extends BossPolicyVector {
  actorRole: BossPolicyRole
  targetRole: BossPolicyRole
  context: BossAuthorizationContext & { controlKind: BossControlKind; correlated: true }
}

/** Every ordered role pair crossed with every control kind (441). */
export declare const BOSS_CONTROL_EDGE_VECTORS: readonly BossControlEdgeVector[]
/** The role edges, the control edges, then 33 named cases (523). */
export declare const BOSS_POLICY_VECTORS: readonly BossPolicyVector[]
/** The state a vector runs against (a fresh object). */
export declare function bossPolicyStateForVector(vector: BossPolicyVector): BossPolicyState
/** canonicalHash(`agent-intercom-core/${BOSS_RUN_FEATURE}/policy-vectors`, {version, vectors}). */
export declare const BOSS_POLICY_SEMANTICS_HASH: string

export declare const FEATURE_ROUTING_VECTOR_SCHEMA_VERSION: FeatureRoutingVectorSchemaVersion

/** A feature-routing scenario, named by its fields. */
export interface FeatureRoutingVector {
  readonly name: string
  readonly actorClass?: 'ordinary' | 'boss-bound' | 'unknown'
  readonly targetClass?: 'ordinary' | 'boss-bound'
  readonly actorState?: 'active' | 'credential_only' | 'unbound' | 'revoked' | 'replaced' | 'ended' | 'missing'
  readonly targetState?: 'active'
  readonly brokerBossFeatureAdvertised?: boolean
  readonly actorPolicy?: 'local-public' | 'remote-tree'
  readonly targetPolicy?: 'local-public' | 'remote-tree'
  readonly relationship?: 'unrelated' | 'direct-parent' | 'own_intermediary' | 'prototype_intermediary' | 'intermediary_key_identity_mismatch'
  readonly action?: 'send' | 'inspect_tree' | 'unknown'
  readonly featureAttestation?: 'missing' | 'unknown_version' | 'semantics_mismatch'
  readonly policyAttestation?: 'semantics_mismatch'
  readonly capabilityAttestation?: 'digest_mismatch'
  readonly brokerIdentityVerified?: boolean
  readonly registrationIdentity?: 'boss_run_mismatch' | 'participant_mismatch' | 'binding_epoch_mismatch'
  readonly downgradeAttempt?:
    | 'boss_fields_under_ordinary_discriminator' | 'unknown_registration_field'
    | 'map_key_principal_id_mismatch' | 'policy_key_principal_id_mismatch' | 'policy_state_mismatch'
    | 'unknown_request_field' | 'boss_epoch_in_legacy_context'
  readonly context?: 'boss' | 'legacy'
  readonly entryPoint?: 'legacy_boundary'
  readonly supervisorEdge?:
    | 'ordinary_owner_to_owned_worker' | 'manager_to_assigned_worker' | 'manager_to_assigned_scout'
    | 'boss_to_current_manager' | 'controller_to_run_participant'
  readonly policyClass?: 'ordinary' | 'boss-bound'
  readonly expected: string
}

/** The 45 feature-routing scenarios. */
export declare const FEATURE_ROUTING_VECTORS: readonly FeatureRoutingVector[]
/** canonicalHash(`agent-intercom-core/${BOSS_RUN_FEATURE}/feature-routing-vectors`, {version, vectors}). */
export declare const FEATURE_ROUTING_SEMANTICS_HASH: string

export * from './participant-vectors.js'

/** The semantics hash of the supervision corpus, as the feature-semantics corpus embeds it. */
export declare const SUPERVISION_VECTOR_SCHEMA_VERSION: SupervisionVectorSchemaVersion
export declare const SUPERVISION_VECTORS_HASH: string

export * from './worker-store-vectors.js'

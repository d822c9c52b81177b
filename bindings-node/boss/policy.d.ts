// @ctliz/agent-intercom-core/boss/policy: the Boss policy (principals, authorizeBossPolicy).
import type {
  BossControlKinds, BossPolicyActions, BossPolicyPrincipalVersion, BossPolicyRoles,
  BossPolicySemanticsVersion,
} from '../facts.js'
import type { ParticipantBindingEpoch } from '../canonical/index.js'

export declare const BOSS_POLICY_SEMANTICS_VERSION: BossPolicySemanticsVersion
export declare const BOSS_POLICY_PRINCIPAL_VERSION: BossPolicyPrincipalVersion
export declare const BOSS_POLICY_ACTIONS: BossPolicyActions
export type BossPolicyAction = (typeof BOSS_POLICY_ACTIONS)[number]
export declare const BOSS_POLICY_ROLES: BossPolicyRoles
export type BossPolicyRole = (typeof BOSS_POLICY_ROLES)[number]
export declare const BOSS_CONTROL_KINDS: BossControlKinds
export type BossControlKind = (typeof BOSS_CONTROL_KINDS)[number]

export type BossPolicyPrincipal = BossPrivatePrincipal | LegacyLocalPublicPrincipal

/** A participant of one Boss run. */
export interface BossPrivatePrincipal {
  version: typeof BOSS_POLICY_PRINCIPAL_VERSION
  principalId: string
  principalClass: 'boss-private'
  state: 'active' | 'revoked' | 'replaced'
  bossRunId: string
  participantId: string
  role: BossPolicyRole
  bindingEpoch: ParticipantBindingEpoch
  /** Exactly Workers and Scouts. */
  assignedManagerParticipantId?: string
  /** Exactly Managers; no duplicates. */
  assignedParticipantIds?: string[]
  /** Exactly Council. */
  requestingPrincipalId?: string
}

/** A session outside every Boss run. */
export interface LegacyLocalPublicPrincipal {
  version: typeof BOSS_POLICY_PRINCIPAL_VERSION
  principalId: string
  principalClass: 'legacy-local-public'
  state: 'active' | 'revoked'
}

export interface BossPolicyState {
  principals: Record<string, BossPolicyPrincipal>
}

/** The epochs are compared with the principals' (a missing one is stale). */
export interface BossAuthorizationContext {
  actorBindingEpoch?: ParticipantBindingEpoch
  targetBindingEpoch?: ParticipantBindingEpoch
  /** Control only. */
  controlKind?: BossControlKind
  /** Control only. */
  correlated?: boolean
}

export type BossAuthorizationDenialCode =
  | 'UNKNOWN_PRINCIPAL'
  | 'REVOKED_OR_REPLACED_PRINCIPAL'
  | 'STALE_BINDING_EPOCH'
  | 'CROSS_RUN_DENIED'
  | 'BOSS_LEGACY_ISOLATION'
  | 'CONTROL_REQUIRES_CORRELATION'
  | 'CONTROL_KIND_DENIED'
  | 'AMBIGUOUS_PARTICIPANT_IDENTITY'
  | 'POLICY_DENIED'

export type BossAuthorizationDecision =
  | { allowed: true; reason: 'legacy-local-public' | 'self' | 'communication-profile' | 'structured-control' }
  | { allowed: false; code: BossAuthorizationDenialCode }

/** The exact principal record, as a fresh object; throws ContractValidationError. */
export declare function parseBossPolicyPrincipal(value: unknown): BossPolicyPrincipal

/** The directional control allowlist: actor role, target role, kinds. An absent pair or kind is
 * denied; assignment and requester bindings are checked on top. */
export declare const BOSS_DIRECTIONAL_CONTROL_KIND_MATRIX: {
  readonly boss: {
    readonly manager: readonly ['lifecycle', 'decision']
    readonly adversary: readonly ['review_request']
    readonly council: readonly ['review_request']
    readonly controller: readonly ['lifecycle', 'decision']
  }
  readonly manager: {
    readonly boss: readonly ['health', 'staffing', 'proof', 'lifecycle']
    readonly adversary: readonly ['review_request']
    readonly scout: readonly ['assignment_request', 'lifecycle']
    readonly worker: readonly ['assignment_request', 'lifecycle']
    readonly controller: readonly ['assignment_request', 'health', 'staffing', 'review_request', 'proof', 'lifecycle']
  }
  readonly adversary: {
    readonly boss: readonly ['health', 'review_result', 'proof']
    readonly manager: readonly ['health', 'review_result', 'proof']
    readonly controller: readonly ['health', 'review_result', 'proof']
  }
  readonly scout: {
    readonly manager: readonly ['assignment_response', 'health', 'proof']
    readonly controller: readonly ['assignment_response', 'health']
  }
  readonly worker: {
    readonly manager: readonly ['assignment_response', 'health', 'proof']
    readonly controller: readonly ['assignment_response', 'health']
  }
  readonly council: {
    readonly boss: readonly ['health', 'review_result']
    readonly controller: readonly ['health', 'review_result']
  }
  readonly controller: {
    readonly boss: readonly ['health', 'proof', 'lifecycle', 'decision']
    readonly manager: readonly ['assignment_response', 'health', 'staffing', 'review_result', 'lifecycle', 'decision']
    readonly adversary: readonly ['review_request', 'lifecycle']
    readonly scout: readonly ['assignment_request', 'lifecycle']
    readonly worker: readonly ['assignment_request', 'lifecycle']
    readonly council: readonly ['review_request']
  }
}

/** May `actorId` do `action` to `targetId`? Never throws. */
export declare function authorizeBossPolicy(
  state: BossPolicyState,
  actorId: string,
  action: BossPolicyAction,
  targetId: string,
  context?: BossAuthorizationContext,
): BossAuthorizationDecision

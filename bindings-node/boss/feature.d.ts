// The feature-aware authorization (exported by @ctliz/agent-intercom-core/boss).
import type { ParticipantBindingEpoch } from '../canonical/index.js'
import type { AuthorizationContext, AuthorizationDecision, PolicyAction, PolicyState } from '../policy/index.js'
import type { BossRunFeatureContract } from './index.js'
import type {
  BossAuthorizationContext, BossAuthorizationDecision, BossPolicyAction, BossPolicyState,
} from './policy.js'

export declare const LEGACY_POLICY_ACTIONS: readonly PolicyAction[]
export type FeatureRegistrationState = 'active' | 'credential_only' | 'unbound' | 'revoked' | 'replaced' | 'ended'

export interface OrdinaryFeatureRegistration {
  principalId: string
  principalClass: 'ordinary'
  state: 'active' | 'revoked' | 'ended'
}

export interface BossFeatureRegistration {
  principalId: string
  principalClass: 'boss-bound'
  state: FeatureRegistrationState
  bossRunId: string
  participantId: string
  bindingEpoch: ParticipantBindingEpoch
  featureContract: BossRunFeatureContract
  policySemanticsHash: string
  capabilityDigest: string
  brokerIdentityVerified: boolean
}

export type FeatureRegistration = OrdinaryFeatureRegistration | BossFeatureRegistration

export interface FeatureAwarePolicyState {
  legacy: PolicyState
  boss: BossPolicyState
  registrations: Record<string, FeatureRegistration>
}

export interface FeatureAwareAuthorizationRequest {
  actorId: string
  targetId: string
  action: PolicyAction | BossPolicyAction
  legacyContext?: AuthorizationContext
  bossContext?: BossAuthorizationContext
}

export type FeatureAwareAuthorizationDecision =
  | AuthorizationDecision
  | BossAuthorizationDecision
  | {
    allowed: false
    code:
      | 'UNKNOWN_REGISTRATION'
      | 'FEATURE_CLASS_DENIED'
      | 'BINDING_INACTIVE'
      | 'FEATURE_ATTESTATION_DENIED'
      | 'ACTION_NAMESPACE_DENIED'
      | 'CONTEXT_NAMESPACE_DENIED'
  }

/** The exact registration of its class (a fresh object); throws ContractValidationError. */
export declare function parseFeatureRegistration(value: unknown, path?: string): FeatureRegistration
/** The exact routing request (a fresh object); throws ContractValidationError. */
export declare function parseFeatureAwareAuthorizationRequest(value: unknown): FeatureAwareAuthorizationRequest
/** The frozen legacy decision for two active, bound ordinary registrations; throws
 * ContractValidationError for any other use. */
export declare function authorizeLegacyBoundary(
  state: FeatureAwarePolicyState,
  actorId: string,
  action: PolicyAction,
  targetId: string,
  context?: AuthorizationContext,
): AuthorizationDecision
/** Routing chosen by the registrations only; throws only for a malformed request. */
export declare function authorizeFeatureAware(
  state: FeatureAwarePolicyState,
  requestValue: unknown,
): FeatureAwareAuthorizationDecision

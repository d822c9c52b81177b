// Hand-written declarations of the policy subpath: the remote-access policy kernel (semantics
// version 2), with the TypeScript core's type names and shapes. Literal facts come from
// ../facts.js, which `cargo xtask gen` writes from the Rust crates.
import type { PolicySemanticsVersion } from "../facts.js";

/** The version of these rules. */
export declare const POLICY_SEMANTICS_VERSION: PolicySemanticsVersion;

export type PolicyAction =
  | "discover" | "send" | "ask" | "reply" | "inspect_tree" | "delegate_child" | "revoke" | "adopt";
export type PrincipalKind = "local" | "remote";
export type PrincipalState = "active" | "revoked";
export type PrincipalPolicy = "local-public" | "remote-tree";

/** A principal. The functions below accept exactly these keys (an unknown key, a missing one or
 * a value of another type is a ContractValidationError naming its path); strings non-empty,
 * `generation` a safe integer >= 0, `parentSessionId` absent or undefined when there is none. */
export interface PolicyPrincipal {
  id: string;
  kind: PrincipalKind;
  state: PrincipalState;
  generation: number;
  policy: PrincipalPolicy;
  parentSessionId?: string;
  rootSessionId: string;
}

/** The principals by key (normally each principal's own id); only `principals`, and only own
 * enumerable data properties are read: a member of Object.prototype is never a principal. */
export interface PolicyState {
  principals: Record<string, PolicyPrincipal>;
}

/** The generations the caller believes the actor and target hold; an unknown key is refused. */
export interface AuthorizationContext {
  actorGeneration?: number;
  targetGeneration?: number;
}

export type AuthorizationDenialCode =
  | "UNKNOWN_PRINCIPAL"
  | "REVOKED_PRINCIPAL"
  | "STALE_GENERATION"
  | "POLICY_DENIED";

export type AuthorizationDecision =
  | { allowed: true; reason: "self" | "local-public" | "direct-parent" | "ancestor-chain" | "ancestor-control" }
  | { allowed: false; code: AuthorizationDenialCode };

/** A transition's new state (the input is never changed) and the keys it changed,
 * breadth-first from the subtree's root. */
export interface PolicyTransitionResult {
  state: PolicyState;
  changedPrincipalIds: string[];
}

/** Whether one of the two is the other's direct parent. */
export declare function isDirectParentPair(left: PolicyPrincipal, right: PolicyPrincipal): boolean;
/** Whether `ancestorId` is on the parent chain above `descendantId` (cycle-safe; never its own
 * ancestor). */
export declare function isAncestor(state: PolicyState, ancestorId: string, descendantId: string): boolean;
/**
 * May `actorId` do `action` to `targetId`? In order: UNKNOWN_PRINCIPAL, REVOKED_PRINCIPAL,
 * STALE_GENERATION (a context generation that is not the principal's), "self", "local-public"
 * (two local sessions); for discover/send/ask/reply "direct-parent" then "ancestor-chain"; for
 * inspect_tree/revoke/adopt "ancestor-control"; else POLICY_DENIED. A malformed argument throws a
 * ContractValidationError.
 */
export declare function authorize(
  state: PolicyState,
  actorId: string,
  action: PolicyAction,
  targetId: string,
  context?: AuthorizationContext,
): AuthorizationDecision;
/** Revokes `principalId` and its descendants, each one generation up; an unknown id changes
 * nothing. */
export declare function revokeSubtree(state: PolicyState, principalId: string): PolicyTransitionResult;
/** Re-parents `principalId` under `newParentSessionId`, giving it and its descendants the root
 * `newRootSessionId`, one generation up. Throws an Error `Unknown principal: X`,
 * `Unknown parent principal: X` or `Adoption would create an ownership cycle`. */
export declare function adoptSubtree(
  state: PolicyState,
  principalId: string,
  newParentSessionId: string,
  newRootSessionId: string,
): PolicyTransitionResult;

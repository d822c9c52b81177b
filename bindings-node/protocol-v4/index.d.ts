// Hand-written declarations of the protocol-v4 subpath: the part the vendorable module shares
// (./vendorable.js), then routing. Literal facts come from ../facts.js, which `cargo xtask gen`
// writes from the Rust crates.
import type { VectorsHashDomain } from "../facts.js";

export * from "./vendorable.js";

/** The domain of the semantics hash. */
export declare const INTERCOM_PROTOCOL_V4_VECTORS_HASH_DOMAIN: VectorsHashDomain;

/** A session as routing sees it. `scope` undefined, null or "" is the unscoped group. */
export interface IntercomCandidate {
  readonly id: string;
  readonly name?: string | null;
  readonly scope?: string | null;
}
export type IntercomResolveKind =
  | "global_exact_id" | "same_scope_name" | "same_scope_prefix" | "AMBIGUOUS_TARGET" | "SESSION_NOT_FOUND";
export interface IntercomResolution {
  readonly kind: IntercomResolveKind;
  /** One id when resolved, every candidate when ambiguous, none when not found. */
  readonly targetIds: string[];
}
/**
 * Resolves a send.to selector: (1) a full session id, in any scope; (2) an exact,
 * case-sensitive name in the actor's scope; (3) a unique id prefix in the actor's scope.
 * The first step with a match decides; several matches give AMBIGUOUS_TARGET. The options of
 * this and the other routing functions are exactly those declared (another key is UNKNOWN_KEY);
 * candidates must be plain JSON data (UNSUPPORTED_VALUE), an undefined field being absent.
 */
export declare function resolveIntercomTarget(options: {
  candidates: readonly IntercomCandidate[];
  actorScope?: string | null;
  selector: string;
}): IntercomResolution;
/** Ids a list request returns: the actor itself plus every session in its scope. */
export declare function listVisibleIntercomSessions(options: {
  candidates: readonly IntercomCandidate[];
  actorId: string;
  actorScope?: string | null;
}): string[];
export type IntercomAudienceEvent = "session_joined" | "session_left" | "presence_update";
/** Ids that hear a lifecycle event: the subject's scope, minus the subject. */
export declare function intercomEventAudience(options: {
  event: IntercomAudienceEvent;
  candidates: readonly IntercomCandidate[];
  subjectId: string;
  subjectScope?: string | null;
}): string[];
/** Members of `base` that `kept` also holds, in `base` order: a filter narrows, never widens. */
export declare function narrowIntercomAudience(base: readonly string[], kept: readonly string[]): string[];
export interface IntercomLifecycleEvent {
  readonly kind: "left" | "joined";
  readonly sessionId: string;
  /** Whose audience hears it (null: the unscoped group). */
  readonly scope: string | null;
}
export interface IntercomReplacementPlan {
  readonly kind: "old_left_before_new_joined" | "same_scope_left_before_joined";
  /** Emit in this order: left (old scope), then joined (new scope). */
  readonly events: [IntercomLifecycleEvent, IntercomLifecycleEvent];
}
export declare function planIntercomReplacement(options: {
  sessionId: string;
  oldScope?: string | null;
  newScope?: string | null;
}): IntercomReplacementPlan;
/** "accept" only when the frame's connection holds the session's current binding generation. */
export declare function intercomFrameDisposition(connectionGeneration: number, currentGeneration: number | null | undefined): "accept" | "discard";

// Hand-written: the protocol-v4 declarations the vendorable one-file module
// (vendor/agent-intercom-protocol-v4.mjs) shares with this subpath. `cargo xtask gen` writes
// vendor/agent-intercom-protocol-v4.d.mts and .d.cts from this file with the facts it imports
// inlined, so that the vendored declarations stay one self-contained file.
import type { KnownSemanticsHash, ProtocolName, ProtocolV4Operations, ProtocolV4Outcomes, ProtocolVersion, ScopeA, ScopeB, ScopeEnv, ScopeIdPatternSource, VectorCount, VectorSchemaVersion, VectorsHashDomain } from "../facts.js";

export declare const INTERCOM_PROTOCOL_NAME: ProtocolName;
export declare const INTERCOM_PROTOCOL_VERSION: ProtocolVersion;
export declare const INTERCOM_SCOPE_ENV: ScopeEnv;
export declare const INTERCOM_SCOPE_ID_PATTERN_SOURCE: ScopeIdPatternSource;
export declare const INTERCOM_SCOPE_ID_PATTERN: RegExp;
export declare const INTERCOM_PROTOCOL_V4_VECTOR_SCHEMA_VERSION: VectorSchemaVersion;
export declare const PROTOCOL_V4_SCOPE_A: ScopeA;
export declare const PROTOCOL_V4_SCOPE_B: ScopeB;
/** The acceptance corpus, deep-frozen ({@link VectorCount} vectors). */
export declare const INTERCOM_PROTOCOL_V4_VECTORS: readonly ProtocolV4Vector[];
/** canonicalHash({@link VectorsHashDomain}, { version, vectors }); the ecosystem asserts {@link KnownSemanticsHash}. */
export declare const INTERCOM_PROTOCOL_V4_SEMANTICS_HASH: string;

export type IntercomScopeId = string;
export type ProtocolV4Scope = string | null;
export type ProtocolV4Operation = ProtocolV4Operations;
export type ProtocolV4Expected = ProtocolV4Outcomes;
export interface ProtocolV4Candidate {
  readonly id: string;
  readonly name: string;
  readonly scope: ProtocolV4Scope;
}
export interface ProtocolV4Vector {
  readonly name: string;
  readonly operation: ProtocolV4Operation;
  readonly actorId?: string;
  readonly actorScope?: ProtocolV4Scope;
  readonly subjectId?: string;
  readonly subjectScope?: ProtocolV4Scope;
  readonly selector?: string;
  readonly scopeInput?: unknown;
  readonly candidates?: readonly ProtocolV4Candidate[];
  readonly expected: ProtocolV4Expected;
  readonly expectedTargetIds?: readonly string[];
  readonly expectedAudienceIds?: readonly string[];
  readonly expectedEvents?: readonly string[];
}

/**
 * Returns the scope id, or undefined for undefined and "" (the unscoped group). Anything else
 * must match INTERCOM_SCOPE_ID_PATTERN ({@link ScopeIdPatternSource}) exactly (no trimming or
 * case folding); otherwise throws an Error whose `code` is INVALID_SCOPE and whose message names
 * `path` and never the value.
 */
export declare function parseIntercomScopeId(value: unknown, path?: string): IntercomScopeId | undefined;
/** parseIntercomScopeId(env[INTERCOM_SCOPE_ENV], INTERCOM_SCOPE_ENV): the variable {@link ScopeEnv}. */
export declare function intercomScopeIdFromEnv(env?: Record<string, string | undefined>): IntercomScopeId | undefined;
/** Strict equality: the unscoped group (undefined) equals only itself. */
export declare function sameIntercomScope(left: IntercomScopeId | undefined, right: IntercomScopeId | undefined): boolean;

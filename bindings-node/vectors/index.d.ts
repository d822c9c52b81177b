// Hand-written declarations of the vectors subpath: the policy kernel's golden vectors, with the
// TypeScript core's type names and shapes. Literal facts come from ../facts.js, which
// `cargo xtask gen` writes from the Rust crates.
import type { PolicyVectorSchemaVersion } from "../facts.js";
import type { AuthorizationContext, PolicyAction, PolicyPrincipal, PolicyState } from "../policy/index.js";

export interface PolicyVector {
  name: string;
  principals: PolicyPrincipal[];
  actorId: string;
  action: PolicyAction;
  targetId: string;
  context?: AuthorizationContext;
  expectedAllowed: boolean;
  expectedReasonOrCode: string;
}

/** The 12 golden vectors of vectors/policy-v2.json. */
export declare const POLICY_VECTORS: PolicyVector[];
/** A fresh state of the vector's principals, keyed by id (a new copy on every call). */
export declare function stateForVector(vector: PolicyVector): PolicyState;
export declare const POLICY_VECTOR_SCHEMA_VERSION: PolicyVectorSchemaVersion;
/** SHA-256 (lowercase hex) of JSON.stringify({version: POLICY_VECTOR_SCHEMA_VERSION, vectors:
 * POLICY_VECTORS}), computed by the core from vectors/policy-v2.json. */
export declare const POLICY_SEMANTICS_HASH: string;

// Hand-written declarations of the package's main entry point: the TypeScript core's root
// (./policy, ./vectors, ./team-manifest) plus this package's own root names. Literal facts come
// from ./facts.js, which `cargo xtask gen` writes from the Rust crates.
import type { CoreErrorCode, NodeErrorCode } from "./facts.js";

export * from "./policy/index.js";
export * from "./vectors/index.js";
export * from "./team-manifest/index.js";
export * from "./protocol-v4/index.js";
export * from "./canonical/index.js";

/** Every stable error code: the core's (the C ABI's status AIC_STATUS_<CODE> has the same name),
 * those only this package's JavaScript raises, or (open-ended) a broker's code on the wire. */
export type IntercomErrorCode = CoreErrorCode | NodeErrorCode | (string & {});
/** The error every function of this package throws for bad input. */
export declare class IntercomError extends Error {
  readonly name: "IntercomError";
  /** A stable code: the contract's codes above, or a broker error/failure code on the wire. */
  readonly code: IntercomErrorCode;
}
export declare const AGENT_INTERCOM_CORE_VERSION: string;
/** Error codes indexed by their C status value (index 0 is "OK"). */
export declare const INTERCOM_ERROR_CODES: readonly string[];

/** The vendorable one-file protocol-v4 modules shipped in vendor/ (ES module and CommonJS twin),
 * with their SHA-256, as also listed in vendor/SHA256SUMS. */
export declare const VENDORED_PROTOCOL_V4: {
  readonly files: readonly { readonly format: "esm" | "cjs"; readonly file: string; readonly sha256: string }[];
  readonly schemaVersion: number;
  readonly semanticsHash: string;
};
export interface VendoredCheckReport {
  /** True when the copy is byte-identical and its schema version and semantics hash match. */
  readonly ok: boolean;
  readonly path: string;
  readonly sha256: string;
  readonly byteIdentical: boolean;
  /** The shipped file the copy is byte-identical to, or null. */
  readonly matchedFile: string | null;
  /** The schema version the copy declares, or null when none was found. */
  readonly schemaVersion: number | null;
  readonly expectedSchemaVersion: number;
  /** The semantics hash the copy declares, or null. */
  readonly semanticsHash: string | null;
  /** canonicalHash of the vectors the copy actually holds, or null when unreadable. */
  readonly computedSemanticsHash: string | null;
  readonly expectedSemanticsHash: string;
  readonly problems: readonly string[];
}
/** Checks an adapter's vendored copy of vendor/agent-intercom-protocol-v4.mjs (or .cjs). Never
 * throws for a mismatching file; throws an IntercomError (INVALID_ARGUMENT) when the file cannot
 * be read. */
export declare function checkVendoredProtocolV4(path: string): VendoredCheckReport;

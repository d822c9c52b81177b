// Hand-written declarations of the canonical subpath. Literal facts come from ../facts.js, which
// `cargo xtask gen` writes from the Rust crates.
import type { CanonicalEncodingVersion, CanonicalFramePrefix, CanonicalMaxDepth, CanonicalUnicodeNormalization } from "../facts.js";

export type CanonicalPrimitive = boolean | null | number | string;
export type CanonicalValue = CanonicalPrimitive | readonly CanonicalValue[] | { readonly [key: string]: CanonicalValue };
export declare const CANONICAL_ENCODING_VERSION: CanonicalEncodingVersion;
export declare const CANONICAL_HASH_FRAME: CanonicalFramePrefix;
/** Strings are encoded exactly as supplied; NFC/NFD normalization is intentionally not performed. */
export declare const CANONICAL_UNICODE_NORMALIZATION: CanonicalUnicodeNormalization;
/** Deepest accepted nesting of arrays and objects. */
export declare const CANONICAL_MAX_DEPTH: CanonicalMaxDepth;
/**
 * Canonical JSON: keys sorted recursively by UTF-16 code units (array-index keys such as "10"
 * first, in numeric order, as JavaScript enumerates them), no whitespace, JSON.stringify string
 * escapes, safe integers only. Only plain data: arrays with Array.prototype, objects with
 * Object.prototype, own enumerable data properties; no toJSON is ever called and a proxy is
 * refused without being entered. Throws an IntercomError (UNSUPPORTED_NUMBER, UNPAIRED_SURROGATE,
 * UNSUPPORTED_VALUE, NESTING_TOO_DEEP) for anything else; a cycle is UNSUPPORTED_VALUE.
 */
export declare function canonicalJson(value: unknown): string;
/** CANONICAL_HASH_FRAME + ":" + L(domain) + ":" + domain + ":" + L(payload) + ":" + payload, as UTF-8 bytes. */
export declare function canonicalFrame(domain: string, value: unknown): Uint8Array;
/** Lowercase hex SHA-256 of canonicalFrame(domain, value). */
export declare function canonicalHash(domain: string, value: unknown): string;
/** canonicalJson of a JSON document; a repeated key is DUPLICATE_KEY, bad syntax INVALID_JSON. */
export declare function canonicalJsonFromText(text: string): string;
/** canonicalHash of a JSON document. */
export declare function canonicalHashFromText(domain: string, text: string): string;

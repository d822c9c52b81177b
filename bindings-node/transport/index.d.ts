// @ctliz/agent-intercom-core/transport: signed transport envelopes (TransportEnvelopeV1, see
// docs/envelope.md). Hand-written; literal facts come from ../facts.js, which `cargo xtask gen`
// writes from the Rust core.
import { IntercomError } from "../index.js";
import type { DefaultEnvelopeSkewMs, EnvelopeContentType, EnvelopeFormatVersion, EnvelopeHkdfInfoPrefix, EnvelopeHkdfSalt, EnvelopeKindEd25519, EnvelopeKindHmacSha256, EnvelopeSignatureKind, EnvelopeSigningDomain, MaxEnvelopeBytes, MaxEnvelopeLifetimeMs, MaxEnvelopeSkewMs } from "../facts.js";

export { IntercomError };
export type { EnvelopeContentType, EnvelopeSignatureKind };

/** The `format_version` of this format. */
export declare const TRANSPORT_ENVELOPE_FORMAT_VERSION: EnvelopeFormatVersion;
/** The largest envelope accepted, in bytes of input (2 MiB). */
export declare const MAX_ENVELOPE_BYTES: MaxEnvelopeBytes;
/** The longest `expires_at - sent_at`, in milliseconds (24 hours). */
export declare const MAX_ENVELOPE_LIFETIME_MS: MaxEnvelopeLifetimeMs;
/** How far ahead of the clock `sent_at` may be by default, in milliseconds. */
export declare const DEFAULT_ENVELOPE_SKEW_MS: DefaultEnvelopeSkewMs;
/** The largest skew a caller may allow, in milliseconds. */
export declare const MAX_ENVELOPE_SKEW_MS: MaxEnvelopeSkewMs;
/** The canonical-frame domain of the signing input. */
export declare const ENVELOPE_SIGNING_DOMAIN: EnvelopeSigningDomain;
/** The HKDF-SHA256 salt of HMAC keys. */
export declare const ENVELOPE_HKDF_SALT: EnvelopeHkdfSalt;
/** The HKDF-SHA256 info of an HMAC key: this prefix, then the key id. */
export declare const ENVELOPE_HKDF_INFO_PREFIX: EnvelopeHkdfInfoPrefix;
/** Every content type. */
export declare const ENVELOPE_CONTENT_TYPES: readonly EnvelopeContentType[];
/** Every signature kind. */
export declare const ENVELOPE_SIGNATURE_KINDS: readonly EnvelopeSignatureKind[];

/** JSON data of the canonical model: integers only (no fraction or exponent). */
export type EnvelopeJson = null | boolean | number | string | EnvelopeJson[] | { [key: string]: EnvelopeJson };

/** Who sent an envelope. */
export interface EnvelopeSender {
  agent_id: string;
  agent_type: string;
  daemon_fingerprint: string;
  /** Distinct strings, at most 64. */
  capabilities: string[];
}

/** An envelope without its signature: what signEnvelope signs. */
export interface EnvelopeFields {
  format_version: EnvelopeFormatVersion;
  /** RFC 3339 UTC with milliseconds: `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
  sent_at: string;
  sender: EnvelopeSender;
  recipient: string | null;
  content_type: EnvelopeContentType;
  payload: EnvelopeJson;
  metadata: { [key: string]: EnvelopeJson };
  /** 16 to 256 bytes of printable ASCII without space. */
  nonce: string;
  /** After sent_at, at most MAX_ENVELOPE_LIFETIME_MS after it. */
  expires_at: string;
}

/** A signed envelope. */
export interface TransportEnvelopeV1 extends EnvelopeFields {
  signature: { kind: EnvelopeSignatureKind; key_id: string; value: string };
}

/** A signing key: Ed25519 with its PKCS#8 PEM, or HMAC-SHA256 with the base64 stored secret
 * (the HMAC key is derived from it with HKDF-SHA256, never the secret itself). */
export type EnvelopeSigningKey =
  | { kind: EnvelopeKindEd25519; key_id: string; private_key: string }
  | { kind: EnvelopeKindHmacSha256; key_id: string; secret: string };

/** The keys a verifier trusts, by key id: Ed25519 public keys (SPKI PEM, or base64 SPKI DER)
 * and HMAC secrets (base64, at least 32 bytes). */
export type EnvelopeKeyring = { [kind in EnvelopeSignatureKind]?: { [keyId: string]: string } };

export interface EnvelopeVerifyOptions {
  /** The receiver's clock, in milliseconds since the epoch (default `Date.now()`). */
  now?: number;
  /** How far ahead of `now` sent_at may be (default DEFAULT_ENVELOPE_SKEW_MS). */
  skewMs?: number;
}

/** What verified. */
export interface VerifiedEnvelope {
  envelope: TransportEnvelopeV1;
  kind: EnvelopeSignatureKind;
  key_id: string;
  nonce: string;
  content_type: EnvelopeContentType;
  /** sender.agent_id. */
  sender: string;
  sent_at_ms: number;
  expires_at_ms: number;
}

/** One outcome of verifyEnvelopeSequence. */
export type EnvelopeOutcome =
  | { ok: true; key_id: string; nonce: string }
  | { ok: false; code: string; message: string };

/** Signs `fields` (JSON text or a plain object, without `signature`); returns the envelope as
 * canonical JSON text. Throws IntercomError (ENVELOPE_MALFORMED naming the member, ...). */
export declare function signEnvelope(fields: string | EnvelopeFields, key: EnvelopeSigningKey): string;
/** Verifies an envelope's text; throws IntercomError with one stable code per refusal
 * (ENVELOPE_TOO_LARGE, ENVELOPE_MALFORMED, UNSUPPORTED_FORMAT_VERSION, SIGNATURE_MISSING,
 * SIGNATURE_MALFORMED, UNKNOWN_SIGNING_KEY, SIGNATURE_INVALID, SIGNATURE_EXPIRED,
 * SIGNATURE_NOT_YET_VALID). Replay is the caller's: remember (key_id, nonce) until
 * expires_at_ms. */
export declare function verifyEnvelope(text: string, keyring: EnvelopeKeyring, options?: EnvelopeVerifyOptions): VerifiedEnvelope;
/** Verifies each text in order against one fresh in-memory nonce set (REPLAYED for a nonce
 * seen earlier in the sequence). */
export declare function verifyEnvelopeSequence(texts: readonly string[], keyring: EnvelopeKeyring, options?: EnvelopeVerifyOptions): EnvelopeOutcome[];
/** The bytes a signed envelope's signature covers (UTF-8 text) and their hex SHA-256. */
export declare function envelopeSigningInput(text: string): { text: string; sha256: string };

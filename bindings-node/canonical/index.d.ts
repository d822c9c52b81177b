// Hand-written declarations of the canonical subpath: the TypeScript core's ./canonical types and
// signatures, plus our extras (CANONICAL_MAX_DEPTH, canonicalJsonFromText,
// canonicalHashFromText). Literal facts come from ../facts.js, which `cargo xtask gen` writes
// from the Rust crates. docs/canonical.md says where behaviour differs from TypeScript.
import type {
  CanonicalEncodingVersion,
  CanonicalFramePrefix,
  CanonicalMaxDepth,
  CanonicalUnicodeNormalization,
  CoreErrorCode,
} from "../facts.js";

export type CanonicalPrimitive = boolean | null | number | string;
export type CanonicalValue = CanonicalPrimitive | readonly CanonicalValue[] | { readonly [key: string]: CanonicalValue };
export declare const CANONICAL_ENCODING_VERSION: CanonicalEncodingVersion;
export declare const CANONICAL_HASH_FRAME: CanonicalFramePrefix;
/** Strings are encoded exactly as supplied; NFC/NFD normalization is intentionally not performed. */
export declare const CANONICAL_UNICODE_NORMALIZATION: CanonicalUnicodeNormalization;
/** Deepest nesting of arrays and objects canonicalJson, canonicalFrame and canonicalHash accept
 * (the value itself is level 1); deeper is NESTING_TOO_DEEP. */
export declare const CANONICAL_MAX_DEPTH: CanonicalMaxDepth;

/** What every contract validator throws: `message` is `<path>: <detail>`. */
export declare class ContractValidationError extends Error {
  readonly path: string;
  /** Set on the refusals of canonicalJson, canonicalFrame and canonicalHash: the stable code
   * (UNSUPPORTED_VALUE, UNSUPPORTED_NUMBER, UNPAIRED_SURROGATE, NESTING_TOO_DEEP,
   * INVALID_DOMAIN); subclasses carry their own codes. */
  readonly code?: CoreErrorCode | string;
  constructor(path: string, message: string);
}

/**
 * Canonical JSON: keys sorted recursively (array-index keys such as "10" first, in numeric
 * order, as JavaScript enumerates them), no whitespace, JSON.stringify string escapes, safe
 * integers only. Only plain data: arrays, objects whose prototype is Object.prototype, own
 * enumerable data properties; no getter or toJSON is ever called and a proxy is refused without
 * being entered. Throws ContractValidationError (`$.a: undefined is not a canonical value`).
 */
export declare function canonicalJson(value: unknown): string;
/** CANONICAL_HASH_FRAME + ":" + L(domain) + ":" + domain + ":" + L(payload) + ":" + payload, as
 * UTF-8 bytes; `domain` must be non-empty printable ASCII without whitespace. */
export declare function canonicalFrame(domain: string, value: unknown): Uint8Array;
/** Lowercase hex SHA-256 of canonicalFrame(domain, value). */
export declare function canonicalHash(domain: string, value: unknown): string;
/** canonicalJson of a JSON document; a repeated key is DUPLICATE_KEY, bad syntax INVALID_JSON
 * (IntercomError). */
export declare function canonicalJsonFromText(text: string): string;
/** canonicalHash of a JSON document (IntercomError on refusal). */
export declare function canonicalHashFromText(domain: string, text: string): string;

export type StringEnum<T extends readonly string[]> = T[number];

declare const MONOTONIC_COUNTER_BRAND: unique symbol;
/** A safe integer branded with the kind of counter it is. */
export type MonotonicCounter<Kind extends string> = number & { readonly [MONOTONIC_COUNTER_BRAND]: Kind };
export type BossBindingEpoch = MonotonicCounter<"boss_binding_epoch">;
export type ParticipantBindingEpoch = MonotonicCounter<"participant_binding_epoch">;
export type SubscriberBindingEpoch = MonotonicCounter<"subscriber_binding_epoch">;
export type SubscriberBindingGeneration = MonotonicCounter<"subscriber_binding_generation">;
export type ControllerGeneration = MonotonicCounter<"controller_generation">;
export type BrokerRevision = MonotonicCounter<"broker_revision">;
export type WorkerGeneration = MonotonicCounter<"worker_generation">;
export type TransitionVersion = MonotonicCounter<"transition_version">;
export type BrokerGeneration = MonotonicCounter<"broker_generation">;
export type JournalGeneration = MonotonicCounter<"journal_generation">;
export type SchedulerGeneration = MonotonicCounter<"scheduler_generation">;
export type RecipientTransferGeneration = MonotonicCounter<"recipient_transfer_generation">;
export type DeliveryClaimGeneration = MonotonicCounter<"delivery_claim_generation">;
export type TriggerGeneration = MonotonicCounter<"trigger_generation">;
export type WatchdogGeneration = MonotonicCounter<"watchdog_generation">;

/** readInteger(value, path, minimum), branded; `minimum` defaults to 1. */
export declare function readMonotonicCounter<Kind extends string>(value: unknown, path: string, _kind: Kind, minimum?: number): MonotonicCounter<Kind>;

/** Default path bossBindingEpoch, minimum 1. */
export declare const bossBindingEpoch: (value: unknown, path?: string, minimum?: number) => MonotonicCounter<"boss_binding_epoch">;
/** Default path bindingEpoch, minimum 1. */
export declare const participantBindingEpoch: (value: unknown, path?: string, minimum?: number) => MonotonicCounter<"participant_binding_epoch">;
/** Default path subscriberBindingEpoch, minimum 1. */
export declare const subscriberBindingEpoch: (value: unknown, path?: string, minimum?: number) => MonotonicCounter<"subscriber_binding_epoch">;
/** Default path subscriberBindingGeneration, minimum 1. */
export declare const subscriberBindingGeneration: (value: unknown, path?: string, minimum?: number) => MonotonicCounter<"subscriber_binding_generation">;
/** Default path controllerGeneration, minimum 1. */
export declare const controllerGeneration: (value: unknown, path?: string, minimum?: number) => MonotonicCounter<"controller_generation">;
/** Default path brokerRevision, minimum 0. */
export declare const brokerRevision: (value: unknown, path?: string, minimum?: number) => MonotonicCounter<"broker_revision">;
/** Default path workerGeneration; minimum always 1. */
export declare const workerGeneration: (value: unknown, path?: string) => MonotonicCounter<"worker_generation">;
/** Default path transitionVersion; minimum always 1. */
export declare const transitionVersion: (value: unknown, path?: string) => MonotonicCounter<"transition_version">;
/** Default path brokerGeneration; minimum always 1. */
export declare const brokerGeneration: (value: unknown, path?: string) => MonotonicCounter<"broker_generation">;
/** Default path journalGeneration; minimum always 1. */
export declare const journalGeneration: (value: unknown, path?: string) => MonotonicCounter<"journal_generation">;
/** Default path schedulerGeneration; minimum always 1. */
export declare const schedulerGeneration: (value: unknown, path?: string) => MonotonicCounter<"scheduler_generation">;
/** Default path recipientTransferGeneration, minimum 0. */
export declare const recipientTransferGeneration: (value: unknown, path?: string, minimum?: number) => MonotonicCounter<"recipient_transfer_generation">;
/** Default path claimGeneration; minimum always 1. */
export declare const deliveryClaimGeneration: (value: unknown, path?: string) => MonotonicCounter<"delivery_claim_generation">;
/** Default path triggerGeneration, minimum 0. */
export declare const triggerGeneration: (value: unknown, path?: string, minimum?: number) => MonotonicCounter<"trigger_generation">;
/** Default path watchdogGeneration; minimum always 1. */
export declare const watchdogGeneration: (value: unknown, path?: string) => MonotonicCounter<"watchdog_generation">;

/** An object whose prototype is Object.prototype, with own enumerable data properties only. */
export declare function assertRecord(value: unknown, path?: string): asserts value is Record<string, unknown>;
/** Every `required` key own; no own key outside `required` and `optional`. */
export declare function assertExactKeys(
  value: Record<string, unknown>,
  required: readonly string[],
  optional?: readonly string[],
  path?: string,
): void;
/** A non-empty string without unpaired surrogates. */
export declare function readString(value: unknown, path: string): string;
/** readString, without ASCII whitespace or control characters. */
export declare function readIdentifier(value: unknown, path: string): string;
export declare function readOptionalIdentifier(value: unknown, path: string): string | undefined;
export declare function readOptionalString(value: unknown, path: string): string | undefined;
/** A safe integer, not -0, at least `minimum` (default 0). */
export declare function readInteger(value: unknown, path: string, minimum?: number): number;
export declare function readOptionalInteger(value: unknown, path: string, minimum?: number): number | undefined;
export declare function readBoolean(value: unknown, path: string): boolean;
export declare function readOptionalBoolean(value: unknown, path: string): boolean | undefined;
/** One of `allowed`, exactly. */
export declare function readEnum<const T extends readonly string[]>(value: unknown, allowed: T, path: string): T[number];
/** A dense array of own enumerable data elements, each readString; a fresh array. */
export declare function readStringArray(value: unknown, path: string): string[];
/** `YYYY-MM-DDTHH:MM:SS.mmmZ` naming a real instant (what Date's round trip keeps). */
export declare function readTimestamp(value: unknown, path: string): string;
export declare function readOptionalTimestamp(value: unknown, path: string): string | undefined;
/** 64 lowercase hex digits. */
export declare function readHexDigest(value: unknown, path: string): string;

export type StoreValidationFailureReason =
  | "corrupt"
  | "unsupported_newer_version"
  | "unsupported_older_version"
  | "foreign_version";

export type StoreValidationResult<T> =
  | { ok: true; status: "valid"; value: T }
  | {
      ok: false;
      status: StoreValidationFailureReason;
      observedVersion?: unknown;
      path?: string;
      message: string;
      preserveExisting: true;
      mutationAllowed: false;
    };

/**
 * The nonthrowing store gate: `value` must be a plain record whose `version` is exactly
 * `expectedVersion`, then `parser(value)` decides. A failure never synthesizes defaults and
 * always asks to preserve the source.
 */
export declare function validateVersionedStoreRecord<T>(
  value: unknown,
  expectedVersion: string | number,
  parser: (input: unknown) => T,
): StoreValidationResult<T>;

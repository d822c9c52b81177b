// Hand-written declarations of the scratchpad subpath. Literal facts come from ../facts.js, which
// `cargo xtask gen` writes from the Rust crates.
import { IntercomError } from "../index.js";
import type { ScratchpadCheck, ScratchpadDefaultAllowFullExport, ScratchpadDefaultFileName, ScratchpadDefaultMaxContentBytes, ScratchpadDefaultPerProjectCap, ScratchpadDefaultPerRecipientCap, ScratchpadOperation, ScratchpadPathEnv } from "../facts.js";

export { IntercomError };
export type { ScratchpadCheck, ScratchpadOperation };

/** Arguments of an operation: a plain JSON object (snake_case keys, see docs/scratchpad.md). An
 * undefined top-level property is absent; anything JSON cannot carry (NaN, Infinity, undefined
 * deeper down, functions, BigInt, class instances, proxies, cycles) is UNSUPPORTED_VALUE. */
export type ScratchpadArgs = Record<string, unknown>;

export interface ScratchpadOptions {
  /** The store file (default: the variable {@link ScratchpadPathEnv}, else
   * <agentDir>/{@link ScratchpadDefaultFileName}). */
  path?: string;
  /** Live messages per project root, at most (default {@link ScratchpadDefaultPerProjectCap}). */
  perProjectCap?: number;
  /** Live messages addressed to one recipient, at most (default {@link ScratchpadDefaultPerRecipientCap}). */
  perRecipientCap?: number;
  /** Largest message content in bytes (default {@link ScratchpadDefaultMaxContentBytes}). */
  maxContentBytes?: number;
  /** Whether an export may be asked for full (unredacted) output (default
   * {@link ScratchpadDefaultAllowFullExport}). */
  allowFullExport?: boolean;
}

/** A scratchpad store; every call is synchronous and throws IntercomError with a stable code. */
export declare class Scratchpad {
  readonly path: string;
  /** True after close(). */
  readonly closed: boolean;
  /** Runs one operation (or rule check) by name; returns the parsed JSON result. */
  request(op: ScratchpadOperation | ScratchpadCheck, args?: ScratchpadArgs): any;
  /** Closes the store; later calls throw. Closing twice is harmless. */
  close(): void;
}

/** A name in camelCase, as the JavaScript writes it: each `.x` or `_x` becomes `X` (`foo.bar` is
 * `fooBar`). */
type Camel<Name extends string> =
  Name extends `${infer Head}.${infer Tail}` ? Camel<`${Head}${Capitalize<Tail>}`>
  : Name extends `${infer Head}_${infer Tail}` ? Camel<`${Head}${Capitalize<Tail>}`>
  : Name;
/** One method per store operation. */
type OperationMethods = {
  /** The operation of this name, in camelCase (docs/scratchpad.md). */
  [Op in ScratchpadOperation as Camel<Op>]: (args?: ScratchpadArgs) => any;
};
/** The operations, as methods: `pad.fooBar(args)` is `pad.request("foo.bar", args)`. */
export interface Scratchpad extends OperationMethods {}

/** Opens (creating if needed) a store. Throws IntercomError UNKNOWN_KEY (an option it does not
 * take), UNSUPPORTED_VALUE (NaN, Infinity, ...), STORE_NEWER_SCHEMA, STORE_CORRUPT, STORE_IO or
 * INVALID_ARGUMENT. */
export declare function openScratchpad(options?: ScratchpadOptions): Scratchpad;
/** Evaluates a rule check without a store. */
export declare function checkRule(op: ScratchpadCheck, args?: ScratchpadArgs): any;
/** The variable {@link ScratchpadPathEnv}, else <agentDir>/{@link ScratchpadDefaultFileName}. */
export declare function defaultScratchpadPath(env?: Record<string, string | undefined>): string;
export declare const OPERATIONS: readonly ScratchpadOperation[];
export declare const CHECKS: readonly ScratchpadCheck[];

// Only the names exported above are public: Camel and OperationMethods stay private (a declaration
// file without any export statement would export them too).
export {};

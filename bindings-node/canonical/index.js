'use strict'
// @ctliz/agent-intercom-core/canonical: the TypeScript core's ./canonical (canonical JSON, frame
// and hash, the contract readers, the monotonic counters, the versioned store gate), every rule
// in the Rust core (core/src/contract/canonical.rs and ops.rs), reached through lib/contract.js.
// A value is snapshotted there without running a getter, toJSON or proxy trap; the core decides
// and answers the value to return or the ContractValidationError to throw. This file only names
// the operations, turns a frame's text into bytes, and runs the caller's parser for the store
// gate (catching what it throws). docs/canonical.md lists where we differ from TypeScript.
const { addon, constants: C, fail } = require('../lib/native.js')
const { ContractValidationError, call } = require('../lib/contract.js')

const { getOwnPropertyDescriptor, hasOwn } = Object
const encoder = new TextEncoder()


/**
 * Runs a canonical encoding op; a snapshot refusal (nesting or a cycle) gets the depth code.
 * @param {import('../facts.js').ContractOp} op
 */
function encoding (op, args) {
  try {
    return call(op, args)
  } catch (error) {
    if (error instanceof ContractValidationError && error.code === undefined) error.code = 'NESTING_TOO_DEEP'
    throw error
  }
}

function canonicalJson (value) {
  return encoding('canonical.canonicalJson', [value])
}

function canonicalFrame (domain, value) {
  return encoder.encode(encoding('canonical.canonicalFrame', [domain, value]))
}

function canonicalHash (domain, value) {
  return encoding('canonical.canonicalHash', [domain, value])
}

function textArg (text) {
  if (typeof text !== 'string') fail('INVALID_ARGUMENT', 'text must be a string of JSON')
  return text
}

function domainArg (domain) {
  if (typeof domain !== 'string') fail('INVALID_DOMAIN', 'domain must be non-empty printable ASCII without whitespace')
  return domain
}

/** Canonical JSON of a JSON document (text); a repeated key is refused (DUPLICATE_KEY). */
function canonicalJsonFromText (text) {
  return addon.canonicalJsonText(textArg(text))
}

/** canonicalHash of a JSON document (text). */
function canonicalHashFromText (domain, text) {
  const d = domainArg(domain)
  return addon.canonicalHashText(d, textArg(text))
}

// The readers: each answers its argument itself (or undefined, or a fresh array). A refusal's
// `.path` is the caller's path argument itself when it is a primitive other than a string (the
// core prints it: `undefined: must be a non-empty string`), as TypeScript keeps it.
/** @param {import('../facts.js').ContractOp} op */
function reading (op, args, at) {
  try {
    return call(op, args)
  } catch (error) {
    const path = args[at]
    const kind = typeof path
    if (error instanceof ContractValidationError && (path === null || (kind !== 'string' && kind !== 'object' &&
      kind !== 'function' && kind !== 'symbol')) && error.path === `${path}`) error.path = path
    throw error
  }
}

function readString (value, path) { return reading('canonical.readString', [value, path], 1) }
function readIdentifier (value, path) { return reading('canonical.readIdentifier', [value, path], 1) }
function readOptionalIdentifier (value, path) { return reading('canonical.readOptionalIdentifier', [value, path], 1) }
function readOptionalString (value, path) { return reading('canonical.readOptionalString', [value, path], 1) }
function readInteger (value, path, minimum) { return reading('canonical.readInteger', [value, path, minimum], 1) }
function readOptionalInteger (value, path, minimum) { return reading('canonical.readOptionalInteger', [value, path, minimum], 1) }
function readBoolean (value, path) { return reading('canonical.readBoolean', [value, path], 1) }
function readOptionalBoolean (value, path) { return reading('canonical.readOptionalBoolean', [value, path], 1) }
function readEnum (value, allowed, path) { return reading('canonical.readEnum', [value, allowed, path], 2) }
function readStringArray (value, path) { return reading('canonical.readStringArray', [value, path], 1) }
function readTimestamp (value, path) { return reading('canonical.readTimestamp', [value, path], 1) }
function readOptionalTimestamp (value, path) { return reading('canonical.readOptionalTimestamp', [value, path], 1) }
function readHexDigest (value, path) { return reading('canonical.readHexDigest', [value, path], 1) }
function assertRecord (value, path) { reading('canonical.assertRecord', [value, path], 1) }
function assertExactKeys (value, required, optional, path) { reading('canonical.assertExactKeys', [value, required, optional, path], 3) }
function readMonotonicCounter (value, path, kind, minimum) { return reading('canonical.readMonotonicCounter', [value, path, kind, minimum], 1) }

// The fifteen branded counters (default paths and minimums: ops.rs COUNTERS). Arrow functions, as
// in TypeScript; a counter without a minimum parameter ignores a third argument.
const counter = (name) => (value, path, minimum) => reading('canonical.counter', [name, value, path, minimum], 2)
const bossBindingEpoch = counter('bossBindingEpoch')
const participantBindingEpoch = counter('participantBindingEpoch')
const subscriberBindingEpoch = counter('subscriberBindingEpoch')
const subscriberBindingGeneration = counter('subscriberBindingGeneration')
const controllerGeneration = counter('controllerGeneration')
const brokerRevision = counter('brokerRevision')
const workerGeneration = counter('workerGeneration')
const transitionVersion = counter('transitionVersion')
const brokerGeneration = counter('brokerGeneration')
const journalGeneration = counter('journalGeneration')
const schedulerGeneration = counter('schedulerGeneration')
const recipientTransferGeneration = counter('recipientTransferGeneration')
const deliveryClaimGeneration = counter('deliveryClaimGeneration')
const triggerGeneration = counter('triggerGeneration')
const watchdogGeneration = counter('watchdogGeneration')

/** The core's result object, with the caller's own version value as `observedVersion`. */
function withObserved (result, version) {
  if (hasOwn(result, 'observedVersion')) result.observedVersion = version
  return result
}

function validateVersionedStoreRecord (value, expectedVersion, parser) {
  const gate = call('canonical.validateVersionedStoreRecord', [value, expectedVersion])
  // The gate passed only a plain object whose version is an own data property: reading its
  // descriptor runs nothing of the caller's.
  const version = gate.ok || hasOwn(gate, 'observedVersion') ? getOwnPropertyDescriptor(value, 'version').value : undefined
  if (!gate.ok) return withObserved(gate, version)
  try {
    gate.value = parser(value)
    return gate
  } catch (error) {
    const contract = error instanceof ContractValidationError
    const message = contract || error instanceof Error ? error.message : undefined
    return withObserved(call('canonical.storeParserFailure', [message, contract ? error.path : undefined]), version)
  }
}

module.exports = {
  CANONICAL_ENCODING_VERSION: C.encodingVersion,
  CANONICAL_HASH_FRAME: C.framePrefix,
  CANONICAL_UNICODE_NORMALIZATION: C.unicodeNormalization,
  CANONICAL_MAX_DEPTH: C.maxDepth,
  ContractValidationError,
  canonicalJson,
  canonicalFrame,
  canonicalHash,
  canonicalJsonFromText,
  canonicalHashFromText,
  readMonotonicCounter,
  bossBindingEpoch,
  participantBindingEpoch,
  subscriberBindingEpoch,
  subscriberBindingGeneration,
  controllerGeneration,
  brokerRevision,
  workerGeneration,
  transitionVersion,
  brokerGeneration,
  journalGeneration,
  schedulerGeneration,
  recipientTransferGeneration,
  deliveryClaimGeneration,
  triggerGeneration,
  watchdogGeneration,
  assertRecord,
  assertExactKeys,
  readString,
  readIdentifier,
  readOptionalIdentifier,
  readOptionalString,
  readInteger,
  readOptionalInteger,
  readBoolean,
  readOptionalBoolean,
  readEnum,
  readStringArray,
  readTimestamp,
  readOptionalTimestamp,
  readHexDigest,
  validateVersionedStoreRecord,
}

'use strict'
// Lifecycle notices and their delivery (exported by ./boss), backed by the Rust core
// (core/src/boss/delivery/): notice and group identities, group assembly, group, claim, ingress
// and target-ledger records, and their store validators.
const { call, callReadOnce } = require('../lib/contract.js')
const C = require('./constants.js')

const { hasOwn, getOwnPropertyDescriptor } = Object

const lifecycleNoticeId = (key) => call('boss.lifecycleNoticeId', [key])
const deliveryGroupId = (key) => call('boss.deliveryGroupId', [key])
// Its TypeScript twin reads a proxy argument (each member once); so does this (lib/contract.js).
const parseDeliveryEquivalenceKey = (value, path) => callReadOnce('boss.parseDeliveryEquivalenceKey', value, path)
const effectiveDeliveryIntent = (intents) => call('boss.effectiveDeliveryIntent', [intents])
const parseLifecycleNotice = (value) => call('boss.parseLifecycleNotice', [value])
const mintDeliveryGroupAssemblyMember = (value) => call('boss.mintDeliveryGroupAssemblyMember', [value])
const parseDeliveryGroupRecord = (value) => call('boss.parseDeliveryGroupRecord', [value])
const parseDeliveryClaimRecord = (value) => call('boss.parseDeliveryClaimRecord', [value])
const parseNoticeRecipientIngressEnvelope = (value) => call('boss.parseNoticeRecipientIngressEnvelope', [value])
const parseTargetLedgerLookupResult = (value) => call('boss.parseTargetLedgerLookupResult', [value])

// The core answers a fresh input or group; its equivalence key is the caller's own object, as
// in TypeScript. The core validated `value` as a plain object of own data members: this read
// runs no getter.
function withCallerKey (result, value) {
  result.equivalenceKey = value.equivalenceKey
  return result
}

/** The validated assembly input, as a fresh object (members fresh, the key the caller's). */
function parseDeliveryGroupAssemblyInput (value) {
  return withCallerKey(call('boss.parseDeliveryGroupAssemblyInput', [value]), value)
}

/** The sealed, pending group the input assembles, members in notice-id (UTF-16) order. */
function assembleDeliveryGroup (value) {
  return withCallerKey(call('boss.assembleDeliveryGroup', [value]), value)
}

// A store result names the caller's own record (`value`) and version (`observedVersion`), as
// validateVersionedStoreRecord does: the core passed the gate only for a plain object whose
// version is an own data property, so reading its descriptor runs nothing of the caller's.
function storeResult (result, value) {
  if (result.ok) result.value = value
  else if (hasOwn(result, 'observedVersion')) result.observedVersion = getOwnPropertyDescriptor(value, 'version').value
  return result
}

const validateLifecycleNoticeStore = (value) => storeResult(call('boss.validateLifecycleNoticeStore', [value]), value)
const validateDeliveryGroupStore = (value) => storeResult(call('boss.validateDeliveryGroupStore', [value]), value)
const validateDeliveryClaimStore = (value) => storeResult(call('boss.validateDeliveryClaimStore', [value]), value)
const validateTargetLedgerStore = (value) => storeResult(call('boss.validateTargetLedgerStore', [value]), value)

module.exports = {
  LIFECYCLE_NOTICE_VERSION: C.LIFECYCLE_NOTICE_VERSION,
  DELIVERY_GROUP_VERSION: C.DELIVERY_GROUP_VERSION,
  DELIVERY_CLAIM_VERSION: C.DELIVERY_CLAIM_VERSION,
  NOTICE_RECIPIENT_INGRESS_VERSION: C.NOTICE_RECIPIENT_INGRESS_VERSION,
  TARGET_LEDGER_RESULT_VERSION: C.TARGET_LEDGER_RESULT_VERSION,
  DELIVERY_GROUP_ASSEMBLY_VERSION: C.DELIVERY_GROUP_ASSEMBLY_VERSION,
  DELIVERY_INTENTS: C.DELIVERY_INTENTS,
  RECIPIENT_CONTEXTS: C.RECIPIENT_CONTEXTS,
  DELIVERY_CLAIM_STATES: C.DELIVERY_CLAIM_STATES,
  NOTICE_DELIVERY_CLAIM_STATES: C.NOTICE_DELIVERY_CLAIM_STATES,
  DELIVERY_MODES: C.DELIVERY_MODES,
  DELIVERY_GROUP_MEMBERSHIP_STATES: C.DELIVERY_GROUP_MEMBERSHIP_STATES,
  DELIVERY_GROUP_STATES: C.DELIVERY_GROUP_STATES,
  NOTICE_RECIPIENT_INGRESS_OPERATIONS: C.NOTICE_RECIPIENT_INGRESS_OPERATIONS,
  TARGET_LEDGER_STATES: C.TARGET_LEDGER_STATES,
  lifecycleNoticeId,
  parseLifecycleNotice,
  deliveryGroupId,
  effectiveDeliveryIntent,
  mintDeliveryGroupAssemblyMember,
  parseDeliveryGroupAssemblyInput,
  assembleDeliveryGroup,
  parseDeliveryGroupRecord,
  parseDeliveryClaimRecord,
  parseNoticeRecipientIngressEnvelope,
  parseTargetLedgerLookupResult,
  parseDeliveryEquivalenceKey,
  validateLifecycleNoticeStore,
  validateDeliveryGroupStore,
  validateDeliveryClaimStore,
  validateTargetLedgerStore,
}

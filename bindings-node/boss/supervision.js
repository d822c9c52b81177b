'use strict'
// Supervision, as the TypeScript core's ./boss exports it (supervision.ts), backed by the Rust
// core (core/src/boss/supervision/): lifecycle subscriptions and targets, authenticated activity,
// active-operation and external-wait leases and their renewals, smart-inactivity suppression,
// lifecycle triggers, inactivity edges, subscriber rebind migrations, the supervisor ACL and the
// store validators. Each function is one call into the core; the parsers return fresh objects.
const { call } = require('../lib/contract.js')
const C = require('./constants.js')

const { hasOwn, getOwnPropertyDescriptor } = Object

/** A store result with the caller's own version value as `observedVersion` (the core wrote a
 * placeholder only after finding `value` a plain object whose version is an own data property,
 * so this read runs nothing of the caller's).
 * @param {import('../facts.js').ContractOp} op */
function stored (op, value) {
  const result = call(op, [value])
  if (hasOwn(result, 'observedVersion')) result.observedVersion = getOwnPropertyDescriptor(value, 'version').value
  return result
}

const parseLifecycleTarget = (value, path = '$') => call('boss.parseLifecycleTarget', [value, path])
const parseLifecycleSubscription = (value) => call('boss.parseLifecycleSubscription', [value])
const parseAuthenticatedActivity = (value) => call('boss.parseAuthenticatedActivity', [value])
const parseActiveOperationLease = (value) => call('boss.parseActiveOperationLease', [value])
const parseExternalWaitLease = (value, maxExternalWaitLeaseMs) =>
  call('boss.parseExternalWaitLease', [value, maxExternalWaitLeaseMs])
const validateActiveOperationLeaseRenewal = (previousValue, nextValue) =>
  call('boss.validateActiveOperationLeaseRenewal', [previousValue, nextValue])
const validateExternalWaitLeaseRenewal = (previousValue, nextValue, maxExternalWaitLeaseMs) =>
  call('boss.validateExternalWaitLeaseRenewal', [previousValue, nextValue, maxExternalWaitLeaseMs])
const isSmartInactivitySuppressed = (evidence) => call('boss.isSmartInactivitySuppressed', [evidence])
const parseLifecycleTrigger = (value) => call('boss.parseLifecycleTrigger', [value])
const parseInactivityEdgeKey = (value) => call('boss.parseInactivityEdgeKey', [value])
const inactivityTransitionId = (key) => call('boss.inactivityTransitionId', [key])
const rebindMigrationEvidenceDigest = (evidence) => call('boss.rebindMigrationEvidenceDigest', [evidence])
const parseSubscriberRebindMigration = (value) => call('boss.parseSubscriberRebindMigration', [value])
const authorizeSupervisorSubscription = (state, request) => call('boss.authorizeSupervisorSubscription', [state, request])
const aggregateDeliveryIntent = (intents) => call('boss.aggregateDeliveryIntent', [intents])
const validateLifecycleSubscriptionStore = (value) => stored('boss.validateLifecycleSubscriptionStore', value)
const validateAuthenticatedActivityStore = (value) => stored('boss.validateAuthenticatedActivityStore', value)
const validateActiveOperationLeaseStore = (value) => stored('boss.validateActiveOperationLeaseStore', value)
const validateExternalWaitLeaseStore = (value) => stored('boss.validateExternalWaitLeaseStore', value)
const validateLifecycleTriggerStore = (value) => stored('boss.validateLifecycleTriggerStore', value)
const validateSubscriberRebindMigrationStore = (value) => stored('boss.validateSubscriberRebindMigrationStore', value)

module.exports = {
  LIFECYCLE_SUBSCRIPTION_VERSION: C.LIFECYCLE_SUBSCRIPTION_VERSION,
  ACTIVITY_RECORD_VERSION: C.ACTIVITY_RECORD_VERSION,
  ACTIVE_OPERATION_LEASE_VERSION: C.ACTIVE_OPERATION_LEASE_VERSION,
  EXTERNAL_WAIT_LEASE_VERSION: C.EXTERNAL_WAIT_LEASE_VERSION,
  SUBSCRIBER_REBIND_MIGRATION_VERSION: C.SUBSCRIBER_REBIND_MIGRATION_VERSION,
  LIFECYCLE_TRIGGER_SCHEMA_VERSION: C.LIFECYCLE_TRIGGER_SCHEMA_VERSION,
  LIFECYCLE_TRIGGER_VERSION: C.LIFECYCLE_TRIGGER_VERSION,
  MAX_EXTERNAL_WAIT_LEASE_MS_DEFAULT: C.MAX_EXTERNAL_WAIT_LEASE_MS_DEFAULT,
  SUBSCRIPTION_STATES: C.SUBSCRIPTION_STATES,
  INACTIVITY_MODES: C.INACTIVITY_MODES,
  ACTIVITY_BASES: C.ACTIVITY_BASES,
  SUPERVISED_ROLES: C.SUPERVISED_ROLES,
  ACTIVITY_KINDS: C.ACTIVITY_KINDS,
  ACTIVITY_TYPES: C.ACTIVITY_TYPES,
  OPERATION_LEASE_STATES: C.OPERATION_LEASE_STATES,
  WAIT_SOURCE_KINDS: C.WAIT_SOURCE_KINDS,
  WAIT_LEASE_STATES: C.WAIT_LEASE_STATES,
  REBIND_MIGRATION_STATES: C.REBIND_MIGRATION_STATES,
  SUPERVISOR_PRINCIPAL_KINDS: C.SUPERVISOR_PRINCIPAL_KINDS,
  parseLifecycleTarget,
  parseLifecycleSubscription,
  parseAuthenticatedActivity,
  parseActiveOperationLease,
  parseExternalWaitLease,
  validateActiveOperationLeaseRenewal,
  validateExternalWaitLeaseRenewal,
  isSmartInactivitySuppressed,
  parseLifecycleTrigger,
  parseInactivityEdgeKey,
  inactivityTransitionId,
  rebindMigrationEvidenceDigest,
  parseSubscriberRebindMigration,
  authorizeSupervisorSubscription,
  aggregateDeliveryIntent,
  validateLifecycleSubscriptionStore,
  validateAuthenticatedActivityStore,
  validateActiveOperationLeaseStore,
  validateExternalWaitLeaseStore,
  validateLifecycleTriggerStore,
  validateSubscriberRebindMigrationStore,
}

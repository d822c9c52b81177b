'use strict'
// Boss participant credentials on the broker side (exported by ./boss), backed by the Rust core
// (core/src/boss/credential.rs): the digest registry record, the pure credential-use decision,
// the credential audit event, and the binding and digest-record store gates.
const { call } = require('../lib/contract.js')
const { storeValidator } = require('./store.js')
const C = require('./constants.js')

/** The record itself, when it is a valid digest record. */
const parseBossCredentialDigestRecord = (value) => call('boss.parseBossCredentialDigestRecord', [value])
/** A fresh decision; throws only when the envelope, the record or the context does not parse. */
const authorizeBossCredentialUse = (envelope, record, context) =>
  call('boss.authorizeBossCredentialUse', [envelope, record, context])
/** A fresh event, in the TypeScript member order. */
const parseBossCredentialAuditEvent = (value) => call('boss.parseBossCredentialAuditEvent', [value])
const validateBossParticipantBindingStore = storeValidator('boss.validateBossParticipantBindingStore')
const validateBossCredentialDigestStore = storeValidator('boss.validateBossCredentialDigestStore')

module.exports = {
  BOSS_CREDENTIAL_STATES: C.BOSS_CREDENTIAL_STATES,
  BOSS_CREDENTIAL_AUDIT_OPERATIONS: C.BOSS_CREDENTIAL_AUDIT_OPERATIONS,
  parseBossCredentialDigestRecord,
  authorizeBossCredentialUse,
  parseBossCredentialAuditEvent,
  validateBossParticipantBindingStore,
  validateBossCredentialDigestStore,
}

'use strict'
// Authority transitions (exported by ./boss), backed by the Rust core
// (core/src/boss/authority.rs): the two-phase transition record, the committed-transition event,
// the authority-socket request, and the transition and event store gates.
const { call } = require('../lib/contract.js')
const { storeValidator } = require('./store.js')
const C = require('./constants.js')

/** The record itself. */
const parseAuthorityTransitionRecord = (value) => call('boss.parseAuthorityTransitionRecord', [value])
/** The event itself. */
const parseAuthorityTransitionEvent = (value) => call('boss.parseAuthorityTransitionEvent', [value])
/** The request itself. */
const parseAuthorityTransitionRequest = (value) => call('boss.parseAuthorityTransitionRequest', [value])
const validateAuthorityTransitionStore = storeValidator('boss.validateAuthorityTransitionStore')
const validateAuthorityEventStore = storeValidator('boss.validateAuthorityEventStore')

module.exports = {
  AUTHORITY_TRANSITION_OPERATIONS: C.AUTHORITY_TRANSITION_OPERATIONS,
  AUTHORITY_TRANSITION_STATES: C.AUTHORITY_TRANSITION_STATES,
  AUTHORITY_REQUEST_OPERATIONS: C.AUTHORITY_REQUEST_OPERATIONS,
  parseAuthorityTransitionRecord,
  parseAuthorityTransitionEvent,
  parseAuthorityTransitionRequest,
  validateAuthorityTransitionStore,
  validateAuthorityEventStore,
}

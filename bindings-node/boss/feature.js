'use strict'
// The feature-aware authorization of the TypeScript core (exported by ./boss), backed by the
// Rust core (core/src/boss/feature/): registrations and requests parsed exactly, the hardened
// legacy boundary, and authorizeFeatureAware, whose kernel only the registrations choose.
const { call, callFrozen } = require('../lib/contract.js')

const C = callFrozen('boss.featureConstants', [])

/** The exact registration of its class, as a fresh object (its featureContract is the given
 * one, as in TypeScript). */
function parseFeatureRegistration (value, path = '$') {
  const registration = call('boss.parseFeatureRegistration', [value, path])
  // The core validated value as a plain object of own data members: this read runs no getter.
  if (registration.principalClass === 'boss-bound') registration.featureContract = value.featureContract
  return registration
}

/** The exact routing request, as a fresh object. */
function parseFeatureAwareAuthorizationRequest (value) {
  return call('boss.parseFeatureAwareAuthorizationRequest', [value])
}

/** The frozen legacy decision for two active, bound ordinary registrations; throws a
 * ContractValidationError for anything else. */
function authorizeLegacyBoundary (state, actorId, action, targetId, context) {
  return call('boss.authorizeLegacyBoundary', [state, actorId, action, targetId, context])
}

/** Routes by the registrations: ordinary pairs to the legacy boundary, attested Boss pairs to
 * the Boss policy; throws only for a malformed request. */
function authorizeFeatureAware (state, request) {
  return call('boss.authorizeFeatureAware', [state, request])
}

module.exports = {
  LEGACY_POLICY_ACTIONS: C.legacyPolicyActions,
  parseFeatureRegistration,
  parseFeatureAwareAuthorizationRequest,
  authorizeLegacyBoundary,
  authorizeFeatureAware,
}

// Compiled (never run) by scripts/test-types.sh in the folder where scripts/pack-accept.sh
// installed the tarballs, so against the .d.ts files users get. It imports, from the subpath each
// adapter uses, every type name the adapters import (the 33 of core-parity-inventory.md §2,
// checked against pi's and claude's imports) and every runtime name (as values: a name declared
// only as a type fails). Users: pi, claude, codex, orch(estrator); "(test)" = only its tests.
// The orchestrator's verifyProtectedBrokerIdentity and the two signing-bytes functions are
// issue 11's work and are listed in orchestrator.mts, which is not compiled yet.

// ---- types ----
// "." (claude)
import type {
  AuthorizationDecision, PolicyAction, PolicyPrincipal, PolicyState,
} from "@ctliz/agent-intercom-core";
// "./policy" (pi)
import type {
  PolicyAction as PolicyActionP, PolicyPrincipal as PolicyPrincipalP, PolicyState as PolicyStateP,
} from "@ctliz/agent-intercom-core/policy";
// "./boss/policy" (pi)
import type {
  BossAuthorizationContext as BossAuthorizationContextBP, BossControlKind as BossControlKindBP,
  BossPolicyAction as BossPolicyActionBP, BossPolicyState, BossPrivatePrincipal as BossPrivatePrincipalBP,
} from "@ctliz/agent-intercom-core/boss/policy";
// "./boss"
import type {
  BossAuthorizationContext, // pi
  BossControlEnvelope, // pi, claude
  BossControlKind, // claude
  BossControlType, // claude
  BossFeatureRegistration, // pi
  BossParticipantBinding, // pi, claude
  BossParticipantCredentialEnvelope, // pi, claude
  BossParticipantRole, // pi (test), claude (test)
  BossPolicyAction, // claude
  BossPrivatePrincipal, // claude
  BossRunFeatureContract, // pi, claude
  BossWorkerIdentityV2, // claude
  BrokerCapabilityAdvertisement, // pi, claude
  FeatureAwareAuthorizationDecision, // pi, claude
  FeatureAwarePolicyState, // pi, claude
  OrdinaryFeatureRegistration, // pi
  ParticipantState, // claude
  BossRunAuthorityIdentity, // orch
  BrokerIdentityRecord, // orch
  BrokerIdentityVerificationContext, // orch
  BrokerPeerExpectation, // orch
  BrokerProviderAttestation, // orch
  ObservedBrokerPeer, // orch
  AuthorityTransitionEpochs, AuthorityTransitionEvent, AuthorityTransitionOperation, // orch
  AuthorityTransitionRecord, AuthorityTransitionRequest, // orch
} from "@ctliz/agent-intercom-core/boss";

export type AdapterTypes = [
  AuthorizationDecision, PolicyAction, PolicyPrincipal, PolicyState,
  PolicyActionP, PolicyPrincipalP, PolicyStateP,
  BossAuthorizationContextBP, BossControlKindBP, BossPolicyActionBP, BossPolicyState, BossPrivatePrincipalBP,
  BossAuthorizationContext, BossControlEnvelope, BossControlKind, BossControlType, BossFeatureRegistration,
  BossParticipantBinding, BossParticipantCredentialEnvelope, BossParticipantRole, BossPolicyAction,
  BossPrivatePrincipal, BossRunFeatureContract, BossWorkerIdentityV2, BrokerCapabilityAdvertisement,
  FeatureAwareAuthorizationDecision, FeatureAwarePolicyState, OrdinaryFeatureRegistration, ParticipantState,
  
  AuthorityTransitionEpochs, AuthorityTransitionEvent, AuthorityTransitionOperation,
  AuthorityTransitionRecord, AuthorityTransitionRequest,
  BossRunAuthorityIdentity, BrokerIdentityRecord, BrokerIdentityVerificationContext,
  BrokerPeerExpectation, BrokerProviderAttestation, ObservedBrokerPeer,
];

// ---- runtime names (the list of tests/package/imports.test.mjs) ----
import {
  POLICY_SEMANTICS_HASH, POLICY_SEMANTICS_VERSION, authorize, // claude, codex, orch
} from "@ctliz/agent-intercom-core";
import {
  authorize as authorizeP, POLICY_SEMANTICS_VERSION as POLICY_SEMANTICS_VERSION_P, // pi
} from "@ctliz/agent-intercom-core/policy";
import { POLICY_SEMANTICS_HASH as POLICY_SEMANTICS_HASH_V } from "@ctliz/agent-intercom-core/vectors"; // pi
import {
  readTeamManifest, readTeamManifestAsync, TeamManifestError, // pi; claude, codex; all three
} from "@ctliz/agent-intercom-core/team-manifest";
import {
  ContractValidationError, assertRecord, assertExactKeys, readHexDigest, canonicalJson, canonicalHash,
  brokerGeneration, participantBindingEpoch, workerGeneration, // claude (test)
} from "@ctliz/agent-intercom-core/canonical";
import {
  INTERCOM_PROTOCOL_NAME, INTERCOM_PROTOCOL_VERSION, INTERCOM_SCOPE_ENV, INTERCOM_SCOPE_ID_PATTERN,
  INTERCOM_SCOPE_ID_PATTERN_SOURCE, INTERCOM_PROTOCOL_V4_VECTOR_SCHEMA_VERSION, INTERCOM_PROTOCOL_V4_VECTORS,
  INTERCOM_PROTOCOL_V4_SEMANTICS_HASH, parseIntercomScopeId, intercomScopeIdFromEnv, sameIntercomScope,
  PROTOCOL_V4_SCOPE_A, PROTOCOL_V4_SCOPE_B, // orch (export *)
} from "@ctliz/agent-intercom-core/protocol-v4";
import {
  parseBossPolicyPrincipal as parseBossPolicyPrincipalBP, // pi
  BOSS_POLICY_PRINCIPAL_VERSION as BOSS_POLICY_PRINCIPAL_VERSION_BP, // pi (test)
} from "@ctliz/agent-intercom-core/boss/policy";
import {
  INTERCOM_BASE_PROTOCOL_VERSION, BOSS_RUN_FEATURE, BOSS_RUN_FEATURE_CONTRACT,
  BOSS_RUN_PROTOCOL_FEATURE_CONTRACT_HASH, BOSS_CAPABILITY_FEATURE_DIGEST, BOSS_CONTROL_ENVELOPE_VERSION,
  BROKER_FEATURE_ATTESTATION_VERSION, BOSS_RUN_FEATURE_SEMANTICS_HASH, BOSS_RUN_FEATURE_VERSION,
  BOSS_POLICY_SEMANTICS_HASH, BROKER_PROTECTED_PROVIDER_ROOT, BOSS_POLICY_PRINCIPAL_VERSION,
  BOSS_PARTICIPANT_ROLES, PARTICIPANT_STATES, TERMINAL_PARTICIPANT_STATES, BROKER_PEER_EXPECTATION_VERSION,
  brokerFeatureSetHash, parseBossRunFeatureContract, parseBrokerCapabilityAdvertisement,
  parseBossControlEnvelope, parseBossParticipantBinding, parseBossParticipantCredentialEnvelope,
  authorizeFeatureAware, evaluateBrokerCompatibility, parseParticipantState, parseWorkerIdentityV2,
  parseBossPolicyPrincipal, isTerminalParticipantState, workerIdentityFromEnvironment,
  
  parseBossRunAuthorityIdentity, parseBrokerCompatibilityRequest, parseBrokerIdentityRecord,
  parseBrokerPeerExpectation, parseObservedBrokerPeer, authorizeBrokerPeer, 
  parseAuthorityTransitionRecord, parseAuthorityTransitionEvent, parseAuthorityTransitionRequest,
  // imported only by tests
  AUTHORITY_EVENT_VERSION, AUTHORITY_REQUEST_VERSION, AUTHORITY_TRANSITION_VERSION,
  BOSS_RUN_AUTHORITY_IDENTITY_VERSION, BROKER_IDENTITY_RECORD_VERSION, BROKER_PROVIDER_ATTESTATION_VERSION,
  BOSS_CONTROL_TYPES,
  WORKER_IDENTITY_VERSION, BOSS_PARTICIPANT_BINDING_VERSION, BOSS_PARTICIPANT_CREDENTIAL_VERSION,
} from "@ctliz/agent-intercom-core/boss";

export const adapterValues: readonly unknown[] = [
  POLICY_SEMANTICS_HASH, POLICY_SEMANTICS_VERSION, authorize,
  authorizeP, POLICY_SEMANTICS_VERSION_P, POLICY_SEMANTICS_HASH_V,
  readTeamManifest, readTeamManifestAsync, TeamManifestError,
  ContractValidationError, assertRecord, assertExactKeys, readHexDigest, canonicalJson, canonicalHash,
  brokerGeneration, participantBindingEpoch, workerGeneration,
  INTERCOM_PROTOCOL_NAME, INTERCOM_PROTOCOL_VERSION, INTERCOM_SCOPE_ENV, INTERCOM_SCOPE_ID_PATTERN,
  INTERCOM_SCOPE_ID_PATTERN_SOURCE, INTERCOM_PROTOCOL_V4_VECTOR_SCHEMA_VERSION, INTERCOM_PROTOCOL_V4_VECTORS,
  INTERCOM_PROTOCOL_V4_SEMANTICS_HASH, parseIntercomScopeId, intercomScopeIdFromEnv, sameIntercomScope,
  PROTOCOL_V4_SCOPE_A, PROTOCOL_V4_SCOPE_B,
  parseBossPolicyPrincipalBP, BOSS_POLICY_PRINCIPAL_VERSION_BP,
  INTERCOM_BASE_PROTOCOL_VERSION, BOSS_RUN_FEATURE, BOSS_RUN_FEATURE_CONTRACT,
  BOSS_RUN_PROTOCOL_FEATURE_CONTRACT_HASH, BOSS_CAPABILITY_FEATURE_DIGEST, BOSS_CONTROL_ENVELOPE_VERSION,
  BROKER_FEATURE_ATTESTATION_VERSION, BOSS_RUN_FEATURE_SEMANTICS_HASH, BOSS_RUN_FEATURE_VERSION,
  BOSS_POLICY_SEMANTICS_HASH, BROKER_PROTECTED_PROVIDER_ROOT, BOSS_POLICY_PRINCIPAL_VERSION,
  BOSS_PARTICIPANT_ROLES, PARTICIPANT_STATES, TERMINAL_PARTICIPANT_STATES, BROKER_PEER_EXPECTATION_VERSION,
  brokerFeatureSetHash, parseBossRunFeatureContract, parseBrokerCapabilityAdvertisement,
  parseBossControlEnvelope, parseBossParticipantBinding, parseBossParticipantCredentialEnvelope,
  authorizeFeatureAware, evaluateBrokerCompatibility, parseParticipantState, parseWorkerIdentityV2,
  parseBossPolicyPrincipal, isTerminalParticipantState, workerIdentityFromEnvironment,
  
  parseBossRunAuthorityIdentity, parseBrokerCompatibilityRequest, parseBrokerIdentityRecord,
  parseBrokerPeerExpectation, parseObservedBrokerPeer, authorizeBrokerPeer, 
  parseAuthorityTransitionRecord, parseAuthorityTransitionEvent, parseAuthorityTransitionRequest,
  AUTHORITY_EVENT_VERSION, AUTHORITY_REQUEST_VERSION, AUTHORITY_TRANSITION_VERSION,
  BOSS_RUN_AUTHORITY_IDENTITY_VERSION, BROKER_IDENTITY_RECORD_VERSION, BROKER_PROVIDER_ATTESTATION_VERSION,
  BOSS_CONTROL_TYPES,
  WORKER_IDENTITY_VERSION, BOSS_PARTICIPANT_BINDING_VERSION, BOSS_PARTICIPANT_CREDENTIAL_VERSION,
];

// The names only the orchestrator imports that the package does not carry yet (issue 11: the
// Orchestrator subset of ./boss). Not compiled by scripts/test-types.sh until they exist; then
// they move into adapters.mts.
import type {
  AuthorityTransitionEpochs, AuthorityTransitionEvent, AuthorityTransitionOperation,
  AuthorityTransitionRecord, AuthorityTransitionRequest,
} from "@ctliz/agent-intercom-core/boss";
import {
  parseAuthorityTransitionRecord, parseAuthorityTransitionEvent, parseAuthorityTransitionRequest,
  verifyProtectedBrokerIdentity, brokerIdentitySigningBytes, brokerProviderAttestationSigningBytes,
} from "@ctliz/agent-intercom-core/boss";

export type OrchestratorTypes = [
  AuthorityTransitionEpochs, AuthorityTransitionEvent, AuthorityTransitionOperation,
  AuthorityTransitionRecord, AuthorityTransitionRequest,
];
export const orchestratorValues: readonly unknown[] = [
  parseAuthorityTransitionRecord, parseAuthorityTransitionEvent, parseAuthorityTransitionRequest,
  verifyProtectedBrokerIdentity, brokerIdentitySigningBytes, brokerProviderAttestationSigningBytes,
];

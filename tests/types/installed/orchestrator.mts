// The names only the orchestrator imports that the package does not carry yet (issue 11: the
// Orchestrator subset of ./boss). Not compiled by scripts/test-types.sh until they exist; then
// they move into adapters.mts (the authority-transition records did).
import {
  verifyProtectedBrokerIdentity, brokerIdentitySigningBytes, brokerProviderAttestationSigningBytes,
} from "@ctliz/agent-intercom-core/boss";

export const orchestratorValues: readonly unknown[] = [
  verifyProtectedBrokerIdentity, brokerIdentitySigningBytes, brokerProviderAttestationSigningBytes,
];

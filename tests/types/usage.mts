// Compiled (never run) by scripts/test-types.sh against the committed declarations: a change
// to the public types that breaks this usage fails the build.
import {
  INTERCOM_PROTOCOL_NAME, INTERCOM_PROTOCOL_VERSION, INTERCOM_PROTOCOL_V4_VECTORS, parseIntercomScopeId,
  intercomScopeIdFromEnv, sameIntercomScope, resolveIntercomTarget, canonicalHash, checkVendoredProtocolV4,
  IntercomError, type IntercomErrorCode, type ProtocolV4Vector, type IntercomResolution,
} from "@ctliz/agent-intercom-core";
import { canonicalFrame, canonicalJson } from "@ctliz/agent-intercom-core/canonical";
import * as v4 from "@ctliz/agent-intercom-core/protocol-v4";
import * as vendored from "@ctliz/agent-intercom-core/vendor/protocol-v4";

const name: "pi-intercom" = INTERCOM_PROTOCOL_NAME;
const version: 4 = INTERCOM_PROTOCOL_VERSION;
const first: ProtocolV4Vector | undefined = INTERCOM_PROTOCOL_V4_VECTORS[0];
const scope: string | undefined = parseIntercomScopeId(process.env.X, "X");
const fromEnv: string | undefined = intercomScopeIdFromEnv(process.env);
const same: boolean = sameIntercomScope(scope, fromEnv);
const r: IntercomResolution = resolveIntercomTarget({ candidates: [{ id: "a", name: null, scope: null }], selector: "a" });
const kind: "global_exact_id" | "same_scope_name" | "same_scope_prefix" | "AMBIGUOUS_TARGET" | "SESSION_NOT_FOUND" = r.kind;
const hex: string = canonicalHash("d", { a: 1 });
const bytes: Uint8Array = canonicalFrame("d", [1]);
const json: string = canonicalJson(null);
const ok: boolean = checkVendoredProtocolV4("x.mjs").ok;
const hash: string = v4.INTERCOM_PROTOCOL_V4_SEMANTICS_HASH + vendored.INTERCOM_PROTOCOL_V4_SEMANTICS_HASH;
function codeOf(e: unknown): IntercomErrorCode | undefined {
  return e instanceof IntercomError ? e.code : undefined;
}
// @ts-expect-error the protocol version is the literal 4
const wrong: 5 = INTERCOM_PROTOCOL_VERSION;
export { name, version, first, same, kind, hex, bytes, json, ok, hash, codeOf, wrong };

import { openScratchpad, checkRule, type Scratchpad, type ScratchpadCheck } from "@ctliz/agent-intercom-core/scratchpad";
export function padUsage(path: string): number {
  const pad: Scratchpad = openScratchpad({ path, perProjectCap: 100, allowFullExport: false });
  pad.post({ from: "a", content: "x" });
  const unread = pad.unread({ agent: "b" }) as unknown[];
  const check: ScratchpadCheck = "check.ttl";
  checkRule(check, { ttl_hours: 2 });
  // @ts-expect-error not an operation
  pad.request("frobnicate", {});
  // @ts-expect-error options are typed
  openScratchpad({ perProjectCap: "many" });
  pad.close();
  return unread.length;
}

import { connect, ensureBroker } from "@ctliz/agent-intercom-core/broker";
export async function brokerUsage(agentDir: string): Promise<string | undefined> {
  const { socketPath } = await ensureBroker({ agentDir, idleExitMs: 0, waitMs: 1000 });
  const client = await connect({ socketPath, autoAck: false });
  // @ts-expect-error broker settings are not connect's options (UNKNOWN_KEY at run time)
  await connect({ agentDir, idleExitMs: 0 });
  client.close();
  return client.sessionId;
}

import type { Delivery, DeliveryRef, DeliveryState, IntercomClient } from "@ctliz/agent-intercom-core/broker";
// The opt-in extensions (docs/hub.md): send options, markRead, deliveryStatus and their events.
export async function hubUsage(client: IntercomClient): Promise<DeliveryState> {
  const sent: Delivery = await client.send("peer-id", "later", { queue: true, receipts: true });
  const queued: true | undefined = sent.queued;
  await client.ask("peer-id", { content: { text: "?" } }, { queue: true });
  await client.reply("peer-id", "q1", "!", {});
  // @ts-expect-error the options are booleans
  await client.send("peer-id", "x", { queue: "yes" });
  // @ts-expect-error and only these two
  await client.send("peer-id", "x", { urgent: true });
  client.on("queued", (d: DeliveryRef) => d.deliveryId);
  client.on("read", (d: DeliveryRef) => d.messageId);
  client.on("delivered", (d: DeliveryRef) => d.messageId);
  client.on("delivery_failed", (e) => e.accepted && e.code);
  client.markRead(sent.deliveryId);
  const state = await client.deliveryStatus(sent.messageId);
  // @ts-expect-error a state is one of the broker's
  const wrong: DeliveryState = "lost";
  return queued && wrong ? state : "unknown";
}

import { accessControl, type AccessControlResult, type Registered } from "@ctliz/agent-intercom-core/broker";
export async function remoteUsage(agentDir: string, gateway: string, adminToken: string): Promise<number> {
  const issued: AccessControlResult = await accessControl({
    agentDir,
    request: { adminToken, action: "issue_enrollment", enrollment: { name: "r", parentSessionId: "root", rootSessionId: "root", remoteHostId: "h" } },
  });
  const token = issued.action === "issue_enrollment" ? issued.enrollmentToken : "";
  const remote = await connect({ socketPath: gateway });
  const session = { cwd: "/", model: "m", pid: 1, startedAt: 1, lastActivity: 1 };
  const registered: Registered = await remote.register({ session, access: { enrollmentToken: token } });
  const credential = registered.access?.sessionCredential ?? "";
  const access = { sessionCredential: credential, sessionId: registered.sessionId, generation: registered.access?.generation ?? 1 };
  const tree = await accessControl({ socketPath: gateway, request: { access, action: "inspect_tree" }, timeoutMs: 1000 });
  // @ts-expect-error the gateway's requests carry a session credential, not an enrollment token
  await accessControl({ socketPath: gateway, request: { access: { enrollmentToken: token }, action: "inspect_tree" } });
  // @ts-expect-error a session credential comes with its session id and generation
  await remote.register({ session, access: { sessionCredential: credential, sessionId: "x" } });
  return tree.action === "inspect_tree" ? tree.principals.length : 0;
}

// The declarations follow the Rust facts (bindings-node/facts.d.ts, written by `cargo xtask gen`):
// ScratchpadOptions declares exactly the store options Rust takes (in camelCase) and path, and
// Scratchpad has one method per store operation.
import type { ScratchpadOptions } from "@ctliz/agent-intercom-core/scratchpad";
import type { ScratchpadOptionKey, ScratchpadOperation } from "../../bindings-node/facts.js";
type Equal<X, Y> = (<T>() => T extends X ? 1 : 2) extends (<T>() => T extends Y ? 1 : 2) ? true : false;
type Camel<Name extends string> =
  Name extends `${infer Head}.${infer Tail}` ? Camel<`${Head}${Capitalize<Tail>}`>
  : Name extends `${infer Head}_${infer Tail}` ? Camel<`${Head}${Capitalize<Tail>}`>
  : Name;
export const optionKeys: Equal<keyof ScratchpadOptions, "path" | Camel<ScratchpadOptionKey>> = true;
export const methods: Equal<Extract<keyof Scratchpad, Camel<ScratchpadOperation>>, Camel<ScratchpadOperation>> = true;

import {
  PARTICIPANT_STATE_TRANSITION_TABLE, PARTICIPANT_NEW_GENERATION_TRANSITIONS, migrateLegacyWorkerRecordV1,
  validateParticipantStateTransition, validateParticipantHealthEventStore,
  type MigratedWorkerRecordV2, type ParticipantStateTransitionEvidenceKind,
} from "@ctliz/agent-intercom-core/boss";
import {
  PARTICIPANT_STATE_MIGRATION_VECTORS, PARTICIPANT_STATE_TRANSITION_VECTOR_CORPUS,
} from "@ctliz/agent-intercom-core/boss/vectors";
export function participantUsage(): boolean {
  const rule: ParticipantStateTransitionEvidenceKind | null = PARTICIPANT_STATE_TRANSITION_TABLE.working.paused;
  const restart: readonly ["provisioning"] = PARTICIPANT_NEW_GENERATION_TRANSITIONS.stopped;
  const migrated: MigratedWorkerRecordV2 = migrateLegacyWorkerRecordV1(PARTICIPANT_STATE_MIGRATION_VECTORS[0]!.input);
  const none: void = validateParticipantStateTransition(PARTICIPANT_STATE_TRANSITION_VECTOR_CORPUS.transitionVectors[0]!.input);
  const stored = validateParticipantHealthEventStore({});
  // @ts-expect-error no migrated record may be dispatched
  const dispatch: true = migrated.dispatchAllowed;
  return rule !== null && restart.length === 1 && none === undefined && dispatch && (stored.ok ? stored.value.version === 1 : true);
}
// Supervision (./boss and its corpus in ./boss/vectors): parsers answer the TypeScript record
// types, the ACL a decision union, the store gates a StoreValidationResult.
import {
  authorizeSupervisorSubscription, parseLifecycleSubscription, validateLifecycleSubscriptionStore,
  type LifecycleSubscriptionRecord, type SupervisorAuthorizationDecision,
} from "@ctliz/agent-intercom-core/boss";
import { MANAGER_WORKER_SUBSCRIPTION_VECTOR, SUPERVISOR_ACL_VECTORS, stateForSupervisorAclVector } from "@ctliz/agent-intercom-core/boss/vectors";
export const subscription: LifecycleSubscriptionRecord = parseLifecycleSubscription(MANAGER_WORKER_SUBSCRIPTION_VECTOR);
export const supervisorDecision: SupervisorAuthorizationDecision =
  authorizeSupervisorSubscription(stateForSupervisorAclVector(), SUPERVISOR_ACL_VECTORS[0].request);
const storedSubscription = validateLifecycleSubscriptionStore(subscription);
export const storedId: string = storedSubscription.ok ? storedSubscription.value.subscriptionId : storedSubscription.message;
// The broker and restricted-client names of ./boss (boss-service.ts): verification decisions,
// Uint8Array signing bytes, the store validators and the restricted-client unions.
import {
  authorizeBossRestrictedClientRequest, brokerIdentitySigningBytes, BOSS_MANAGER_OPERATIONS,
  parseBossRestrictedClientRequest, validateBrokerJournalRecoveryStore, verifyProtectedBrokerIdentity,
  type BossRestrictedClientAuthorizationContext, type BrokerIdentityVerificationContext,
} from "@ctliz/agent-intercom-core/boss";
export function restrictedUsage(context: BossRestrictedClientAuthorizationContext, identity: BrokerIdentityVerificationContext): string {
  const bytes: Uint8Array = brokerIdentitySigningBytes({});
  const verified = verifyProtectedBrokerIdentity({}, identity);
  const code = verified.accepted ? "accepted" : verified.code;
  const request = parseBossRestrictedClientRequest({});
  const scope = request.client === "boss_manager" ? request.managerParticipantId : request.participantId;
  const decision = authorizeBossRestrictedClientRequest(request, context);
  const recovery = validateBrokerJournalRecoveryStore({});
  const first: "manager_get_status" = BOSS_MANAGER_OPERATIONS[0];
  return `${bytes.length}${code}${scope}${decision.allowed ? decision.record.scope : decision.code}${recovery.ok}${first}`;
}

// Compiled (never run) by scripts/test-types.sh: the delivery names of ./boss and their types.
import {
  DELIVERY_INTENTS, LIFECYCLE_NOTICE_VERSION, assembleDeliveryGroup, deliveryGroupId, effectiveDeliveryIntent,
  lifecycleNoticeId, parseDeliveryClaimRecord, parseDeliveryEquivalenceKey, parseLifecycleNotice,
  parseNoticeRecipientIngressEnvelope, parseTargetLedgerLookupResult, validateDeliveryGroupStore,
  type DeliveryEquivalenceKey, type DeliveryGroupRecord, type DeliveryIntent, type LifecycleNotice,
} from "@ctliz/agent-intercom-core/boss";
import { controllerGeneration, transitionVersion, workerGeneration } from "@ctliz/agent-intercom-core/canonical";

const key: DeliveryEquivalenceKey = {
  recipientPrincipalId: "m", recipientBindingEpoch: 1,
  sourceAuthorityId: { kind: "controller", bossRunId: "r", controllerGeneration: controllerGeneration(1) },
  sourceEventId: "e", bossRunId: "r", workerId: "w", workerGeneration: workerGeneration(1),
  transitionId: "t", transitionVersion: transitionVersion(1),
};
const groupId: string = deliveryGroupId(parseDeliveryEquivalenceKey(key, "$.key"));
const noticeId: string = lifecycleNoticeId({ workerId: "w", workerGeneration: workerGeneration(1), transitionId: "t", transitionVersion: transitionVersion(1), kind: "k" });
const intent: DeliveryIntent = effectiveDeliveryIntent(DELIVERY_INTENTS);
const version: "orc.lifecycle-notice.v1" = LIFECYCLE_NOTICE_VERSION;
const notice: LifecycleNotice = parseLifecycleNotice({});
const group: DeliveryGroupRecord = assembleDeliveryGroup({});
const stored = validateDeliveryGroupStore(group);
const kept: DeliveryGroupRecord | undefined = stored.ok ? stored.value : undefined;
const state: string = parseDeliveryClaimRecord({}).state + parseTargetLedgerLookupResult({}).state;
const operation: string = parseNoticeRecipientIngressEnvelope({}).operation;
// @ts-expect-error a notice claim state is never released
const released: LifecycleNotice["deliveryClaimState"] = "released";
export { groupId, noticeId, intent, version, notice, kept, state, operation, released };

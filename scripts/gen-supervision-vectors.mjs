// Regenerates vectors/orc-supervision-v1.json from the TypeScript core 0.2.0's built dist: the
// supervision corpus as data (SUPERVISION_VECTOR_CORPUS, which SUPERVISION_VECTORS_HASH hashes,
// and REBIND_MIGRATION_NEGATIVE_VECTORS, which it does not) and the cases the runners execute,
// each naming its operation, its arguments (JSON pointers into this file) and the outcome the
// TypeScript core gives for it (equal to an argument, a value, or the error class and message).
// The case list is this repository's; the data and the outcomes come from the TypeScript core:
//   AIC_TS_CORE_DIST=/path/to/agent-intercom-core/dist node scripts/gen-supervision-vectors.mjs \
//     > vectors/orc-supervision-v1.json
import { isDeepStrictEqual } from "node:util";

const dist = process.env.AIC_TS_CORE_DIST || "/work/ext/core/dist";
const m = { ...(await import(`${dist}/boss.js`)), ...(await import(`${dist}/canonical.js`)) };

const semantics = m.SUPERVISION_VECTOR_CORPUS;
const doc = {
  corpus: m.SUPERVISION_VECTOR_HASH_DOMAIN,
  version: m.SUPERVISION_VECTOR_SCHEMA_VERSION,
  description: "",
  count: 0,
  semanticsHash: m.SUPERVISION_VECTORS_HASH,
  semantics,
  rebindMigrationNegativeVectors: m.REBIND_MIGRATION_NEGATIVE_VECTORS,
  cases: [],
};
doc.description = "The supervision corpus of @ctliz/agent-intercom-core 0.2.0. `semantics` is " +
  "SUPERVISION_VECTOR_CORPUS exactly: SUPERVISION_VECTORS_HASH = canonicalHash(`corpus`, `semantics`) " +
  "(`semanticsHash` is that published digest, a known answer); rebindMigrationNegativeVectors " +
  "(REBIND_MIGRATION_NEGATIVE_VECTORS) is not hashed. Each case calls the operation `op` with the " +
  "values its `args` point at (JSON pointers into this file); `outcome` is what the TypeScript core " +
  "gives: {equalsArg: i} (a value deeply equal to argument i), {validStoreRecordOf: i} (the store result " +
  "{ok: true, status: \"valid\", value} whose value is deeply equal to argument i), {value: v}, or " +
  "{throws: {class, message}}. " +
  "Regenerate with scripts/gen-supervision-vectors.mjs.";

// The data must survive JSON unchanged (no undefined, no non-JSON values).
const text = JSON.stringify(semantics);
if (!isDeepStrictEqual(JSON.parse(text), semantics)) throw new Error("the corpus is not plain JSON data");
if (!isDeepStrictEqual(JSON.parse(JSON.stringify(doc.rebindMigrationNegativeVectors)), doc.rebindMigrationNegativeVectors)) {
  throw new Error("the negative vectors are not plain JSON data");
}
if (m.canonicalHash(doc.corpus, semantics) !== m.SUPERVISION_VECTORS_HASH) throw new Error("hash mismatch");

function at(pointer) {
  let value = doc;
  for (const token of pointer.split("/").slice(1)) value = value[Array.isArray(value) ? Number(token) : token];
  if (value === undefined) throw new Error(`no value at ${pointer}`);
  return value;
}

function add(id, fn, args) {
  const values = args.map(at);
  let outcome;
  try {
    const result = m[fn](...values);
    const index = values.findIndex((v) => isDeepStrictEqual(v, result));
    const stored = result?.ok === true && Object.keys(result).length === 3 && result.status === "valid"
      ? values.findIndex((v) => isDeepStrictEqual(v, result.value))
      : -1;
    outcome = index >= 0 ? { equalsArg: index } : stored >= 0 ? { validStoreRecordOf: stored } : { value: result };
  } catch (error) {
    outcome = { throws: { class: error.name, message: error.message } };
  }
  doc.cases.push({ id, op: `boss.${fn}`, args, outcome });
}

const s = "/semantics";
semantics.subscriptions.forEach((v, i) => add(`subscription/${v.subscriptionId}`, "parseLifecycleSubscription", [`${s}/subscriptions/${i}`]));
semantics.subscriptions.forEach((v, i) => add(`subscription-store/${v.subscriptionId}`, "validateLifecycleSubscriptionStore", [`${s}/subscriptions/${i}`]));
semantics.subscriptionSchedulerNegativeVectors.forEach((v, i) => {
  add(`scheduler-negative/${v.name}`, "parseLifecycleSubscription", [`${s}/subscriptionSchedulerNegativeVectors/${i}/value`]);
  add(`scheduler-negative-store/${v.name}`, "validateLifecycleSubscriptionStore", [`${s}/subscriptionSchedulerNegativeVectors/${i}/value`]);
});
add("activity", "parseAuthenticatedActivity", [`${s}/activity`]);
add("activity-store", "validateAuthenticatedActivityStore", [`${s}/activity`]);
add("operation-lease", "parseActiveOperationLease", [`${s}/operationLease`]);
add("operation-lease-store", "validateActiveOperationLeaseStore", [`${s}/operationLease`]);
add("operation-lease-renewal", "validateActiveOperationLeaseRenewal", [`${s}/operationLease`, `${s}/operationLease`]);
add("external-wait-lease", "parseExternalWaitLease", [`${s}/externalWaitLease`]);
add("external-wait-lease-store", "validateExternalWaitLeaseStore", [`${s}/externalWaitLease`]);
add("external-wait-lease-renewal", "validateExternalWaitLeaseRenewal", [`${s}/externalWaitLease`, `${s}/externalWaitLease`]);
add("trigger", "parseLifecycleTrigger", [`${s}/trigger`]);
add("trigger-store", "validateLifecycleTriggerStore", [`${s}/trigger`]);
semantics.inactivityEdges.forEach((_, i) => {
  add(`inactivity-edge/${i}`, "parseInactivityEdgeKey", [`${s}/inactivityEdges/${i}`]);
  add(`inactivity-transition/${i}`, "inactivityTransitionId", [`${s}/inactivityEdges/${i}`]);
});
semantics.rebindMigrations.forEach((v, i) => {
  add(`rebind/${v.authorityTransitionId}`, "parseSubscriberRebindMigration", [`${s}/rebindMigrations/${i}`]);
  add(`rebind-store/${v.authorityTransitionId}`, "validateSubscriberRebindMigrationStore", [`${s}/rebindMigrations/${i}`]);
});
doc.rebindMigrationNegativeVectors.forEach((v, i) => {
  add(`rebind-negative/${v.name}`, "parseSubscriberRebindMigration", [`/rebindMigrationNegativeVectors/${i}/value`]);
});
semantics.aclVectors.forEach((v, i) => {
  add(`acl/${v.name}`, "authorizeSupervisorSubscription", [`${s}/aclState`, `${s}/aclVectors/${i}/request`]);
  if (!isDeepStrictEqual(doc.cases.at(-1).outcome, { value: v.expected })) throw new Error(`ACL vector ${v.name} disagrees`);
});
doc.count = doc.cases.length;
process.stdout.write(JSON.stringify(doc, null, 1) + "\n");

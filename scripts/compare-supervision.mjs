// Differential check of ./boss supervision against the TypeScript core 0.2.0 (not a test; it
// needs that core's built dist): every record of the supervision corpus, with each member (at any
// depth) deleted or replaced by each of a set of values, goes through both implementations, and
// the outcomes must be identical (the same fresh value, or the same error class and message).
// Migration links are also mutated inside their evidence and re-signed, so the checks after the
// evidence digest run too. Prints the number of comparisons and each difference (exit 1 if any).
//   AIC_TS_CORE_DIST=/path/to/agent-intercom-core/dist node scripts/compare-supervision.mjs
// Needs the addon built (scripts/build-node.sh). About 110,000 comparisons, a few minutes.
import { createRequire } from "node:module";
import { isDeepStrictEqual } from "node:util";
const require = createRequire(import.meta.url);
const ours = require("../bindings-node/boss/index.js");
const dist = process.env.AIC_TS_CORE_DIST || "/work/ext/core/dist";
const ts = { ...(await import(`${dist}/boss.js`)) };
const V = ts.SUPERVISION_VECTOR_CORPUS;
const clone = (v) => structuredClone(v);
const VALUES = [undefined, null, "", 0, -1, 1, 1.5, "x", "2026-07-28T12:00:00.000Z", "2026-07-28T13:00:00.000Z", "2099-01-01T00:00:00.000Z", [], {}, true, false, 9007199254740991, ["x"], "a".repeat(64), "active", "claimed", "inserted", "migrated", "delivered", "pending", "sealed", "worker", "role", "manager", "boss", "state_in", "inactive_for"];
function outcome(fn, args) {
  try { return { ok: fn(...args) }; } catch (e) { return { throws: `${e.name}: ${e.message}` }; }
}
let n = 0, bad = 0;
function compare(name, args) {
  n++;
  const a = outcome(ts[name], clone(args)), b = outcome(ours[name], clone(args));
  if (!isDeepStrictEqual(a, b)) {
    bad++;
    if (bad <= 30) console.log("DIFF", name, JSON.stringify(args).slice(0, 200), "\n  ts:", JSON.stringify(a).slice(0, 300), "\n  us:", JSON.stringify(b).slice(0, 300));
  }
}
// all paths to values within a record, depth-limited
function* paths(v, prefix = [], depth = 0) {
  if (depth > 6 || v === null || typeof v !== "object") return;
  for (const k of Object.keys(v)) { yield [...prefix, k]; yield* paths(v[k], [...prefix, k], depth + 1); }
}
function setAt(obj, path, value, del) {
  const c = clone(obj); let o = c;
  for (const k of path.slice(0, -1)) o = o[k];
  if (del) { if (Array.isArray(o)) o.splice(Number(path.at(-1)), 1); else delete o[path.at(-1)]; } else o[path.at(-1)] = value;
  return c;
}
function mutate(name, base, wrap = (x) => [x], limitPaths = Infinity) {
  compare(name, wrap(base));
  let count = 0;
  for (const p of paths(base)) {
    if (count++ > limitPaths) break;
    compare(name, wrap(setAt(base, p, undefined, true)));
    for (const v of VALUES) compare(name, wrap(setAt(base, p, v)));
  }
  compare(name, wrap({ ...base, extra: 1 }));
}
for (const s of V.subscriptions) mutate("parseLifecycleSubscription", s);
for (const s of V.subscriptions) mutate("validateLifecycleSubscriptionStore", s);
mutate("parseAuthenticatedActivity", V.activity);
mutate("parseActiveOperationLease", V.operationLease);
mutate("validateActiveOperationLeaseStore", V.operationLease);
mutate("parseExternalWaitLease", V.externalWaitLease);
mutate("parseExternalWaitLease", V.externalWaitLease, (x) => [x, 1000]);
mutate("validateExternalWaitLeaseStore", V.externalWaitLease);
mutate("validateActiveOperationLeaseRenewal", V.operationLease, (x) => [V.operationLease, x]);
mutate("validateActiveOperationLeaseRenewal", V.operationLease, (x) => [x, V.operationLease]);
mutate("validateExternalWaitLeaseRenewal", V.externalWaitLease, (x) => [V.externalWaitLease, x]);
mutate("parseLifecycleTrigger", V.trigger);
mutate("validateLifecycleTriggerStore", V.trigger);
for (const e of V.inactivityEdges) { mutate("parseInactivityEdgeKey", e); mutate("inactivityTransitionId", e); }
mutate("parseLifecycleTarget", V.subscriptions[0].target, (x) => [x, "$.t"]);
mutate("parseLifecycleTarget", V.subscriptions[1].target);
for (const m of V.rebindMigrations) mutate("parseSubscriberRebindMigration", m);
for (const m of V.rebindMigrations) mutate("validateSubscriberRebindMigrationStore", m, (x) => [x], 200);
for (const m of ts.REBIND_MIGRATION_NEGATIVE_VECTORS) mutate("parseSubscriberRebindMigration", m.value, (x) => [x], 300);
for (const v of V.aclVectors) mutate("authorizeSupervisorSubscription", v.request, (x) => [ts.stateForSupervisorAclVector(), x]);
mutate("authorizeSupervisorSubscription", V.aclState, (x) => [x, V.aclVectors[1].request]);
mutate("authorizeSupervisorSubscription", V.aclState, (x) => [x, V.aclVectors[4].request]);
mutate("authorizeSupervisorSubscription", V.aclState, (x) => [x, V.aclVectors[8].request]);
mutate("authorizeSupervisorSubscription", V.aclState, (x) => [x, V.aclVectors[0].request]);
const ev = { workerId: "worker-a", workerGeneration: 7, now: "2026-07-28T12:01:00.000Z", currentOperation: { invocationId: V.operationLease.invocationId, processId: 4242, cgroupIdentity: V.operationLease.cgroupIdentity, live: true }, activeOperation: V.operationLease, externalWait: V.externalWaitLease };
mutate("isSmartInactivitySuppressed", ev);
mutate("isSmartInactivitySuppressed", { ...ev, currentOperation: undefined });
for (const v of [[], ["wake"], ["x"], "wake", null, [1], ["status_only", "follow_up"]]) compare("aggregateDeliveryIntent", [v]);
for (const v of [undefined, null, 5, "x", {}, []]) for (const f of Object.keys(ts).filter((k) => typeof ts[k] === "function" && k in ours && /Store$|^parse|^authorizeSup|^isSmart|Renewal$/.test(k))) compare(f, [v]);
// Deeper: mutate inside a link's evidence and re-sign it, so the checks after the digest run.
let deep = 0;
const bases = [...V.rebindMigrations, ...ts.REBIND_MIGRATION_NEGATIVE_VECTORS.map((v) => v.value)];
for (const m of bases) {
  m.deliveryGroups.forEach((link, i) => {
    const { evidenceDigest, ...body } = link.evidence;
    for (const p of paths(body)) {
      for (const v of [undefined, "DEL", ...VALUES.slice(0, 14), "2026-07-28T12:04:59.000Z", "2026-07-28T12:06:00.000Z", "absent", "inserting", "ambiguous", "unclaimed", "manager-a", "boss-a", 4, 3, 2]) {
        let evidence;
        try { evidence = v === "DEL" ? setAt(body, p, undefined, true) : setAt(body, p, v); } catch { continue; }
        let digest;
        try { digest = ts.rebindMigrationEvidenceDigest(evidence); } catch { digest = evidenceDigest; }
        const changed = clone(m);
        changed.deliveryGroups[i] = { ...link, evidence: { ...evidence, evidenceDigest: digest } };
        compare("parseSubscriberRebindMigration", [changed]);
        deep++;
      }
    }
    for (const p of [...paths(link)].filter((p) => p[0] !== "evidence")) {
      for (const v of ["DEL", ...VALUES.slice(0, 10), 0, 1, 2, 3]) {
        compare("parseSubscriberRebindMigration", [{ ...clone(m), deliveryGroups: m.deliveryGroups.map((l, j) => j === i ? (v === "DEL" ? setAt(l, p, undefined, true) : setAt(l, p, v)) : l) }]);
      }
    }
  });
}
console.log(`${n} comparisons (${deep} with re-signed rebind evidence), ${bad} differ`);
process.exitCode = bad > 0 ? 1 : 0;

// Regenerates core/tests/data/supervision_cases.json: edits of the supervision corpus's records
// (vectors/orc-supervision-v1.json), each with its outcome as the TypeScript core 0.2.0 gives it
// (the value, or the error class and message). The edits are this repository's; only the outcomes
// come from running them against the TypeScript core's dist:
//   AIC_TS_CORE_DIST=/path/to/agent-intercom-core/dist node core/tests/data/gen-supervision-cases.mjs \
//     > core/tests/data/supervision_cases.json
//
// A case calls `op` with `args`; an argument is {value: V} or {vector: pointer, edits?, resign?}:
// the value the JSON pointer names in the corpus file, then each edit applied in order
// ({at: [key, ...], delete: true} removes an object member, {at, set: V} replaces or appends it),
// then, with `resign: [key, ...]`, the evidence at that path gets a fresh evidenceDigest
// (rebindMigrationEvidenceDigest of the evidence without it; left as it is when that throws).
// An outcome is {value: V}, {equalsArg: i} (a value deeply equal to argument i),
// {validStoreRecordOf: i} (a valid store result whose value equals argument i) or
// {throws: {class, message}}.
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";

const dist = process.env.AIC_TS_CORE_DIST || "/work/ext/core/dist";
const m = await import(`${dist}/boss.js`);
const corpus = JSON.parse(readFileSync(new URL("../../../vectors/orc-supervision-v1.json", import.meta.url), "utf8"));
const clone = (v) => structuredClone(v);

function at(pointer) {
  return pointer.split("/").slice(1).reduce((v, token) => v[Array.isArray(v) ? Number(token) : token], corpus);
}

function walk(value, path) {
  return path.reduce((v, key) => v[Array.isArray(v) ? Number(key) : key], value);
}

/** What an argument stands for (the runners build it the same way). */
function build(arg) {
  if ("value" in arg) return clone(arg.value);
  const value = clone(at(arg.vector));
  for (const edit of arg.edits ?? []) {
    const parent = walk(value, edit.at.slice(0, -1));
    const key = edit.at.at(-1);
    if (edit.delete) delete parent[key];
    else parent[key] = clone(edit.set);
  }
  if (arg.resign) {
    const evidence = walk(value, arg.resign);
    const { evidenceDigest: _old, ...body } = evidence;
    try { evidence.evidenceDigest = m.rebindMigrationEvidenceDigest(body); } catch { /* stays unsigned */ }
  }
  return value;
}

const cases = [];
function add(id, op, args) {
  let outcome;
  const values = args.map(build);
  try {
    const result = m[op](...clone(values));
    const same = values.findIndex((v) => isDeepStrictEqual(v, result));
    const stored = result?.ok === true && Object.keys(result).length === 3
      ? values.findIndex((v) => isDeepStrictEqual(v, result.value))
      : -1;
    outcome = same >= 0 ? { equalsArg: same } : stored >= 0 ? { validStoreRecordOf: stored } : { value: result };
  } catch (error) {
    outcome = { throws: { class: error.name, message: error.message } };
  }
  cases.push({ id, op: `boss.${op}`, args, outcome });
}

const REPLACEMENTS = [["null", null], ["0", 0], ["x", "x"]];

/** The edits of a record at `path` (each member deleted or replaced; nested records too). */
function edits(record, path = [], depth = 1, replacements = REPLACEMENTS) {
  const out = [];
  for (const key of Object.keys(record)) {
    const at = [...path, key];
    out.push([`-${at.join(".")}`, { at, delete: true }]);
    for (const [name, set] of replacements) out.push([`${at.join(".")}=${name}`, { at, set }]);
    const inner = record[key];
    if (depth > 0 && inner !== null && typeof inner === "object" && !Array.isArray(inner)) {
      out.push(...edits(inner, at, depth - 1, replacements));
    }
  }
  out.push([`+${[...path, "extra"].join(".")}`, { at: [...path, "extra"], set: true }]);
  return out;
}

/** A case per edit of the record at `pointer`; `args(arg)` places it among the arguments. */
function mutate(label, op, pointer, args = (arg) => [arg], options = {}) {
  const record = walk(at(pointer), options.within ?? []);
  for (const [name, edit] of edits(record, options.within ?? [], 1, options.replacements)) {
    add(`${label}/${name}`, op, args({ vector: pointer, edits: [edit], ...(options.resign ? { resign: options.resign } : {}) }));
  }
}

const s = "/semantics";
mutate("subscription", "parseLifecycleSubscription", `${s}/subscriptions/0`);
mutate("subscription-role", "parseLifecycleSubscription", `${s}/subscriptions/1`);
mutate("activity", "parseAuthenticatedActivity", `${s}/activity`);
mutate("operation-lease", "parseActiveOperationLease", `${s}/operationLease`);
mutate("operation-renewal", "validateActiveOperationLeaseRenewal", `${s}/operationLease`, (a) => [{ vector: `${s}/operationLease` }, a]);
mutate("external-wait", "parseExternalWaitLease", `${s}/externalWaitLease`);
mutate("external-wait-ceiling", "parseExternalWaitLease", `${s}/externalWaitLease`, (a) => [a, { value: 3_600_000 }]);
mutate("external-renewal", "validateExternalWaitLeaseRenewal", `${s}/externalWaitLease`, (a) => [{ vector: `${s}/externalWaitLease` }, a]);
mutate("trigger", "parseLifecycleTrigger", `${s}/trigger`);
mutate("trigger-store", "validateLifecycleTriggerStore", `${s}/trigger`);
mutate("edge", "inactivityTransitionId", `${s}/inactivityEdges/1`);
mutate("target", "parseLifecycleTarget", `${s}/subscriptions/1/target`, (a) => [a, { value: "$.target" }]);
for (const [i, name] of [[0, "owner"], [1, "manager"], [4, "boss"], [5, "controller"]]) {
  mutate(`acl-request/${name}`, "authorizeSupervisorSubscription", `${s}/aclVectors/${i}/request`, (a) => [{ vector: `${s}/aclState` }, a]);
}
const request = (i) => ({ vector: `${s}/aclVectors/${i}/request` });
mutate("acl-state", "authorizeSupervisorSubscription", `${s}/aclState`, (a) => [a, request(4)]);
for (const [id, vector] of [["owner-local", 0], ["manager-a", 1], ["boss-a", 4]]) {
  mutate(`acl-principal/${id}`, "authorizeSupervisorSubscription", `${s}/aclState`, (a) => [a, request(vector)],
    { within: ["principals", id] });
}
for (const [id, vector] of [["worker-a", 1], ["manager-worker-a", 4]]) {
  mutate(`acl-worker/${id}`, "authorizeSupervisorSubscription", `${s}/aclState`, (a) => [a, request(vector)],
    { within: ["workers", id] });
}
mutate("rebind", "parseSubscriberRebindMigration", `${s}/rebindMigrations/1`);
corpus.semantics.rebindMigrations.forEach((migration, i) => {
  migration.deliveryGroups.forEach((_, j) => {
    const evidence = ["deliveryGroups", String(j), "evidence"];
    mutate(`rebind-link/${i}/${j}`, "parseSubscriberRebindMigration", `${s}/rebindMigrations/${i}`, undefined,
      { within: ["deliveryGroups", String(j)], replacements: [["null", null]] });
    mutate(`rebind-evidence/${i}/${j}`, "parseSubscriberRebindMigration", `${s}/rebindMigrations/${i}`, undefined,
      { within: evidence, replacements: [["null", null]], resign: evidence });
  });
});
process.stdout.write(`{"count":${cases.length},"cases":[\n${cases.map((c) => JSON.stringify(c)).join(",\n")}\n]}\n`);

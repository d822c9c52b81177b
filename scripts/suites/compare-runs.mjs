#!/usr/bin/env node
// Compares two runs' logs (folders of the JSON summaries tap-summary.mjs writes, e.g. kept with
// AIC_SUITE_LOGS): for each test that passed in BASE, says whether it passed in RUN, failed (with
// its error) or did not run (its file stopped before reaching it), then counts the causes (a
// stopped file counts once).
//
// usage: compare-runs.mjs BASE_LOG_DIR RUN_LOG_DIR
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const [baseDir, runDir] = process.argv.slice(2);
if (!baseDir || !runDir) {
  console.error("usage: compare-runs.mjs BASE_LOG_DIR RUN_LOG_DIR");
  process.exit(2);
}
const load = (dir) => {
  const runs = new Map();
  for (const f of readdirSync(dir).filter((f) => f.endsWith(".json"))) {
    const r = JSON.parse(readFileSync(join(dir, f), "utf8"));
    if (r && typeof r.label === "string" && Array.isArray(r.results)) runs.set(r.label, r);
  }
  return runs;
};
const base = load(baseDir);
const run = load(runDir);

// A cause for grouping, and the detail that tells its cases apart (the missing name, the test):
// a missing export shows as "X is not a function" and the like.
function cause(error, test) {
  const missing = /([\w$.]+) is not (?:a function|a constructor|iterable|defined)/.exec(error);
  if (missing) return ["undefined value (a missing export?)", missing[1]];
  const read = /Cannot read properties of undefined \(reading '([^']+)'\)/.exec(error);
  if (read) return ["property read on undefined (a missing export?)", read[1]];
  const link = /does not provide an export named '([^']+)'/.exec(error);
  if (link) return ["missing export (link error)", link[1]];
  if (/Right-hand side of 'instanceof' is not/.test(error)) return ["instanceof against undefined (a missing error class)", ""];
  if (/broker exited early/.test(error)) return ["a broker process the test spawned exited (see its imports)", ""];
  if (/\+ undefined\b|\bundefined !==|unequal to: \| undefined|Expected .* undefined$/.test(error)) {
    return ["assertion on an undefined value (a missing export?)", test];
  }
  return ["assertion or behaviour difference", test];
}

function count(key, detail) {
  if (!causes.has(key)) causes.set(key, { n: 0, details: new Set() });
  const c = causes.get(key);
  c.n++;
  if (detail) c.details.add(detail);
}

let lost = 0;
let notRun = 0;
const causes = new Map();
for (const [label, b] of base) {
  const r = run.get(label);
  if (!r) {
    console.log(`${label}: not in this run (filtered out?)`);
    continue;
  }
  const leaves = b.results.filter((x) => x.status === "pass" && !b.results.some((y) => y !== x && y.test.startsWith(`${x.test} > `)));
  const status = new Map(r.results.map((x) => [x.test, x.status]));
  const errors = new Map(r.failures.map((f) => [f.test, f.error]));
  const rows = [];
  for (const leaf of leaves) {
    const s = status.get(leaf.test);
    if (s === "pass") continue;
    if (s === undefined) {
      notRun++;
      rows.push(`    NOT RUN ${leaf.test}`);
      continue;
    }
    lost++;
    const error = errors.get(leaf.test) ?? "";
    const [key, detail] = cause(error, `${label} :: ${leaf.test}`);
    count(key, detail);
    rows.push(`    ${s.toUpperCase()} ${leaf.test}: ${error}`);
  }
  const passed = leaves.length - rows.length;
  console.log(`${label}: ${passed}/${leaves.length} of the baseline's passing tests pass`);
  if (!r.ok) console.log("    (the run has no summary: it crashed or timed out)");
  const crash = r.failures.find((f) => /did not finish/.test(f.error));
  if (crash) {
    console.log(`    file stopped: ${crash.error}`);
    count("file stopped at load (its tests did not run)", `${label}: ${crash.error.replace(/ imported from \S+/g, "").replace(/^the file did not finish: /, "")}`);
  }
  for (const row of rows) console.log(row);
}
for (const label of run.keys()) if (!base.has(label)) console.log(`${label}: not in the baseline`);
console.log(`compared: ${lost} baseline-passing tests fail, ${notRun} did not run`);
for (const [key, c] of [...causes].sort((a, b) => b[1].n - a[1].n)) {
  console.log(`  cause x${c.n}: ${key}`);
  for (const d of [...c.details].sort()) console.log(`      ${d}`);
}

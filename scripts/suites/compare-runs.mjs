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

// A short cause for grouping: a missing export shows as "X is not a function" and the like.
function cause(error) {
  const missing = /(?:TypeError: )?([\w$.]+) is not (?:a function|a constructor|iterable|defined)/.exec(error)
    ?? /Cannot read properties of undefined \(reading '([^']+)'\)/.exec(error);
  if (missing) return `undefined value (a missing export?): ${missing[0].replace(/^.*TypeError: /, "")}`;
  const link = /does not provide an export named '([^']+)'/.exec(error);
  if (link) return `missing export (link error): ${link[1]}`;
  if (/Right-hand side of 'instanceof' is not/.test(error)) return "instanceof against undefined (a missing error class)";
  if (/did not finish/.test(error)) return error;
  if (/broker exited early/.test(error)) return "a broker process the test spawned exited (see its imports)";
  if (/\+ undefined\b|\bundefined !==|unequal to: \| undefined|Expected .* undefined$/.test(error)) {
    return "assertion on an undefined value (a missing export?)";
  }
  return "assertion or behaviour difference";
}

let lost = 0;
let notRun = 0;
const causes = new Map();
for (const [label, b] of base) {
  const r = run.get(label);
  const leaves = b.results.filter((x) => x.status === "pass" && !b.results.some((y) => y !== x && y.test.startsWith(`${x.test} > `)));
  const status = new Map((r?.results ?? []).map((x) => [x.test, x.status]));
  const errors = new Map((r?.failures ?? []).map((f) => [f.test, f.error]));
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
    const key = cause(error);
    causes.set(key, (causes.get(key) ?? 0) + 1);
    rows.push(`    ${s.toUpperCase()} ${leaf.test}: ${error}`);
  }
  const passed = leaves.length - rows.length;
  console.log(`${label}: ${passed}/${leaves.length} of the baseline's passing tests pass${r ? "" : " (no run)"}`);
  if (r && !r.ok) console.log("    (the run has no summary: it crashed or timed out)");
  const crash = r?.failures?.find((f) => /did not finish/.test(f.error));
  if (crash) {
    console.log(`    file stopped: ${crash.error}`);
    const key = crash.error.replace(/ imported from \S+| \(at [^)]*\)/g, "").replace(/^the file did not finish: SyntaxError: The requested module/, "file stopped: module");
    causes.set(key, (causes.get(key) ?? 0) + 1);
  }
  for (const row of rows) console.log(row);
}
for (const label of run.keys()) if (!base.has(label)) console.log(`${label}: not in the baseline`);
console.log(`compared: ${lost} baseline-passing tests fail, ${notRun} did not run`);
for (const [key, n] of [...causes].sort((a, b) => b[1] - a[1])) console.log(`  cause x${n}: ${key}`);

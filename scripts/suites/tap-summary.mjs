#!/usr/bin/env node
// Reads the TAP that node:test wrote (--test-reporter=tap) and prints its summary counts on one
// line, then one line per failing test (leaf tests only: a parent that failed only because a
// subtest did is not repeated), with the error's first lines. The JSON also lists every result.
//
// usage: tap-summary.mjs TAP_FILE LABEL [--json OUT]   (OUT gets {label, counts, failures})
import { readFileSync, writeFileSync } from "node:fs";

const [tapFile, label = tapFile, flag, jsonOut] = process.argv.slice(2);
let text = "";
try {
  text = readFileSync(tapFile, "utf8");
} catch {
  text = "";
}
const lines = text.split("\n");

// The runners' temporary folders, cut from test names and messages: /tmp/aic-suite.XXXX/<dir>/.
const WORK_PATH = /\/\S*?aic-suite\.[^/\s]+\/[^/\s]+\//g;
const counts = {};
const failures = [];
const results = []; // every ok / not ok line, parents included: { test, status }
// Top-level "# " comments other than the summary: what the test file's process wrote to stderr
// (node 20 puts it there), e.g. the error that stopped a file from loading.
const diagnostics = lines
  .filter((l) => /^# /.test(l) && !/^# (Subtest:|tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) /.test(l))
  .map((l) => l.slice(2));
const thrown = diagnostics.find((l) => /^[A-Za-z]*(Error|Exception)\b.*:/.test(l));
const thrownAt = diagnostics.find((l) => /^\/.*:\d+$/.test(l));
const stack = []; // [{ indent, name }]
for (let i = 0; i < lines.length; i++) {
  const line = lines[i];
  const sub = /^(\s*)# Subtest: (.*)$/.exec(line);
  if (sub) {
    const indent = sub[1].length;
    while (stack.length && stack[stack.length - 1].indent >= indent) stack.pop();
    stack.push({ indent, name: sub[2] });
    continue;
  }
  const total = /^# (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$/.exec(line);
  if (total) {
    counts[total[1]] = Number(total[2]);
    continue;
  }
  const result = /^(\s*)(not ok|ok) \d+ - (.*?)(?:\s+#\s*(SKIP|TODO).*)?$/.exec(line);
  if (!result) continue;
  const indent = result[1].length;
  while (stack.length && stack[stack.length - 1].indent > indent) stack.pop();
  const path = stack.filter((s) => s.indent < indent).map((s) => s.name);
  path.push(result[3]);
  const status = result[4] ? result[4].toLowerCase() : result[2] === "ok" ? "pass" : "fail";
  results.push({ test: path.join(" > ").replace(WORK_PATH, ""), status });
  if (result[2] === "ok") continue;
  // Read the YAML block that follows.
  const yaml = [];
  let j = i + 1;
  if (lines[j]?.trim() === "---") {
    for (j = j + 1; j < lines.length && lines[j].trim() !== "..."; j++) yaml.push(lines[j]);
  }
  const block = yaml.join("\n");
  const failureType = /failureType: '([^']*)'/.exec(block)?.[1] ?? "";
  if (failureType === "subtestsFailed") continue;
  let error = "";
  const at = yaml.findIndex((l) => /^\s*error: /.test(l));
  if (at >= 0) {
    const first = yaml[at].replace(/^\s*error: /, "");
    if (first === "|-" || first === "|" || first === ">-") {
      const baseIndent = (yaml[at + 1] ?? "").match(/^\s*/)[0].length;
      const collected = [];
      for (let k = at + 1; k < yaml.length; k++) {
        const l = yaml[k];
        if (l.trim() && l.match(/^\s*/)[0].length < baseIndent) break;
        collected.push(l.trim());
      }
      error = collected.filter(Boolean).slice(0, 6).join(" | ");
    } else {
      error = first.replace(/^'(.*)'$/, "$1");
    }
  }
  const code = /^\s*code: '?([^'\n]*)'?$/m.exec(block)?.[1] ?? "";
  if (code === "ERR_TEST_FAILURE" && error === "test failed" && thrown) {
    error = `the file did not finish: ${thrown}${thrownAt ? ` (at ${thrownAt.replace(/^.*\//, "")})` : ""}`;
  }
  const test = path.join(" > ").replace(WORK_PATH, "");
  failures.push({ test, failureType, code, error: error.replace(WORK_PATH, "").slice(0, 600) });
}

const ok = Object.hasOwn(counts, "tests");
const c = (k) => counts[k] ?? 0;
console.log(
  ok
    ? `${label}: tests ${c("tests")} pass ${c("pass")} fail ${c("fail")} skipped ${c("skipped")} todo ${c("todo")} cancelled ${c("cancelled")}`
    : `${label}: NO SUMMARY (the run crashed or timed out)`,
);
for (const f of failures) console.log(`  FAIL ${label} :: ${f.test}${f.code ? ` [${f.code}]` : ""}: ${f.error}`);
if (flag === "--json" && jsonOut) writeFileSync(jsonOut, JSON.stringify({ label, ok, counts, failures, results }, null, 2));

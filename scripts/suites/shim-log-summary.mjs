#!/usr/bin/env node
// Summarizes the log scripts/suites/adapter-broker-shim.mjs writes (one JSON line per event) for one
// test file's run: how many brokers started, each one's checks, refusals and stops, and whether
// the TypeScript broker was ever loaded. Exits 1 if it was, or a start failed its checks.
//
// usage: shim-log-summary.mjs SHIM_LOG
import { readFileSync } from "node:fs";

const [file] = process.argv.slice(2);
let lines = [];
try {
  lines = readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
} catch (error) {
  if (error.code !== "ENOENT") throw error;
}
const by = (event) => lines.filter((l) => l.event === event);
const starts = by("start");
const bad = starts.filter((s) => !(s.socketIsAdapters && s.pidFileIsOurs && s.health === "compatible" && s.running));
const refused = by("refused");
const ts = by("ts-broker-imported");
const stops = by("stop").map((s) => `${s.why}->${s.reason}`);
const stopCounts = Object.entries(stops.reduce((m, s) => ({ ...m, [s]: (m[s] ?? 0) + 1 }), {}))
  .map(([k, n]) => `${k} x${n}`).join(", ");
const gateway = starts.filter((s) => s.gateway).length;
const dropped = [...new Set(starts.flatMap((s) => s.dropped ?? []))];
console.log(`  broker starts: ${starts.length} by our shim in-process (pid file = spawned pid, health compatible, the adapter's socket path: ${starts.length - bad.length}/${starts.length}; gateway socket served: ${gateway}/${starts.length})` +
  `; stops: ${stopCounts || "none logged (SIGKILL or still running)"}; TypeScript broker loaded: ${ts.length} times` +
  (dropped.length ? `; settings our broker does not know, left out: ${dropped.join(", ")}` : ""));
for (const r of refused) console.log(`  shim refused (pid ${r.pid}): ${r.reason}`);
for (const t of ts) console.log(`  TYPESCRIPT BROKER LOADED (pid ${t.pid}): ${t.argv.join(" ")}`);
process.exit(ts.length || bad.length ? 1 : 0);

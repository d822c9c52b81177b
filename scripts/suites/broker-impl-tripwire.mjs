// Put in place of what holds an adapter's TypeScript broker (Pi's broker/broker-impl.ts, Claude's
// dist/broker.mjs) in the copy scripts/suites/broker-suite.sh runs against our broker: loading it
// is a harness bug, so it is logged for the harness to count and refused.
import { appendFileSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const shim = JSON.parse(readFileSync(join(here, "aic-broker-shim.json"), "utf8"));
appendFileSync(shim.log, `${JSON.stringify({ at: Date.now(), pid: process.pid, event: "ts-broker-imported", argv: process.argv.slice(1) })}\n`);
throw new Error(`the TypeScript broker (${fileURLToPath(import.meta.url)}) was loaded in a run against our broker`);

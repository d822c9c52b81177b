// The Pi adapter's broker entry point (broker/broker.ts) as scripts/run-broker-suite.sh puts it
// into its copy of the adapter: it runs OUR broker (the Rust one, through the Node package's
// startBroker) inside this very process, so every process-level thing a test observes is the one
// the TypeScript broker gave: the pid the test spawned is the broker's pid (broker.pid names it),
// SIGTERM and SIGINT stop it cleanly (socket, broker.pid and broker.owner removed, exit 0), SIGKILL
// ends it at once with nothing left running, the idle exit ends the process (exit 0), and the
// line "Intercom broker started (pid: N, remote-access-v1)" comes on stdout once the socket listens.
//
// The copy's broker/broker-impl.ts is replaced by a module that refuses to load, so the
// TypeScript broker cannot run by accident; every start is logged (JSON lines) to the log the
// harness names, with the checks that the broker serving the socket is ours.
//
// Configuration: aic-broker-shim.json next to this file, written by the harness:
//   { "brokerModule": "<our package>/bindings-node/lib/broker.js", "log": "<file>", "logLevel"?: "warn" }
import { appendFileSync, lstatSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { getBrokerSocketPath, shouldUseWindowsTcpTransport } from "./paths.ts";

const here = dirname(fileURLToPath(import.meta.url));
const shim = JSON.parse(readFileSync(join(here, "aic-broker-shim.json"), "utf8"));

function record(entry) {
  appendFileSync(shim.log, `${JSON.stringify({ at: Date.now(), pid: process.pid, ...entry })}\n`);
}

function refuse(reason) {
  record({ event: "refused", reason });
  console.error(`aic broker shim: ${reason}`);
  process.exit(1);
}

// The Pi broker on Windows (or with the opt-in TCP transport) listens on a named pipe or a TCP
// port; ours serves Unix sockets only. Say so rather than listen somewhere the client never looks.
if (process.platform === "win32" || shouldUseWindowsTcpTransport()) {
  refuse(`our broker has no ${shouldUseWindowsTcpTransport() ? "TCP transport (PI_INTERCOM_TRANSPORT=tcp)" : "named-pipe transport"}: it serves Unix sockets only`);
}

const require = createRequire(import.meta.url);
const ours = require(shim.brokerModule);

// The settings the Pi broker reads from its environment. The expiry sweep exists only in a
// broker with remote access: one that does not know the key has no remote principals to sweep.
const SWEEP_ENV = "PI_INTERCOM_REMOTE_EXPIRY_SWEEP_MS";
const SWEEP_KEY = "remote_expiry_sweep_ms";
const settings = {};
if (process.env[SWEEP_ENV] !== undefined) {
  // As the Pi broker reads it: its leading digits, at least 50; not a number: 1000.
  settings[SWEEP_KEY] = Math.max(50, Number.parseInt(process.env[SWEEP_ENV], 10) || 1000);
}

function start() {
  const options = { logLevel: shim.logLevel ?? "warn", settings };
  try {
    return { broker: ours.startBroker(options), dropped: [] };
  } catch (error) {
    if (error?.code === "UNKNOWN_KEY" && SWEEP_KEY in settings && String(error.message).includes(SWEEP_KEY)) {
      delete settings[SWEEP_KEY];
      return { broker: ours.startBroker(options), dropped: [SWEEP_KEY] };
    }
    throw error;
  }
}

let started;
try {
  started = start();
} catch (error) {
  refuse(`our broker did not start: ${error?.code ?? "ERROR"} ${error?.message ?? error}`);
}
const { broker, dropped } = started;

let stopping = false;
function stop(why) {
  if (stopping) return;
  stopping = true;
  clearInterval(watch);
  const reason = broker.close();
  record({ event: "stop", why, reason });
  process.exit(reason === "Failed" ? 1 : 0);
}
process.on("SIGTERM", () => stop("SIGTERM"));
process.on("SIGINT", () => stop("SIGINT"));
// The broker runs on its own thread; when it stops by itself (idle exit, a failure) the process
// must end as the Pi broker's does. The interval also keeps this process alive while it runs.
const watch = setInterval(() => {
  if (!broker.running) stop("broker stopped");
}, 50);

// Checks that the socket the Pi client will dial is served by the broker this process started.
const expectedSocket = getBrokerSocketPath();
const pidFile = join(broker.intercomDir, "broker.pid");
let pidInFile = "";
try {
  pidInFile = readFileSync(pidFile, "utf8").trim();
} catch (error) {
  pidInFile = `unreadable: ${error.code}`;
}
const health = await ours.brokerHealth(broker.socketPath, 2000);
const checks = {
  socket: broker.socketPath,
  socketIsPis: broker.socketPath === expectedSocket,
  pidFileIsOurs: pidInFile === String(process.pid),
  health,
  running: broker.running,
};
let gateway = false; // whether our broker serves the remote-access gateway socket
try {
  gateway = lstatSync(join(broker.intercomDir, "remote-gateway.sock")).isSocket();
} catch {
  // No gateway socket: a broker without remote access.
}
record({ event: "start", impl: "agent-intercom (Rust, in-process)", module: shim.brokerModule, gateway, dropped, ...checks });
if (!checks.socketIsPis || !checks.pidFileIsOurs || health !== "compatible" || !checks.running) {
  broker.close();
  refuse(`the socket is not served by our broker as expected: ${JSON.stringify(checks)} (Pi expects ${expectedSocket})`);
}
console.log(`Intercom broker started (pid: ${process.pid}, remote-access-v1)`);

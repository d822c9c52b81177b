// An adapter's broker entry point (broker/broker.ts, in the Pi adapter and in the Claude adapter
// alike) as scripts/suites/broker-suite.sh puts it into its copy of the adapter: it runs OUR
// broker (the Rust one, through the Node package's startBroker) inside this very process, so every
// process-level thing a test observes is the one the TypeScript broker gave: the pid the test
// spawned is the broker's pid (broker.pid names it), SIGTERM and SIGINT stop it cleanly (socket,
// broker.pid and broker.owner removed, exit 0), SIGKILL ends it at once with nothing left running,
// the idle exit ends the process (exit 0), and the line
// "Intercom broker started (pid: N, remote-access-v1)", which both adapters' brokers print, comes
// on stdout once the socket listens.
//
// What held the TypeScript broker besides (Pi's broker/broker-impl.ts, Claude's dist/broker.mjs)
// is replaced by a module that refuses to load, so it cannot run by accident; every start is
// logged (JSON lines) to the log the harness names, with the checks that the broker serving the
// socket is ours.
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

// The adapters' brokers on Windows listen on a named pipe, or with the opt-in TCP transport on a
// loopback port named in broker.port.json. Ours has the TCP transport (transport=tcp) but no
// named pipes: say so rather than listen somewhere the client never looks.
const tcp = shouldUseWindowsTcpTransport();
if (process.platform === "win32" && !tcp) {
  refuse("our broker has no named-pipe transport: it serves Unix sockets and TCP");
}

const require = createRequire(import.meta.url);
const ours = require(shim.brokerModule);

// Our broker reads PI_INTERCOM_REMOTE_EXPIRY_SWEEP_MS and PI_INTERCOM_ASK_TIMEOUT_MS from the
// environment itself, as the adapters' brokers do; the transport is the one setting the shim
// passes (the adapters decide it from the platform).
const settings = tcp ? { transport: "tcp" } : {};
let broker;
try {
  broker = ours.startBroker({ logLevel: shim.logLevel ?? "warn", settings });
} catch (error) {
  refuse(`our broker did not start: ${error?.code ?? "ERROR"} ${error?.message ?? error}`);
}

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
// must end as the adapter's broker does. The interval also keeps this process alive while it runs.
const watch = setInterval(() => {
  if (!broker.running) stop("broker stopped");
}, 50);

// Checks that the socket the adapter's client will dial is served by the broker this process
// started.
const expectedSocket = getBrokerSocketPath();
const pidFile = join(broker.intercomDir, "broker.pid");
let pidInFile = "";
try {
  pidInFile = readFileSync(pidFile, "utf8").trim();
} catch (error) {
  pidInFile = `unreadable: ${error.code}`;
}
// On TCP the endpoint is broker.port.json, and a health probe must carry its stateId.
async function tcpHealth() {
  const net = await import("node:net");
  const endpoint = JSON.parse(readFileSync(join(broker.intercomDir, "broker.port.json"), "utf8"));
  return await new Promise((resolve) => {
    const socket = net.connect({ host: endpoint.host, port: endpoint.port });
    const done = (answer) => { socket.destroy(); resolve(answer); };
    setTimeout(() => done("unreachable"), 2000).unref();
    socket.once("error", () => done("unreachable"));
    socket.once("connect", () => {
      const body = Buffer.from(JSON.stringify({ type: "health", requestId: "shim", stateId: endpoint.stateId }));
      const header = Buffer.alloc(4);
      header.writeUInt32BE(body.length);
      socket.write(Buffer.concat([header, body]));
    });
    let buffered = Buffer.alloc(0);
    socket.on("data", (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 4 || buffered.length < 4 + buffered.readUInt32BE(0)) return;
      const frame = JSON.parse(buffered.subarray(4, 4 + buffered.readUInt32BE(0)).toString("utf8"));
      done(frame.type === "health_ok" && frame.version === 4 ? "compatible" : "incompatible");
    });
  });
}
const health = tcp ? await tcpHealth() : await ours.brokerHealth(broker.socketPath, 2000);
const checks = {
  transport: tcp ? "tcp" : "unix",
  socket: broker.socketPath,
  socketIsAdapters: tcp || broker.socketPath === expectedSocket,
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
record({ event: "start", impl: "agent-intercom (Rust, in-process)", module: shim.brokerModule, gateway, ...checks });
if (!checks.socketIsAdapters || !checks.pidFileIsOurs || health !== "compatible" || !checks.running) {
  broker.close();
  refuse(`the socket is not served by our broker as expected: ${JSON.stringify(checks)} (the adapter expects ${expectedSocket})`);
}
console.log(`Intercom broker started (pid: ${process.pid}, remote-access-v1)`);

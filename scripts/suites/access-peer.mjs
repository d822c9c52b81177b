#!/usr/bin/env node
// The raw pi-intercom peers scripts/run-orchestrator-access.sh needs, written against the wire
// only (4-byte big-endian length + UTF-8 JSON) so that they depend on no client library:
//
//   access-peer.mjs health SOCKET [WAIT_MS]
//       waits up to WAIT_MS (default 10000) for a health_ok on SOCKET; prints it; exit 0, else 1
//   access-peer.mjs root SOCKET SESSION_ID
//       registers a local session with that id and stays connected (prints "registered ID" once
//       the broker confirms); exits 0 on SIGTERM, 1 if the broker refuses or closes the connection
//   access-peer.mjs remote GATEWAY ENROLLMENT_FILE ROOT_ID
//       registers over the remote-access gateway with the file's enrollment token, checks the
//       `registered` frame (a broker-assigned id, access.origin "remote", parent and root the
//       local root, a session credential), then that a second registration with the same token is
//       refused (ACCESS_DENIED); prints what it checked without any secret; exit 0, else 1
import net from "node:net";
import { readFileSync } from "node:fs";

function frame(message) {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

// A connection whose frames arrive through next(); close events end every wait with null.
function open(path) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(path);
    let buffer = Buffer.alloc(0);
    const frames = [];
    const waiters = [];
    let closed = false;
    const settle = () => {
      while (waiters.length && (frames.length || closed)) waiters.shift()(frames.shift() ?? null);
    };
    socket.on("data", (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      while (buffer.length >= 4 && buffer.length >= 4 + buffer.readUInt32BE(0)) {
        const size = buffer.readUInt32BE(0);
        frames.push(JSON.parse(buffer.subarray(4, 4 + size).toString("utf8")));
        buffer = buffer.subarray(4 + size);
      }
      settle();
    });
    socket.on("close", () => {
      closed = true;
      settle();
    });
    socket.once("error", (error) => (closed ? undefined : reject(error)));
    socket.once("connect", () => resolve({
      socket,
      send: (message) => socket.write(frame(message)),
      next: (timeoutMs = 5000) => new Promise((done) => {
        const timer = setTimeout(() => done({ type: "timeout" }), timeoutMs);
        waiters.push((f) => { clearTimeout(timer); done(f); });
        settle();
      }),
    }));
  });
}

function session(name) {
  const now = Date.now();
  return { name, cwd: process.cwd(), model: "access-check", pid: process.pid, startedAt: now, lastActivity: now };
}

const register = (sessionId, name, access) => ({
  type: "register", protocol: "pi-intercom", version: 4,
  ...(sessionId ? { sessionId } : {}),
  ...(access ? { access } : {}),
  session: session(name),
});

// A frame as text with every secret-bearing value replaced by its length.
function redacted(value) {
  return JSON.stringify(value, (key, v) => (/token|credential/i.test(key) && typeof v === "string" ? `<${v.length} chars>` : v));
}

async function health(path, waitMs = 10000) {
  const deadline = Date.now() + waitMs;
  let last = "no answer";
  while (Date.now() < deadline) {
    try {
      const peer = await open(path);
      peer.send({ type: "health", requestId: "access-check-health" });
      const answer = await peer.next(1000);
      peer.socket.destroy();
      if (answer?.type === "health_ok") {
        console.log(JSON.stringify(answer));
        return 0;
      }
      last = redacted(answer);
    } catch (error) {
      last = error.code ?? String(error);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  console.error(`no health_ok on ${path} within ${waitMs} ms (last: ${last})`);
  return 1;
}

async function root(path, id) {
  const peer = await open(path);
  peer.send(register(id, "access-check-root"));
  const answer = await peer.next();
  if (answer?.type !== "registered" || answer.sessionId !== id) {
    console.error(`the local root was not registered: ${redacted(answer)}`);
    return 1;
  }
  console.log(`registered ${id}`);
  return await new Promise((resolve) => {
    let ending = false;
    process.on("SIGTERM", () => {
      ending = true;
      peer.socket.destroy();
      resolve(0);
    });
    peer.socket.on("close", () => {
      if (ending) return;
      console.error("the broker closed the local root's connection");
      resolve(1);
    });
  });
}

async function remote(gateway, file, rootId) {
  const { version, enrollmentToken } = JSON.parse(readFileSync(file, "utf8"));
  if (version !== 1 || typeof enrollmentToken !== "string") {
    console.error(`${file} is not a version 1 enrollment file`);
    return 1;
  }
  const peer = await open(gateway);
  peer.send(register(undefined, "access-check-remote", { enrollmentToken }));
  const answer = await peer.next();
  const access = answer?.access ?? {};
  const checks = {
    registered: answer?.type === "registered",
    brokerAssignedId: typeof answer?.sessionId === "string" && answer.sessionId !== rootId,
    originRemote: access.origin === "remote",
    parentIsRoot: access.parentSessionId === rootId,
    rootIsRoot: access.rootSessionId === rootId,
    sessionCredential: typeof access.sessionCredential === "string" && access.sessionCredential.length >= 32,
    remoteAccessContract: answer?.remoteAccess?.feature === "remote-access-v1",
  };
  console.log(`gateway registration: ${redacted(answer)}`);
  peer.socket.destroy();
  const replay = await open(gateway);
  replay.send(register(undefined, "access-check-replay", { enrollmentToken }));
  const refused = await replay.next();
  replay.socket.destroy();
  checks.replayRefused = refused?.type === "error" && refused.code === "ACCESS_DENIED";
  console.log(`the same token again: ${redacted(refused)}`);
  const failed = Object.entries(checks).filter(([, ok]) => !ok).map(([name]) => name);
  console.log(`checks: ${Object.entries(checks).map(([k, ok]) => `${k} ${ok ? "ok" : "FAILED"}`).join(", ")}`);
  return failed.length ? 1 : 0;
}

const [command, ...args] = process.argv.slice(2);
const run = { health: () => health(args[0], args[1] ? Number(args[1]) : undefined), root: () => root(args[0], args[1]), remote: () => remote(args[0], args[1], args[2]) }[command];
if (!run || args.some((a) => a === undefined || a === "")) {
  console.error("usage: access-peer.mjs health SOCKET [WAIT_MS] | root SOCKET SESSION_ID | remote GATEWAY ENROLLMENT_FILE ROOT_ID");
  process.exit(2);
}
process.exit(await run().catch((error) => {
  console.error(`${command}: ${error.code ?? ""} ${error.message}`);
  return 1;
}));

// Regenerates the remote-access fixtures from the Pi adapter's own registry (run, never copied):
//   node --import tsx broker/tests/data/access/generate.mts <pi-adapter-dir>
// Every run draws fresh secrets, so the committed files change as a whole when regenerated.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { dirname, join, resolve } from "path";
import { fileURLToPath, pathToFileURL } from "url";

const piDir = resolve(process.argv[2] ?? "/work/ext/pi");
const { RemoteAccessRegistry } = await import(pathToFileURL(join(piDir, "broker/access-registry.ts")).href);
const { BrokerAuditLog } = await import(pathToFileURL(join(piDir, "broker/audit.ts")).href);
const here = dirname(fileURLToPath(import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "access-fixture-"));
const START = 1_800_000_000_000;

function emit(name: string, from: string) {
  copyFileSync(from, join(here, name));
}

function registryAt(file: string, clock: { now: number }) {
  return new RemoteAccessRegistry(file, () => clock.now);
}

// pi-v2: a tree made by the Pi registry in one process.
const base = join(scratch, "v2");
mkdirSync(base);
const clock = { now: START };
const registry = registryAt(join(base, "broker-access.json"), clock);
const adminToken = registry.ensureAdminCredential(join(base, "broker-admin.json"));
const template = { parentSessionId: "local-root", rootSessionId: "local-root", remoteHostId: "ika-dev" };
const manager = registry.consumeEnrollment(registry.issueEnrollment({
  ...template, name: "ika/manager", canDelegate: true, maxDepth: 3, maxChildren: 2,
}).enrollmentToken);
clock.now += 5;
const lead = registry.consumeEnrollment(registry.issueChildEnrollment(manager.principal.id, 1, {
  name: "ika/lead", canDelegate: true, maxDepth: 3, maxChildren: 1,
}).enrollmentToken);
clock.now += 5;
const pending = registry.issueChildEnrollment(lead.principal.id, 1, { name: "ika/pending-worker" }, 60_000);
const other = registry.consumeEnrollment(registry.issueEnrollment({ ...template, name: "other", remoteHostId: "h2" }).enrollmentToken);
clock.now += 5;
registry.revoke(other.principal.id);
const next = registry.issueEnrollment({ ...template, name: "ika/next", expiresAt: 1_900_000_000_000 }, 3_600_000);
emit("pi-v2.json", join(base, "broker-access.json"));
emit("pi-v2-admin.json", join(base, "broker-admin.json"));
writeFileSync(join(here, "pi-v2-secrets.json"), `${JSON.stringify({
  note: "test fixture secrets, published on purpose",
  adminToken,
  principals: Object.fromEntries([manager, lead, other].map((c) => [c.principal.name, { id: c.principal.id, sessionCredential: c.sessionCredential }])),
  enrollments: { "ika/pending-worker": pending, "ika/next": next },
}, null, 2)}\n`);

// Deterministic operations applied by Pi to a copy of pi-v2.json; ours must write the same bytes.
function after(name: string, input: string, now: number, apply: (r: any, dir: string) => void) {
  const dir = join(scratch, name);
  mkdirSync(dir);
  copyFileSync(input, join(dir, "broker-access.json"));
  const r = registryAt(join(dir, "broker-access.json"), { now });
  apply(r, dir);
  emit(`${name}.json`, join(dir, "broker-access.json"));
}
const v2 = join(here, "pi-v2.json");
const T = START + 100;
after("pi-v2-revoke", v2, T, (r) => r.revoke(manager.principal.id));
after("pi-v2-adopt", v2, T, (r) => r.adoptSubtree(lead.principal.id, "other-local-root", "other-local-root"));
after("pi-v2-expire", v2, 1_802_592_000_000, (r) => r.expirePrincipals());
after("pi-v2-consume-expired", v2, START + 60_010, (r) => {
  try { r.consumeEnrollment(pending.enrollmentToken); } catch (error) { if ((error as any).code !== "INVALID_ENROLLMENT") throw error; }
});
const otherAdmin = join(scratch, "other-admin.json");
writeFileSync(otherAdmin, JSON.stringify({ version: 1, adminToken: "fixture-admin-token-0123456789-abcdefghijklmnop" }));
after("pi-v2-new-admin", v2, T, (r) => r.ensureAdminCredential(otherAdmin));

// pi-v1: a version-one file (principal without tree limits, policy remote-parent) and what Pi
// writes after recording the admin hash at start.
after("pi-v1-migrated", join(here, "pi-v1.json"), T, (r) => r.ensureAdminCredential(otherAdmin));
// odd: key orders, integer-like keys, extra fields, 1.0 and null that Pi's loader tolerates.
after("pi-odd-revoke", join(here, "pi-odd.json"), T, (r) => r.revoke("7"));

// The audit lines Pi writes for entries whose members come in the canonical order.
const audit = new BrokerAuditLog(join(scratch, "broker-audit.jsonl"), () => 1234);
audit.record({ event: "remote_connect", outcome: "allowed", actorId: "remote-1", remoteHostId: "ika", generation: 2 });
audit.record({ event: "remote_delivery_denied", outcome: "denied", actorId: "remote-1", targetId: "hidden", reason: "POLICY_DENIED" });
audit.record({
  event: "remote_visibility_filtered", outcome: "observed", actorId: "x", targetId: "t", remoteHostId: "h",
  generation: 7, reason: "r\n\"q\u0001\u00e9\u2028\u007f\\", visibleCount: 1, hiddenCount: 3,
});
emit("pi-audit.jsonl", join(scratch, "broker-audit.jsonl"));
rmSync(scratch, { recursive: true, force: true });

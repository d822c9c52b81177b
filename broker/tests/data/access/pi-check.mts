// Loads an intercom directory written by our broker with the Pi adapter's own registry and
// reports what it sees, for broker/tests/access_registry.rs (the ignored `pi_loads_our_files`):
//   node --import tsx pi-check.mts <pi-adapter-dir> <intercom-dir> <request.json>
// request: {now, principals: [{id, generation, sessionCredential}], enrollmentToken, inspect}
import { readFileSync } from "fs";
import { join, resolve } from "path";
import { pathToFileURL } from "url";

const [piDir, dir, requestPath] = process.argv.slice(2);
const { RemoteAccessRegistry } = await import(pathToFileURL(join(resolve(piDir), "broker/access-registry.ts")).href);
const request = JSON.parse(readFileSync(requestPath, "utf8"));
const registry = new RemoteAccessRegistry(join(dir, "broker-access.json"), () => request.now);
const adminToken = registry.ensureAdminCredential(join(dir, "broker-admin.json"));
const outcome = (run: () => unknown) => {
  try {
    return { ok: run() };
  } catch (error) {
    return { error: (error as { code?: string }).code ?? String(error) };
  }
};
const result = {
  adminToken,
  adminAuthenticates: registry.authenticateAdmin(adminToken),
  sessions: request.principals.map((p: { id: string; generation: number; sessionCredential: string }) =>
    outcome(() => registry.authenticateSession(p.id, p.generation, p.sessionCredential).name)),
  consumed: outcome(() => {
    const { principal } = registry.consumeEnrollment(request.enrollmentToken);
    return { parentSessionId: principal.parentSessionId, depth: principal.depth, name: principal.name };
  }),
  inspected: registry.inspectSubtree(request.inspect).map((p: { name: string }) => p.name),
};
console.log(JSON.stringify(result));

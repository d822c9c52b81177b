// Small readers of TypeScript source text shared by the suite helpers (regular expressions over
// the forms the TS core and the adapters use; not a parser).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

// Names the TS core declares as types (they vanish at run time, so they are never looked up).
export function typeNames(srcDir) {
  const names = new Set();
  for (const file of readdirSync(srcDir).filter((f) => f.endsWith(".ts"))) {
    const text = readFileSync(join(srcDir, file), "utf8");
    for (const m of text.matchAll(/export\s+(?:declare\s+)?(?:type|interface)\s+([A-Za-z_$][\w$]*)/g)) {
      names.add(m[1]);
    }
    for (const m of text.matchAll(/export\s+type\s*\{([^}]*)\}/g)) {
      for (const part of m[1].split(",")) {
        const name = part.trim().split(/\s+as\s+/).pop();
        if (name) names.add(name);
      }
    }
  }
  return names;
}

export function parseClause(clause) {
  // Returns { namespace } or { specifiers: [{ imported, local, type }] }.
  clause = clause.trim();
  const ns = /^\*\s+as\s+([A-Za-z_$][\w$]*)$/.exec(clause);
  if (ns) return { namespace: ns[1] };
  const braces = /^\{([\s\S]*)\}$/.exec(clause);
  if (!braces) return null;
  const specifiers = [];
  for (const raw of braces[1].split(",")) {
    const part = raw.replace(/\/\/.*$/gm, "").replace(/\/\*[\s\S]*?\*\//g, "").trim();
    if (!part) continue;
    const m = /^(type\s+)?([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?$/.exec(part);
    if (!m) return null;
    specifiers.push({ imported: m[2], local: m[3] ?? m[2], type: Boolean(m[1]) });
  }
  return { specifiers };
}

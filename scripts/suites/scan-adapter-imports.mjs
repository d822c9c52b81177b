#!/usr/bin/env node
// Lists what an adapter imports from @ctliz/agent-intercom-core: every `import {...} from` and
// `export {...} from` of the package or one of its subpaths in the adapter's .ts/.mts/.mjs files
// (node_modules, dist and .git left out), written as OUT_JSON in the format check-core-imports.mjs
// reads. Names marked `type`, or declared as types in the TS core's src (CORE_SRC_DIR, optional),
// are not looked up at run time.
//
// usage: scan-adapter-imports.mjs ADAPTER_DIR OUT_JSON [CORE_SRC_DIR]
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parseClause, typeNames } from "./ts-source.mjs";

const PACKAGE = "@ctliz/agent-intercom-core";
const [dir, out, coreSrc] = process.argv.slice(2);
if (!dir || !out) {
  console.error("usage: scan-adapter-imports.mjs ADAPTER_DIR OUT_JSON [CORE_SRC_DIR]");
  process.exit(2);
}
const types = coreSrc && existsSync(coreSrc) ? typeNames(coreSrc) : new Set();

function* walk(d) {
  for (const entry of readdirSync(d, { withFileTypes: true })) {
    if (["node_modules", "dist", ".git"].includes(entry.name)) continue;
    const path = join(d, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (/\.(ts|mts|mjs)$/.test(entry.name)) yield path;
  }
}

const imports = [];
const files = [];
const pattern = /(?:import|export)\s+(type\s+)?(\{[^}]*\}|\*\s*as\s+[A-Za-z_$][\w$]*)\s*from\s*(["'])(@ctliz\/agent-intercom-core(?:\/[\w/-]+)?)\3/g;
for (const path of walk(dir)) {
  const text = readFileSync(path, "utf8");
  const file = relative(dir, path);
  let seen = false;
  for (const m of text.matchAll(pattern)) {
    seen = true;
    const subpath = m[4] === PACKAGE ? "." : `./${m[4].slice(PACKAGE.length + 1)}`;
    const parsed = parseClause(m[2]);
    if (!parsed) {
      console.log(`SCAN: ${file}: cannot read ${m[0].replace(/\s+/g, " ")}`);
      continue;
    }
    if (m[1]) {
      imports.push({ file, module: m[4], subpath, values: [], types: (parsed.specifiers ?? []).map((s) => s.imported) });
      continue;
    }
    if (parsed.namespace) {
      imports.push({ file, module: m[4], subpath, values: ["*"], types: [] });
      continue;
    }
    const isType = (s) => s.type || types.has(s.imported);
    imports.push({
      file,
      module: m[4],
      subpath,
      values: parsed.specifiers.filter((s) => !isType(s)).map((s) => s.imported),
      types: parsed.specifiers.filter(isType).map((s) => s.imported),
    });
  }
  if (seen) files.push(file);
}
writeFileSync(out, JSON.stringify({ package: PACKAGE, typesKnown: types.size > 0, files, imports }, null, 2));
const names = new Set(imports.flatMap((e) => e.values.map((v) => `${e.subpath} ${v}`)));
console.log(`${files.length} adapter files import the core: ${names.size} distinct (subpath, value name) pairs`);

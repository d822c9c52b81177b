#!/usr/bin/env node
// Copies the TypeScript core's own test files into OUT_DIR with every `../src/X.ts` import turned
// into an import of the published package's subpath that exports X, and writes OUT_DIR/imports.json
// (which test imports which value names from which subpath) for check-core-imports.mjs.
//
// usage: rewrite-core-tests.mjs CORE_EXPORT_DIR OUT_DIR [--strict | --fallback]
//
// By default an import becomes `const ns = await import("<pkg>/<subpath>").catch(() => ({}));
// const { a, b: c } = ns;`, so a name (or a whole subpath) the installed package lacks reads as
// undefined and only the tests that use it fail (check-core-imports.mjs prints each such name). With --strict the named-import form is kept, as a
// consumer would write it: a missing name then fails the whole file at link time. With --fallback
// a name the mapped subpath lacks is taken from any subpath that has it (to reach the behaviour
// behind a misplaced export; the import check still reports the name as missing where it belongs).
// Line numbers are kept (a rewritten import spans as many lines as the original).
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseClause, typeNames } from "./ts-source.mjs";

const PACKAGE = "@ctliz/agent-intercom-core";
const SKIP = new Set(["docs-contract.test.ts"]);

// src module -> public subpath (the TS core's package.json exports and the re-exports of its
// src/index.ts, src/boss.ts and src/boss-vectors.ts).
const ENTRY_SUBPATHS = {
  index: ".",
  policy: "./policy",
  "policy-vectors": "./vectors",
  "team-manifest": "./team-manifest",
  canonical: "./canonical",
  "protocol-v4": "./protocol-v4",
  boss: "./boss",
  "boss-policy": "./boss/policy",
  "boss-vectors": "./boss/vectors",
};

function subpathOf(module) {
  return Object.hasOwn(ENTRY_SUBPATHS, module) ? ENTRY_SUBPATHS[module] : null;
}

function bossSubpath(module, bossModules) {
  if (!bossModules.has(module)) return null;
  return module.endsWith("-vectors") ? "./boss/vectors" : "./boss";
}

// Modules re-exported (export * from "./m.ts") by an entry file of the TS core.
function reexports(srcDir, entry) {
  const text = readFileSync(join(srcDir, `${entry}.ts`), "utf8");
  return new Set([...text.matchAll(/export\s*\*\s*from\s*["']\.\/([\w-]+)\.ts["']/g)].map((m) => m[1]));
}

function main() {
  const args = process.argv.slice(2);
  const strict = args.includes("--strict");
  const fallback = args.includes("--fallback");
  const [coreDir, outDir] = args.filter((a) => !a.startsWith("--"));
  if (!coreDir || !outDir) {
    console.error("usage: rewrite-core-tests.mjs CORE_EXPORT_DIR OUT_DIR [--strict | --fallback]");
    process.exit(2);
  }
  const srcDir = join(coreDir, "src");
  const testDir = join(coreDir, "test");
  const bossModules = new Set([...reexports(srcDir, "boss"), ...reexports(srcDir, "boss-vectors")]);
  // Modules only reached through another module (not re-exported by an entry file) still belong
  // to the boss family when their name says so (boss-semantic-binding-constants).
  const types = typeNames(srcDir);
  mkdirSync(outDir, { recursive: true });
  const manifest = [];
  const problems = [];
  let counter = 0;
  const files = readdirSync(testDir).filter((f) => f.endsWith(".test.ts") && !SKIP.has(f)).sort();
  for (const file of files) {
    const source = readFileSync(join(testDir, file), "utf8");
    const pattern = /import\s+(type\s+)?(\{[^}]*\}|\*\s*as\s+[A-Za-z_$][\w$]*)\s*from\s*(["'])\.\.\/src\/([\w-]+)\.ts\3[ \t]*;?/g;
    const rewritten = source.replace(pattern, (whole, typeOnly, clause, _q, module) => {
      const lines = whole.split("\n").length;
      const pad = (text) => text + "\n".repeat(Math.max(0, lines - text.split("\n").length));
      let subpath = subpathOf(module) ?? bossSubpath(module, bossModules);
      if (!subpath && module.startsWith("boss-")) subpath = module.endsWith("-vectors") ? "./boss/vectors" : "./boss";
      const parsed = parseClause(clause);
      if (!subpath || !parsed) {
        problems.push(`${file}: cannot map import of ../src/${module}.ts (${clause.replace(/\s+/g, " ")})`);
        return whole;
      }
      const specifier = subpath === "." ? PACKAGE : `${PACKAGE}/${subpath.slice(2)}`;
      if (typeOnly) return pad(`/* type-only import of ../src/${module}.ts dropped */`);
      if (parsed.namespace) {
        manifest.push({ file, module, subpath, values: ["*"], types: [] });
        return pad(`import * as ${parsed.namespace} from "${specifier}";`);
      }
      const values = parsed.specifiers.filter((s) => !s.type && !types.has(s.imported));
      const typed = parsed.specifiers.filter((s) => s.type || types.has(s.imported));
      manifest.push({ file, module, subpath, values: values.map((s) => s.imported), types: typed.map((s) => s.imported) });
      if (values.length === 0) return pad(`/* types only from ../src/${module}.ts */`);
      const list = values.map((s) => (s.local === s.imported ? s.imported : `${s.imported}${strict ? " as " : ": "}${s.local}`));
      if (strict) return pad(`import { ${list.join(", ")} } from "${specifier}";`);
      const ns = `__aic${counter++}`;
      const load = (spec) => `await import("${spec}").catch(() => ({}))`;
      if (fallback) {
        // Every subpath's names, the mapped subpath's last (it wins where both have a name).
        const others = Object.values(ENTRY_SUBPATHS).filter((sub) => sub !== subpath)
          .map((sub) => load(sub === "." ? PACKAGE : `${PACKAGE}/${sub.slice(2)}`));
        return pad(`const ${ns} = Object.assign({}, ${others.join(", ")}, ${load(specifier)}); const { ${list.join(", ")} } = ${ns};`);
      }
      return pad(`const ${ns} = ${load(specifier)}; const { ${list.join(", ")} } = ${ns};`);
    });
    const left = [...rewritten.matchAll(/["']\.\.\/src\/[^"']*["']/g)].map((m) => m[0]);
    for (const spec of left) problems.push(`${file}: reference to ${spec} left unrewritten`);
    writeFileSync(join(outDir, file), rewritten);
  }
  writeFileSync(join(outDir, "imports.json"), JSON.stringify({ package: PACKAGE, typesKnown: true, files, imports: manifest }, null, 2));
  for (const p of problems) console.log(`REWRITE: ${p}`);
  const summary = new Map();
  for (const entry of manifest) summary.set(entry.subpath, (summary.get(entry.subpath) ?? 0) + entry.values.length);
  console.log(`rewrote ${files.length} test files; value names imported per subpath: ${[...summary].map(([s, n]) => `${s} ${n}`).join(", ")}`);
}

main();

#!/usr/bin/env node
// Run from inside the folder where the package under test is installed (copy this file there):
// imports every subpath named in imports.json (written by rewrite-core-tests.mjs or
// scan-adapter-imports.mjs) and prints each
// value name a test imports that the installed subpath does not export, with the subpaths that do
// export it, if any. Exit status 1 if any name or subpath is missing.
//
// usage: node check-core-imports.mjs IMPORTS_JSON
import { readFileSync } from "node:fs";

const ALL_SUBPATHS = [".", "./policy", "./vectors", "./canonical", "./protocol-v4", "./boss", "./boss/policy", "./boss/vectors", "./team-manifest"];

const manifest = JSON.parse(readFileSync(process.argv[2], "utf8"));
const pkg = manifest.package;
const specifierOf = (subpath) => (subpath === "." ? pkg : `${pkg}/${subpath.slice(2)}`);

const loaded = new Map();
for (const subpath of ALL_SUBPATHS) {
  try {
    loaded.set(subpath, { ns: await import(specifierOf(subpath)) });
  } catch (error) {
    loaded.set(subpath, { error: String(error?.message ?? error).split("\n")[0] });
  }
}

let missing = 0;
const reportedSubpaths = new Set();
const byFile = new Map();
for (const entry of manifest.imports) {
  const mod = loaded.get(entry.subpath);
  if (!mod || mod.error) {
    if (!reportedSubpaths.has(entry.subpath)) {
      console.log(`MISSING SUBPATH ${entry.subpath}: ${mod ? mod.error : "not a known subpath"}`);
      reportedSubpaths.add(entry.subpath);
    }
  }
  for (const name of entry.values) {
    if (name === "*") continue;
    if (mod?.ns && Object.hasOwn(mod.ns, name)) continue;
    const elsewhere = ALL_SUBPATHS.filter((s) => loaded.get(s)?.ns && Object.hasOwn(loaded.get(s).ns, name));
    const origin = entry.module.startsWith("@") ? `from ${entry.subpath}` : `../src/${entry.module}.ts -> ${entry.subpath}`;
    const hint = /^[A-Z][a-z]/.test(name) && !name.includes("_") && !manifest.typesKnown ? " (or a type)" : "";
    const line = `${name}${hint} (${origin})${elsewhere.length ? `; exported by ${elsewhere.join(", ")}` : "; no subpath exports it"}`;
    if (!byFile.has(entry.file)) byFile.set(entry.file, []);
    byFile.get(entry.file).push(line);
    missing++;
  }
}
for (const [file, lines] of byFile) {
  for (const line of lines) console.log(`MISSING NAME ${file}: ${line}`);
}
// The same, once per (subpath, name), grouped by subpath: the list of exports to add.
const wanted = new Map();
for (const entry of manifest.imports) {
  const mod = loaded.get(entry.subpath);
  for (const name of entry.values) {
    if (name === "*" || (mod?.ns && Object.hasOwn(mod.ns, name))) continue;
    if (!wanted.has(entry.subpath)) wanted.set(entry.subpath, new Set());
    wanted.get(entry.subpath).add(name);
  }
}
for (const [subpath, names] of [...wanted].sort()) {
  console.log(`MISSING IN ${subpath} (${names.size}): ${[...names].sort().join(" ")}`);
}
const distinct = new Set(manifest.imports.flatMap((e) => e.values.map((v) => `${e.subpath} ${v}`)));
console.log(
  `import check: ${distinct.size} distinct (subpath, name) pairs imported; ${missing} missing name imports in ${byFile.size} files; ${reportedSubpaths.size} subpaths failed to load`,
);
process.exit(missing || reportedSubpaths.size ? 1 : 0);

#!/usr/bin/env node
// Edits an adapter's package.json (in a copy) so each given tarball replaces the dependency of the
// same package name: the entry in dependencies, or else devDependencies, becomes `file:<tarball>`
// (a tarball whose name the adapter does not list is added to dependencies). peerDependencies are
// left alone. Prints what it changed.
//
// usage: swap-core-dependency.mjs PACKAGE_JSON TARBALL_NAME=TARBALL_PATH...
import { readFileSync, writeFileSync } from "node:fs";

const [file, ...pairs] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(file, "utf8"));
for (const pair of pairs) {
  const at = pair.lastIndexOf("=");
  const name = pair.slice(0, at);
  const path = pair.slice(at + 1);
  const field = manifest.dependencies?.[name] !== undefined
    ? "dependencies"
    : manifest.devDependencies?.[name] !== undefined
      ? "devDependencies"
      : "dependencies";
  manifest[field] ??= {};
  const before = manifest[field][name];
  manifest[field][name] = `file:${path}`;
  console.log(`${field}.${name}: ${before === undefined ? "(absent)" : JSON.stringify(before)} -> file:${path}`);
}
writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);

#!/usr/bin/env bash
# Packs the npm packages, the main one (@ctliz/agent-intercom-core, pure JavaScript) and the
# platform package of each built addon (bindings-node/npm/<id>/, filled by scripts/build-node.sh;
# the host's is required), installs the tarballs into an empty folder with a private HOME and npm
# cache and no registry (--offline: the main package's one dependency, the optional platform
# package, is among the tarballs), and runs tests/package/ there.
#   scripts/pack-accept.sh              pack, install, test
#   scripts/pack-accept.sh --install D  pack and install into D/app only (scripts/test-types.sh);
#                                       D must be an empty folder; the caller removes it
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
if [ "${1:-}" = --install ]; then
  work=$(cd "${2:?usage: pack-accept.sh --install DIR}" && pwd)
  only_install=1
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/aic-accept.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  only_install=0
fi
# The platform table, the platform packages' manifests and the main manifest agree; prints the id
# of the host's row, then every row's id.
ids=$(node -e '
  const { execFileSync } = require("node:child_process")
  const main = require("./package.json")
  const rows = require("./bindings-node/npm/platforms.json").platforms
  const problems = []
  const same = (what, a, b) => { if (JSON.stringify(a) !== JSON.stringify(b)) problems.push(`${what}: ${JSON.stringify(a)}, expected ${JSON.stringify(b)}`) }
  same("optionalDependencies", main.optionalDependencies, Object.fromEntries(rows.map((r) => [`${main.name}-${r.id}`, main.version])))
  for (const key of ["os", "cpu", "libc"]) same(`the main package ${key}`, main[key], undefined)
  for (const r of rows) {
    const dir = `bindings-node/npm/${r.id}`
    const pkg = require(`./${dir}/package.json`)
    const file = `agent_intercom.${r.id}.node`
    same(`${dir} name`, pkg.name, `${main.name}-${r.id}`)
    same(`${dir} version`, pkg.version, main.version)
    same(`${dir} license`, pkg.license, main.license)
    same(`${dir} main`, pkg.main, file)
    same(`${dir} files`, pkg.files, [file, "LICENSE-MIT", "LICENSE-APACHE"])
    same(`${dir} os`, pkg.os, [r.platform])
    same(`${dir} cpu`, pkg.cpu, [r.arch])
    same(`${dir} libc`, pkg.libc, r.libc ? [r.libc] : undefined)
    same(`${dir} scripts`, pkg.scripts, { prepack: "node ../prepack-guard.cjs" })
  }
  if (problems.length) { console.error(problems.join("\n")); process.exit(1) }
  const host = execFileSync("rustc", ["-vV"], { encoding: "utf8" }).match(/^host: (.*)$/m)[1]
  const row = rows.find((r) => r.rustTarget === host)
  if (!row) { console.error(`no row of bindings-node/npm/platforms.json builds the host, ${host}`); process.exit(1) }
  console.log([row.id, ...rows.map((r) => r.id)].join(" "))')
read -r host_id all_ids <<<"$ids"

mkdir -p "$work/home" "$work/cache" "$work/pack" "$work/app"
export HOME="$work/home" npm_config_cache="$work/cache" npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

pack() { # pack <folder> -> the tarball's path
  (cd "$1" && npm pack --silent --pack-destination "$work/pack" | tail -n 1 | sed "s|^|$work/pack/|")
}
listing() { tar -tzf "$1"; }

main_tgz=$(pack .)
main_list=$(listing "$main_tgz")
echo "packed $(basename "$main_tgz") sha256 $(sha256sum "$main_tgz" | cut -d' ' -f1) ($(wc -l <<<"$main_list") files)"
# The main package is JavaScript only: no addon, and none of the crates' Rust sources.
! grep -q '\.node$' <<<"$main_list" || { echo "the main tarball ships an addon:"; grep '\.node$' <<<"$main_list"; exit 1; }
! grep -q '^package/\(bindings-node\|vendor\)/\(src/\|Cargo.toml\)' <<<"$main_list" || { echo "the tarball holds the addon's Rust sources"; exit 1; }
grep -qx 'package/bindings-node/npm/platforms.json' <<<"$main_list" || { echo "the main tarball lacks bindings-node/npm/platforms.json (the loader reads it)"; exit 1; }

# A platform package without its addon refuses to pack (its prepack guard): a copy of the host's
# package folder with everything but the addon.
guard="$work/guard/npm"
mkdir -p "$guard/$host_id"
cp bindings-node/npm/prepack-guard.cjs "$guard/"
cp "bindings-node/npm/$host_id/package.json" LICENSE-MIT LICENSE-APACHE "$guard/$host_id/"
if (cd "$guard/$host_id" && npm pack --silent --pack-destination "$work/guard" >"$work/guard/log" 2>&1); then
  echo "a platform package without its addon was packed"; exit 1
fi
grep -q "refusing to pack without agent_intercom.$host_id.node" "$work/guard/log" \
  || { echo "the prepack guard did not say why:"; cat "$work/guard/log"; exit 1; }
echo "ok: a platform package without its addon refuses to pack"

tarballs=("$main_tgz")
for id in $all_ids; do
  dir="bindings-node/npm/$id"
  if [ ! -f "$dir/agent_intercom.$id.node" ]; then
    [ "$id" = "$host_id" ] && { echo "$dir/agent_intercom.$id.node is not built: bash scripts/build-node.sh"; exit 1; }
    echo "skipped $dir (not built here)"
    continue
  fi
  tgz=$(pack "$dir")
  list=$(listing "$tgz")
  echo "packed $(basename "$tgz") sha256 $(sha256sum "$tgz" | cut -d' ' -f1) ($(wc -l <<<"$list") files)"
  for f in "agent_intercom.$id.node" LICENSE-MIT LICENSE-APACHE package.json; do
    grep -qx "package/$f" <<<"$list" || { echo "$(basename "$tgz") lacks $f"; exit 1; }
  done
  tarballs+=("$tgz")
done

cp -r tests/package "$work/app/test"
cd "$work/app"
npm init -y >/dev/null
npm install --no-package-lock --offline "${tarballs[@]}" >/dev/null
for name in agent-intercom-core "agent-intercom-core-$host_id"; do
  [ -d "node_modules/@ctliz/$name" ] || { echo "@ctliz/$name is not installed"; exit 1; }
  [ -L "node_modules/@ctliz/$name" ] && { echo "@ctliz/$name is installed as a link, not from its tarball"; exit 1; }
done
[ "$only_install" = 1 ] && exit 0
node --test test/
cd "$repo"

#!/usr/bin/env bash
# Packs the npm package, installs the tarball into an empty folder with a private HOME and npm
# cache (no network needed: the package has no dependencies), and runs tests/package/ there.
# Expects bindings-node/agent_intercom.node to be built (scripts/build-node.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/aic-accept.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/cache" "$work/pack" "$work/app"
export HOME="$work/home" npm_config_cache="$work/cache" npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
tarball="$work/pack/$(npm pack --silent --pack-destination "$work/pack" | tail -n 1)"
listing=$(tar -tzf "$tarball")
echo "packed $(basename "$tarball") sha256 $(sha256sum "$tarball" | cut -d' ' -f1) ($(wc -l <<<"$listing") files)"
grep -qx 'package/bindings-node/agent_intercom.node' <<<"$listing" || { echo "the tarball lacks bindings-node/agent_intercom.node"; exit 1; }
# The crates' Rust sources are not part of the npm package.
! grep -q '^package/\(bindings-node\|vendor\)/\(src/\|Cargo.toml\)' <<<"$listing" || { echo "the tarball holds the addon's Rust sources"; exit 1; }
cp -r tests/package "$work/app/test"
cd "$work/app"
npm init -y >/dev/null
npm install --no-package-lock --offline "$tarball" >/dev/null
[ -L "node_modules/@ctliz/agent-intercom-core" ] && { echo "installed as a link, not from the tarball"; exit 1; }
node --test test/
cd "$repo"

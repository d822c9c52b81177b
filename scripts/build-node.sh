#!/usr/bin/env bash
# Builds the N-API addon with plain cargo and puts it where both of its users look for it:
#   bindings-node/agent_intercom.node                        the source checkout's (lib/native.js
#                                                            loads it first when it exists)
#   bindings-node/npm/<id>/agent_intercom.<id>.node          the platform package's, with the
#                                                            licence texts (what npm pack ships)
# <id> is the row of bindings-node/npm/platforms.json whose rustTarget is the target: the host's
# (rustc -vV), or AIC_RUST_TARGET=<triple> for a cross build, which fills only the platform
# package. Usage: scripts/build-node.sh [release|debug]   (release: fat LTO, slow)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-release}
flag=""; [ "$profile" = release ] && flag="--release"
host=$(rustc -vV | sed -n 's/^host: //p')
target=${AIC_RUST_TARGET:-$host}
row=$(node -e '
  const [triple] = process.argv.slice(1)
  const row = require("./bindings-node/npm/platforms.json").platforms.find((p) => p.rustTarget === triple)
  if (!row) { console.error(`no row of bindings-node/npm/platforms.json builds ${triple}`); process.exit(1) }
  console.log(`${row.id} ${row.platform}`)' "$target")
read -r id platform <<<"$row"
target_args=(); [ "$target" != "$host" ] && target_args=(--target "$target")
cargo build --locked --workspace $flag "${target_args[@]}"
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
out="$target_dir/$profile"; [ "$target" != "$host" ] && out="$target_dir/$target/$profile"
case "$platform" in
  darwin) lib="$out/libagent_intercom_node.dylib" ;;
  win32) lib="$out/agent_intercom_node.dll" ;;
  *) lib="$out/libagent_intercom_node.so" ;;
esac
pkg="bindings-node/npm/$id"
[ -f "$pkg/package.json" ] || { echo "missing $pkg/package.json (the platform package of $id)"; exit 1; }
# cp to a temporary name and rename: a running process that loaded the old file keeps its mapping.
cp "$lib" "$pkg/.agent_intercom.$id.node.tmp" && mv -f "$pkg/.agent_intercom.$id.node.tmp" "$pkg/agent_intercom.$id.node"
cp LICENSE-MIT LICENSE-APACHE "$pkg/"
echo "built $pkg/agent_intercom.$id.node ($profile, $target)"
if [ "$target" = "$host" ]; then
  cp "$lib" bindings-node/.agent_intercom.node.tmp && mv -f bindings-node/.agent_intercom.node.tmp bindings-node/agent_intercom.node
  echo "built bindings-node/agent_intercom.node ($profile)"
fi

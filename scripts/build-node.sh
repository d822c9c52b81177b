#!/usr/bin/env bash
# Builds the N-API addon with plain cargo and copies it to bindings-node/agent_intercom.node.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-release}
flag=""; [ "$profile" = release ] && flag="--release"
cargo build --locked --workspace $flag
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
cp "$target/$profile/libagent_intercom_node.so" bindings-node/agent_intercom.node
echo "built bindings-node/agent_intercom.node ($profile)"

# Shared by test-a2a.sh, test-mcp.sh and test-python.sh (sourced, not run): the two things each
# of them prepares before its suites.

# npm_pinned DIR FROM PROBE: installs FROM/package.json and its lock into DIR with `npm ci`, again
# only when the pins change or PROBE (a path under DIR/node_modules) is missing.
npm_pinned() {
  local dir=$1 from=$2 probe=$3 pins
  pins=$(cat "$from/package.json" "$from/package-lock.json" | sha256sum | cut -d' ' -f1)
  if [ -f "$dir/node_modules/$probe" ] && [ "$(cat "$dir/.pins" 2>/dev/null)" = "$pins" ]; then
    return 0
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$from/package.json" "$from/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$pins" >"$dir/.pins"
}

# addon_fresh [PROFILE]: builds the checkout's Node addon (scripts/build-node.sh, debug by
# default) when it is missing or older than a Rust source of a crate it is made of (its path
# dependencies: core, vendor, broker, scratchpad, and bindings-node itself).
addon_fresh() {
  local addon=bindings-node/agent_intercom.node
  if [ ! -f "$addon" ] || [ -n "$(find core/src vendor broker/src scratchpad/src bindings-node/src \
    -newer "$addon" -name '*.rs' -print -quit)" ]; then
    bash scripts/build-node.sh "${1:-debug}"
  fi
}

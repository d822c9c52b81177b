#!/usr/bin/env bash
# Every test: Rust (unit, integration, doc, the line's fault points), C (shared library and
# ASan+UBSan for every test, the static library once), Node, Python (the wheel in a fresh venv),
# the packed tarball installed in an empty folder, the acceptance gate, the official A2A SDKs
# against `serve`, the official MCP SDKs against `mcp`, the line's scenario suite and the typed
# usage. Everything runs on ONE debug build: the addon, the CLI, the C library and the gate's
# embeddings are the artifacts the Rust tests built (one feature set for the whole tree,
# Cargo.toml's getrandom line), so nothing is compiled twice. Each step prints when it started.
# AIC_PROFILE=release runs the non-Rust suites on a release build instead.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
step() { echo "== $* (at $(( $(date +%s) - t0 )) s)"; }
export AIC_PROFILE=${AIC_PROFILE:-debug}
bash scripts/ensure-deps.sh

step "Rust"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --locked --no-fail-fast
else
  cargo test --workspace --locked --no-fail-fast --lib --bins --tests
fi
step "Rust doc tests"
cargo test --workspace --locked --doc
step "the line's fault points"
# The line's fault points exist only in a fault-injection build (docs/line.md, "Testing"); the
# CLI's feature is the one the scenario suite builds with, so the line crate is built once.
cargo test --workspace --locked --features agent-intercom-cli/fault-injection --test faults

step "C"
bash scripts/test-c.sh "$AIC_PROFILE"

step "Node"
bash scripts/build-node.sh "$AIC_PROFILE"
node --test tests/node/

step "Python (the wheel in a fresh venv: vectors, broker with Node, scratchpad, mypy --strict)"
bash scripts/test-python.sh "$AIC_PROFILE"

step "tarball"
bash scripts/pack-accept.sh

step "acceptance gate (the corpus through the Node, CLI and C embeddings of the broker)"
bash scripts/acceptance-gate.sh

step "A2A interop"
bash scripts/test-a2a.sh

step "MCP (the official SDKs as clients of agent-intercom mcp)"
bash scripts/test-mcp.sh

step "line scenarios"
bash scripts/test-line.sh

step "typed usage"
bash scripts/test-types.sh
echo "all tests passed ($(( $(date +%s) - t0 )) s)"

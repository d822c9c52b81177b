#!/usr/bin/env bash
# Every test: Rust (unit, integration, doc), C (dynamic, static, ASan+UBSan), Node, and the
# packed tarball installed in an empty folder. Tests run on debug builds, the package on release.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
step() { echo "== $* (at $(( $(date +%s) - t0 )) s)"; }
bash scripts/ensure-deps.sh

step "Rust"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --locked --no-fail-fast
else
  cargo test --workspace --locked --no-fail-fast --lib --bins --tests
fi
cargo test --workspace --locked --doc
# The line's fault points exist only in a fault-injection build (docs/line.md, "Testing").
cargo test -p agent-intercom-line --locked --features fault-injection --test faults

step "C"
bash scripts/test-c.sh debug

step "Node"
bash scripts/build-node.sh release
node --test tests/node/

step "tarball"
bash scripts/pack-accept.sh

step "acceptance gate (the corpus through the Node, CLI and C embeddings of the broker)"
bash scripts/acceptance-gate.sh

bash scripts/test-a2a.sh

bash scripts/test-line.sh

step "typed usage"
bash scripts/test-types.sh
echo "all tests passed ($(( $(date +%s) - t0 )) s)"

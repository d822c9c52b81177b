#!/usr/bin/env bash
# Same as `cargo xtask gen [--check]`: regenerates every generated file (the C header, the facts
# file the hand-written .d.ts import, the ESM entry points, the vendorable module, the core's corpus copy, the docs tables);
# with --check, writes nothing and fails when one is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --locked -q -p xtask -- gen ${1:-}

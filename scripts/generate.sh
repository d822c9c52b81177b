#!/usr/bin/env bash
# Regenerates every generated file (the C header, the .d.ts files, the vendorable module, the
# docs tables, the ESM entry points); with --check, verifies them and fails when one is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
cargo run --locked -q -p xtask -- gen $mode
node scripts/gen-esm.mjs $mode

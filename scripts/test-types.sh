#!/usr/bin/env bash
# Compiles tests/types/usage.mts and usage.cts against the committed .d.ts files with the pinned TypeScript.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x node_modules/.bin/tsc ] || npm ci --no-audit --no-fund --loglevel=error
node_modules/.bin/tsc -p tests/types/tsconfig.json
echo "types: tests/types/usage.mts and usage.cts compiles against the package declarations"

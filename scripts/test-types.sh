#!/usr/bin/env bash
# With the pinned TypeScript (node_modules, 5.9.3):
#  1. compiles tests/types/usage.mts and usage.cts against the committed .d.ts files, and checks
#     that every contract operation the package's JavaScript names is a ContractOp of facts.d.ts
#     (tests/types/contract-ops.cjs);
#  2. packs and installs the tarballs (scripts/pack-accept.sh --install; needs the addon built,
#     scripts/build-node.sh) and compiles tests/types/installed/adapters.mts there, against the
#     installed .d.ts files: every type and runtime name the adapters import, from their subpaths.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
[ -x node_modules/.bin/tsc ] || npm ci --no-audit --no-fund --loglevel=error
tsc="$repo/node_modules/.bin/tsc"
"$tsc" -p tests/types/tsconfig.json
echo "types: tests/types/usage.mts and usage.cts compile against the package declarations"
node tests/types/contract-ops.cjs
echo "types: every contract operation the package's JavaScript names is a ContractOp"

work=$(mktemp -d "${TMPDIR:-/tmp}/aic-types.XXXXXX")
trap 'rm -rf "$work"' EXIT
bash scripts/pack-accept.sh --install "$work" >/dev/null
cp -r tests/types/installed "$work/app/types"
(cd "$work/app/types" && "$tsc" -p tsconfig.json)
echo "types: tests/types/installed/adapters.mts compiles against the installed tarball's declarations"

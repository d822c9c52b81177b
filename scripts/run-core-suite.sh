#!/usr/bin/env bash
# Runs the TypeScript core's own tests (test/*.test.ts of an export of its repository, except
# docs-contract.test.ts, which reads the TS core's docs) against an INSTALLED package: the tests
# are copied into a fresh folder, every `../src/X.ts` import is rewritten to the public subpath
# that exports X (scripts/suites/rewrite-core-tests.mjs), the tarball(s) and tsx are installed
# from npm into that folder (private HOME and npm cache), and each file runs under
# `tsx --test` with a timeout. Prints the names tests import that the package does not export,
# per-file and total node:test counts, and the failing tests; exits non-zero if any fails.
#
# usage: scripts/run-core-suite.sh CORE_EXPORT_DIR [TARBALL...]
#   no TARBALL: packs this repository (building the addon with scripts/build-node.sh if missing)
# environment: AIC_SUITE_TIMEOUT (seconds per file, 600), AIC_SUITE_FILTER (substring of the file
#   names to run), AIC_SUITE_STRICT=1 (keep named imports: a missing name fails the whole file),
#   AIC_SUITE_FALLBACK=1 (a name missing from its subpath is taken from any subpath that has it),
#   AIC_TSX_VERSION (^4.20.0), AIC_SUITE_LOGS (copy TAP/spec logs there), AIC_SUITE_KEEP=1,
#   AIC_SUITE_VERBOSE=1 (show the end of a failed run's output), AIC_SUITE_BASELINE (a logs folder
#   saved earlier: list the baseline's passing tests that fail or did not run here).
set -euo pipefail
# The whole script is one function, and `exit` follows its call on the same line: bash has read
# all of it before it starts, so editing the file during a run cannot change that run.
main() {
  if [ "$#" -lt 1 ] || [ ! -d "$1/test" ] || [ ! -d "$1/src" ]; then
    echo "usage: $0 CORE_EXPORT_DIR [TARBALL...]  (CORE_EXPORT_DIR holds src/ and test/)" >&2
    exit 2
  fi
  core=$(realpath "$1")
  shift
  repo=$(cd "$(dirname "$0")/.." && pwd)
  . "$repo/scripts/suites/common.sh"
  suite_setup_work
  suite_tarballs "$@"

  app="$work/app"
  mkdir -p "$app"
  printf '{ "name": "aic-core-suite", "private": true, "type": "module" }\n' >"$app/package.json"
  echo "node $(node --version), npm $(npm --version); installing the tarball(s) and tsx@${AIC_TSX_VERSION:-^4.20.0}"
  (cd "$app" && npm install --no-package-lock "${tarballs[@]}" "tsx@${AIC_TSX_VERSION:-^4.20.0}" >"$work/logs/npm-install.log" 2>&1) \
    || { cat "$work/logs/npm-install.log"; exit 1; }
  [ -L "$app/node_modules/@ctliz/agent-intercom-core" ] && { echo "installed as a link, not from the tarball"; exit 1; }

  mode=()
  [ "${AIC_SUITE_STRICT:-0}" = 1 ] && mode=(--strict)
  [ "${AIC_SUITE_FALLBACK:-0}" = 1 ] && mode=(--fallback)
  node "$repo/scripts/suites/rewrite-core-tests.mjs" "$core" "$app/test" "${mode[@]}"
  cp "$repo/scripts/suites/check-core-imports.mjs" "$app/test/"
  import_rc=0
  (cd "$app" && node test/check-core-imports.mjs test/imports.json) || import_rc=$?

  cd "$app"
  for file in test/*.test.ts; do
    name=$(basename "$file" .test.ts)
    [ -n "${AIC_SUITE_FILTER:-}" ] && [[ "$name" != *"$AIC_SUITE_FILTER"* ]] && continue
    suite_run_file "$name" "$name" node_modules/.bin/tsx --test "$file"
  done
  cd "$repo"
  suite_finish "$import_rc" "some imported names are missing (MISSING lines above)"
}
main "$@"; exit

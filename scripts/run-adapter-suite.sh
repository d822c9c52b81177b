#!/usr/bin/env bash
# Runs an adapter's own tests (Pi or Claude, from an export of its repository) with
# @ctliz/agent-intercom-core replaced by the given tarball(s). The export is copied into a fresh
# folder (never modified); in the copy, package.json's core entry becomes `file:<tarball>` and
# `npm install` runs with the adapter's package-lock.json (every other dependency stays at its
# locked version, fetched from the npm registry; private HOME and npm cache). Then the adapter's
# package.json and package-lock.json are put back byte for byte, so tests that read them (the
# Claude adapter's core-provenance pin) see the adapter's own files, and the test files run one by
# one under node:test with a timeout. Prints per-file and total counts and the failing tests;
# exits non-zero if any fails.
#
# usage: scripts/run-adapter-suite.sh pi|claude ADAPTER_EXPORT_DIR [TARBALL...]
#   no TARBALL: packs this repository (building the addon with scripts/build-node.sh if missing)
# environment:
#   AIC_ADAPTER_SCOPE  pi: "issue" (default: broker/*.test.ts protocol-v4/*.test.ts) or "all" (the
#                      files of its `npm test`); claude: always the files of its `npm test`
#   AIC_ADAPTER_RELOCK=1  keep the edited package.json and the lockfile npm rewrote while the tests
#                      run (shows which tests depend on the adapter's pinned core)
#   AIC_SUITE_TIMEOUT (seconds per file, 600), AIC_SUITE_FILTER (substring of the test paths),
#   AIC_SUITE_LOGS (copy the TAP/spec logs there), AIC_SUITE_KEEP=1, AIC_SUITE_VERBOSE=1,
#   AIC_SUITE_BASELINE (a logs folder saved earlier: list its passing tests that fail here),
#   AIC_CORE_SRC (the TS core's src/: tells type names from values in the import check)
set -euo pipefail
# The whole script is one function, and `exit` follows its call on the same line: bash has read
# all of it before it starts, so editing the file during a run cannot change that run.
main() {
  if [ "$#" -lt 2 ] || { [ "$1" != pi ] && [ "$1" != claude ]; } || [ ! -f "$2/package.json" ]; then
    echo "usage: $0 pi|claude ADAPTER_EXPORT_DIR [TARBALL...]" >&2
    exit 2
  fi
  adapter=$1
  source_dir=$(realpath "$2")
  shift 2
  [ -f "$source_dir/package-lock.json" ] || { echo "$source_dir has no package-lock.json" >&2; exit 2; }
  repo=$(cd "$(dirname "$0")/.." && pwd)
  . "$repo/scripts/suites/common.sh"
  suite_setup_work
  suite_tarballs "$@"

  app="$work/$adapter"
  mkdir -p "$app"
  # A copy of the export without any node_modules or build output it may carry.
  tar -C "$source_dir" --exclude=./node_modules --exclude=./dist -cf - . | tar -C "$app" -xf -
  # An export is not a git checkout, but some tests expect one (Claude's detectGitRoot test asks
  # for the repository root of the working directory): an empty repository is enough.
  [ -e "$app/.git" ] || git -C "$app" init -q
  cp "$source_dir/package.json" "$work/package.json.orig"
  cp "$source_dir/package-lock.json" "$work/package-lock.json.orig"

  pairs=()
  for t in "${tarballs[@]}"; do
    name=$(tar -xOzf "$t" package/package.json | node -e \
      'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).name))')
    pairs+=("$name=$t")
  done
  node "$repo/scripts/suites/swap-core-dependency.mjs" "$app/package.json" "${pairs[@]}"

  echo "node $(node --version), npm $(npm --version); npm install in the $adapter copy (lockfile kept for the other dependencies)"
  (cd "$app" && npm install >"$work/logs/npm-install.log" 2>&1) || { tail -n 60 "$work/logs/npm-install.log"; exit 1; }
  engines=$(grep -c "EBADENGINE.*package:" "$work/logs/npm-install.log" || true)
  [ "$engines" = 0 ] || echo "  npm: $engines packages declare an engines range this node does not meet (EBADENGINE)"
  grep -i "warn" "$work/logs/npm-install.log" | grep -iv "deprecated\|EBADENGINE" | sed 's/^/  npm: /' | head -n 20 || true
  core_dir="$app/node_modules/@ctliz/agent-intercom-core"
  [ -L "$core_dir" ] && { echo "the core was installed as a link, not from the tarball"; exit 1; }
  echo "installed core: $(node -p 'const p=require(process.argv[1]);p.name+"@"+p.version' "$core_dir/package.json")"
  # Which locked packages npm moved to another version (the core, and at most its own dependencies).
  node -e '
    const [a, b] = process.argv.slice(1).map((f) => JSON.parse(require("fs").readFileSync(f, "utf8")).packages ?? {});
    const changed = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => k && JSON.stringify(a[k]?.version) !== JSON.stringify(b[k]?.version));
    console.log(`lockfile entries whose version the swap changed: ${changed.length ? changed.join(", ") : "none"}`);
  ' "$work/package-lock.json.orig" "$app/package-lock.json"
  if [ "${AIC_ADAPTER_RELOCK:-0}" = 1 ]; then
    echo "AIC_ADAPTER_RELOCK=1: the tests see the edited package.json and the rewritten lockfile"
  else
    cp "$work/package.json.orig" "$app/package.json"
    cp "$work/package-lock.json.orig" "$app/package-lock.json"
  fi

  # Every name the adapter imports from the core, looked up in the installed package.
  mkdir -p "$app/node_modules/.aic-suite"
  cp "$repo/scripts/suites/check-core-imports.mjs" "$app/node_modules/.aic-suite/"
  node "$repo/scripts/suites/scan-adapter-imports.mjs" "$app" "$app/node_modules/.aic-suite/imports.json" ${AIC_CORE_SRC:+"$AIC_CORE_SRC"}
  import_rc=0
  node "$app/node_modules/.aic-suite/check-core-imports.mjs" "$app/node_modules/.aic-suite/imports.json" || import_rc=$?

  cd "$app"
  case "$adapter" in
    pi)
      runner=(node_modules/.bin/tsx --test)
      if [ "${AIC_ADAPTER_SCOPE:-issue}" = all ]; then scope=all; else scope=issue; fi
      ;;
    claude)
      runner=(node --import tsx --test)
      scope=all
      echo "npm run build (the adapter's pretest)"
      npm run build >"$work/logs/build.log" 2>&1 || { tail -n 40 "$work/logs/build.log"; exit 1; }
      ;;
  esac
  if [ "$scope" = all ]; then
    # The file patterns of the adapter's own `npm test` script (the words after --test).
    read -r -a patterns < <(node -e '
      const words = require("./package.json").scripts.test.split(/\s+/);
      console.log(words.slice(words.indexOf("--test") + 1).filter((w) => !w.startsWith("-")).join(" "));')
  else
    patterns=("broker/*.test.ts" "protocol-v4/*.test.ts")
  fi
  echo "test files: ${patterns[*]} (${runner[*]})"
  shopt -s nullglob
  for pattern in "${patterns[@]}"; do
    for file in $pattern; do
      [ -n "${AIC_SUITE_FILTER:-}" ] && [[ "$file" != *"$AIC_SUITE_FILTER"* ]] && continue
      suite_run_file "$file" "$(tr '/' '_' <<<"${file%.test.ts}")" "${runner[@]}" "$file"
    done
  done
  cd "$repo"
  suite_finish "$import_rc" "some names the adapter imports are missing (MISSING lines above)"
}
main "$@"; exit

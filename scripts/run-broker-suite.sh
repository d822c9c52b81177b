#!/usr/bin/env bash
# Runs the Pi adapter's own broker integration tests (intercom.integration.test.ts,
# broker/remote-access.integration.test.ts, protocol-v4/broker-scope.integration.test.ts) against
# OUR broker, assertions untouched. The export is copied into a fresh folder (never modified);
# `npm install` there puts in @ctliz/agent-intercom-core (ours, or AIC_PI_CORE) and every other
# dependency at the adapter's locked version (private HOME and npm cache).
# In the copy, broker/broker.ts, which both the tests and the client's find-or-spawn
# (broker/spawn.ts) start as `node --import tsx broker/broker.ts`, becomes
# scripts/suites/pi-broker-shim.mjs: it starts our broker inside that node process through our
# Node package (startBroker), so the spawned pid is the broker's, signals and the idle exit end
# it as they end the Pi broker, and it prints the Pi broker's start line once it listens.
# broker/broker-impl.ts (the TypeScript broker) becomes a module that refuses to load, and every
# start is logged with its checks (pid file, health, socket path), summed up per file.
# Each file runs under node:test with a timeout; a file that is not clean runs once more and both
# runs are reported (the second decides). Prints per-file and total counts and the failing tests;
# exits non-zero if a final run failed or the TypeScript broker was loaded.
#
# usage: scripts/run-broker-suite.sh PI_EXPORT_DIR [TARBALL...]
#   no TARBALL: packs this repository (building the addon with scripts/build-node.sh if missing)
# environment:
#   AIC_BROKER=ours (default) | ts   ts: the copy keeps the Pi broker (the baseline, same harness)
#   AIC_PI_CORE=DIR|TARBALL          the core the Pi copy's own code (client, and the Pi broker
#                                    with AIC_BROKER=ts) gets: an export of the TypeScript core
#                                    (packed as it is, with its dist/) or a tarball; default ours.
#                                    The 0.2.0 the adapter locks is not on the npm registry.
#   AIC_BROKER_RERUN=1 (default) | 0 rerun a file whose first run is not clean
#   AIC_BROKER_LOG_LEVEL              our broker's log level (default warn; stderr, which most of
#                                     these tests pipe but do not read)
#   AIC_SUITE_TIMEOUT (seconds per file, 600), AIC_SUITE_FILTER (substring of the test paths),
#   AIC_SUITE_LOGS (copy the TAP/spec logs and the shim's logs there), AIC_SUITE_KEEP=1,
#   AIC_SUITE_VERBOSE=1, AIC_SUITE_BASELINE (a logs folder saved earlier, e.g. with AIC_BROKER=ts:
#   list its passing tests that fail here), AIC_SUITE_NPM_CACHE (an npm cache kept between runs)
set -euo pipefail
# The whole script is one function, and `exit` follows its call on the same line: bash has read
# all of it before it starts, so editing the file during a run cannot change that run.
main() {
  if [ "$#" -lt 1 ] || [ ! -f "$1/package.json" ] || [ ! -f "$1/broker/broker.ts" ]; then
    echo "usage: $0 PI_EXPORT_DIR [TARBALL...]   (an export of the Pi adapter: broker/broker.ts)" >&2
    exit 2
  fi
  source_dir=$(realpath "$1")
  shift
  mode=${AIC_BROKER:-ours}
  case "$mode" in ours | ts) ;; *) echo "AIC_BROKER must be ours or ts, not $mode" >&2; exit 2 ;; esac
  [ -f "$source_dir/package-lock.json" ] || { echo "$source_dir has no package-lock.json" >&2; exit 2; }
  repo=$(cd "$(dirname "$0")/.." && pwd)
  . "$repo/scripts/suites/common.sh"
  suite_setup_work

  files=(intercom.integration.test.ts broker/remote-access.integration.test.ts protocol-v4/broker-scope.integration.test.ts)
  for f in "${files[@]}"; do
    [ -f "$source_dir/$f" ] || { echo "$source_dir has no $f" >&2; exit 2; }
  done

  # Our package: the given tarballs, or a fresh pack of this checkout (as run-adapter-suite.sh).
  suite_tarballs "$@"
  # What the Pi copy gets as @ctliz/agent-intercom-core (its client, and in AIC_BROKER=ts its
  # broker): our tarballs, or AIC_PI_CORE (an export of the TypeScript core, packed as it is with
  # its dist/, or a tarball). The version the adapter locks (0.2.0) is not on the npm registry.
  pi_core=("${tarballs[@]}")
  pi_core_what="ours (the tarballs above)"
  if [ -n "${AIC_PI_CORE:-}" ]; then
    if [ -d "$AIC_PI_CORE" ]; then
      [ -f "$AIC_PI_CORE/package.json" ] && [ -d "$AIC_PI_CORE/dist" ] || { echo "AIC_PI_CORE=$AIC_PI_CORE: no package.json and dist/" >&2; exit 2; }
      mkdir -p "$work/tscore"
      tar -C "$AIC_PI_CORE" --exclude=./node_modules -cf - . | tar -C "$work/tscore" -xf -
      name=$(cd "$work/tscore" && npm pack --ignore-scripts --silent --pack-destination "$work/pack" | tail -n 1)
      pi_core=("$work/pack/$name")
    elif [ -f "$AIC_PI_CORE" ]; then
      pi_core=("$(realpath "$AIC_PI_CORE")")
    else
      echo "AIC_PI_CORE=$AIC_PI_CORE: no such directory or tarball" >&2
      exit 2
    fi
    pi_core_what="AIC_PI_CORE $(basename "${pi_core[0]}") sha256 $(sha256sum "${pi_core[0]}" | cut -d' ' -f1)"
  fi

  app="$work/pi"
  mkdir -p "$app"
  # A copy of the export without any node_modules or build output it may carry.
  tar -C "$source_dir" --exclude=./node_modules --exclude=./dist -cf - . | tar -C "$app" -xf -
  pairs=()
  for t in "${pi_core[@]}"; do
    name=$(tar -xOzf "$t" package/package.json | node -e \
      'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).name))')
    pairs+=("$name=$t")
  done
  node "$repo/scripts/suites/swap-core-dependency.mjs" "$app/package.json" "${pairs[@]}" >/dev/null
  echo "node $(node --version), npm $(npm --version); npm install in the Pi copy: core $pi_core_what, every other dependency at its locked version"
  (cd "$app" && npm install >"$work/logs/npm-install.log" 2>&1) || { tail -n 60 "$work/logs/npm-install.log"; exit 1; }
  echo "the Pi copy's core: $(node -p 'const p=require(process.argv[1]);p.name+"@"+p.version+" ("+(p.license??"")+")"' "$app/node_modules/@ctliz/agent-intercom-core/package.json")"

  shim_log="$work/logs/shim.jsonl"
  if [ "$mode" = ours ]; then
    if [ -z "${AIC_PI_CORE:-}" ]; then
      package_dir="$app"
    else
      # The Pi copy has another core: our package goes to a folder of its own.
      mkdir -p "$work/ours"
      (cd "$work/ours" && npm init -y >/dev/null && npm install "${tarballs[@]}" >"$work/logs/npm-ours.log" 2>&1) \
        || { tail -n 40 "$work/logs/npm-ours.log"; exit 1; }
      package_dir="$work/ours"
    fi
    # Resolved from inside package_dir: from this checkout, whose package has the same name, node
    # would resolve the name to the checkout itself.
    broker_module=$(cd "$package_dir" && node -e 'console.log(require.resolve("@ctliz/agent-intercom-core/broker", { paths: [process.cwd()] }))')
    case "$broker_module" in "$package_dir"/node_modules/*) ;; *) echo "our broker resolved outside $package_dir: $broker_module" >&2; exit 1 ;; esac
    echo "our broker: $broker_module ($(node -p 'const p=require(process.argv[1]);p.name+"@"+p.version' "$package_dir/node_modules/@ctliz/agent-intercom-core/package.json"))"
    node -e '
      const [file, brokerModule, log, logLevel] = process.argv.slice(1);
      require("fs").writeFileSync(file, JSON.stringify({ brokerModule, log, ...(logLevel ? { logLevel } : {}) }, null, 2) + "\n");
    ' "$app/broker/aic-broker-shim.json" "$broker_module" "$shim_log" "${AIC_BROKER_LOG_LEVEL:-}"
    cp "$repo/scripts/suites/pi-broker-shim.mjs" "$app/broker/broker.ts"
    cp "$repo/scripts/suites/pi-broker-impl-tripwire.mjs" "$app/broker/broker-impl.ts"
    echo "broker/broker.ts in the copy: our shim (our broker in-process); broker/broker-impl.ts: a module that refuses to load"
  else
    echo "AIC_BROKER=ts: the copy keeps the Pi broker (the baseline)"
  fi

  cd "$app"
  runner=(node_modules/.bin/tsx --test)
  shim_rc=0
  for file in "${files[@]}"; do
    [ -n "${AIC_SUITE_FILTER:-}" ] && [[ "$file" != *"$AIC_SUITE_FILTER"* ]] && continue
    base=$(tr '/' '_' <<<"${file%.test.ts}")
    for attempt in first rerun; do
      if [ "$attempt" = first ]; then label=$file; run_base=$base; else label="$file (rerun)"; run_base="$base.rerun"; fi
      : >"$shim_log"
      suite_run_file "$label" "$run_base" "${runner[@]}" "$file"
      if [ "$mode" = ours ]; then
        cp "$shim_log" "$work/logs/$run_base.shim.jsonl"
        node "$repo/scripts/suites/shim-log-summary.mjs" "$shim_log" || shim_rc=1
      fi
      if [ "$attempt" = first ] && ! suite_last_clean && [ "${AIC_BROKER_RERUN:-1}" = 1 ]; then
        echo "  $file was not clean: running it once more"
        suite_mark_rerun
        continue
      fi
      break
    done
  done
  cd "$repo"
  suite_finish "$shim_rc" "the TypeScript broker was loaded, or a broker start failed the shim's checks (see the shim lines above)"
}
main "$@"; exit

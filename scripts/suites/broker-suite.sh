# The body of run-broker-suite.sh (Pi) and run-claude-broker-suite.sh (Claude), sourced, not run:
# `broker_suite pi|claude EXPORT_DIR [TARBALL...]` runs that adapter's own broker integration
# tests against OUR broker, assertions untouched. Expects $repo (this repository's root).
#
# The export is copied into a fresh folder (never modified); `npm install` there puts in
# @ctliz/agent-intercom-core (ours, or AIC_PI_CORE / AIC_CLAUDE_CORE) and every other dependency
# at the adapter's locked version (private HOME and npm cache). Both adapters start their broker
# as `node --import tsx broker/broker.ts` (the tests directly, the client's find-or-spawn through
# broker/spawn.ts); in the copy that file becomes scripts/suites/adapter-broker-shim.mjs, which
# starts our broker inside that node process through our Node package (startBroker). What held
# the TypeScript broker besides becomes scripts/suites/broker-impl-tripwire.mjs, a module that
# logs and refuses to load: Pi's broker/broker-impl.ts; Claude's dist/broker.mjs (the bundle its
# `prepare` script builds from broker/broker.ts during npm install).
#
# Each file runs under node:test with a timeout; a file that is not clean runs once more and both
# runs are reported (the second decides). Prints per-file and total counts and the failing tests;
# fails if a final run failed or the TypeScript broker was loaded.

broker_suite() {
  local adapter=$1 source_dir
  local core_var files runner impl_files
  case "$adapter" in
    pi)
      core_var=AIC_PI_CORE
      files=(intercom.integration.test.ts broker/remote-access.integration.test.ts
        protocol-v4/broker-scope.integration.test.ts)
      runner=(node_modules/.bin/tsx --test)
      impl_files=(broker/broker-impl.ts)
      ;;
    claude)
      core_var=AIC_CLAUDE_CORE
      files=(broker/session-collision.integration.test.ts
        broker/remote-access.integration.test.ts protocol-v4/broker-scope.integration.test.ts)
      # The runner of the adapter's own `npm test`.
      runner=(node --import tsx --test)
      impl_files=(dist/broker.mjs)
      ;;
    *) echo "broker_suite: pi or claude, not $adapter" >&2; exit 2 ;;
  esac
  shift
  if [ "$#" -lt 1 ] || [ ! -f "$1/package.json" ] || [ ! -f "$1/broker/broker.ts" ]; then
    echo "usage: $0 ${adapter^^}_EXPORT_DIR [TARBALL...]   (an export of the $adapter adapter: broker/broker.ts)" >&2
    exit 2
  fi
  source_dir=$(realpath "$1")
  shift
  local mode=${AIC_BROKER:-ours}
  case "$mode" in ours | ts) ;; *) echo "AIC_BROKER must be ours or ts, not $mode" >&2; exit 2 ;; esac
  [ -f "$source_dir/package-lock.json" ] || { echo "$source_dir has no package-lock.json" >&2; exit 2; }
  . "$repo/scripts/suites/common.sh"
  suite_setup_work

  local f
  for f in "${files[@]}"; do
    [ -f "$source_dir/$f" ] || { echo "$source_dir has no $f" >&2; exit 2; }
  done

  # Our package: the given tarballs, or a fresh pack of this checkout (as run-adapter-suite.sh).
  suite_tarballs "$@"
  # What the copy gets as @ctliz/agent-intercom-core (its client, and in AIC_BROKER=ts its
  # broker): our tarballs, or $core_var (an export of the TypeScript core, packed as it is with
  # its dist/, or a tarball). The version the adapters lock (0.2.0) is not on the npm registry.
  local core_override=${!core_var:-} core=("${tarballs[@]}") core_what="ours (the tarballs above)"
  local name
  if [ -n "$core_override" ]; then
    if [ -d "$core_override" ]; then
      [ -f "$core_override/package.json" ] && [ -d "$core_override/dist" ] \
        || { echo "$core_var=$core_override: no package.json and dist/" >&2; exit 2; }
      mkdir -p "$work/tscore"
      tar -C "$core_override" --exclude=./node_modules -cf - . | tar -C "$work/tscore" -xf -
      name=$(cd "$work/tscore" && npm pack --ignore-scripts --silent --pack-destination "$work/pack" | tail -n 1)
      core=("$work/pack/$name")
    elif [ -f "$core_override" ]; then
      core=("$(realpath "$core_override")")
    else
      echo "$core_var=$core_override: no such directory or tarball" >&2
      exit 2
    fi
    core_what="$core_var $(basename "${core[0]}") sha256 $(sha256sum "${core[0]}" | cut -d' ' -f1)"
  fi

  local app="$work/$adapter"
  mkdir -p "$app"
  # A copy of the export without any node_modules or build output it may carry.
  tar -C "$source_dir" --exclude=./node_modules --exclude=./dist -cf - . | tar -C "$app" -xf -
  local pairs=() t
  for t in "${core[@]}"; do
    name=$(tar -xOzf "$t" package/package.json | node -e \
      'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).name))')
    pairs+=("$name=$t")
  done
  node "$repo/scripts/suites/swap-core-dependency.mjs" "$app/package.json" "${pairs[@]}" >/dev/null
  echo "node $(node --version), npm $(npm --version); npm install in the $adapter copy: core $core_what, every other dependency at its locked version"
  (cd "$app" && npm install >"$work/logs/npm-install.log" 2>&1) || { tail -n 60 "$work/logs/npm-install.log"; exit 1; }
  echo "the $adapter copy's core: $(node -p 'const p=require(process.argv[1]);p.name+"@"+p.version+" ("+(p.license??"")+")"' "$app/node_modules/@ctliz/agent-intercom-core/package.json")"

  local shim_log="$work/logs/shim.jsonl" package_dir broker_module impl dir
  if [ "$mode" = ours ]; then
    if [ -z "$core_override" ]; then
      package_dir="$app"
    else
      # The copy has another core: our package goes to a folder of its own.
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
    # The shim and each tripwire read aic-broker-shim.json next to themselves.
    for dir in broker $(printf '%s\n' "${impl_files[@]}" | xargs -n1 dirname | sort -u); do
      mkdir -p "$app/$dir"
      node -e '
        const [file, brokerModule, log, logLevel] = process.argv.slice(1);
        require("fs").writeFileSync(file, JSON.stringify({ brokerModule, log, ...(logLevel ? { logLevel } : {}) }, null, 2) + "\n");
      ' "$app/$dir/aic-broker-shim.json" "$broker_module" "$shim_log" "${AIC_BROKER_LOG_LEVEL:-}"
    done
    cp "$repo/scripts/suites/adapter-broker-shim.mjs" "$app/broker/broker.ts"
    for impl in "${impl_files[@]}"; do
      cp "$repo/scripts/suites/broker-impl-tripwire.mjs" "$app/$impl"
    done
    echo "broker/broker.ts in the copy: our shim (our broker in-process); ${impl_files[*]}: a module that refuses to load"
  else
    echo "AIC_BROKER=ts: the copy keeps the $adapter broker (the baseline)"
  fi

  cd "$app"
  local shim_rc=0 file base attempt label run_base
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

# Shared by run-core-suite.sh, run-adapter-suite.sh, run-broker-suite.sh and
# run-claude-broker-suite.sh (sourced, not run).
# Expects: $repo (this repository's root). Sets up $work with a private HOME and npm cache, and
# fills the array `tarballs` (absolute paths) from the arguments or by packing this repository.

suite_setup_work() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/aic-suite.XXXXXX")
  if [ "${AIC_SUITE_KEEP:-0}" = 1 ]; then
    echo "keeping the work folder $work (AIC_SUITE_KEEP=1)"
  else
    trap 'rm -rf "$work"' EXIT
  fi
  mkdir -p "$work/home" "$work/cache" "$work/pack" "$work/logs"
  # AIC_SUITE_NPM_CACHE: an npm cache kept between runs (downloads once); else a fresh one.
  local cache="$work/cache"
  if [ -n "${AIC_SUITE_NPM_CACHE:-}" ]; then
    mkdir -p "$AIC_SUITE_NPM_CACHE"
    cache=$(realpath "$AIC_SUITE_NPM_CACHE")
  fi
  export HOME="$work/home" npm_config_cache="$cache" npm_config_update_notifier=false \
    npm_config_fund=false npm_config_audit=false
}

# suite_tarballs ARG...: absolute paths of the given tarballs, or of a fresh pack of this
# repository: the main package and each platform package whose addon is built
# (bindings-node/npm/<id>/, as scripts/pack-accept.sh packs them), building the host's addon first
# if none is built.
suite_tarballs() {
  tarballs=()
  local t
  if [ "$#" -gt 0 ]; then
    for t in "$@"; do
      [ -f "$t" ] || { echo "no such tarball: $t" >&2; exit 2; }
      tarballs+=("$(realpath "$t")")
    done
  else
    local built=()
    shopt -s nullglob
    built=("$repo"/bindings-node/npm/*/agent_intercom.*.node)
    shopt -u nullglob
    if [ "${#built[@]}" = 0 ] && [ -d "$repo/bindings-node/npm" ]; then
      echo "no addon is built under bindings-node/npm/: building it (${AIC_BUILD_PROFILE:-debug})"
      bash "$repo/scripts/build-node.sh" "${AIC_BUILD_PROFILE:-debug}"
      shopt -s nullglob
      built=("$repo"/bindings-node/npm/*/agent_intercom.*.node)
      shopt -u nullglob
    elif [ ! -d "$repo/bindings-node/npm" ] && [ ! -f "$repo/bindings-node/agent_intercom.node" ]; then
      # Before the platform packages, the addon was inside the main package.
      echo "bindings-node/agent_intercom.node is missing: building it (${AIC_BUILD_PROFILE:-debug})"
      bash "$repo/scripts/build-node.sh" "${AIC_BUILD_PROFILE:-debug}"
    fi
    local dirs=("$repo") f name
    for f in "${built[@]}"; do dirs+=("$(dirname "$f")"); done
    for f in "${dirs[@]}"; do
      name=$(cd "$f" && npm pack --silent --pack-destination "$work/pack" | tail -n 1)
      tarballs+=("$work/pack/$name")
    done
    local dirty=""
    # Changes to scripts/ and docs/ do not reach the package; anything else is worth saying.
    [ -z "$(git -C "$repo" status --porcelain -- . ':!scripts' ':!docs' 2>/dev/null)" ] \
      || dirty=" (with uncommitted changes)"
    echo "packed ${#tarballs[@]} tarballs from $repo at commit $(git -C "$repo" rev-parse --short HEAD)$dirty"
  fi
  for t in "${tarballs[@]}"; do
    local manifest
    manifest=$(tar -xOzf "$t" package/package.json | node -e \
      'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const p=JSON.parse(s);console.log(p.name+"@"+p.version)})')
    echo "tarball $(basename "$t"): $manifest sha256 $(sha256sum "$t" | cut -d' ' -f1)"
  done
}

# suite_run_file LABEL TAPBASE CMD...: runs one node:test command (CMD holds --test) with a timeout, writing TAP to
# $work/logs/TAPBASE.tap and the spec reporter's output to $work/logs/TAPBASE.log, then prints
# the summary line and the failing tests. Appends the JSON summary's path to $work/logs/index.
suite_run_file() {
  local label=$1 base=$2
  shift 2
  local rc=0 arg cmd=() placed=0
  # The reporter options go right after the first --test (node reads options before the files).
  for arg in "$@"; do
    cmd+=("$arg")
    if [ "$placed" = 0 ] && [ "$arg" = --test ]; then
      cmd+=(--test-reporter=tap --test-reporter-destination="$work/logs/$base.tap"
        --test-reporter=spec --test-reporter-destination="$work/logs/$base.log")
      placed=1
    fi
  done
  timeout --kill-after=10 "${AIC_SUITE_TIMEOUT:-600}" "${cmd[@]}" >"$work/logs/$base.out" 2>&1 || rc=$?
  node "$repo/scripts/suites/tap-summary.mjs" "$work/logs/$base.tap" "$label" --json "$work/logs/$base.json"
  suite_reap "$label"
  [ "$rc" = 124 ] && echo "  TIMEOUT $label after ${AIC_SUITE_TIMEOUT:-600}s"
  if [ "$rc" != 0 ] && [ "${AIC_SUITE_VERBOSE:-0}" = 1 ]; then tail -n 40 "$work/logs/$base.out"; fi
  echo "$work/logs/$base.json $rc" >>"$work/logs/index"
}

# suite_reap LABEL: ends, by process id, what the tests of LABEL left running from this run's
# folder (a broker a test started detached and did not stop), so that it cannot hold the next
# file's broker directory. Only processes whose command line names $work are considered.
suite_reap() {
  local pids
  # The folder reaches awk through its environment, so awk's own command line does not match.
  pids=$(ps -eo pid=,args= | AIC_W="$work/" awk 'index($0, ENVIRON["AIC_W"]) { print $1 }')
  [ -n "$pids" ] || return 0
  echo "  $1 left $(wc -w <<<"$pids") processes running from the work folder; ending them: $(tr '\n' ' ' <<<"$pids")"
  # shellcheck disable=SC2086
  kill $pids 2>/dev/null || true
  sleep 1
  # shellcheck disable=SC2086
  kill -9 $pids 2>/dev/null || true
}

# suite_last_clean: succeeds if the last suite_run_file run had a summary, exited 0 and had no
# failed or cancelled test.
suite_last_clean() {
  node -e '
    const fs = require("fs");
    const [file, rc] = fs.readFileSync(process.argv[1], "utf8").trim().split("\n").at(-1).split(" ");
    const r = JSON.parse(fs.readFileSync(file, "utf8"));
    process.exit(r.ok && rc === "0" && !(r.counts.fail > 0) && !(r.counts.cancelled > 0) ? 0 : 1);
  ' "$work/logs/index"
}

# suite_mark_rerun: marks the last run as superseded by a rerun of the same file: suite_total
# lists it but neither counts it nor fails on it (the rerun decides).
suite_mark_rerun() {
  sed -i '$ s/$/ rerun/' "$work/logs/index"
}

# suite_total: prints the summed counts of every suite_run_file call (but runs marked with
# suite_mark_rerun, listed apart); fails if any test failed, a run had no summary, or a run
# exited non-zero.
suite_total() {
  node -e '
    const fs = require("fs");
    const all = fs.readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => l.split(" "));
    const rows = all.filter((r) => r[2] !== "rerun");
    const sum = { tests: 0, pass: 0, fail: 0, skipped: 0, todo: 0, cancelled: 0 };
    let bad = 0, crashed = [];
    for (const [file, rc, marked] of all) {
      const r = JSON.parse(fs.readFileSync(file, "utf8"));
      if (marked === "rerun") {
        console.log(`superseded by a rerun: ${r.label}: pass ${r.counts.pass ?? 0} fail ${r.counts.fail ?? 0} cancelled ${r.counts.cancelled ?? 0}${r.ok ? "" : " (no summary)"}, exit ${rc}`);
        continue;
      }
      for (const k of Object.keys(sum)) sum[k] += r.counts[k] ?? 0;
      if (!r.ok) crashed.push(r.label);
      if (!r.ok || rc !== "0" || (r.counts.fail ?? 0) > 0 || (r.counts.cancelled ?? 0) > 0) bad++;
    }
    console.log(`TOTAL ${rows.length} runs: tests ${sum.tests} pass ${sum.pass} fail ${sum.fail} skipped ${sum.skipped} todo ${sum.todo} cancelled ${sum.cancelled}` +
      (crashed.length ? `; no summary from ${crashed.join(", ")}` : "") + `; ${bad} runs not clean`);
    process.exit(bad ? 1 : 0);
  ' "$work/logs/index"
}

# suite_compare: with AIC_SUITE_BASELINE (a logs folder an earlier run saved with AIC_SUITE_LOGS),
# lists the baseline's passing tests that fail or did not run here, and counts their causes.
suite_compare() {
  if [ -n "${AIC_SUITE_BASELINE:-}" ]; then
    echo "compared with the baseline in $AIC_SUITE_BASELINE:"
    node "$repo/scripts/suites/compare-runs.mjs" "$AIC_SUITE_BASELINE" "$work/logs"
  fi
}

# suite_save_logs: copies the logs to $AIC_SUITE_LOGS if set.
suite_save_logs() {
  if [ -n "${AIC_SUITE_LOGS:-}" ]; then
    mkdir -p "$AIC_SUITE_LOGS"
    cp -r "$work/logs/." "$AIC_SUITE_LOGS/"
    echo "logs copied to $AIC_SUITE_LOGS"
  fi
}

# suite_finish <import status> <what to say when names were missing>: keeps the logs, compares
# with the baseline, prints the totals; fails if a test failed or a name was missing.
suite_finish() {
  suite_save_logs
  suite_compare
  local total_rc=0
  suite_total || total_rc=$?
  [ "$1" = 0 ] || echo "$2"
  [ "$total_rc" = 0 ] && [ "$1" = 0 ]
}

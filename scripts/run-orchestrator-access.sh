#!/usr/bin/env bash
# The Orchestrator's access CLI (src/agent-intercom-access.mjs over src/intercom-access.ts, from an
# export of its repository) issues a remote enrollment against OUR broker, as a user runs it:
#   1. our broker starts from the CLI binary (`agent-intercom broker`) in a private agent directory;
#   2. a small raw client (scripts/suites/access-peer.mjs) registers a local root session and stays
#      connected;
#   3. `agent-intercom-access health`, then `agent-intercom-access enroll --parent ROOT ...` with
#      PI_CODING_AGENT_DIR set: it reads broker-admin.json, sends access_control issue_enrollment on
#      the local socket and writes the one-time token to a private file;
#   4. access-peer.mjs registers over remote-gateway.sock with {enrollmentToken} from that file and
#      checks the `registered` frame, then that the same token is refused the second time.
# Then the Orchestrator's own test/intercom-access.test.ts runs (it serves itself a fake broker
# in-process, so it checks the CLI's frames, not a broker). The export is copied to a fresh folder
# (never modified); the copy gets @ctliz/agent-intercom-core unpacked into its node_modules (ours,
# or AIC_ORCH_CORE), nothing else is installed but a TypeScript loader when this node needs one.
# Secrets are never printed (token and credential values show as their length).
#
# The Orchestrator's CLI requires `version: 3` in the broker's health_ok; the Pi broker and ours
# speak protocol v4. When the published CLI refuses the broker for exactly that, the check is
# changed to 4 in the copy (one line, shown) and the steps run again, reported as such;
# AIC_ORCH_HEALTH_V4=0 stops at the refusal instead.
#
# usage: scripts/run-orchestrator-access.sh ORCH_EXPORT_DIR [TARBALL...]
#   no TARBALL: packs this repository (building the addon with scripts/build-node.sh if missing)
# environment:
#   AIC_ACCESS_BROKER=ours (default) | ts   ts: the Pi adapter's TypeScript broker instead
#                                    (needs AIC_PI_EXPORT=DIR, an export of the Pi adapter)
#   AIC_CLI=PATH                     our CLI binary (default: the newer of target/release and
#                                    target/debug agent-intercom; built (debug) if neither exists)
#   AIC_ORCH_CORE=DIR|TARBALL        the core the Orchestrator copy (and the TS broker) gets: an
#                                    export of the TypeScript core or a tarball; default ours
#   AIC_ORCH_HEALTH_V4=1 (default) | 0, AIC_SUITE_KEEP=1, AIC_SUITE_TIMEOUT (seconds, 600),
#   AIC_SUITE_NPM_CACHE (an npm cache kept between runs)
set -euo pipefail
main() {
  if [ "$#" -lt 1 ] || [ ! -f "$1/src/intercom-access.ts" ] || [ ! -f "$1/src/agent-intercom-access.mjs" ]; then
    echo "usage: $0 ORCH_EXPORT_DIR [TARBALL...]   (an export of the Orchestrator: src/intercom-access.ts)" >&2
    exit 2
  fi
  source_dir=$(realpath "$1")
  shift
  mode=${AIC_ACCESS_BROKER:-ours}
  case "$mode" in ours | ts) ;; *) echo "AIC_ACCESS_BROKER must be ours or ts, not $mode" >&2; exit 2 ;; esac
  if [ "$mode" = ts ] && { [ -z "${AIC_PI_EXPORT:-}" ] || [ ! -f "$AIC_PI_EXPORT/broker/broker.ts" ]; }; then
    echo "AIC_ACCESS_BROKER=ts needs AIC_PI_EXPORT=DIR (an export of the Pi adapter: broker/broker.ts)" >&2
    exit 2
  fi
  repo=$(cd "$(dirname "$0")/.." && pwd)
  . "$repo/scripts/suites/common.sh"
  suite_setup_work
  pids=()
  trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; [ "${AIC_SUITE_KEEP:-0}" = 1 ] || rm -rf "$work"' EXIT
  peer="$repo/scripts/suites/access-peer.mjs"
  echo "node $(node --version)"

  # The core for the Orchestrator copy (and for the TS broker): ours, or AIC_ORCH_CORE.
  if [ -n "${AIC_ORCH_CORE:-}" ]; then
    if [ -d "$AIC_ORCH_CORE" ]; then
      [ -f "$AIC_ORCH_CORE/package.json" ] && [ -d "$AIC_ORCH_CORE/dist" ] || { echo "AIC_ORCH_CORE=$AIC_ORCH_CORE: no package.json and dist/" >&2; exit 2; }
      mkdir -p "$work/tscore"
      tar -C "$AIC_ORCH_CORE" --exclude=./node_modules -cf - . | tar -C "$work/tscore" -xf -
      core=("$work/pack/$(cd "$work/tscore" && npm pack --ignore-scripts --silent --pack-destination "$work/pack" | tail -n 1)")
    else
      core=("$(realpath "$AIC_ORCH_CORE")")
    fi
  else
    suite_tarballs "$@"
    core=("${tarballs[@]}")
  fi
  # unpack_core DIR: each core tarball into DIR/node_modules/<its name> (no npm: they have no
  # dependencies but ours on its platform package, which is one of them).
  unpack_core() {
    local t name
    for t in "${core[@]}"; do
      name=$(tar -xOzf "$t" package/package.json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).name))')
      mkdir -p "$1/node_modules/$name"
      tar -xzf "$t" -C "$1/node_modules/$name" --strip-components=1
    done
    echo "  $1: core $(node -p 'const p=require(process.argv[1]);p.name+"@"+p.version+" ("+p.license+")"' "$1/node_modules/@ctliz/agent-intercom-core/package.json")"
  }

  orch="$work/orch"
  mkdir -p "$orch"
  tar -C "$source_dir" --exclude=./node_modules -cf - . | tar -C "$orch" -xf -
  unpack_core "$orch"
  # The CLI's shebang is `node --experimental-strip-types`; a node without type stripping runs it
  # through tsx (the version range the Pi adapter uses), installed in a folder of its own.
  if node --experimental-strip-types -e 0 2>/dev/null; then
    ts_node=(node --experimental-strip-types)
  else
    mkdir -p "$work/tools"
    (cd "$work/tools" && npm init -y >/dev/null && npm install 'tsx@^4.20.0' >"$work/logs/npm-tsx.log" 2>&1) || { tail -n 30 "$work/logs/npm-tsx.log"; exit 1; }
    ts_node=(node --import "$(node -e 'console.log(require("url").pathToFileURL(require.resolve("tsx", { paths: [process.argv[1]] })).href)' "$work/tools")")
    echo "  this node has no type stripping: the CLI runs through tsx $(node -p 'require(process.argv[1]).version' "$work/tools/node_modules/tsx/package.json")"
  fi

  # Its own tests first, on the copy as published (before any broker runs: suite_run_file ends
  # whatever still runs from the work folder afterwards).
  echo "the Orchestrator's own test/intercom-access.test.ts (it serves itself a fake broker in-process):"
  (cd "$orch" && AGENT_INTERCOM_DISABLE_CLEANUP_TIMER=1 suite_run_file test/intercom-access.test.ts orch_intercom-access "${ts_node[@]}" --test test/intercom-access.test.ts) || true

  agent="$work/agent"
  mkdir -p "$agent"
  export PI_CODING_AGENT_DIR="$agent"
  intercom="$agent/intercom"
  if [ "$mode" = ours ]; then
    cli=${AIC_CLI:-}
    if [ -z "$cli" ]; then
      for c in "$repo/target/release/agent-intercom" "$repo/target/debug/agent-intercom"; do
        [ -x "$c" ] && { [ -z "$cli" ] || [ "$c" -nt "$cli" ]; } && cli=$c
      done
      if [ -z "$cli" ]; then
        echo "no agent-intercom binary under target/: cargo build -p agent-intercom-cli"
        (cd "$repo" && cargo build --locked -p agent-intercom-cli)
        cli="$repo/target/debug/agent-intercom"
      fi
    fi
    echo "broker: ours, $cli ($("$cli" version 2>/dev/null | head -n 1), built $(date -r "$cli" '+%F %T'))"
    broker_cmd=("$cli" broker --agent-dir "$agent" --idle-exit 0)
    broker_name="our broker"
  else
    pi="$work/pi"
    mkdir -p "$pi"
    tar -C "$(realpath "$AIC_PI_EXPORT")" --exclude=./node_modules -cf - . | tar -C "$pi" -xf -
    unpack_core "$pi"
    broker_cmd=("${ts_node[@]}" "$pi/broker/broker.ts")
    broker_name="the Pi adapter's TypeScript broker"
    echo "broker: the Pi adapter's TypeScript broker (AIC_ACCESS_BROKER=ts) from $AIC_PI_EXPORT"
  fi
  "${broker_cmd[@]}" >"$work/logs/broker.out" 2>"$work/logs/broker.err" &
  pids+=("$!")
  if ! node "$peer" health "$intercom/broker.sock" 15000 >"$work/logs/health.json"; then
    echo "FAIL: the broker did not answer on $intercom/broker.sock"; tail -n 20 "$work/logs/broker.err"; exit 1
  fi
  echo "  health_ok: $(cat "$work/logs/health.json")"
  start_line=$(grep -m1 "Intercom broker started" "$work/logs/broker.out" || true)
  echo "  start line on stdout: ${start_line:-(none)}"
  for f in broker-admin.json remote-gateway.sock; do
    if [ -e "$intercom/$f" ]; then echo "  $f: present, mode $(stat -c %a "$intercom/$f")"; else echo "  $f: MISSING"; fi
  done

  root_id="aic-access-root-$(date +%s)"
  node "$peer" root "$intercom/broker.sock" "$root_id" >"$work/logs/root.out" 2>&1 &
  pids+=("$!")
  for _ in $(seq 100); do grep -q "^registered" "$work/logs/root.out" && break; sleep 0.1; done
  grep -q "^registered" "$work/logs/root.out" || { echo "FAIL: the local root did not register"; cat "$work/logs/root.out"; exit 1; }
  echo "local root session: $root_id (connected)"

  access_cli=("${ts_node[@]}" "$orch/src/agent-intercom-access.mjs")
  enrollment="$work/transfer/enrollment.json"
  # run_access LABEL: health and enroll through the Orchestrator's CLI; sets access_rc and
  # access_err (the last stderr).
  run_access() {
    access_rc=0
    echo "$1:"
    local out
    out=$(cd "$work" && timeout "${AIC_SUITE_TIMEOUT:-600}" "${access_cli[@]}" health 2>"$work/logs/access.err") || access_rc=$?
    echo "  agent-intercom-access health -> exit $access_rc: ${out:-$(cat "$work/logs/access.err")}"
    access_rc=0
    out=$(cd "$work" && timeout "${AIC_SUITE_TIMEOUT:-600}" "${access_cli[@]}" enroll --parent "$root_id" --name access-check-remote \
      --host aic-access-host --ttl-minutes 10 --output "$enrollment" 2>"$work/logs/access.err") || access_rc=$?
    access_err=$(cat "$work/logs/access.err")
    echo "  agent-intercom-access enroll --parent $root_id --name access-check-remote --host aic-access-host --ttl-minutes 10 --output transfer/enrollment.json"
    echo "    -> exit $access_rc: ${out:-$access_err}"
  }
  patched=""
  run_access "the Orchestrator's access CLI as published"
  if [ "$access_rc" != 0 ] && [[ "$access_err" == *"does not provide the required remote-access policy contract"* ]]; then
    echo "  the CLI refuses the broker's health_ok (src/intercom-access.ts: $(grep -n 'health.version !== 3' "$orch/src/intercom-access.ts" | cut -d: -f1 | head -n 1 | sed 's/^/line /'): health.version !== 3; the broker says version $(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).version' "$work/logs/health.json"))"
    if [ "${AIC_ORCH_HEALTH_V4:-1}" = 1 ] && [ "$(grep -c 'health.version !== 3' "$orch/src/intercom-access.ts")" = 1 ]; then
      sed -i 's/health\.version !== 3/health.version !== 4/' "$orch/src/intercom-access.ts"
      patched=" (with the CLI's health check changed from version 3 to 4 in the copy)"
      echo "  changed in the copy: $(grep -n 'health.version !== 4' "$orch/src/intercom-access.ts" | sed 's/^\([0-9]*\): */line \1: /')"
      run_access "the Orchestrator's access CLI, protocol v4 health check"
    fi
  fi

  result=0
  if [ "$access_rc" = 0 ]; then
    mode_text=$(stat -c %a "$enrollment")
    shape=$(node -e 'const v=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));console.log(JSON.stringify(Object.keys(v))+" version "+v.version+", token "+(typeof v.enrollmentToken==="string"?v.enrollmentToken.length+" chars":"MISSING"))' "$enrollment")
    echo "  enrollment file: mode $mode_text, keys $shape"
    [ "$mode_text" = 600 ] || { echo "  FAIL: the enrollment file is not 0600"; result=1; }
    echo "the enrollment token over remote-gateway.sock:"
    node "$peer" remote "$intercom/remote-gateway.sock" "$enrollment" "$root_id" >"$work/logs/remote.out" 2>&1 || result=1
    sed 's/^/  /' "$work/logs/remote.out"
  else
    result=1
  fi
  audit="$intercom/broker-audit.jsonl"
  if [ -f "$audit" ]; then
    echo "broker-audit.jsonl: $(wc -l <"$audit") lines, events $(node -e 'console.log(require("fs").readFileSync(process.argv[1],"utf8").trim().split("\n").map((l)=>JSON.parse(l).event).join(", "))' "$audit")"
  fi

  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
  if [ "$result" = 0 ]; then
    echo "RESULT: the Orchestrator's access CLI issued an enrollment against $broker_name$patched, and the token registered a remote session over the gateway"
  else
    echo "RESULT: FAILED: no working enrollment from the Orchestrator's access CLI against $broker_name$patched (see above)"
  fi
  return "$result"
}
main "$@"; exit

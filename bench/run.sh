#!/usr/bin/env bash
# Every side-by-side benchmark in one run (benchmarks, not tests: nothing is asserted), each
# table with the machine's load average (/proc/loadavg) before and after it, so that figures
# measured on a shared machine can be read for what they are. Ratios within one run are what to
# compare across runs.
#
#   1. the package against the TypeScript core   node bench/contract.bench.mjs --ts-core DIR --cpu
#      (CPU time per call: wall time on a shared machine counts other processes' turns), and
#      the three smallest calls alone, with one of a state never seen (bench/crossing.mjs)
#   2. the broker (load example: 64 sessions; ring throughput, broker CPU per delivered
#      message, ask round trips alone and 32 pairs at once), beside an older build and a
#      TypeScript broker when given
#   3. the relay floor: a Node echo relay A -> R -> B -> R -> A (bench/relay-floor.mjs), the
#      same hops as an ask and its reply, at 2 and 64 sessions
#   4. the scratchpad at 100,000 live messages (scratchpad/examples/bench.rs)
#   5. agent-intercom serve against the a2a-sdk server (bench/a2a/run.sh)
#
# usage: bash bench/run.sh [--quick]   (a section that fails says so; the others still run)
# environment:
#   AIC_TS_CORE_DIR=DIR       dist/ of a build of the TypeScript core 0.2.0 (table 1; skipped
#                             without it). Table 1 also needs the addon: npm run build.
#   AIC_TS_BROKER_SOCKET=PATH the socket of a TypeScript broker already running with its limits
#                             raised (its broker.pid beside the socket); table 2 adds its row
#   AIC_BEFORE_BIN=PATH       an older agent-intercom binary: table 2 runs it too, same settings
#   AIC_BEFORE_PAD_BENCH=PATH an older build of the scratchpad bench: table 4 runs it too
#   AIC_SKIP="a2a contract"   sections to leave out (contract broker relay pad a2a)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1
skip=" ${AIC_SKIP:-} "
load() { cut -d' ' -f1-3 /proc/loadavg; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# section NAME: a heading and the load before; `done_section` prints the load after.
section() {
  echo
  echo "## $1"
  echo
  echo "load average before: $(load)"
  echo
}
done_section() {
  echo
  echo "load average after: $(load)"
}
wanted() { [[ "$skip" != *" $1 "* ]]; }

echo "# bench/run.sh: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -m), node $(node --version)"
messages=100000 asks=5000 pad=100000
[ $quick = 1 ] && messages=20000 asks=1000 pad=20000

cargo build --release --locked -q -p agent-intercom-cli
cargo build --release --locked -q -p agent-intercom-broker --example load
cargo build --release --locked -q -p agent-intercom-scratchpad --example bench

if wanted contract; then
  section "The package against the TypeScript core (bench/contract.bench.mjs)"
  if [ -n "${AIC_TS_CORE_DIR:-}" ]; then
    node bench/contract.bench.mjs --ts-core "$AIC_TS_CORE_DIR" --cpu $([ $quick = 1 ] && echo --quick) ||
      echo "failed (the addon is built by npm run build)"
  else
    echo "skipped: set AIC_TS_CORE_DIR to the dist/ of a build of the TypeScript core 0.2.0"
  fi
  done_section
  section "The three smallest calls alone, and one of a state never seen before (bench/crossing.mjs)"
  node bench/crossing.mjs --rounds $([ $quick = 1 ] && echo 1 || echo 3) ||
    echo "failed (the addon is built by npm run build)"
  done_section
fi

broker_rows() { # LABEL ARGS...: the load example's rows, each labelled
  local label=$1
  shift
  target/release/examples/load --sessions 64 --messages "$messages" --asks "$asks" \
    --ask-pairs 32 --big 0 --hold 0 "$@" 2>/dev/null |
    grep '^| ' | grep -v -e '^| measurement' -e '^| ---' | awk -v l="$label" '{ print "| " l " " $0 }'
}

if wanted broker; then
  section "The broker (broker/examples/load.rs, 64 sessions, $messages messages, $asks asks)"
  echo "| broker | measurement | result |"
  echo "| --- | --- | ---: |"
  broker_rows "agent-intercom (this build)" | tee "$work/broker.txt"
  if [ -n "${AIC_BEFORE_BIN:-}" ]; then
    broker_rows "agent-intercom ($AIC_BEFORE_BIN)" --broker "$AIC_BEFORE_BIN"
  fi
  if [ -n "${AIC_TS_BROKER_SOCKET:-}" ]; then
    broker_rows "TypeScript broker" --socket "$AIC_TS_BROKER_SOCKET"
  fi
  done_section
fi

if wanted relay; then
  section "The relay floor (bench/relay-floor.mjs: Node relay, A -> R -> B -> R -> A)"
  echo "| relay | measurement | result |"
  echo "| --- | --- | ---: |"
  node bench/relay-floor.mjs --pairs 32 --rounds "$asks" | awk '{ print "| Node echo relay " $0 }' |
    tee "$work/relay.txt"
  if [ -s "$work/broker.txt" ]; then
    # The issue's target: the broker's ask p99 within 2x of the relay floor's, same run.
    p99() { grep -e "$1" "$2" | awk -F'|' '{ split($(NF-1), v, "/"); print v[2] + 0 }'; }
    echo
    for shape in "one asker:round trip, [0-9]* asks:2 sessions" "64 sessions:64 sessions asking:64 sessions"; do
      IFS=: read -r name ours floor <<<"$shape"
      awk -v n="$name" -v a="$(p99 "$ours" "$work/broker.txt")" -v b="$(p99 "$floor" "$work/relay.txt")" \
        'BEGIN { if (b > 0) printf "ask p99 / relay floor p99, %s: %.2fx\n", n, a / b }'
    done
  fi
  done_section
fi

if wanted pad; then
  section "The scratchpad (scratchpad/examples/bench.rs, $pad live messages)"
  target/release/examples/bench --messages "$pad"
  if [ -n "${AIC_BEFORE_PAD_BENCH:-}" ]; then
    echo
    echo "The same with $AIC_BEFORE_PAD_BENCH:"
    echo
    "$AIC_BEFORE_PAD_BENCH" --messages "$pad"
  fi
  done_section
fi

if wanted a2a; then
  section "agent-intercom serve against the a2a-sdk server (bench/a2a/run.sh)"
  if [ $quick = 1 ]; then a2a=("1 16" 3 1); else a2a=(); fi
  bash bench/a2a/run.sh "${a2a[@]}" || echo "failed (it needs python3 -m venv and the pinned a2a-sdk)"
  done_section
fi

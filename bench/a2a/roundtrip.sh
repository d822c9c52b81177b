#!/usr/bin/env bash
# Benchmark (not a test): an A2A send to reply round trip, p50/p99, from one client
# (bench/a2a/roundtrip.mjs: blocking JSON-RPC 1.0 SendMessage until the task comes back
# completed with the reply as an artifact) against
#   1. agent-intercom serve --broker (release build) with a broker and live Node sessions that
#      reply to each ask at once (in the client's process, the Node package's broker client; one
#      session per connection, as the broker holds one open ask per asked session);
#   2. the Python a2a-sdk 1.3 server (bench/a2a/sdk_server.py --executor reply) doing the same
#      work in process, with its InMemoryTaskStore (not durable) and its DatabaseTaskStore on
#      SQLite (durable).
# Prints a Markdown table. Usage: bash bench/a2a/roundtrip.sh ["connections" ("1 4")] [secs (10)]
set -euo pipefail
cd "$(dirname "$0")/../.."
conns=${1:-1 4}
secs=${2:-10}
warmup=2
venv=target/a2a-venv
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
bash scripts/a2a-venv.sh
cargo build --release --locked -q -p agent-intercom-cli
[ -f bindings-node/agent_intercom.node ] || bash scripts/build-node.sh release
bin=target/release/agent-intercom

work=$(mktemp -d)
pids=()
stop_all() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  pids=()
}
trap 'stop_all; rm -rf "$work"' EXIT

# start NAME CMD...: runs CMD in the background; sets url to its JSON-RPC endpoint.
start() {
  local name=$1
  shift
  "$@" >"$work/$name.out" 2>"$work/$name.err" &
  pids+=($!)
  url=""
  for _ in $(seq 1 600); do
    url=$(grep -o 'listening on http://127\.0\.0\.1:[0-9]*' "$work/$name.out" \
      | head -n 1 | sed 's/^listening on //' || true)
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "$name did not start:"; cat "$work/$name.err"; exit 1; }
  url="$url/a2a"
}

measure() {
  local label=$1 n
  shift
  for n in $conns; do
    node bench/a2a/roundtrip.mjs --url "$url" --connections "$n" --seconds "$secs" \
      --warmup "$warmup" --label "$label" --json "$@" >>"$work/results.jsonl"
  done
  stop_all
}

mkdir -m 700 "$work/agent"
# The broker's per-connection rate limit (120 frames/s by default, each round trip costs the
# gateway 3 frames and the session 2) is lifted: this measures latency, not the limit.
"$bin" broker --agent-dir "$work/agent" --idle-exit 0 --set rate_capacity=1000000 \
  --set rate_refill_per_second=1000000 >"$work/broker.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do grep -q started "$work/broker.out" && break; sleep 0.1; done
start serve "$bin" serve --listen 127.0.0.1:0 --db "$work/serve.sqlite" --broker \
  --agent-dir "$work/agent" --targets "$(seq -s, -f 'bench-worker-%g' 0 63)" \
  --blocking-timeout 30 --request-timeout 60
measure "agent-intercom serve --broker + live Node sessions (durable)" --agent-dir "$work/agent"
start sdk-memory "$venv/bin/python" bench/a2a/sdk_server.py --store memory --executor reply
measure "a2a-sdk 1.3 in process, InMemoryTaskStore (not durable)"
start sdk-sqlite "$venv/bin/python" bench/a2a/sdk_server.py --store sqlite \
  --db "$work/sdk.sqlite" --executor reply
measure "a2a-sdk 1.3 in process, DatabaseTaskStore sqlite (durable)"

echo "$(nproc) cores, $(node --version), load average before: $load_before," \
  "after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "${secs} s measured after ${warmup} s warm-up per row; each connection repeats a blocking" \
  "SendMessage until the task is completed with the reply"
echo
node -e '
const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse)
const f = (x) => x.toFixed(2)
console.log("| server | connections | round trips/s | p50 ms | p99 ms | max ms | errors |")
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for (const r of rows) {
  console.log(`| ${r.label} | ${r.connections} | ${r.rps.toFixed(0)} | ${f(r.p50)} | ` +
    `${f(r.p99)} | ${f(r.max)} | ${r.errors} |`)
}' "$work/results.jsonl"

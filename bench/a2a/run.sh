#!/usr/bin/env bash
# Benchmark (not a test): JSON-RPC SendMessage (returnImmediately) + GetTask, requests/s and
# latency, from one load generator (bench/a2a/load.mjs) against
#   1. agent-intercom serve (release build; the scratchpad's SQLite store, WAL),
#   2. the Python a2a-sdk 1.3 server (bench/a2a/sdk_server.py: Starlette + uvicorn) with its
#      InMemoryTaskStore (tasks lost when the process stops),
#   3. the same with its DatabaseTaskStore on SQLite (sqlite+aiosqlite; tasks kept).
# All on loopback, one after the other, each on a fresh store, each at every connection count
# (one run after the other on the same server). Prints a Markdown table.
# Usage: bash bench/a2a/run.sh ["connection counts" ("1 16")] [seconds (10)] [warm-up (2)]
set -euo pipefail
cd "$(dirname "$0")/../.."
conns=${1:-1 16}
secs=${2:-10}
warmup=${3:-2}
venv=target/a2a-venv
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r tests/a2a/python/requirements.txt
fi
cargo build --release --locked -q -p agent-intercom-cli

work=$(mktemp -d)
pid=""
stop_server() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
  fi
}
trap 'stop_server; rm -rf "$work"' EXIT

# start NAME CMD...: runs CMD in the background; sets url to its JSON-RPC endpoint.
start() {
  local name=$1
  shift
  "$@" >"$work/$name.out" 2>"$work/$name.err" &
  pid=$!
  url=""
  for _ in $(seq 1 600); do
    url=$(grep -o 'listening on http://127\.0\.0\.1:[0-9]*' "$work/$name.out" \
      | head -n 1 | sed 's/^listening on //' || true)
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "$name did not start:"; cat "$work/$name.err"; exit 1; }
  url="$url/a2a"
}

measure() {
  local label=$1 n
  for n in $conns; do
    node bench/a2a/load.mjs --url "$url" --connections "$n" --seconds "$secs" \
      --warmup "$warmup" --label "$label" --json >>"$work/results.jsonl"
  done
  stop_server
}

start serve target/release/agent-intercom serve --listen 127.0.0.1:0 --db "$work/serve.sqlite"
measure "agent-intercom serve (SQLite WAL, durable)"
start sdk-memory "$venv/bin/python" bench/a2a/sdk_server.py --store memory
measure "a2a-sdk 1.3 InMemoryTaskStore (not durable)"
start sdk-sqlite "$venv/bin/python" bench/a2a/sdk_server.py --store sqlite --db "$work/sdk.sqlite"
measure "a2a-sdk 1.3 DatabaseTaskStore sqlite (durable)"

echo "$(nproc) cores, $(node --version), load average before: $load_before," \
  "after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "${secs} s measured after ${warmup} s warm-up per row;" \
  "each keep-alive connection repeats SendMessage then GetTask"
echo
node -e '
const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse)
const f = (x) => x.toFixed(2)
console.log("| server | connections | req/s (both) | SendMessage p50 / p99 ms " +
  "| GetTask p50 / p99 ms | p99 ms (both) | errors |")
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for (const r of rows) {
  console.log(`| ${r.label} | ${r.connections} | ${r.all.rps.toFixed(0)} | ` +
    `${f(r.send.p50)} / ${f(r.send.p99)} | ` +
    `${f(r.get.p50)} / ${f(r.get.p99)} | ${f(r.all.p99)} | ${r.errors.send + r.errors.get} |`)
}' "$work/results.jsonl"

#!/usr/bin/env bash
# The official MCP SDKs as real clients of `agent-intercom mcp`: the Python SDK `mcp`
# (tests/mcp/python, pytest on xdist workers) and @modelcontextprotocol/sdk (tests/mcp/js,
# node:test, beside sessions of the Node broker client), both suites at once; each test has its
# own agent directory and broker. The Python side shares target/a2a-venv (scripts/a2a-venv.sh
# installs tests/mcp/python/requirements.txt there too); the npm folder target/mcp-npm is made
# when missing or when its pins changed. Prints executed / skipped / failed per suite; exits
# non-zero when a test fails or when a suite ran nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== MCP interop (the official Python and TypeScript SDKs as clients of agent-intercom mcp)"
venv=target/a2a-venv
npm_dir=target/mcp-npm
py_dir=tests/mcp/python
js_dir=tests/mcp/js

bash scripts/a2a-venv.sh
source scripts/suites/deps.sh
npm_pinned "$npm_dir" "$js_dir" @modelcontextprotocol/sdk/package.json

cargo build --workspace --bins --locked
# The JS suite's Node sessions (connect()) need the addon.
addon_fresh

export AIC_BIN="$PWD/target/debug/agent-intercom" MCP_NPM_DIR="$PWD/$npm_dir"
export PYTHONDONTWRITEBYTECODE=1
py_report=target/mcp-python.xml
js_report=target/mcp-js.tap
py_log=target/mcp-python.log
js_log=target/mcp-js.log
rm -f "$py_report" "$js_report" "$py_log" "$js_log"

# Both suites at once (they share nothing but the binary); each prints when it is done.
py_failed=0
js_failed=0
timeout 600 "$venv/bin/python" -m pytest -q -p no:cacheprovider -n 3 --rootdir="$py_dir" \
  --junitxml="$py_report" "$py_dir" >"$py_log" 2>&1 &
py_pid=$!
timeout 600 node --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$js_report" "$js_dir"/*.test.js \
  >"$js_log" 2>&1 &
js_pid=$!
wait "$py_pid" || py_failed=1
wait "$js_pid" || js_failed=1
echo "-- Python (mcp)"
cat "$py_log"
echo "-- TypeScript (@modelcontextprotocol/sdk)"
cat "$js_log"

py_counts=$("$venv/bin/python" scripts/suites/junit-counts.py "$py_report" || true)
js_counts=$(awk '/^# tests /{t=$3} /^# skipped /{s=$3} /^# fail /{f=$3}
  END { if (t == "") print "no report"
        else print t - s " executed, " s " skipped, " f " failed" }' \
  "$js_report" 2>/dev/null || echo "no report")
echo "mcp python (mcp 2.3.0 client): $py_counts"
echo "mcp js (@modelcontextprotocol/sdk 1.32.2 client): $js_counts"
for counts in "$py_counts" "$js_counts"; do
  case "$counts" in
    "no report" | 0\ executed*) echo "MCP interop: a suite ran nothing"; exit 1 ;;
  esac
done
if [ "$py_failed" -ne 0 ] || [ "$js_failed" -ne 0 ]; then
  echo "MCP interop: FAILED"
  exit 1
fi

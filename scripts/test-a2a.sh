#!/usr/bin/env bash
# The official A2A SDKs as real clients of `agent-intercom serve`: the Python a2a-sdk
# (tests/a2a/python, pytest) and @a2a-js/sdk (tests/a2a/js, node:test), each starting the service
# on loopback with a temporary store. The virtualenv (target/a2a-venv) and the npm folder
# (target/a2a-npm) are made when missing or when their pins changed, and kept for the next run.
# Prints executed / skipped / failed per suite; exits non-zero when any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== A2A interop (the official Python and JS SDKs as clients of agent-intercom serve)"
venv=target/a2a-venv
npm_dir=target/a2a-npm
py_dir=tests/a2a/python
js_dir=tests/a2a/js

bash scripts/a2a-venv.sh
source scripts/suites/deps.sh
npm_pinned "$npm_dir" "$js_dir" @a2a-js/sdk/package.json

cargo build --workspace --bins --locked
# The Node scratchpad API (the end-to-end test's local agent) and the live sessions of the
# serve --broker tests (connect()) need the addon.
addon_fresh

export AIC_BIN="$PWD/target/debug/agent-intercom" A2A_NPM_DIR="$PWD/$npm_dir"
export A2A_PYTHON="$PWD/$venv/bin/python" PYTHONDONTWRITEBYTECODE=1
failed=0
py_report=target/a2a-python.xml
js_report=target/a2a-js.tap
rm -f "$py_report" "$js_report"

timeout 600 "$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir="$py_dir" \
  --junitxml="$py_report" "$py_dir" || failed=1
timeout 600 node --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$js_report" "$js_dir"/*.test.js || failed=1

py_counts=$("$venv/bin/python" scripts/suites/junit-counts.py "$py_report" || true)
js_counts=$(awk '/^# tests /{t=$3} /^# skipped /{s=$3} /^# fail /{f=$3}
  END { if (t == "") print "no report"
        else print t - s " executed, " s " skipped, " f " failed" }' \
  "$js_report" 2>/dev/null || echo "no report")
echo "a2a python (a2a-sdk 1.3.0 client): $py_counts"
echo "a2a js (@a2a-js/sdk 1.3.0 client): $js_counts"
if [ "$failed" -ne 0 ]; then
  echo "A2A interop: FAILED"
  exit 1
fi

#!/usr/bin/env bash
# The line's scenario suite (tests/line, pytest): the real `agent-intercom line` binary against
# the official Python a2a-sdk 1.3.0 as the peer, behind our RFC 9421 signing middleware, over TLS
# on loopback. The virtualenv is target/a2a-venv (scripts/a2a-venv.sh). The binary is
# $AIC_LINE_BIN, or the fault-injection build made here (target/line-fault/agent-intercom). The
# signature vectors are cross-checked by the same independent library first. Prints `line scenarios: E executed, S skipped, F failed`; exits non-zero
# when any test fails or none ran. Extra arguments go to pytest (e.g. -k r51).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== line scenarios (agent-intercom line against the a2a-sdk 1.3.0 signed peer)"
bash scripts/a2a-venv.sh
venv=target/a2a-venv
if [ -z "${AIC_LINE_BIN:-}" ]; then
  # The fault-injection build, kept apart: target/debug/agent-intercom stays the plain build.
  cargo build --workspace --bins --locked --features agent-intercom-cli/fault-injection
  mkdir -p target/line-fault
  cp target/debug/agent-intercom target/line-fault/.agent-intercom.tmp
  mv -f target/line-fault/.agent-intercom.tmp target/line-fault/agent-intercom
  cargo build --workspace --bins --locked
  export AIC_LINE_BIN="$PWD/target/line-fault/agent-intercom"
fi
# The line's signature vectors (vectors/http-signatures-v1.json) through the independent
# Python RFC 9421 library, both ways (through the C ABI of the debug library).
cargo build --workspace --locked
"$venv/bin/python" scripts/crosscheck-http-signatures.py target/debug/libagent_intercom.so
export PYTHONDONTWRITEBYTECODE=1
report=target/line-scenarios.xml
rm -f "$report"
failed=0
# Two workers (pytest-xdist): every scenario has its own folder, PKI, peer process and ports.
# AIC_LINE_WORKERS=0 runs them in one process.
timeout 900 "$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir=tests/line \
  -n "${AIC_LINE_WORKERS:-2}" --junitxml="$report" tests/line "$@" || failed=1
counts=$("$venv/bin/python" scripts/suites/junit-counts.py "$report") || failed=1
echo "line scenarios: $counts"
if [ "$failed" -ne 0 ]; then
  echo "line scenarios: FAILED"
  exit 1
fi

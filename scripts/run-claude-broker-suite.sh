#!/usr/bin/env bash
# Runs the Claude adapter's own broker integration tests (broker/session-collision.integration,
# broker/remote-access.integration, protocol-v4/broker-scope.integration) against OUR broker,
# assertions untouched: the Claude twin of run-broker-suite.sh, with the same body
# (scripts/suites/broker-suite.sh) and the same shim. The export is copied into a fresh folder
# (never modified) and `npm install` runs there (its `prepare` builds dist/); broker/broker.ts,
# which these tests and the client's find-or-spawn start as `node --import tsx broker/broker.ts`,
# becomes scripts/suites/adapter-broker-shim.mjs (our broker in that node process), and
# dist/broker.mjs, the bundle of the Claude broker, a module that refuses to load.
#
# usage: scripts/run-claude-broker-suite.sh CLAUDE_EXPORT_DIR [TARBALL...]
#   no TARBALL: packs this repository (building the addon with scripts/build-node.sh if missing)
# environment: as run-broker-suite.sh, with AIC_CLAUDE_CORE in place of AIC_PI_CORE:
#   AIC_BROKER=ours (default) | ts   ts: the copy keeps the Claude broker (the baseline)
#   AIC_CLAUDE_CORE=DIR|TARBALL      the core the Claude copy's own code gets (default ours)
#   AIC_BROKER_RERUN, AIC_BROKER_LOG_LEVEL, AIC_SUITE_TIMEOUT, AIC_SUITE_FILTER, AIC_SUITE_LOGS,
#   AIC_SUITE_KEEP, AIC_SUITE_VERBOSE, AIC_SUITE_BASELINE, AIC_SUITE_NPM_CACHE
set -euo pipefail
# One function, called on the line that exits (as run-broker-suite.sh): an edit during a run
# cannot change that run.
main() {
  repo=$(cd "$(dirname "$0")/.." && pwd)
  . "$repo/scripts/suites/broker-suite.sh"
  broker_suite claude "$@"
}
main "$@"; exit

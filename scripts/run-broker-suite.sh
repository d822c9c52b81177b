#!/usr/bin/env bash
# Runs the Pi adapter's own broker integration tests (intercom.integration.test.ts,
# broker/remote-access.integration.test.ts, protocol-v4/broker-scope.integration.test.ts) against
# OUR broker, assertions untouched. The export is copied into a fresh folder (never modified);
# `npm install` there puts in @ctliz/agent-intercom-core (ours, or AIC_PI_CORE) and every other
# dependency at the adapter's locked version (private HOME and npm cache).
# In the copy, broker/broker.ts, which both the tests and the client's find-or-spawn
# (broker/spawn.ts) start as `node --import tsx broker/broker.ts`, becomes
# scripts/suites/adapter-broker-shim.mjs: it starts our broker inside that node process through
# our Node package (startBroker), so the spawned pid is the broker's, signals and the idle exit end
# it as they end the Pi broker, and it prints the Pi broker's start line once it listens.
# broker/broker-impl.ts (the TypeScript broker) becomes a module that refuses to load, and every
# start is logged with its checks (pid file, health, socket path), summed up per file.
# The body is scripts/suites/broker-suite.sh, shared with run-claude-broker-suite.sh.
# Each file runs under node:test with a timeout; a file that is not clean runs once more and both
# runs are reported (the second decides). Prints per-file and total counts and the failing tests;
# exits non-zero if a final run failed or the TypeScript broker was loaded.
#
# usage: scripts/run-broker-suite.sh PI_EXPORT_DIR [TARBALL...]
#   no TARBALL: packs this repository (building the addon with scripts/build-node.sh if missing)
# environment:
#   AIC_BROKER=ours (default) | ts   ts: the copy keeps the Pi broker (the baseline, same harness)
#   AIC_PI_CORE=DIR|TARBALL          the core the Pi copy's own code (client, and the Pi broker
#                                    with AIC_BROKER=ts) gets: an export of the TypeScript core
#                                    (packed as it is, with its dist/) or a tarball; default ours.
#                                    The 0.2.0 the adapter locks is not on the npm registry.
#   AIC_BROKER_RERUN=1 (default) | 0 rerun a file whose first run is not clean
#   AIC_BROKER_LOG_LEVEL              our broker's log level (default warn; stderr, which most of
#                                     these tests pipe but do not read)
#   AIC_SUITE_TIMEOUT (seconds per file, 600), AIC_SUITE_FILTER (substring of the test paths),
#   AIC_SUITE_LOGS (copy the TAP/spec logs and the shim's logs there), AIC_SUITE_KEEP=1,
#   AIC_SUITE_VERBOSE=1, AIC_SUITE_BASELINE (a logs folder saved earlier, e.g. with AIC_BROKER=ts:
#   list its passing tests that fail here), AIC_SUITE_NPM_CACHE (an npm cache kept between runs)
set -euo pipefail
# The whole script is one function, and `exit` follows its call on the same line: bash has read
# all of it before it starts, and the file it sources is read whole when main begins, so editing
# either during a run cannot change that run.
main() {
  repo=$(cd "$(dirname "$0")/.." && pwd)
  . "$repo/scripts/suites/broker-suite.sh"
  broker_suite pi "$@"
}
main "$@"; exit

#!/usr/bin/env bash
# Prepares the Claude adapter's TypeScript MCP server for bench/mcp/bench.mjs --ts-dir CLAUDE_DIR.
# Nothing of it becomes part of this repository.
#
#   bash bench/mcp/prepare-ts.sh CLAUDE_DIR CORE_DIR
#
# CLAUDE_DIR: an export of ctliz/agent-intercom-claude (measured: 0.13.0-connect.2, f20e72a).
# CORE_DIR:   an export of ctliz/agent-intercom-core (0.2.0, b5fdd06), the adapter's runtime peer
#             dependency, which it pins at 0.2.0; that version is built and packed from its source
#             here because the registry does not serve it.
# Both packages ask for Node >= 22.19; npm warns and the server runs on Node 20 all the same.
set -euo pipefail
claude=$(cd "$1" && pwd)
core=$(cd "$2" && pwd)
(cd "$core" && npm install --no-audit --no-fund && npm run build && npm pack)
tarball=$(ls "$core"/ctliz-agent-intercom-core-*.tgz | head -n 1)
# The local tarball stands in for the registry's 0.2.0 (the other devDependencies from the
# registry as the lockfile pins them), then the adapter's own build (esbuild -> dist/).
(cd "$claude" && npm install --no-audit --no-fund --save-dev "$tarball" && npm run build)
ls -l "$claude/dist/claude-server.mjs"

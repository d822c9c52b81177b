#!/usr/bin/env bash
# Makes target/a2a-venv, the Python virtualenv of the A2A interop suite (tests/a2a/python), of
# the line's scenario suite (tests/line) and of the MCP suite (tests/mcp/python), from the
# requirements.txt and constraints.txt of tests/a2a/python and tests/mcp/python (one venv: CI
# installs pydantic, httpx and pytest once). It is made again only when it is missing or when
# those pins changed, and kept for the next run. Run it from anywhere (bash
# scripts/a2a-venv.sh); silent when current.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv=target/a2a-venv
py_dir=tests/a2a/python
mcp_dir=tests/mcp/python
py_pins=$(cat "$py_dir/requirements.txt" "$py_dir/constraints.txt" \
  "$mcp_dir/requirements.txt" "$mcp_dir/constraints.txt" | sha256sum | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.pins" 2>/dev/null)" != "$py_pins" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$py_dir/requirements.txt" \
    -r "$mcp_dir/requirements.txt"
  echo "$py_pins" >"$venv/.pins"
fi

#!/usr/bin/env bash
# The Python package (bindings-python): builds the wheel with maturin (not `maturin develop`),
# installs it into a fresh venv and runs tests/python with pytest (the vectors, the contract, bad
# input, the broker client between Python sessions and with a Node session, the scratchpad from
# two processes, asyncio), then mypy --strict on the typed usage file. Tools come from PyPI into
# a venv under target/ that is kept between runs; the wheel reuses the workspace's target dir
# and profile. Usage: scripts/test-python.sh [debug|release]
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-${AIC_PROFILE:-debug}}
tools=target/python-tools
pins=$(sha256sum tests/python/requirements.txt | cut -d' ' -f1)
if [ ! -x "$tools/bin/maturin" ] || [ "$(cat "$tools/.pins" 2>/dev/null)" != "$pins" ]; then
  rm -rf "$tools"
  python3 -m venv "$tools"
  "$tools/bin/pip" install -q --disable-pip-version-check -r tests/python/requirements.txt
  echo "$pins" >"$tools/.pins"
fi
flag=(); [ "$profile" = release ] && flag=(--release)
rm -rf target/wheels-python
(cd bindings-python && "../$tools/bin/maturin" build --locked "${flag[@]}" -o ../target/wheels-python)
# The Node peer of the cross-language test loads the checkout's addon (in the full test command
# the Node step built it).
source scripts/suites/deps.sh
addon_fresh "$profile"
venv=target/python-venv
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check --no-index target/wheels-python/agent_intercom-*.whl
# pytest and mypy run from the tools venv against the fresh venv's site-packages only.
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$venv/bin/python" -c 'import agent_intercom, sys; assert "site-packages" in agent_intercom.__file__, agent_intercom.__file__'
(cd tests/python && PYTHONPATH="$site" "../../$tools/bin/python" -m pytest -q -s -p no:cacheprovider .)
(cd tests/python && "../../$tools/bin/mypy" --strict --no-incremental --python-executable "../../$venv/bin/python" typed_usage.py)

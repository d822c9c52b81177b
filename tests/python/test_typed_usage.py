"""Runs the typed usage file (mypy --strict checks it in scripts/test-python.sh)."""

import typed_usage


def test_typed_usage_runs(agent_dir: str) -> None:
    typed_usage.main(agent_dir)

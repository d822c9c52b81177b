"""Shared fixtures of the Python suite (scripts/test-python.sh runs it against the installed
wheel): the vectors directory, a counting vector runner that prints executed and skipped counts
like the Rust, C and Node runners, and a broker in a temporary agent directory."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

import agent_intercom as ai

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "vectors"


def read_vectors(name: str) -> Dict[str, Any]:
    with open(VECTORS / name, encoding="utf-8") as f:
        doc: Dict[str, Any] = json.load(f)
    return doc


def run_cases(
    file: str,
    cases: List[Dict[str, Any]],
    run: Callable[[Dict[str, Any]], Optional[str]],
    key: str = "id",
) -> Dict[str, int]:
    """Runs every case (`run` returns None when executed, else why it skips), AIC_VECTOR
    filtering by id substring; prints `file: N cases, E executed, S skipped[, F filtered]` and
    fails on the first failing case, naming it."""
    wanted = os.environ.get("AIC_VECTOR") or None
    counts = {"total": len(cases), "executed": 0, "skipped": 0, "filtered": 0}
    failures: List[str] = []
    for c in cases:
        name = str(c.get(key))
        if wanted is not None and wanted not in name:
            counts["filtered"] += 1
            continue
        try:
            why = run(c)
        except Exception as e:  # noqa: BLE001 - reported with the case's name below
            counts["executed"] += 1
            failures.append(f"{name}: {type(e).__name__}: {e}")
            continue
        if why is None:
            counts["executed"] += 1
        else:
            counts["skipped"] += 1
    line = f"{file}: {counts['total']} cases, {counts['executed']} executed, {counts['skipped']} skipped"
    if counts["filtered"]:
        line += f", {counts['filtered']} filtered (AIC_VECTOR={wanted})"
    print(line)
    assert counts["executed"] + counts["skipped"] + counts["filtered"] == counts["total"]
    assert not failures, "\n".join(failures[:20])
    return counts


def filtered() -> bool:
    return bool(os.environ.get("AIC_VECTOR"))


@pytest.fixture
def agent_dir() -> Iterator[str]:
    # Short: a Unix socket path is limited to about 100 bytes.
    with tempfile.TemporaryDirectory(prefix="aic-py-", dir="/tmp") as d:
        yield d


@pytest.fixture
def broker(agent_dir: str) -> Iterator[ai.Broker]:
    b = ai.start_broker(agent_dir, idle_exit_ms=0, log_level="off")
    try:
        yield b
    finally:
        b.close()

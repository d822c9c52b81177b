"""The scratchpad from Python: every operation by method and by name with the store's argument
checks, and one store written by two Python processes at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import agent_intercom as ai

WRITER = """
import sys, agent_intercom as ai
path, me, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with ai.open_scratchpad(path) as pad:
    pad.register({"agent": me, "team": "T"})
    for i in range(n):
        pad.post({"from": me, "to": "reader", "content": f"{me} {i}", "privacy": "public"})
print("ok")
"""


def test_operations_and_checks(tmp_path: Path) -> None:
    path = str(tmp_path / "pad.sqlite")
    with ai.open_scratchpad(path, per_project_cap=100) as pad:
        assert pad.path == path
        pad.register({"agent": "a", "team": "T"})
        pad.register(agent="b", team="T")
        posted = pad.post({"from": "a", "to": "b", "content": "hello", "privacy": "public"})
        assert isinstance(posted["id"], str)
        unread = pad.unread({"agent": "b"})
        assert [m["content"] for m in unread] == ["hello"]
        assert pad.unread({"agent": "b"}) == []
        task = pad.task_create({"creator": "a", "assignee": "b", "title": "t"})
        assert pad.request("task.get", {"id": task["id"], "agent": "b"})["id"] == task["id"]
        for op in ai.PAD_OPERATIONS:
            assert callable(getattr(pad, op.replace(".", "_")))
        with pytest.raises(AttributeError):
            getattr(pad, "no_such_operation")
        with pytest.raises(ai.IntercomError) as e:
            pad.post({"from": "a", "to": "b", "content": "x", "privacy": "public", "colour": "red"})
        assert e.value.code == "UNKNOWN_KEY"
        with pytest.raises(ai.IntercomError) as e:
            pad.post("not a dict")
        assert e.value.code == "INVALID_ARGUMENT"
        with pytest.raises(ai.IntercomError) as e:
            pad.request("no.such", {})
        assert e.value.code == "INVALID_ARGUMENT"
        with pytest.raises(ai.IntercomError) as e:
            pad.post({"from": "a", "to": "b", "content": "\ud800", "privacy": "public"})
        assert e.value.code == "UNPAIRED_SURROGATE"
        assert ai.check_rule("check.ttl", {"ttl_hours": 2}) == {"hours": 2}
    assert pad.closed
    with pytest.raises(ai.IntercomError) as e:
        pad.unread({"agent": "b"})
    assert e.value.code == "INVALID_ARGUMENT"
    pad.close()


def test_two_processes_at_once(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    n = 50
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, path, who, str(n)], stdout=subprocess.PIPE, text=True)
             for who in ("w1", "w2")]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    with ai.open_scratchpad(path) as pad:
        pad.register({"agent": "reader", "team": "T"})
        got = pad.unread({"agent": "reader"})
    texts = sorted(m["content"] for m in got)
    assert texts == sorted([f"w1 {i}" for i in range(n)] + [f"w2 {i}" for i in range(n)])

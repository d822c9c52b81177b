"""Typed usage of the package, checked by `mypy --strict` (scripts/test-python.sh) against the
installed wheel's stubs; also run by test_typed_usage.py, so it is real code."""

from __future__ import annotations

import asyncio
from typing import List, Optional

import agent_intercom as ai
from agent_intercom import aio


def contract() -> str:
    scope: Optional[str] = ai.parse_scope(ai.SCOPE_A, "scopeId")
    r: ai.Resolution = ai.resolve_target([{"id": "abc-1", "name": "worker"}], scope, "worker")
    ids: List[str] = r["target_ids"]
    assert ids == [] or ids == ["abc-1"]
    assert ai.frame_disposition(1, 2) == "discard"
    frame: bytes = ai.canonical_frame("boss-test-v1", {"b": 2, "a": 1})
    assert frame
    try:
        ai.parse_scope("not a scope!")
    except ai.IntercomError as e:
        code: str = e.code
        assert code == "INVALID_SCOPE"
    return ai.canonical_hash("boss-test-v1", {"b": 2, "a": 1})


def session(agent_dir: str) -> str:
    with ai.connect(agent_dir, scope=None) as c, ai.connect(agent_dir) as other:
        c.register("typed")
        other.register("other")
        try:
            c.send("nobody", "hello", queue=False)
        except ai.IntercomError as e:
            assert e.code == "SESSION_NOT_FOUND" and e.accepted is False
        for m in other.messages(timeout=0.1):
            m.ack()
        got: Optional[ai.Message] = other.recv(timeout=0.0)
        assert got is None
        return c.session_id or ""


async def session_async(agent_dir: str) -> int:
    async with await aio.connect(agent_dir) as c:
        await c.register("typed-async")
        return len(await c.list())



def pad(path: str) -> int:
    with ai.open_scratchpad(path, per_project_cap=10) as p:
        p.register({"agent": "a"})
        p.post({"from": "a", "to": "a", "content": "x", "privacy": "public"})
        got: List[object] = p.unread({"agent": "a"})
        return len(got)


def main(agent_dir: str) -> None:
    b = ai.ensure_broker(agent_dir, idle_exit_ms=0, log_level="off")
    assert contract().startswith("4ff6c078")
    session(agent_dir)
    assert asyncio.run(session_async(agent_dir)) == 1
    assert pad(agent_dir + "/pad.sqlite") == 1
    broker = b["broker"]
    if broker is not None:
        broker.close()

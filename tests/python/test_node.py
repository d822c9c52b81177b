"""A Python session and a Node session (the Node package's client, on the checkout's addon)
exchange send, ask and reply through one broker, which Python started; a Node session of another
scope cannot be reached from Python."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import List

import pytest

import agent_intercom as ai

PEER = str(Path(__file__).with_name("node_peer.js"))


def start_peer(agent_dir: str, scope: str = "") -> "subprocess.Popen[str]":
    args = ["node", PEER, agent_dir] + ([scope] if scope else [])
    p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    line = p.stdout.readline()
    assert line.startswith("ready "), line
    return p


def test_python_and_node_exchange(broker: ai.Broker, agent_dir: str) -> None:
    with ai.connect(agent_dir) as py:
        py.register("py")
        peer = start_peer(agent_dir)
        try:
            assert {s["name"] for s in py.list()} == {"py", "node"}
            assert py.send("node", "hello")["queued"] is False
            reply = py.ask("node", "ping", timeout=30)
            assert reply.text == "pong: ping" and reply.acked
            py.send("node", "go")
            got: List[str] = []
            for m in py.messages(timeout=30):
                got.append(m.text or "")
                if m.expects_reply:
                    py.reply(m.sender, m.id, "answer")
                    break
            assert got == ["from node", "question"]
            out, _ = peer.communicate(timeout=30)
        finally:
            if peer.poll() is None:
                peer.kill()
        assert peer.returncode == 0, out
        assert out.splitlines() == ["node got: hello", "node got: ping", "node got: go", "node got reply: answer"]


def test_node_in_another_scope_is_unreachable(broker: ai.Broker, agent_dir: str) -> None:
    with ai.connect(agent_dir, scope=ai.SCOPE_A) as py:
        py.register("py")
        peer = start_peer(agent_dir, ai.SCOPE_B)
        try:
            assert {s["name"] for s in py.list()} == {"py"}
            with pytest.raises(ai.IntercomError) as e:
                py.send("node", "hello")
            assert e.value.code == "SESSION_NOT_FOUND"
        finally:
            peer.kill()
            peer.wait()

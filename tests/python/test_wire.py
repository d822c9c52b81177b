"""vectors/wire-v4.json against the broker started from Python (`start_broker` with the case's
settings), over raw sockets: the same scripts the Rust (broker/tests/wire_corpus.rs) and Node
(tests/node/wire-corpus.test.js) runners execute."""

from __future__ import annotations

import json
import os
import socket
import struct
import tempfile
import time
from typing import Any, Dict, List, Optional

import agent_intercom as ai
from conftest import read_vectors, run_cases


class Raw:
    def __init__(self, path: str) -> None:
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.buf = b""
        self.frames: List[Dict[str, Any]] = []
        self.closed = False

    def send(self, frame: Any) -> None:
        body = json.dumps(frame).encode()
        self.s.sendall(struct.pack(">I", len(body)) + body)

    def _split(self) -> None:
        while len(self.buf) >= 4 and len(self.buf) >= 4 + struct.unpack(">I", self.buf[:4])[0]:
            n = struct.unpack(">I", self.buf[:4])[0]
            self.frames.append(json.loads(self.buf[4:4 + n]))
            self.buf = self.buf[4 + n:]

    def next(self, timeout: float = 5.0) -> Optional[Dict[str, Any]]:
        end = time.monotonic() + timeout
        while not self.frames:
            left = end - time.monotonic()
            if self.closed or left <= 0:
                return None
            self.s.settimeout(left)
            try:
                chunk = self.s.recv(65536)
            except socket.timeout:
                return None
            except OSError:
                chunk = b""
            if not chunk:
                self.closed = True
            self.buf += chunk
            self._split()
        return self.frames.pop(0)

    def closed_soon(self) -> bool:
        end = time.monotonic() + 5
        while not self.closed and time.monotonic() < end:
            self.next(0.3)
        return self.closed


def substitute(value: Any, names: Dict[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("${") and value.endswith("}"):
        assert value[2:-1] in names, f"{value} was never captured"
        return names[value[2:-1]]
    if isinstance(value, list):
        return [substitute(v, names) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, names) for k, v in value.items()}
    return value


def matches(expected: Any, actual: Any, names: Dict[str, Any], at: str) -> None:
    if expected == "$any":
        return
    if isinstance(expected, str) and expected.startswith("$capture:"):
        names[expected[len("$capture:"):]] = actual
        return
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{at}: expected {expected}, got {actual}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            matches(e, a, names, f"{at}[{i}]")
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{at}: expected an object, got {actual}"
        for k, v in expected.items():
            assert k in actual, f"{at}.{k}: missing in {actual}"
            matches(v, actual[k], names, f"{at}.{k}")
        return
    assert type(actual) is type(expected) and actual == expected, f"{at}: {actual!r} != {expected!r}"


def run(c: Dict[str, Any]) -> Optional[str]:
    with tempfile.TemporaryDirectory(prefix="aic-py-wire-", dir="/tmp") as d:
        broker = ai.start_broker(d, idle_exit_ms=0, log_level=os.environ.get("WIRE_LOG", "off"),
                                 settings=c.get("config") or None)
        clients: Dict[str, Raw] = {}
        names: Dict[str, Any] = {}
        try:
            for n, step in enumerate(c["steps"]):
                if step["client"] not in clients:
                    clients[step["client"]] = Raw(broker.socket_path)
                client = clients[step["client"]]
                at = f"{c['id']} step {n} ({step['client']})"
                if "send" in step:
                    client.send(substitute(step["send"], names))
                elif "expect" in step:
                    expected = substitute(step["expect"], names)
                    actual = client.next()
                    assert actual is not None, f"{at}: no frame, expected {expected}"
                    matches(expected, actual, names, at)
                    if step.get("notContains"):
                        assert step["notContains"] not in json.dumps(actual), f"{at}: contains {step['notContains']}"
                elif step.get("expectClose"):
                    while client.next(0.3) is not None:
                        pass  # what is still in flight
                    assert client.closed_soon(), f"{at}: the connection stayed open"
                elif step.get("disconnect"):
                    client.s.close()
                    del clients[step["client"]]
                else:
                    raise AssertionError(f"{at}: unknown step")
        finally:
            for client in clients.values():
                client.s.close()
            broker.close()
    return None


def test_wire_corpus() -> None:
    doc = read_vectors("wire-v4.json")
    assert len(doc["cases"]) == doc["count"]
    counts = run_cases("wire-v4.json", doc["cases"], run)
    assert counts["skipped"] == 0

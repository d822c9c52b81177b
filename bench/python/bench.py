"""Benchmarks of the Python package beside pure-Python implementations of the same: the
canonical hash (sorted keys, the frame, SHA-256) and a send round trip through a broker (register,
send, the receiver's acknowledgement, `delivered`) over the raw wire. Prints one line per
measurement. Usage: python bench/python/bench.py   (with agent_intercom installed)"""

from __future__ import annotations

import hashlib
import json
import socket
import struct
import tempfile
import threading
import time
import uuid
from typing import Any, Callable, Dict

import agent_intercom as ai

PAYLOAD: Dict[str, Any] = {
    "kind": "handoff", "from": "agent-alpha", "to": "agent-beta", "priority": 3,
    "files": [f"src/module_{i}.rs" for i in range(20)],
    "metadata": {"trace": "t-0001", "hops": 2, "tags": ["review", "parser", "urgent"]},
    "notes": "Please review the parser change. " * 8,
}
# The broker limits each connection's rate (rate_capacity, rate_refill_per_second): lifted here,
# where one connection sends as fast as it can.
UNLIMITED = {"rate_capacity": 1_000_000_000, "rate_refill_per_second": 1_000_000_000}


def py_canonical_hash(domain: str, value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    body = text.encode()
    frame = f"agent-intercom-canonical-frame-v1:{len(domain)}:{domain}:{len(body)}:".encode() + body
    return hashlib.sha256(frame).hexdigest()


def per_op(fn: Callable[[], Any], n: int) -> float:
    fn()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


class Wire:
    """A pure-Python client of the broker's wire: 4-byte big-endian length + UTF-8 JSON."""

    def __init__(self, path: str) -> None:
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.buf = b""

    def send(self, frame: Dict[str, Any]) -> None:
        body = json.dumps(frame).encode()
        self.s.sendall(struct.pack(">I", len(body)) + body)

    def recv(self) -> Dict[str, Any]:
        while True:
            if len(self.buf) >= 4:
                n = struct.unpack(">I", self.buf[:4])[0]
                if len(self.buf) >= 4 + n:
                    body, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
                    frame: Dict[str, Any] = json.loads(body)
                    return frame
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk

    def register(self, name: str) -> str:
        now = int(time.time() * 1000)
        self.send({"type": "register", "protocol": ai.PROTOCOL_NAME, "version": ai.PROTOCOL_VERSION,
                   "session": {"cwd": "/", "model": "bench", "pid": 1, "startedAt": now, "lastActivity": now, "name": name}})
        frame = self.recv()
        assert frame["type"] == "registered", frame
        return str(frame["sessionId"])


def bench_wire(path: str, n: int) -> float:
    a, b = Wire(path), Wire(path)
    a.register("wa")
    b.register("wb")

    def receiver() -> None:
        while True:
            try:
                f = b.recv()
            except (ConnectionError, OSError):
                return
            if f["type"] == "message":
                b.send({"type": "message_received", "deliveryId": f["deliveryId"]})

    threading.Thread(target=receiver, daemon=True).start()

    def one() -> None:
        mid = str(uuid.uuid4())
        a.send({"type": "send", "to": "wb", "message": {"id": mid, "content": {"text": "hi"}, "timestamp": 0}})
        while True:
            f = a.recv()
            if f["type"] in ("delivered", "delivery_failed") and f.get("messageId") == mid:
                assert f["type"] == "delivered", f
                return

    return per_op(one, n)


def bench_package(path_dir: str, n: int) -> float:
    a, b = ai.connect(path_dir), ai.connect(path_dir)
    a.register("pa")
    b.register("pb")

    def receiver() -> None:
        for _ in b.messages():
            pass

    threading.Thread(target=receiver, daemon=True).start()
    return per_op(lambda: a.send("pb", "hi"), n)


def main() -> None:
    assert py_canonical_hash("boss-test-v1", {"b": 2, "a": 1}) == ai.canonical_hash("boss-test-v1", {"b": 2, "a": 1})
    assert py_canonical_hash("d", PAYLOAD) == ai.canonical_hash("d", PAYLOAD)
    with tempfile.TemporaryDirectory(prefix="aic-bench-", dir="/tmp") as d:
        broker = ai.start_broker(d, idle_exit_ms=0, log_level="off", settings=UNLIMITED)
        m = 2000
        print(f"send round trip (agent_intercom client)   {bench_package(d, m):8.1f} us/op")
        broker.close()
    with tempfile.TemporaryDirectory(prefix="aic-bench-", dir="/tmp") as d:
        broker = ai.start_broker(d, idle_exit_ms=0, log_level="off", settings=UNLIMITED)
        print(f"send round trip (pure-Python wire client) {bench_wire(broker.socket_path, m):8.1f} us/op")
        broker.close()

    n = 2000
    print(f"canonical_hash (agent_intercom, Rust)   {per_op(lambda: ai.canonical_hash('d', PAYLOAD), n):8.2f} us/op")
    print(f"canonical_hash (pure Python, json+hashlib) {per_op(lambda: py_canonical_hash('d', PAYLOAD), n):8.2f} us/op")

if __name__ == "__main__":
    main()

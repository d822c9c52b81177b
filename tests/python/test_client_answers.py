"""vectors/broker-client-v1.json through connect().register(): a fake broker on a Unix socket
answers the register request with each case's bytes, and the registration must end with the
case's code and message, closing the connection or not as the case says. The Rust client
(broker/tests/client.rs), C (tests/c/client.c) and Node (tests/node/client-answers.test.js) run
the same file."""

from __future__ import annotations

import json
import socket
import struct
import tempfile
import threading
import time
from typing import Any, Dict, List, Optional

import agent_intercom as ai
from conftest import read_vectors, run_cases

SESSION = {"cwd": "/work", "model": "test", "pid": 1, "startedAt": 1, "lastActivity": 1}


def case_bytes(c: Dict[str, Any]) -> bytes:
    if "frame" not in c:
        return bytes.fromhex(c["wireHex"])
    body = c["frame"].encode()
    return struct.pack(">I", len(body)) + body


def read_frame(conn: socket.socket) -> Dict[str, Any]:
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    frame: Dict[str, Any] = json.loads(data[4:])
    return frame


def closed_soon(client: ai.Client) -> bool:
    """Whether the client closes the connection (the fake broker never closes first)."""
    end = time.monotonic() + 0.5
    while time.monotonic() < end:
        if client.closed:
            return True
        time.sleep(0.01)
    return client.closed


def run(c: Dict[str, Any]) -> Optional[str]:
    with tempfile.TemporaryDirectory(prefix="aic-py-ans-", dir="/tmp") as d:
        path = d + "/broker.sock"
        server = socket.socket(socket.AF_UNIX)
        server.bind(path)
        server.listen(1)
        received: List[Dict[str, Any]] = []
        conns: List[socket.socket] = []

        def answer() -> None:
            conn, _ = server.accept()
            conns.append(conn)
            received.append(read_frame(conn))
            conn.sendall(case_bytes(c))

        t = threading.Thread(target=answer)
        t.start()
        client = ai.connect(socket_path=path)
        code, message = "OK", ""
        try:
            client.register(session=SESSION, access=c.get("access"))
        except ai.IntercomError as e:
            code, message = e.code, str(e)
        t.join(10)
        closes = closed_soon(client)
        client.close()
        for conn in conns:
            conn.close()
        server.close()
        assert {"code": code, "message": message, "closes": closes} == c["expected"], c["id"]
        assert received[0]["type"] == "register"
        assert received[0].get("access") == c.get("access")
    return None


def test_broker_client_answers() -> None:
    doc = read_vectors("broker-client-v1.json")
    assert doc["count"] == len(doc["cases"])
    counts = run_cases("broker-client-v1.json", doc["cases"], run)
    assert counts["skipped"] == 0

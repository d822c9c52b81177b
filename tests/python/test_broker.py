"""The broker client between Python sessions: register, list, send, ask (timeout, reply),
reply, defer, cancel, acknowledgements after the handler, the offline queue and receipts,
delivery status, cross-scope isolation, and the error paths."""

from __future__ import annotations

import threading
from typing import Any, Dict, List

import pytest

import agent_intercom as ai


def serve(c: ai.Client, seen: List[ai.Message], replies: bool = True) -> threading.Thread:
    def loop() -> None:
        for m in c.messages():
            seen.append(m)
            assert not m.acked  # acknowledged only after this body returns
            if m.expects_reply and replies:
                c.reply(m.sender, m.id, "pong: " + (m.text or ""))

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    return t


def test_send_ask_reply(broker: ai.Broker, agent_dir: str) -> None:
    with ai.connect(agent_dir) as alice, ai.connect(agent_dir) as bob:
        a = alice.register("alice")["session_id"]
        b = bob.register("bob", session={"status": "idle"})["session_id"]
        assert alice.session_id == a
        names = {s["name"] for s in alice.list()}
        assert names == {"alice", "bob"}
        seen: List[ai.Message] = []
        t = serve(bob, seen)
        sent = alice.send("bob", {"text": "hi", "id": "m-1"})
        assert sent["message_id"] == "m-1" and not sent["queued"]
        assert seen[0].text == "hi" and seen[0].sender == a and seen[0].message["content"] == {"text": "hi"}
        reply = alice.ask(b, "ping", timeout=30)
        assert reply.text == "pong: ping" and reply.acked and reply.reply_to is not None
        assert seen[0].acked
        assert alice.delivery_status("m-1") == "delivered"
        assert alice.delivery_status("never-sent") == "unknown"
        with pytest.raises(ai.IntercomError) as e:
            alice.send("nobody", "x")
        assert e.value.code == "SESSION_NOT_FOUND" and e.value.accepted is False
        with pytest.raises(ai.IntercomError) as e:
            alice.send("bob", "x", nope=True)
        assert e.value.code == "UNKNOWN_KEY"
        with pytest.raises(ai.IntercomError) as e:
            alice.send("bob", 5)
        assert e.value.code == "INVALID_ARGUMENT"
        with pytest.raises(ai.IntercomError) as e:
            alice.send("bob", {"text": float("nan")})
        assert e.value.code == "UNSUPPORTED_NUMBER"
        with pytest.raises(ai.IntercomError) as e:
            alice.presence(mood="happy")
        assert e.value.code == "UNKNOWN_KEY"
        bob.close()
        t.join(10)
        assert not t.is_alive()


def test_ask_timeout_defer_cancel(broker: ai.Broker, agent_dir: str) -> None:
    with ai.connect(agent_dir) as alice, ai.connect(agent_dir) as bob:
        alice.register("alice")
        bob.register("bob")
        seen: List[ai.Message] = []
        serve(bob, seen, replies=False)
        with pytest.raises(ai.IntercomError) as e:
            alice.ask("bob", "are you there?", timeout=0.5)
        assert e.value.code == "ASK_TIMEOUT"
        # The broker answers the cancel_ask sent after the timeout. Nobody waits for that
        # answer, and it is no event either: it came before the list's answer on this
        # connection, so every event it could be is queued by the time list() returns.
        assert alice.list()
        kinds = []
        while (event := alice.next_event(timeout=0)) is not None:
            kinds.append(event["type"])
        assert "ask_control_result" not in kinds, kinds
        with pytest.raises(ai.IntercomError) as e:
            alice.ask("bob", "x", timeout=-1)
        assert e.value.code == "INVALID_ARGUMENT"
        # An ask to defer and cancel by hand: from another thread, while ask() waits.
        results: Dict[str, Any] = {}

        def asking() -> None:
            try:
                alice.ask("bob", {"text": "later", "id": "q-2"}, timeout=30)
            except ai.IntercomError as err:
                results["code"] = err.code

        t = threading.Thread(target=asking)
        t.start()
        while not any(m.id == "q-2" for m in seen):
            threading.Event().wait(0.05)
        assert alice.defer("q-2")["applied"] is True
        assert alice.cancel("q-2")["action"] == "cancel"
        t.join(10)
        assert results["code"] == "CANCELLED"
        assert alice.cancel("q-2")["applied"] is False


def test_recv_ack_by_hand_and_queue(broker: ai.Broker, agent_dir: str) -> None:
    with ai.connect(agent_dir) as alice:
        alice.register("alice")
        bob = ai.connect(agent_dir)
        b = bob.register("bob", session_id="bob-1")["session_id"]
        bob.close()
        with pytest.raises(ai.IntercomError) as e:
            bob.list()
        assert e.value.code == "NOT_CONNECTED"
        queued = alice.send(b, "while you were away", queue=True, receipts=True)
        assert queued["queued"] is True
        assert alice.delivery_status(queued["message_id"]) == "queued"
        with ai.connect(agent_dir) as again:
            again.register("bob", session_id="bob-1")
            m = again.recv(timeout=10)
            assert m is not None and m.text == "while you were away" and not m.acked
            m.ack()
            m.ack()  # once
            again.mark_read(m.delivery_id)
            kinds = set()
            while "message_read" not in kinds:
                ev = alice.next_event(timeout=10)
                assert ev is not None
                kinds.add(ev["type"])
            assert alice.delivery_status(queued["message_id"]) == "read"
            assert again.recv(timeout=0) is None


def test_scopes_are_isolated(broker: ai.Broker, agent_dir: str) -> None:
    with ai.connect(agent_dir, scope=ai.SCOPE_A) as a1, ai.connect(agent_dir, scope=ai.SCOPE_A) as a2, \
            ai.connect(agent_dir, scope=ai.SCOPE_B) as b1, ai.connect(agent_dir) as u1:
        a1.register("a1")
        a2.register("worker")
        b1.register("worker")
        u1.register("u1")
        assert {s["name"] for s in a1.list()} == {"a1", "worker"}
        assert {s["name"] for s in b1.list()} == {"worker"}
        assert {s["name"] for s in u1.list()} == {"u1"}
        seen_a: List[ai.Message] = []
        seen_b: List[ai.Message] = []
        serve(a2, seen_a)
        serve(b1, seen_b)
        a1.send("worker", "for my scope")
        assert [m.text for m in seen_a] == ["for my scope"] and seen_b == []
        with pytest.raises(ai.IntercomError) as e:
            u1.send("worker", "across scopes")
        assert e.value.code == "SESSION_NOT_FOUND"
        with pytest.raises(ai.IntercomError) as e:
            u1.send("a1", "by name across scopes")
        assert e.value.code == "SESSION_NOT_FOUND"


def test_ack_after_break_not_after_raise(broker: ai.Broker, agent_dir: str) -> None:
    with ai.connect(agent_dir) as alice, ai.connect(agent_dir) as bob:
        alice.register("alice")
        bob.register("bob")
        kept: List[ai.Message] = []
        done = threading.Event()

        def first_breaks_second_raises() -> None:
            for m in bob.messages():
                kept.append(m)
                break
            try:
                for m in bob.messages():
                    kept.append(m)
                    raise RuntimeError("handler failed")
            except RuntimeError:
                pass
            done.set()

        t = threading.Thread(target=first_breaks_second_raises)
        t.start()
        alice.send("bob", "one")
        with pytest.raises(ai.IntercomError) as e:
            alice.send("bob", "two")
        assert e.value.code == "DELIVERY_TIMEOUT" and e.value.accepted is True
        done.wait(10)
        t.join(10)
        assert [m.acked for m in kept] == [True, False]


def test_a_dropped_client_closes_its_connection(broker: ai.Broker, agent_dir: str) -> None:
    with ai.connect(agent_dir) as watcher:
        watcher.register("watcher")
        gone = ai.connect(agent_dir)
        gone_id = gone.register("gone")["session_id"]
        del gone  # no close(): the connection ends with the object
        while True:
            event = watcher.next_event(timeout=10)
            assert event is not None, "no session_left within 10 s"
            if event["type"] == "session_left":
                assert event.get("sessionId", event.get("session", {}).get("id")) == gone_id, event
                break


def test_access_control(broker: ai.Broker, agent_dir: str) -> None:
    request = {"adminToken": "not-the-token", "action": "inspect_tree", "principalId": "p"}
    for kwargs in ({"socket_path": broker.socket_path}, {"agent_dir": agent_dir}):
        with pytest.raises(ai.IntercomError) as e:
            ai.access_control(request, **kwargs)  # type: ignore[arg-type]
        assert e.value.code == "ACCESS_DENIED"
    assert ai.broker_socket_path(agent_dir) == broker.socket_path
    for bad, code in [({"adminToken": "t"}, "INVALID_ARGUMENT"), ({**request, "colour": 1}, "UNKNOWN_KEY"),
                      ({**request, "adminToken": 5}, "INVALID_ARGUMENT"), ("text", "INVALID_ARGUMENT")]:
        with pytest.raises(ai.IntercomError) as e:
            ai.access_control(bad, agent_dir)  # type: ignore[arg-type]
        assert e.value.code == code, bad
    with pytest.raises(ai.IntercomError) as e:
        ai.access_control(request, socket_path=agent_dir + "/none.sock")
    assert e.value.code == "NOT_CONNECTED"


def test_one_client_from_many_threads(broker: ai.Broker, agent_dir: str) -> None:
    with ai.connect(agent_dir) as alice, ai.connect(agent_dir) as bob:
        alice.register("alice")
        bob.register("bob")
        seen: List[ai.Message] = []
        serve(bob, seen)
        errors: List[BaseException] = []

        def sender(k: int) -> None:
            try:
                for i in range(5):
                    alice.send("bob", f"{k}-{i}")
                if k == 0:  # one ask at a time per pair (ASK_ALREADY_PENDING otherwise)
                    assert alice.ask("bob", "ask", timeout=30).text == "pong: ask"
                assert alice.session_id is not None and alice.delivery_status("none") == "unknown"
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=sender, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors == []
        assert sorted(m.text or "" for m in seen if not m.expects_reply) == sorted(f"{k}-{i}" for k in range(4) for i in range(5))


def test_a_request_before_register_names_the_refusal(broker: ai.Broker, agent_dir: str) -> None:
    c = ai.connect(agent_dir)
    with pytest.raises(ai.IntercomError) as e:
        c.list()
    assert e.value.code == "NOT_CONNECTED"
    assert "after it refused: INVALID_REQUEST" in str(e.value)
    event = c.next_event(timeout=10)
    assert event is not None and event["type"] == "error" and event["code"] == "INVALID_REQUEST"
    c.close()

"""The asyncio client: send, ask and reply between two sessions on one event loop, messages as
an async iterator, serve() acknowledging after the handler."""

from __future__ import annotations

import asyncio
from typing import List

import pytest

import agent_intercom as ai
from agent_intercom import aio


def test_async_exchange(broker: ai.Broker, agent_dir: str) -> None:
    async def main() -> None:
        async with await aio.connect(agent_dir) as alice, await aio.connect(agent_dir) as bob:
            await alice.register("alice")
            await bob.register("bob")
            seen: List[ai.Message] = []

            async def handler(m: ai.Message) -> None:
                seen.append(m)
                assert not m.acked
                if m.expects_reply:
                    await bob.reply(m.sender or "", m.id or "", "async pong")

            server = asyncio.create_task(bob.serve(handler))
            sent = await alice.send("bob", "hello")
            assert not sent["queued"]
            reply = await alice.ask("bob", "ping", timeout=30)
            assert reply.text == "async pong"
            assert [m.text for m in seen] == ["hello", "ping"] and seen[0].acked
            server.cancel()
            with pytest.raises(asyncio.CancelledError):
                await server
            # The async iterator: acknowledged when the next one is asked for.
            task = asyncio.create_task(alice.send("bob", "third"))
            got = []
            async for m in bob.messages(timeout=10):
                got.append(m)
                break
            got[0].ack()
            await task
            assert got[0].text == "third"
            with pytest.raises(ai.IntercomError) as e:
                await alice.send("nobody", "x")
            assert e.value.code == "SESSION_NOT_FOUND"

    asyncio.run(main())

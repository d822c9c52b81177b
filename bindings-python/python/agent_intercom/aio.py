"""The broker client for asyncio: the blocking client's calls on worker threads
(``asyncio.to_thread``), so the event loop never waits on a socket. Rules, frames and errors are
the blocking client's (:class:`agent_intercom.Client`)."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, List, Optional

from . import _native
from ._native import Client, Message

# How long one worker-thread wait for a message lasts: a cancelled task stops waiting within it.
_SLICE = 0.25


class AsyncClient:
    """A connection to the broker; every method is a coroutine of the blocking one."""

    def __init__(self, client: Client) -> None:
        self.client = client

    @property
    def session_id(self) -> Optional[str]:
        return self.client.session_id

    async def register(self, name: Optional[str] = None, **kwargs: Any) -> Dict[str, Any]:
        return await asyncio.to_thread(self.client.register, name, **kwargs)

    async def list(self) -> List[Dict[str, Any]]:
        return await asyncio.to_thread(self.client.list)

    async def send(self, to: str, message: Any, **options: Any) -> Dict[str, Any]:
        return await asyncio.to_thread(self.client.send, to, message, **options)

    async def reply(self, to: str, reply_to: str, message: Any, **options: Any) -> Dict[str, Any]:
        return await asyncio.to_thread(self.client.reply, to, reply_to, message, **options)

    async def ask(self, to: str, message: Any, *, timeout: Optional[float] = None, **options: Any) -> Message:
        return await asyncio.to_thread(self.client.ask, to, message, timeout=timeout, **options)

    async def defer(self, message_id: str) -> Dict[str, Any]:
        return await asyncio.to_thread(self.client.defer, message_id)

    async def cancel(self, message_id: str) -> Dict[str, Any]:
        return await asyncio.to_thread(self.client.cancel, message_id)

    async def delivery_status(self, message_id: str) -> str:
        return await asyncio.to_thread(self.client.delivery_status, message_id)

    async def recv(self, timeout: Optional[float] = None) -> Optional[Message]:
        """The next message (not acknowledged), or None when none came within ``timeout``."""
        loop = asyncio.get_running_loop()
        end = None if timeout is None else loop.time() + timeout
        while True:
            left = _SLICE if end is None else max(0.0, min(_SLICE, end - loop.time()))
            m = await asyncio.to_thread(self.client.recv, left)
            if m is not None or (end is not None and loop.time() >= end):
                return m
            if self.client.closed:
                return None

    async def messages(self, timeout: Optional[float] = None) -> AsyncIterator[Message]:
        """The incoming messages, each acknowledged when the loop asks for the next one (after
        its body returned). After ``break``, ``ack()`` the last one yourself, or use
        :meth:`serve`. Ends when the connection closes or none came within ``timeout``."""
        while True:
            m = await self.recv(timeout)
            if m is None:
                return
            yield m
            await asyncio.to_thread(m.ack)

    async def serve(
        self, handler: Callable[[Message], Awaitable[None]], timeout: Optional[float] = None
    ) -> None:
        """Awaits ``handler`` for each message and acknowledges it once the handler returned; a
        handler that raises leaves its message unacknowledged and the exception propagates."""
        while True:
            m = await self.recv(timeout)
            if m is None:
                return
            await handler(m)
            await asyncio.to_thread(m.ack)

    async def close(self) -> None:
        self.client.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.client.close()


async def connect(agent_dir: Any = None, scope: Optional[str] = None, **options: Any) -> AsyncClient:
    """``agent_intercom.connect`` on a worker thread."""
    return AsyncClient(await asyncio.to_thread(_native.connect, agent_dir, scope, **options))


async def ensure_broker(agent_dir: Any = None, **options: Any) -> Dict[str, Any]:
    """``agent_intercom.ensure_broker`` on a worker thread (it may wait for another starter)."""
    return await asyncio.to_thread(_native.ensure_broker, agent_dir, **options)

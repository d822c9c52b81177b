"""The Python a2a-sdk's own server, for comparison with `agent-intercom serve`.

Starlette + uvicorn, DefaultRequestHandler, JSON-RPC at /a2a (1.0 and 0.3 compat), the card at
/.well-known/agent-card.json. The executor parks each new task in SUBMITTED (what
`agent-intercom serve` does: a local agent picks it up later) and cancels on request.

With `--executor reply` the executor does, in process, what a live session does behind
`serve --broker` (bench/a2a/roundtrip.sh): the task goes to working, gets the reply's text as an
artifact named `reply`, and completes.

Usage: python sdk_server.py [--store memory|sqlite] [--db PATH] [--port N] [--executor park|reply]
Prints `sdk server listening on http://127.0.0.1:PORT` once it accepts connections.
"""

import argparse
import asyncio
import socket
import sys

import uvicorn
from starlette.applications import Starlette

from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    Part,
)


class ParkingExecutor(AgentExecutor):
    """Records the task as SUBMITTED and returns; work happens elsewhere."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


class ReplyingExecutor(AgentExecutor):
    """Answers at once: working, the reply as an artifact, completed."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        text = ''.join(p.text for p in context.message.parts)
        await updater.add_artifact(parts=[Part(text='done: ' + text)], name='reply')
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def card(url: str) -> AgentCard:
    return AgentCard(
        name='a2a-sdk reference',
        description='The Python a2a-sdk server, for the benchmark',
        version='1.3.0',
        supported_interfaces=[
            AgentInterface(protocol_binding='JSONRPC', protocol_version='1.0', url=url),
            AgentInterface(protocol_binding='JSONRPC', protocol_version='0.3', url=url),
        ],
        capabilities=AgentCapabilities(streaming=False, push_notifications=False),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[AgentSkill(id='park', name='park', description='parks a task', tags=['test'])],
        provider=AgentProvider(organization='a2a-sdk', url='https://a2a-protocol.org'),
        documentation_url='https://a2a-protocol.org',
    )


async def task_store(kind: str, db: str | None):
    if kind == 'memory':
        return InMemoryTaskStore()
    from sqlalchemy.ext.asyncio import create_async_engine  # noqa: PLC0415

    from a2a.server.tasks import DatabaseTaskStore  # noqa: PLC0415

    engine = create_async_engine(f'sqlite+aiosqlite:///{db}')
    store = DatabaseTaskStore(engine)
    await store.initialize()
    return store


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('--store', choices=['memory', 'sqlite'], default='memory')
    parser.add_argument('--db')
    parser.add_argument('--port', type=int, default=0)
    parser.add_argument('--executor', choices=['park', 'reply'], default='park')
    args = parser.parse_args()
    if args.store == 'sqlite' and not args.db:
        parser.error('--store sqlite needs --db PATH')
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit it (Linux): uvicorn sets it only on sockets it binds itself, and
    # without it every keep-alive response after the first waits for a delayed ACK (~40 ms).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(('127.0.0.1', args.port))
    port = sock.getsockname()[1]
    url = f'http://127.0.0.1:{port}/a2a'
    agent_card = card(url)
    handler = DefaultRequestHandler(
        agent_executor=ReplyingExecutor() if args.executor == 'reply' else ParkingExecutor(),
        task_store=await task_store(args.store, args.db),
        agent_card=agent_card,
    )
    routes = create_agent_card_routes(agent_card) + create_jsonrpc_routes(
        handler, rpc_url='/a2a', enable_v0_3_compat=True
    )
    app = Starlette(routes=routes)
    config = uvicorn.Config(app, log_level='warning', access_log=False)
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if serving.done():
            serving.result()
            return
        await asyncio.sleep(0.05)
    print(f'sdk server listening on http://127.0.0.1:{port}', flush=True)
    await serving

if __name__ == '__main__':
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)

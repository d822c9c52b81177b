"""Streaming with the a2a-sdk 1.3 client (its streaming client for 1.0, its v0.3 compat
transport for 0.3), against `agent-intercom serve`: the card says streaming; a streamed send
follows the task a local agent completes through `agent-intercom pad`; a subscription after the
first stream was dropped starts from the task as it stands; a cancel during a stream ends it;
more streams than a client may hold are refused with the SDK's InternalError; SIGTERM ends the
open streams and the service exits 0."""

import asyncio
from contextlib import aclosing

import httpx
import pytest

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import InternalError, UnsupportedOperationError

from harness import new_id, only_serve, pad, start_serve
from sdk import VERSIONS, client_for, send, text_message

pytestmark = only_serve

run = asyncio.run

# The local agent of serve's default --assignee.
AGENT = 'a2a'

# Longer than the 5 s the SDK's default HTTP client waits for a byte.
QUIET_SECONDS = 6

# What a client may hold at once (Limits::max_streams_per_client, the CLI's default).
STREAMS_PER_CLIENT = 16


def expect_method(client, version: str, method_10: str, method_03: str) -> None:
    header, method, _ = client.wire.last()
    if version == '1.0':
        assert (header, method) == ('1.0', method_10)
    else:
        assert (header, method) == ('0.3', method_03)


async def local_agent(db, task_id: str, *steps: tuple[str, dict]) -> None:
    """`agent-intercom pad` calls of the local agent, in order (in a thread: they block)."""
    for op, args in steps:
        await asyncio.to_thread(pad, db, op, {'id': task_id, 'by': AGENT, **args})


def kind(event) -> str:
    return event.WhichOneof('payload')


def test_the_card_says_streaming(service):
    async def body():
        async with httpx.AsyncClient() as http:
            card = await A2ACardResolver(http, service.base_url).get_agent_card()
        assert card.capabilities.streaming is True

    run(body())


@pytest.mark.parametrize('version', VERSIONS)
def test_a_streamed_send_follows_the_task_the_local_agent_completes_through_pad(
    service, version
):
    async def body():
        async with client_for(service.base_url, version, polling=False, streaming=True) as c:
            request = SendMessageRequest(message=text_message('stream the review', new_id()))
            events = []
            async with aclosing(c.send_message(request)) as stream:
                async for event in stream:
                    events.append(event)
                    if len(events) == 1:
                        expect_method(c, version, 'SendStreamingMessage', 'message/stream')
                        assert kind(event) == 'task'
                        task = event.task
                        assert task.status.state == TaskState.TASK_STATE_SUBMITTED
                        await local_agent(
                            service.db,
                            task.id,
                            ('task.transition', {'to': 'working'}),
                            ('task.artifact', {'name': 'review', 'content': 'LGTM'}),
                            ('task.transition', {'to': 'completed', 'reason': 'reviewed'}),
                        )
            # The stream ended by itself, with the terminal status.
            assert [kind(e) for e in events] == [
                'task',
                'status_update',
                'artifact_update',
                'status_update',
            ]
            working = events[1].status_update
            artifact = events[2].artifact_update
            done = events[3].status_update
            assert working.status.state == TaskState.TASK_STATE_WORKING
            assert artifact.task_id == task.id and artifact.context_id == task.context_id
            assert artifact.artifact.name == 'review'
            assert [p.text for p in artifact.artifact.parts] == ['LGTM']
            assert artifact.last_chunk
            assert done.task_id == task.id
            assert done.status.state == TaskState.TASK_STATE_COMPLETED
            assert done.status.message.parts[0].text == 'reviewed'

    run(body())


@pytest.mark.parametrize('version', VERSIONS)
def test_a_subscription_after_a_dropped_stream_starts_from_the_current_state(service, version):
    async def body():
        async with client_for(service.base_url, version, polling=False, streaming=True) as c:
            request = SendMessageRequest(message=text_message('drop me', new_id()))
            async with aclosing(c.send_message(request)) as stream:
                first = await anext(stream)
            # The first stream is gone (its connection closed); the agent works on.
            task = first.task
            await local_agent(
                service.db,
                task.id,
                ('task.transition', {'to': 'working'}),
                ('task.artifact', {'name': 'draft', 'content': 'half done'}),
            )
            events = []
            async with aclosing(c.subscribe(SubscribeToTaskRequest(id=task.id))) as stream:
                async for event in stream:
                    events.append(event)
                    if len(events) == 1:
                        expect_method(c, version, 'SubscribeToTask', 'tasks/resubscribe')
                        await local_agent(
                            service.db, task.id, ('task.transition', {'to': 'completed'})
                        )
            assert [kind(e) for e in events] == ['task', 'status_update']
            now = events[0].task
            assert now.id == task.id
            assert now.status.state == TaskState.TASK_STATE_WORKING
            assert [a.name for a in now.artifacts] == ['draft']
            assert [m.parts[0].text for m in now.history] == ['drop me']
            assert events[1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
            # A terminal task has nothing more to stream.
            with pytest.raises(UnsupportedOperationError):
                async with aclosing(c.subscribe(SubscribeToTaskRequest(id=task.id))) as again:
                    async for _ in again:
                        pass

    run(body())


@pytest.mark.parametrize('version', VERSIONS)
def test_a_cancel_during_a_stream_ends_it_canceled(service, version):
    async def body():
        async with client_for(service.base_url, version, polling=False, streaming=True) as c:
            request = SendMessageRequest(message=text_message('cancel me', new_id()))
            events = []
            async with aclosing(c.send_message(request)) as stream:
                async for event in stream:
                    events.append(event)
                    if len(events) == 1:
                        canceled = await c.cancel_task(CancelTaskRequest(id=event.task.id))
                        expect_method(c, version, 'CancelTask', 'tasks/cancel')
                        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
            assert [kind(e) for e in events] == ['task', 'status_update']
            assert events[1].status_update.status.state == TaskState.TASK_STATE_CANCELED
            # The local agent cannot complete it afterwards.
            local = await asyncio.to_thread(
                pad, service.db, 'task.get', {'id': events[0].task.id, 'agent': AGENT}
            )
            assert local['state'] == 'canceled'

    run(body())


def test_the_sdk_default_client_streams_past_its_read_timeout(service):
    """The SDK's defaults (streaming, since the card says so; its own httpx client, which gives
    up after 5 s without a byte): a stream quiet for longer is kept by the keep-alives."""

    async def body():
        client = await ClientFactory(ClientConfig()).create_from_url(service.base_url)
        try:
            request = SendMessageRequest(message=text_message('take your time', new_id()))
            events = []
            later = None
            async with aclosing(client.send_message(request)) as stream:
                async for event in stream:
                    events.append(event)
                    if len(events) == 1:

                        async def finish_later(task_id=event.task.id):
                            await asyncio.sleep(QUIET_SECONDS)
                            await local_agent(
                                service.db, task_id, ('task.transition', {'to': 'rejected'})
                            )

                        later = asyncio.create_task(finish_later())
            await later
        finally:
            await client.close()
        assert [kind(e) for e in events] == ['task', 'status_update']
        assert events[1].status_update.status.state == TaskState.TASK_STATE_REJECTED

    run(body())


def test_streams_beyond_a_clients_limit_are_refused_until_one_ends(service):
    async def body():
        async with client_for(service.base_url, '1.0') as plain:
            task = (await send(plain, text_message('watch me', new_id()))).task
        async with client_for(service.base_url, '1.0', polling=False, streaming=True) as c:
            streams = []
            try:
                for _ in range(STREAMS_PER_CLIENT):
                    stream = c.subscribe(SubscribeToTaskRequest(id=task.id))
                    assert kind(await anext(stream)) == 'task'
                    streams.append(stream)
                with pytest.raises(InternalError) as refused:
                    await anext(c.subscribe(SubscribeToTaskRequest(id=task.id)))
                assert 'too many streams' in str(refused.value)
                # One ends (its connection closes): a new one is admitted once the service has
                # seen it go.
                await streams.pop().aclose()
                for _ in range(500):
                    try:
                        stream = c.subscribe(SubscribeToTaskRequest(id=task.id))
                        assert kind(await anext(stream)) == 'task'
                        streams.append(stream)
                        break
                    except InternalError:
                        await asyncio.sleep(0.02)
                else:
                    pytest.fail('the ended stream was never given back')
            finally:
                for stream in streams:
                    await stream.aclose()

    run(body())


def test_sigterm_ends_open_streams_and_the_service_exits_cleanly(tmp_path):
    svc = start_serve(tmp_path / 'store.sqlite')
    try:

        async def body():
            async with client_for(svc.base_url, '1.0', polling=False, streaming=True) as c:
                request = SendMessageRequest(message=text_message('until the stop', new_id()))
                events = []
                async with aclosing(c.send_message(request)) as stream:
                    async for event in stream:
                        events.append(event)
                        if len(events) == 1:
                            svc.proc.terminate()
                # The stream ended (no error), with the task as its only event.
                assert [kind(e) for e in events] == ['task']

        run(body())
        assert svc.proc.wait(30) == 0
    finally:
        svc.stop()

"""`serve --broker` with the a2a-sdk client: an A2A message becomes an ask to a live Node
session (tests/a2a/live/session.js, the Node package's broker client), whose reply completes the
task (blocking, polling and streaming, in 1.0 and 0.3); a cancel reaches the session as
ask_cancelled; a target away at send time answers once it registers again; a kill -9 of serve
while the ask is open loses nothing; a target that is not listed is refused."""

import asyncio
from contextlib import aclosing

import pytest

from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    SendMessageRequest,
    TaskState,
)
from a2a.utils.errors import A2AError, UnsupportedOperationError

from harness import new_id, only_serve
from live import Broker, NodeSession, poll, start_gateway, texts
from sdk import VERSIONS, client_for, send, text_message

pytestmark = only_serve
run = asyncio.run

WORKER = 'worker'
WORKER_ID = 'worker-' + new_id()
TESTER = 'tester'
# Blocking sends wait long enough for the session below on a busy machine.
ARGS = (
    '--assignee', WORKER, '--targets', f'{TESTER},{WORKER_ID}',
    '--blocking-timeout', '60', '--request-timeout', '90',
)


@pytest.fixture(scope='module')
def hub(tmp_path_factory):
    """A broker, two Node sessions (worker, tester) and the gateway, all on one agent directory."""
    home = tmp_path_factory.mktemp('gateway')
    agent_dir = home / 'agent'
    agent_dir.mkdir()
    broker = Broker(agent_dir)
    worker = NodeSession(agent_dir, WORKER, WORKER_ID)
    tester = NodeSession(agent_dir, TESTER, 'tester-' + new_id())
    gateway = start_gateway(home / 'store.sqlite', agent_dir, *ARGS)
    hub = {'broker': broker, 'worker': worker, 'tester': tester, 'gateway': gateway,
           'agent_dir': agent_dir, 'db': home / 'store.sqlite'}
    yield hub
    alive = hub['gateway'].alive()
    hub['gateway'].stop()
    worker.stop()
    tester.stop()
    broker.stop()
    assert alive, ''.join(hub['gateway'].stderr_lines[-20:])


async def answer(session: NodeSession, task_id: str, text: str, **reply) -> dict:
    """The session gets the ask of the task (in a thread: it blocks) and replies."""
    ask = await asyncio.to_thread(session.ask, task_id)
    await asyncio.to_thread(session.reply, ask, text, **reply)
    return ask


@pytest.mark.parametrize('version', VERSIONS)
def test_a_blocking_send_returns_the_task_the_session_completed(hub, version):
    async def body():
        async with client_for(hub['gateway'].base_url, version, polling=False, timeout=90) as c:
            message_id = new_id()
            sending = asyncio.create_task(send(c, text_message('review PR 9', message_id)))
            # The ask's id names the task: the session learns it from the message.
            ask = await asyncio.to_thread(
                hub['worker'].wait, 'message',
                lambda e: e['message']['content']['text'] == 'review PR 9',
            )
            assert ask['message']['expectsReply'] is True
            assert ask['from']['name'] == 'a2a-gateway'
            attachment = {'type': 'file', 'name': 'review.md', 'content': 'LGTM'}
            await asyncio.to_thread(
                hub['worker'].reply, ask, 'looks good', attachments=[attachment]
            )
            task = (await sending).task
            assert task.status.state == TaskState.TASK_STATE_COMPLETED
            assert ask['message']['id'] == 'a2a-task-' + task.id
            assert texts(task) == {'reply': ['looks good'], 'review.md': ['LGTM']}
            assert 'answered by worker' in task.status.message.parts[0].text

    run(body())


@pytest.mark.parametrize('version', VERSIONS)
def test_a_polled_task_is_working_once_delivered_and_completed_by_the_reply(hub, version):
    async def body():
        async with client_for(hub['gateway'].base_url, version) as c:
            task = (await send(c, text_message('summarise the log', new_id()))).task
            assert task.status.state in (
                TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING,
            )
            ask = await asyncio.to_thread(hub['worker'].ask, task.id)
            await poll(c, task.id, TaskState.TASK_STATE_WORKING)
            await asyncio.to_thread(hub['worker'].reply, ask, 'three errors')
            done = await poll(c, task.id, TaskState.TASK_STATE_COMPLETED)
            assert texts(done) == {'reply': ['three errors']}

    run(body())


@pytest.mark.parametrize('version', VERSIONS)
def test_a_streamed_send_sees_working_the_reply_and_completed(hub, version):
    async def body():
        async with client_for(
            hub['gateway'].base_url, version, polling=False, streaming=True, timeout=90
        ) as c:
            request = SendMessageRequest(message=text_message('stream it', new_id()))
            events, answering = [], None
            async with aclosing(c.send_message(request)) as stream:
                async for event in stream:
                    events.append(event)
                    kind = event.WhichOneof('payload')
                    if kind == 'task' and answering is None:
                        answering = asyncio.create_task(
                            answer(hub['worker'], event.task.id, 'streamed answer')
                        )
            await answering
        kinds = [e.WhichOneof('payload') for e in events]
        assert kinds[0] == 'task'
        states = [e.status_update.status.state for e in events if e.HasField('status_update')]
        assert states == [TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]
        artifacts = [e.artifact_update.artifact for e in events if e.HasField('artifact_update')]
        assert [(a.name, a.parts[0].text) for a in artifacts] == [('reply', 'streamed answer')]
        # working, then the artifact, then completed (the last event)
        assert kinds[1:] == ['status_update', 'artifact_update', 'status_update']

    run(body())


@pytest.mark.parametrize('version', VERSIONS)
def test_a_subscription_follows_a_gateway_task_to_its_reply(hub, version):
    async def body():
        async with client_for(hub['gateway'].base_url, version) as c:
            task = (await send(c, text_message('subscribe to me', new_id()))).task
            ask = await asyncio.to_thread(hub['worker'].ask, task.id)
            await poll(c, task.id, TaskState.TASK_STATE_WORKING)
        async with client_for(
            hub['gateway'].base_url, version, polling=False, streaming=True, timeout=90
        ) as c:
            from a2a.types.a2a_pb2 import SubscribeToTaskRequest

            events = []
            async with aclosing(c.subscribe(SubscribeToTaskRequest(id=task.id))) as stream:
                async for event in stream:
                    events.append(event)
                    if len(events) == 1:
                        await asyncio.to_thread(hub['worker'].reply, ask, 'subscribed')
        last = events[-1]
        assert last.status_update.status.state == TaskState.TASK_STATE_COMPLETED
        assert any(e.HasField('artifact_update') for e in events)

    run(body())


def test_a_cancel_reaches_the_session_as_ask_cancelled(hub):
    async def body():
        async with client_for(hub['gateway'].base_url, '1.0') as c:
            task = (await send(c, text_message('long job', new_id()))).task
            ask = await asyncio.to_thread(hub['worker'].ask, task.id)
            await poll(c, task.id, TaskState.TASK_STATE_WORKING)
            canceled = await c.cancel_task(CancelTaskRequest(id=task.id))
            assert canceled.status.state == TaskState.TASK_STATE_CANCELED
            cancelled = await asyncio.to_thread(
                hub['worker'].wait, 'ask_cancelled',
                lambda e: e['messageId'] == ask['message']['id'],
            )
            assert cancelled['reason'] == 'cancelled'
            assert cancelled['fromSessionId'] == ask['from']['id']
            # A reply after the cancel is refused by the broker (the ask is gone); the task stays.
            hub['worker'].command(
                op='reply', to=ask['from']['id'], replyTo=ask['message']['id'], text='late',
            )
            error = await asyncio.to_thread(hub['worker'].wait, 'error')
            assert error['code'] == 'INVALID_REPLY_TARGET', error
            got = await c.get_task(GetTaskRequest(id=task.id))
            assert got.status.state == TaskState.TASK_STATE_CANCELED

    run(body())


def test_a_target_named_in_metadata_must_be_listed(hub):
    async def body():
        async with client_for(hub['gateway'].base_url, '1.0') as c:
            listed = text_message('for the tester', new_id())
            listed.metadata.update({'agent-intercom/to': TESTER})
            task = (await send(c, listed)).task
            await answer(hub['tester'], task.id, 'tested')
            done = await poll(c, task.id, TaskState.TASK_STATE_COMPLETED)
            assert texts(done) == {'reply': ['tested']}

            other = text_message('for someone else', new_id())
            other.metadata.update({'agent-intercom/to': 'stranger'})
            with pytest.raises(A2AError) as refused:
                await send(c, other)
            assert 'not a target of this gateway' in str(refused.value)

    run(body())


def test_a_follow_up_message_is_refused(hub):
    async def body():
        async with client_for(hub['gateway'].base_url, '1.0') as c:
            task = (await send(c, text_message('one message only', new_id()))).task
            follow = text_message('and another', new_id(), task.context_id)
            follow.task_id = task.id
            with pytest.raises(UnsupportedOperationError):
                await send(c, follow)
            await answer(hub['worker'], task.id, 'done')
            await poll(c, task.id, TaskState.TASK_STATE_COMPLETED)

    run(body())


def test_a_target_away_at_send_time_answers_once_it_registers(hub):
    """Addressed by its full id (listed in --targets), a known session that is away gets the ask
    from the broker's offline queue when it registers again."""

    async def body():
        worker = hub['worker']
        await asyncio.to_thread(worker.close)
        async with client_for(hub['gateway'].base_url, '1.0') as c:
            message = text_message('while you were out', new_id())
            message.metadata.update({'agent-intercom/to': WORKER_ID})
            task = (await send(c, message)).task
            await asyncio.sleep(1)
            got = await c.get_task(GetTaskRequest(id=task.id))
            assert got.status.state == TaskState.TASK_STATE_SUBMITTED
            await asyncio.to_thread(worker.register)
            await answer(worker, task.id, 'back now')
            done = await poll(c, task.id, TaskState.TASK_STATE_COMPLETED)
            assert texts(done) == {'reply': ['back now']}

    run(body())


def test_kill_9_of_serve_while_the_ask_is_open_loses_nothing(hub):
    """serve dies with the ask delivered; the session replies while it is away (queued for the
    gateway's id); serve starts again on the same store, registers as the same session, takes
    the reply and completes the task."""

    async def body():
        gateway = hub['gateway']
        async with client_for(gateway.base_url, '1.0') as c:
            task = (await send(c, text_message('survive a crash', new_id()))).task
            ask = await asyncio.to_thread(hub['worker'].ask, task.id)
            await poll(c, task.id, TaskState.TASK_STATE_WORKING)
        gateway.kill9()
        replied = await asyncio.to_thread(
            hub['worker'].reply, ask, 'after the crash', queue_it=True
        )
        assert replied['queued'] is True
        hub['gateway'] = start_gateway(hub['db'], hub['agent_dir'], *ARGS)
        async with client_for(hub['gateway'].base_url, '1.0') as c:
            done = await poll(c, task.id, TaskState.TASK_STATE_COMPLETED)
            assert texts(done) == {'reply': ['after the crash']}

    run(body())


def test_a_second_task_for_a_busy_session_waits_for_the_first_ask_to_close(hub):
    """The broker holds one open ask per asker and asked session: the second task stays
    submitted until the first one's reply, then its ask goes, in order."""

    async def body():
        async with client_for(hub['gateway'].base_url, '1.0') as c:
            first = (await send(c, text_message('first in line', new_id()))).task
            second = (await send(c, text_message('second in line', new_id()))).task
            ask = await asyncio.to_thread(hub['worker'].ask, first.id)
            await poll(c, first.id, TaskState.TASK_STATE_WORKING)
            await asyncio.sleep(1)
            waiting = await c.get_task(GetTaskRequest(id=second.id))
            assert waiting.status.state == TaskState.TASK_STATE_SUBMITTED
            assert not [e for e in hub['worker'].seen if e['event'] == 'message']
            await asyncio.to_thread(hub['worker'].reply, ask, 'one')
            await answer(hub['worker'], second.id, 'two')
            assert texts(await poll(c, first.id, TaskState.TASK_STATE_COMPLETED)) == {
                'reply': ['one']
            }
            assert texts(await poll(c, second.id, TaskState.TASK_STATE_COMPLETED)) == {
                'reply': ['two']
            }

    run(body())


def test_a_text_file_sent_inline_reaches_the_session_as_an_attachment(hub):
    async def body():
        from a2a.types.a2a_pb2 import Message, Part, Role

        async with client_for(hub['gateway'].base_url, '1.0') as c:
            message = Message(
                message_id=new_id(),
                role=Role.ROLE_USER,
                parts=[
                    Part(text='review this file'),
                    Part(raw=b'print("hi")\n', filename='hi.py', media_type='text/x-python'),
                ],
            )
            task = (await send(c, message)).task
            ask = await asyncio.to_thread(hub['worker'].ask, task.id)
            content = ask['message']['content']
            assert content['text'].startswith('review this file')
            assert content['attachments'] == [
                {'type': 'file', 'name': 'hi.py', 'content': 'print("hi")\n'}
            ]
            await asyncio.to_thread(hub['worker'].reply, ask, 'fine')
            await poll(c, task.id, TaskState.TASK_STATE_COMPLETED)

    run(body())

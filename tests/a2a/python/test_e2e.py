"""End to end: a message an SDK client sends becomes a scratchpad task; a local agent reads it
with `agent-intercom pad unread`, moves the task to working, adds an artifact and completes it;
the client's GetTask then shows COMPLETED with the artifact and the history. Also: follow-up
messages, blocking sends that return once the local agent is done, honest cancel."""

import asyncio

import pytest

from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    TaskState,
)
from a2a.utils.errors import A2AError, TaskNotCancelableError, UnsupportedOperationError

from harness import PadError, new_id, only_serve, pad, start_serve
from sdk import VERSIONS, client_for, send, text_message

pytestmark = only_serve

# The local agent A2A tasks are assigned to (serve's --assignee); blocking sends wait long enough
# for the local agent below on a busy machine.
AGENT = 'reviewer'
SERVE_ARGS = ('--assignee', AGENT, '--blocking-timeout', '60', '--request-timeout', '90')


@pytest.fixture(scope='module')
def svc(tmp_path_factory):
    service = start_serve(tmp_path_factory.mktemp('e2e') / 'store.sqlite', *SERVE_ARGS)
    yield service
    alive = service.alive()
    service.stop()
    assert alive, ''.join(service.stderr_lines[-20:])


def delivered(db, task_id: str) -> list[dict]:
    """What the local agent's `unread` offers for the task."""
    return [m for m in pad(db, 'unread', {'agent': AGENT}) if m.get('task_id') == task_id]


def artifact_texts(task) -> dict[str, list[str]]:
    return {a.name: [p.text for p in a.parts] for a in task.artifacts}


@pytest.mark.parametrize('version', VERSIONS)
def test_sdk_task_worked_through_pad(svc, version):
    async def body():
        async with client_for(svc.base_url, version) as client:
            first_id = new_id()
            task = (await send(client, text_message('review PR 7', first_id))).task
            assert task.status.state == TaskState.TASK_STATE_SUBMITTED

            # The local agent sees the message and the task.
            (note,) = delivered(svc.db, task.id)
            assert 'review PR 7' in note['content']
            assert note['to'] == AGENT and note['privacy'] == 'private'
            local = pad(svc.db, 'task.get', {'id': task.id, 'agent': AGENT})
            assert local['state'] == 'submitted' and local['assignee'] == AGENT

            pad(svc.db, 'task.transition', {'id': task.id, 'by': AGENT, 'to': 'working'})
            got = await client.get_task(GetTaskRequest(id=task.id))
            assert got.status.state == TaskState.TASK_STATE_WORKING

            # A follow-up message continues the task and reaches the agent too.
            follow_id = new_id()
            follow = Message(
                message_id=follow_id,
                role=Role.ROLE_USER,
                parts=[Part(text='also check the tests')],
                task_id=task.id,
                context_id=task.context_id,
            )
            again = (await send(client, follow)).task
            assert again.id == task.id
            assert [n['content'] for n in delivered(svc.db, task.id)] == ['also check the tests']

            pad(svc.db, 'task.artifact',
                {'id': task.id, 'by': AGENT, 'name': 'review.md', 'content': 'LGTM, one nit'})
            pad(svc.db, 'task.transition',
                {'id': task.id, 'by': AGENT, 'to': 'completed', 'reason': 'reviewed'})

            done = await client.get_task(GetTaskRequest(id=task.id))
            assert done.status.state == TaskState.TASK_STATE_COMPLETED
            assert artifact_texts(done) == {'review.md': ['LGTM, one nit']}
            assert all(a.artifact_id for a in done.artifacts)
            users = [m for m in done.history if m.role == Role.ROLE_USER]
            assert [m.message_id for m in users] == [first_id, follow_id]
            assert [m.parts[0].text for m in users] == ['review PR 7', 'also check the tests']
            # Completed is terminal: no cancel, and no more messages.
            with pytest.raises(TaskNotCancelableError):
                await client.cancel_task(CancelTaskRequest(id=task.id))
            late = Message(message_id=new_id(), role=Role.ROLE_USER,
                           parts=[Part(text='late')], task_id=task.id)
            # Spec 1.0 §3.1.1: a message to a task in a terminal state is unsupported.
            with pytest.raises(UnsupportedOperationError):
                await send(client, late)

    asyncio.run(body())


@pytest.mark.parametrize('version', VERSIONS)
def test_blocking_send_returns_when_the_agent_is_done(svc, version):
    """Without returnImmediately (blocking: true on 0.3) the answer waits for a terminal or
    interrupted state: here the local agent completes the task while the client waits."""

    async def body():
        async with client_for(svc.base_url, version, polling=False, timeout=120) as client:
            text = f'blocking {new_id()}'
            waiting = asyncio.create_task(send(client, text_message(text, new_id())))
            note = None
            for _ in range(600):
                notes = [m for m in pad(svc.db, 'unread', {'agent': AGENT}) if m['content'] == text]
                if notes:
                    note = notes[0]
                    break
                assert not waiting.done(), 'the blocking send returned before the work was done'
                await asyncio.sleep(0.05)
            assert note, 'the message never reached the local agent'
            task_id = note['task_id']
            assert not waiting.done()
            pad(svc.db, 'task.transition', {'id': task_id, 'by': AGENT, 'to': 'working'})
            pad(svc.db, 'task.artifact',
                {'id': task_id, 'by': AGENT, 'name': 'out', 'content': 'ok'})
            pad(svc.db, 'task.transition', {'id': task_id, 'by': AGENT, 'to': 'completed'})
            response = await waiting
            params = client.wire.sent[0][2]
            if version == '1.0':
                assert not params.get('configuration', {}).get('returnImmediately')
            else:
                assert params['configuration']['blocking'] is True
            assert response.task.id == task_id
            assert response.task.status.state == TaskState.TASK_STATE_COMPLETED
            assert artifact_texts(response.task) == {'out': ['ok']}

    asyncio.run(body())


@pytest.mark.parametrize('version', VERSIONS)
def test_cancel_is_honest(svc, version):
    """CANCELED is reported only once the scratchpad task is canceled: the local agent then
    cannot complete it."""

    async def body():
        async with client_for(svc.base_url, version) as client:
            task = (await send(client, text_message('cancel while working', new_id()))).task
            pad(svc.db, 'task.transition', {'id': task.id, 'by': AGENT, 'to': 'working'})
            canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
            assert canceled.status.state == TaskState.TASK_STATE_CANCELED
            local = pad(svc.db, 'task.get', {'id': task.id, 'agent': AGENT})
            assert local['state'] == 'canceled'
            with pytest.raises(PadError) as refused:
                pad(svc.db, 'task.transition', {'id': task.id, 'by': AGENT, 'to': 'completed'})
            assert refused.value.code == 'INVALID_TRANSITION'
            got = await client.get_task(GetTaskRequest(id=task.id))
            assert got.status.state == TaskState.TASK_STATE_CANCELED

    asyncio.run(body())


def test_locally_completed_task_is_not_cancelable(svc):
    async def body():
        async with client_for(svc.base_url, '1.0') as client:
            task = (await send(client, text_message('finish first', new_id()))).task
            pad(svc.db, 'task.transition', {'id': task.id, 'by': AGENT, 'to': 'working'})
            pad(svc.db, 'task.transition', {'id': task.id, 'by': AGENT, 'to': 'completed'})
            with pytest.raises(TaskNotCancelableError):
                await client.cancel_task(CancelTaskRequest(id=task.id))
            got = await client.get_task(GetTaskRequest(id=task.id))
            assert got.status.state == TaskState.TASK_STATE_COMPLETED

    asyncio.run(body())


def test_reused_message_id_with_other_content_is_refused(svc):
    async def body():
        message_id = new_id()
        async with client_for(svc.base_url, '1.0') as client:
            first = (await send(client, text_message('one thing', message_id))).task
            with pytest.raises(A2AError):
                await send(client, text_message('another thing', message_id))
            got = await client.get_task(GetTaskRequest(id=first.id))
            users = [m for m in got.history if m.role == Role.ROLE_USER]
            assert [m.parts[0].text for m in users] == ['one thing']

    asyncio.run(body())


@pytest.mark.parametrize('version', VERSIONS)
def test_input_required_round_trip(svc, version):
    """The local agent asks the client something (input-required with a reason): the client
    sees the question as the status message, answers in the same task, and the agent goes on."""

    async def body():
        async with client_for(svc.base_url, version) as client:
            task = (await send(client, text_message('deploy it', new_id()))).task
            delivered(svc.db, task.id)
            pad(svc.db, 'task.transition', {'id': task.id, 'by': AGENT, 'to': 'working'})
            pad(svc.db, 'task.transition', {'id': task.id, 'by': AGENT, 'to': 'input-required',
                                            'reason': 'Which environment?'})
            asked = await client.get_task(GetTaskRequest(id=task.id))
            assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            assert asked.status.message.role == Role.ROLE_AGENT
            assert [p.text for p in asked.status.message.parts] == ['Which environment?']
            answer = Message(message_id=new_id(), role=Role.ROLE_USER, parts=[Part(text='staging')],
                             task_id=task.id, context_id=task.context_id)
            again = (await send(client, answer)).task
            assert again.id == task.id
            assert [n['content'] for n in delivered(svc.db, task.id)] == ['staging']
            pad(svc.db, 'task.transition', {'id': task.id, 'by': AGENT, 'to': 'working'})
            pad(svc.db, 'task.transition', {'id': task.id, 'by': AGENT, 'to': 'completed'})
            done = await client.get_task(GetTaskRequest(id=task.id, history_length=1))
            assert done.status.state == TaskState.TASK_STATE_COMPLETED
            assert [m.parts[0].text for m in done.history] == ['staging']

    asyncio.run(body())


def test_cancel_racing_completion_is_consistent(svc):
    """The client cancels while the local agent completes, twelve times: whichever wins, what
    the client was told is what the store holds (CANCELED and the agent refused, or not
    cancelable and completed), never CANCELED over a completed task."""

    async def body():
        async with client_for(svc.base_url, '1.0') as client:
            for _ in range(12):
                task = (await send(client, text_message('race', new_id()))).task
                pad(svc.db, 'task.transition', {'id': task.id, 'by': AGENT, 'to': 'working'})
                complete = asyncio.create_task(asyncio.to_thread(
                    _complete, svc.db, task.id))
                try:
                    told = (await client.cancel_task(CancelTaskRequest(id=task.id))).status.state
                except TaskNotCancelableError:
                    told = 'not cancelable'
                agent_done = await complete
                local = pad(svc.db, 'task.get', {'id': task.id, 'agent': AGENT})['state']
                if told == TaskState.TASK_STATE_CANCELED:
                    assert local == 'canceled' and not agent_done
                else:
                    assert told == 'not cancelable', told
                    assert local == 'completed' and agent_done

    asyncio.run(body())


def _complete(db, task_id: str) -> bool:
    try:
        pad(db, 'task.transition', {'id': task_id, 'by': AGENT, 'to': 'completed'})
        return True
    except PadError as e:
        assert e.code == 'INVALID_TRANSITION', e
        return False

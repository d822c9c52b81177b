"""`serve --broker` across restarts and time: a kill -9 of the broker, or a restart of the
session asked, while the ask is open loses nothing; an ask queued for a session that comes back
while serve is down is found delivered when serve starts again; an ask the broker expired fails its task
with the reason (a broker whose asks expire after a few seconds, a gateway that checks them
every second)."""

import asyncio
import sqlite3
import time

import pytest

from a2a.types.a2a_pb2 import GetTaskRequest, TaskState

from harness import new_id, only_serve
from live import Broker, NodeSession, poll, start_gateway, texts
from sdk import client_for, send, text_message

pytestmark = only_serve
run = asyncio.run

WORKER = 'worker'
# Every broker of the module expires asks after 6 s (also one the gateway starts itself).
ENV = {'PI_INTERCOM_ASK_TIMEOUT_MS': '6000'}
WORKER_ID = 'worker-' + new_id()
ARGS = ('--assignee', WORKER, '--targets', WORKER_ID, '--probe-interval', '1')


@pytest.fixture(scope='module')
def hub(tmp_path_factory):
    home = tmp_path_factory.mktemp('gateway-restarts')
    agent_dir = home / 'agent'
    agent_dir.mkdir()
    broker = Broker(agent_dir, ENV)
    worker = NodeSession(agent_dir, WORKER, WORKER_ID)
    gateway = start_gateway(home / 'store.sqlite', agent_dir, *ARGS, env=ENV)
    hub = {'broker': broker, 'worker': worker, 'gateway': gateway, 'home': home}
    yield hub
    gateway = hub['gateway']
    alive = gateway.alive()
    gateway.stop()
    worker.stop()
    broker.stop()
    assert alive, ''.join(gateway.stderr_lines[-20:])


def test_kill_9_of_the_broker_while_the_ask_is_open_loses_nothing(hub):
    async def body():
        async with client_for(hub['gateway'].base_url, '1.0') as c:
            task = (await send(c, text_message('survive the broker', new_id()))).task
            ask = await asyncio.to_thread(hub['worker'].ask, task.id)
            await poll(c, task.id, TaskState.TASK_STATE_WORKING)
            hub['broker'].kill9()
            hub['broker'].start()
            # The ask was reloaded from the broker's store; the session registers again and
            # replies (queued if the gateway has not registered again yet).
            await asyncio.to_thread(hub['worker'].register)
            await asyncio.to_thread(hub['worker'].reply, ask, 'still here', queue_it=True)
            done = await poll(c, task.id, TaskState.TASK_STATE_COMPLETED)
            assert texts(done) == {'reply': ['still here']}

    run(body())


def test_a_session_that_restarts_answers_the_ask_it_got_before(hub):
    async def body():
        async with client_for(hub['gateway'].base_url, '1.0') as c:
            task = (await send(c, text_message('across your restart', new_id()))).task
            ask = await asyncio.to_thread(hub['worker'].ask, task.id)
            await asyncio.to_thread(hub['worker'].close)
            await asyncio.to_thread(hub['worker'].register)
            await asyncio.to_thread(hub['worker'].reply, ask, 'restarted and done')
            done = await poll(c, task.id, TaskState.TASK_STATE_COMPLETED)
            assert texts(done) == {'reply': ['restarted and done']}

    run(body())


def test_an_ask_that_expires_fails_its_task_with_the_reason(hub):
    async def body():
        async with client_for(hub['gateway'].base_url, '1.0') as c:
            task = (await send(c, text_message('nobody answers', new_id()))).task
            await asyncio.to_thread(hub['worker'].ask, task.id)
            failed = await poll(c, task.id, TaskState.TASK_STATE_FAILED, seconds=60)
            reason = failed.status.message.parts[0].text
            assert 'no longer open at the broker' in reason and 'expired' in reason, reason
            got = await c.get_task(GetTaskRequest(id=task.id))
            assert got.status.state == TaskState.TASK_STATE_FAILED

    run(body())


def ask_state(db, task_id: str, state: str) -> None:
    """Waits (bounded polls) until the gateway's ask of the task is in `state` in the store."""
    for _ in range(600):
        with sqlite3.connect(f'file:{db}?mode=ro', uri=True) as conn:
            row = conn.execute('SELECT state FROM a2a_asks WHERE task_id = ?', (task_id,)).fetchone()
        if row and row[0] == state:
            return
        time.sleep(0.1)
    raise AssertionError(f'the ask of {task_id} is {row}, not {state}')


def test_an_ask_delivered_while_serve_was_down_is_found_delivered_after_its_restart(hub):
    """Queued for the worker (away, addressed by its full id); serve is killed; the worker comes
    back and gets the ask from the broker's queue while serve is down (so serve is not told
    `delivered`); serve starts again, asks the broker (`delivery_status`), and the task is
    working; the reply completes it."""

    async def body():
        worker = hub['worker']
        await asyncio.to_thread(worker.close)
        async with client_for(hub['gateway'].base_url, '1.0') as c:
            message = text_message('queued across a crash', new_id())
            message.metadata.update({'agent-intercom/to': WORKER_ID})
            task = (await send(c, message)).task
        await asyncio.to_thread(ask_state, hub['home'] / 'store.sqlite', task.id, 'queued')
        hub['gateway'].kill9()
        await asyncio.to_thread(worker.register)
        ask = await asyncio.to_thread(worker.ask, task.id)
        hub['gateway'] = start_gateway(
            hub['home'] / 'store.sqlite', hub['broker'].agent_dir, *ARGS, env=ENV
        )
        async with client_for(hub['gateway'].base_url, '1.0') as c:
            await poll(c, task.id, TaskState.TASK_STATE_WORKING)
            await asyncio.to_thread(worker.reply, ask, 'done late', queue_it=True)
            done = await poll(c, task.id, TaskState.TASK_STATE_COMPLETED)
            assert texts(done) == {'reply': ['done late']}

    run(body())

"""`serve --broker` across restarts and time: a kill -9 of the broker, or a restart of the
session asked, while the ask is open loses nothing; an ask the broker expired fails its task
with the reason (a broker whose asks expire after a few seconds, a gateway that checks them
every second)."""

import asyncio

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
ARGS = ('--assignee', WORKER, '--probe-interval', '1')


@pytest.fixture(scope='module')
def hub(tmp_path_factory):
    home = tmp_path_factory.mktemp('gateway-restarts')
    agent_dir = home / 'agent'
    agent_dir.mkdir()
    broker = Broker(agent_dir, ENV)
    worker = NodeSession(agent_dir, WORKER, 'worker-' + new_id())
    gateway = start_gateway(home / 'store.sqlite', agent_dir, *ARGS, env=ENV)
    yield {'broker': broker, 'worker': worker, 'gateway': gateway}
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

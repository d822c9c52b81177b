"""Tasks created over HTTP survive kill -9 of the service: a new process on the same store
answers GetTask (and an earlier messageId) as before."""

import asyncio

from a2a.types.a2a_pb2 import CancelTaskRequest, GetTaskRequest, ListTasksRequest, TaskState

from harness import new_id, only_serve, start_serve
from sdk import client_for, send, text_message

pytestmark = only_serve


def test_tasks_survive_kill_9(tmp_path):
    db = tmp_path / 'store.sqlite'
    context_id = new_id()
    first = start_serve(db)
    try:

        async def create():
            made = {}
            async with client_for(first.base_url, '1.0') as v10:
                for name in ('kept', 'canceled'):
                    mid = new_id()
                    task = (await send(v10, text_message(name, mid, context_id))).task
                    made[name] = (task.id, mid)
                await v10.cancel_task(CancelTaskRequest(id=made['canceled'][0]))
            async with client_for(first.base_url, '0.3') as v03:
                mid = new_id()
                task = (await send(v03, text_message('over 0.3', mid, context_id))).task
                made['v03'] = (task.id, mid)
            return made

        made = asyncio.run(create())
    finally:
        first.kill9()
    assert first.proc.returncode == -9

    second = start_serve(db)
    try:

        async def check():
            async with client_for(second.base_url, '1.0') as client:
                for name, (task_id, mid) in made.items():
                    got = await client.get_task(GetTaskRequest(id=task_id))
                    assert got.id == task_id and got.context_id == context_id
                    assert [m.message_id for m in got.history] == [mid]
                    want = (
                        TaskState.TASK_STATE_CANCELED
                        if name == 'canceled'
                        else TaskState.TASK_STATE_SUBMITTED
                    )
                    assert got.status.state == want, name
                listed = await client.list_tasks(ListTasksRequest(context_id=context_id))
                assert sorted(t.id for t in listed.tasks) == sorted(i for i, _ in made.values())
                # The idempotency record is in the store too, not in the dead process.
                task_id, mid = made['kept']
                again = (await send(client, text_message('kept', mid, context_id))).task
                assert again.id == task_id
                fresh = (await send(client, text_message('after restart', new_id()))).task
                assert fresh.status.state == TaskState.TASK_STATE_SUBMITTED
                assert fresh.id not in {i for i, _ in made.values()}

        asyncio.run(check())
        assert second.alive()
    finally:
        second.stop()

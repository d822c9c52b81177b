"""The legacy 0.1 dialect (`tasks/send` with a client-chosen task id, no A2A-Version header) as
a raw client of that era would speak it, and its task seen through the 1.0 SDK client."""

import asyncio

import httpx

from a2a.types.a2a_pb2 import GetTaskRequest, ListTasksRequest, TaskState

from harness import new_id, only_serve
from sdk import client_for

pytestmark = only_serve


def call(service, method, params):
    body = {'jsonrpc': '2.0', 'id': 'legacy-1', 'method': method, 'params': params}
    with httpx.Client(timeout=30) as http:
        answer = http.post(service.rpc_url, json=body).json()
    assert answer['jsonrpc'] == '2.0' and answer['id'] == 'legacy-1', answer
    return answer


def test_tasks_send_get_cancel(service):
    task_id, session = f'legacy-{new_id()}', new_id()
    message = {'role': 'user', 'parts': [{'type': 'text', 'text': 'old client'}]}
    sent = call(service, 'tasks/send', {'id': task_id, 'sessionId': session, 'message': message})
    task = sent['result']
    assert task['id'] == task_id and task['sessionId'] == session
    assert task['status']['state'] == 'submitted'
    again = call(service, 'tasks/send', {'id': task_id, 'sessionId': session, 'message': message})
    assert again['result']['id'] == task_id
    got = call(service, 'tasks/get', {'id': task_id})['result']
    assert got['id'] == task_id and got['status']['state'] == 'submitted'
    canceled = call(service, 'tasks/cancel', {'id': task_id})['result']
    assert canceled['status']['state'] == 'canceled'
    assert call(service, 'tasks/cancel', {'id': task_id})['error']['code'] == -32002
    assert call(service, 'tasks/get', {'id': f'legacy-{new_id()}'})['error']['code'] == -32001


def test_sdk_client_reads_a_task_a_legacy_client_made(service):
    message = {'role': 'user', 'parts': [{'type': 'text', 'text': 'made in 0.1'}]}
    made = call(service, 'tasks/send', {'id': f'legacy-{new_id()}', 'message': message})
    sent = made['result']
    assert sent['status']['state'] == 'submitted'

    async def body():
        async with client_for(service.base_url, '1.0') as client:
            listed = await client.list_tasks(ListTasksRequest(page_size=100))
            assert listed.tasks and all(t.id for t in listed.tasks)
            # The 0.1 id is the client's; 1.0 names the same task by the server's id.
            texts = {t.history[0].parts[0].text: t for t in listed.tasks if t.history}
            assert 'made in 0.1' in texts
            got = await client.get_task(GetTaskRequest(id=texts['made in 0.1'].id))
            assert got.status.state == TaskState.TASK_STATE_SUBMITTED

    asyncio.run(body())

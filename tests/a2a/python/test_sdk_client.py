"""The Python a2a-sdk 1.3 client against the server: card, send, get, cancel, list, idempotent
first send, extension headers; protocol 1.0 and 0.3 (the SDK's v0.3 compat transport)."""

import asyncio
import json
import os

import httpx
import pytest

from a2a.client import A2ACardResolver, ClientCallContext, ClientConfig, ClientFactory
from a2a.client.card_resolver import parse_agent_card
from a2a.client.errors import A2AClientError
from a2a.compat.v0_3 import types as types_v03
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError

from harness import ROOT, new_id, only_serve
from sdk import VERSIONS, client_for, major_minor, send, text_message

run = asyncio.run


def test_card_resolution(service):
    async def body():
        async with httpx.AsyncClient() as http:
            card = await A2ACardResolver(http, service.base_url).get_agent_card()
            raw = (await http.get(service.base_url + '/.well-known/agent-card.json')).text
        assert card.name and card.description and card.version
        jsonrpc = [i for i in card.supported_interfaces if i.protocol_binding == 'JSONRPC']
        assert sorted(major_minor(i.protocol_version) for i in jsonrpc) == ['0.3', '1.0']
        assert {i.url for i in jsonrpc} == {service.rpc_url}
        assert card.skills and all(s.id and s.name for s in card.skills)
        assert list(card.default_input_modes) and list(card.default_output_modes)
        assert card.provider.organization
        assert card.documentation_url
        assert card.HasField('capabilities')
        # Nothing local in the public card: no store path, no checkout path, no home.
        for secret in filter(None, [str(service.db or ''), str(ROOT), os.environ.get('HOME')]):
            assert secret not in raw, f'the card shows {secret}'

    run(body())


def test_card_serves_v03_clients(service):
    """A 0.3 client reads the top-level url / protocolVersion of the card at the well-known
    path; the SDK's own compat server adds them next to supportedInterfaces."""

    async def body():
        async with httpx.AsyncClient() as http:
            raw = (await http.get(service.base_url + '/.well-known/agent-card.json')).json()
        legacy = types_v03.AgentCard.model_validate(raw)
        assert legacy.url == service.rpc_url
        assert major_minor(legacy.protocol_version) == '0.3'
        assert (legacy.preferred_transport or 'JSONRPC') == 'JSONRPC'

    run(body())


@only_serve
@pytest.mark.parametrize('path', ['/.well-known/agent.json', '/v1/a2a/agent-card'])
def test_legacy_card_routes(service, path):
    async def body():
        async with httpx.AsyncClient() as http:
            current = (await http.get(service.base_url + '/.well-known/agent-card.json')).json()
            response = await http.get(service.base_url + path)
        assert response.status_code == 200
        assert response.headers['content-type'].startswith('application/json')
        card = parse_agent_card(response.json())
        assert card.name == current['name']
        assert service.rpc_url in {i.url for i in card.supported_interfaces}
        assert str(service.db) not in response.text and str(ROOT) not in response.text

    run(body())


def check_wire(client, version: str, method_10: str, method_03: str) -> dict:
    header, method, params = client.wire.last()
    if version == '1.0':
        assert (header, method) == ('1.0', method_10)
    else:
        assert (header, method) == ('0.3', method_03)
    return params


@pytest.mark.parametrize('version', VERSIONS)
def test_send_return_immediately_is_submitted(service, version):
    async def body():
        async with client_for(service.base_url, version) as client:
            message_id = new_id()
            response = await send(client, text_message('summarise the diff', message_id))
            params = check_wire(client, version, 'SendMessage', 'message/send')
            if version == '1.0':
                assert params['configuration']['returnImmediately'] is True
            else:
                assert params['configuration']['blocking'] is False
            assert response.HasField('task')
            task = response.task
            assert task.id and task.context_id
            assert task.status.state == TaskState.TASK_STATE_SUBMITTED
            assert [m.message_id for m in task.history] == [message_id]
            assert task.history[0].parts[0].text == 'summarise the diff'

    run(body())


@pytest.mark.parametrize('version', VERSIONS)
def test_get_task(service, version):
    async def body():
        async with client_for(service.base_url, version) as client:
            message_id = new_id()
            sent = (await send(client, text_message('get me', message_id))).task
            got = await client.get_task(GetTaskRequest(id=sent.id))
            check_wire(client, version, 'GetTask', 'tasks/get')
            assert got.id == sent.id and got.context_id == sent.context_id
            assert got.status.state == TaskState.TASK_STATE_SUBMITTED
            assert [m.message_id for m in got.history] == [message_id]
            assert got.history[0].parts[0].text == 'get me'

    run(body())


@pytest.mark.parametrize('version', VERSIONS)
def test_get_unknown_task_is_not_found(service, version):
    async def body():
        async with client_for(service.base_url, version) as client:
            with pytest.raises(TaskNotFoundError):
                await client.get_task(GetTaskRequest(id=new_id()))

    run(body())


@pytest.mark.parametrize('version', VERSIONS)
def test_cancel_then_cancel_again(service, version):
    async def body():
        async with client_for(service.base_url, version) as client:
            sent = (await send(client, text_message('cancel me', new_id()))).task
            canceled = await client.cancel_task(CancelTaskRequest(id=sent.id))
            check_wire(client, version, 'CancelTask', 'tasks/cancel')
            assert canceled.id == sent.id
            assert canceled.status.state == TaskState.TASK_STATE_CANCELED
            got = await client.get_task(GetTaskRequest(id=sent.id))
            assert got.status.state == TaskState.TASK_STATE_CANCELED
            with pytest.raises(TaskNotCancelableError):
                await client.cancel_task(CancelTaskRequest(id=sent.id))
            with pytest.raises(TaskNotFoundError):
                await client.cancel_task(CancelTaskRequest(id=new_id()))

    run(body())


@only_serve  # the SDK's own server makes a new task each time (no idempotency)
@pytest.mark.parametrize('version', VERSIONS)
def test_repeated_message_id_returns_the_same_task(service, version):
    async def body():
        message_id = new_id()
        async with client_for(service.base_url, version) as first:
            one = (await send(first, text_message('once', message_id))).task
        # A second client, as after a lost response and a restart of the caller.
        async with client_for(service.base_url, version) as second:
            again = (await send(second, text_message('once', message_id))).task
            other = (await send(second, text_message('once', new_id()))).task
        assert again.id == one.id and again.context_id == one.context_id
        assert other.id != one.id
        assert [m.message_id for m in again.history] == [message_id]

    run(body())


def test_list_tasks_v10(service):
    async def body():
        context_id = new_id()
        async with client_for(service.base_url, '1.0') as client:
            ids = []
            for n in range(3):
                task = (await send(client, text_message(f'list {n}', new_id(), context_id))).task
                assert task.context_id == context_id
                ids.append(task.id)
            await client.cancel_task(CancelTaskRequest(id=ids[0]))
            listed = await client.list_tasks(ListTasksRequest(context_id=context_id))
            check_wire(client, '1.0', 'ListTasks', '')
            assert sorted(t.id for t in listed.tasks) == sorted(ids)
            states = {t.id: t.status.state for t in listed.tasks}
            assert states[ids[0]] == TaskState.TASK_STATE_CANCELED
            assert states[ids[1]] == states[ids[2]] == TaskState.TASK_STATE_SUBMITTED
            canceled = await client.list_tasks(
                ListTasksRequest(context_id=context_id, status=TaskState.TASK_STATE_CANCELED)
            )
            assert [t.id for t in canceled.tasks] == [ids[0]]
            # Pages of one: every task once, then no token.
            seen, token = [], ''
            for _ in range(10):
                page = await client.list_tasks(
                    ListTasksRequest(context_id=context_id, page_size=1, page_token=token)
                )
                assert len(page.tasks) <= 1
                seen += [t.id for t in page.tasks]
                token = page.next_page_token
                if not token:
                    break
            assert sorted(seen) == sorted(ids)

    run(body())


def test_list_tasks_v03():
    pytest.skip('ListTasks has no 0.3 JSON-RPC method; the SDK compat transport refuses it locally')


@pytest.mark.parametrize('version', VERSIONS)
def test_unrequired_extension_header_is_accepted(service, version):
    """A2A-Extensions naming an extension the agent does not know is ignored (spec 1.0 §4.6);
    the SDK sends it as a service parameter (and as X-A2A-Extensions on 0.3)."""
    unknown = 'https://example.invalid/ext/unknown/v1'

    async def body():
        async with client_for(service.base_url, version) as client:
            context = ClientCallContext(service_parameters={'A2A-Extensions': unknown})
            response = await send(client, text_message('ext', new_id()), context=context)
            assert response.task.status.state == TaskState.TASK_STATE_SUBMITTED
            headers = client.wire.headers[-1]
        assert headers['a2a-extensions'] == unknown
        if version == '0.3':
            assert headers['x-a2a-extensions'] == unknown

    run(body())


def test_wire_is_json_rpc_2(service):
    """What the SDK parses leniently, checked strictly: each answer is one JSON-RPC 2.0 object
    echoing the request id, with application/json."""

    async def body():
        async with httpx.AsyncClient() as http:
            response = await http.post(
                service.rpc_url,
                headers={'A2A-Version': '1.0'},
                json={'jsonrpc': '2.0', 'id': 'req-7', 'method': 'GetTask',
                      'params': {'id': new_id()}},
            )
        assert response.headers['content-type'].startswith('application/json')
        answer = response.json()
        assert answer['jsonrpc'] == '2.0' and answer['id'] == 'req-7'
        assert answer['error']['code'] == -32001 and 'result' not in answer
        json.dumps(answer)

    run(body())


@only_serve
def test_concurrent_repeats_make_one_task(service):
    """Sixteen clients send the same messageId at once (a retry storm after a lost answer):
    one task, the same answer to all; sixteen other ids make sixteen tasks."""
    message_id = new_id()

    async def one(mid: str) -> str:
        async with client_for(service.base_url, '1.0') as client:
            return (await send(client, text_message('storm', mid))).task.id

    async def body():
        same = await asyncio.gather(*(one(message_id) for _ in range(16)))
        distinct = await asyncio.gather(*(one(new_id()) for _ in range(16)))
        assert len(set(same)) == 1
        assert len(set(distinct)) == 16 and same[0] not in distinct

    run(body())


@only_serve
def test_default_sdk_client_blocking_send_is_answered(service):
    """The SDK's defaults (blocking send, its own httpx client with a 5 s timeout) with nobody
    working on the task: an answer with the task as it stands, not a client timeout."""

    async def body():
        client = await ClientFactory(ClientConfig(streaming=False)).create_from_url(
            service.base_url
        )
        try:
            response = await send(client, text_message('nobody home', new_id()))
        finally:
            await client.close()
        assert response.task.status.state == TaskState.TASK_STATE_SUBMITTED

    run(body())


@only_serve
@pytest.mark.parametrize('version', VERSIONS)
@pytest.mark.parametrize('size', [1_100_000, 4_000_000])
def test_an_oversized_message_is_an_http_413_not_a_broken_connection(service, version, size):
    """A message over the 1 MiB body limit: the SDK sends the whole body, then reads the 413
    (the service takes and discards the rest of the body rather than resetting the connection
    under it), and reports it as the HTTP status, not as a network error."""

    async def body():
        async with client_for(service.base_url, version) as client:
            with pytest.raises(A2AClientError) as raised:
                await send(client, text_message('x' * size, new_id()))
        cause = raised.value.__cause__
        assert isinstance(cause, httpx.HTTPStatusError), repr(cause)
        assert cause.response.status_code == 413
        assert cause.response.json()['error']['code'] == 'ENVELOPE_TOO_LARGE'

    run(body())

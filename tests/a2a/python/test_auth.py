"""Access: the bearer token through the SDK client (card public, POST guarded), and
`--require-signatures`: a request without an RFC 9421 signature is refused with HTTP 401 even
when it names the signing extension."""

import asyncio
import json
import os

import httpx
import pytest

from a2a.client import A2ACardResolver, ClientCallContext, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientError
from a2a.types.a2a_pb2 import GetTaskRequest, TaskState

from harness import new_id, only_serve, pad, start_serve
from sdk import send, text_message

pytestmark = only_serve

TOKEN = 'interop-token-0123456789abcdef'


@pytest.fixture(scope='module')
def guarded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('auth')
    token_file = tmp / 'token'
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, (TOKEN + '\n').encode())
    os.close(fd)
    service = start_serve(tmp / 'store.sqlite', '--token-file', str(token_file))
    yield service
    service.stop()


def test_card_is_public_and_declares_bearer(guarded):
    with httpx.Client() as http:
        response = http.get(guarded.base_url + '/.well-known/agent-card.json')
    assert response.status_code == 200
    card = response.json()
    schemes = card['securitySchemes']
    assert any(s.get('httpAuthSecurityScheme', {}).get('scheme', '').lower() == 'bearer'
               for s in schemes.values())
    assert TOKEN not in response.text


def test_sdk_client_with_and_without_the_token(guarded):
    async def body():
        async with httpx.AsyncClient(timeout=30) as anonymous:
            card = await A2ACardResolver(anonymous, guarded.base_url).get_agent_card()
            client = ClientFactory(
                ClientConfig(streaming=False, polling=True, httpx_client=anonymous)
            ).create(card)
            with pytest.raises(A2AClientError, match='401'):
                await send(client, text_message('no token', new_id()))
            wrong = ClientCallContext(service_parameters={'Authorization': 'Bearer ' + 'x' * 30})
            with pytest.raises(A2AClientError, match='401'):
                await send(client, text_message('wrong token', new_id()), context=wrong)
        headers = {'Authorization': f'Bearer {TOKEN}'}
        async with httpx.AsyncClient(timeout=30, headers=headers) as http:
            client = ClientFactory(
                ClientConfig(streaming=False, polling=True, httpx_client=http)
            ).create(card)
            task = (await send(client, text_message('with token', new_id()))).task
            assert task.status.state == TaskState.TASK_STATE_SUBMITTED
            got = await client.get_task(GetTaskRequest(id=task.id))
            assert got.id == task.id

    asyncio.run(body())


def test_unauthorized_answer_is_stable(guarded):
    body = {'jsonrpc': '2.0', 'id': 1, 'method': 'GetTask', 'params': {'id': new_id()}}
    with httpx.Client() as http:
        response = http.post(guarded.rpc_url, json=body, headers={'A2A-Version': '1.0'})
    assert response.status_code == 401
    assert response.headers['www-authenticate'].lower().startswith('bearer')
    assert response.json()['error']['code'] == 'ACCESS_DENIED'


@pytest.fixture(scope='module')
def signed_only(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('sig')
    keys = tmp / 'keys'
    keys.mkdir(mode=0o700)
    service = start_serve(tmp / 'store.sqlite', '--require-signatures', '--keys', str(keys))
    yield service
    service.stop()


def test_card_requires_the_signing_extension(signed_only):
    with httpx.Client() as http:
        card = http.get(signed_only.base_url + '/.well-known/agent-card.json').json()
    required = [e for e in card['capabilities']['extensions'] if e.get('required')]
    assert len(required) == 1 and required[0]['uri']


@pytest.mark.parametrize('name_extension', [False, True])
def test_unsigned_requests_are_refused(signed_only, name_extension):
    """Naming the extension is not signing: without Signature-Input / Signature the request is
    refused with HTTP 401 SIGNATURE_MISSING (one that does not even name the extension may get
    -32008 instead), and nothing is stored or delivered."""
    with httpx.Client() as http:
        card = http.get(signed_only.base_url + '/.well-known/agent-card.json').json()
        uri = card['capabilities']['extensions'][0]['uri']
        headers = {'A2A-Version': '1.0', **({'A2A-Extensions': uri} if name_extension else {})}
        send_body = {
            'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage',
            'params': {'message': {'messageId': new_id(), 'role': 'ROLE_USER',
                                   'parts': [{'text': 'unsigned'}]},
                       'configuration': {'returnImmediately': True}},
        }
        response = http.post(signed_only.rpc_url, content=json.dumps(send_body), headers={
            'Content-Type': 'application/json', **headers})
    if response.status_code == 200 and not name_extension:
        assert response.json()['error']['code'] == -32008, response.text
    else:
        assert response.status_code == 401, response.text
        assert response.json()['error']['code'] == 'SIGNATURE_MISSING'
    assert pad(signed_only.db, 'unread', {'agent': 'a2a'}) == []


def test_refused_requests_leave_keep_alive_usable(guarded):
    """A 401 answered before the body is read must either keep the connection readable for the
    next request or say `Connection: close`: a pooling client (httpx, under the SDK) must
    never see its next request dropped."""
    body = {'jsonrpc': '2.0', 'id': 1, 'method': 'GetTask', 'params': {'id': new_id()}}
    outcomes = []
    with httpx.Client(timeout=30) as http:
        for _ in range(100):
            try:
                outcomes.append(http.post(guarded.rpc_url, json=body).status_code)
            except httpx.TransportError as e:
                outcomes.append(type(e).__name__)
    assert outcomes == [401] * 100, sorted(set(map(str, outcomes)))

"""`--require-signatures` with the official Python SDK client whose HTTP client signs every POST
per docs/http-signatures.md (RFC 9421, Ed25519, RFC 9530 Content-Digest), written here from the
RFCs with `cryptography` only: an independent signer against the service's verifier. Signed
requests from an enrolled key are served in 1.0 and 0.3, streams included; a replay, a changed
body, an unknown key and a stale signature get 401 with the stable code."""

import asyncio
import base64
import hashlib
import json
import secrets
import subprocess
import time
from contextlib import aclosing

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)

from harness import AIC_BIN, new_id, only_serve, pad, start_serve
from sdk import VERSIONS, major_minor, send, text_message

pytestmark = only_serve

TAG = 'agent-intercom-a2a@1'
ALWAYS = ['@method', '@target-uri', 'content-type', 'content-digest']
WHEN_SENT = ['a2a-version', 'a2a-extensions', 'x-a2a-extensions']


def sign_headers(key, keyid, method, url, headers, body, created=None, lifetime=60, nonce=None):
    """Content-Digest, Signature-Input and Signature for one request (label `a2a`)."""
    digest = 'sha-256=:' + base64.b64encode(hashlib.sha256(body).digest()).decode() + ':'
    values = {'@method': method, '@target-uri': url, 'content-digest': digest}
    for name, value in headers.items():
        values.setdefault(name.lower(), value.strip())
    covered = ALWAYS + [n for n in WHEN_SENT if n in values]
    created = int(time.time()) if created is None else created
    nonce = nonce or base64.urlsafe_b64encode(secrets.token_bytes(16)).decode().rstrip('=')
    params = (
        '(' + ' '.join(f'"{c}"' for c in covered) + ')'
        + f';created={created};expires={created + lifetime};nonce="{nonce}"'
        + f';keyid="{keyid}";alg="ed25519";tag="{TAG}"'
    )
    lines = [f'"{c}": {values[c]}' for c in covered] + [f'"@signature-params": {params}']
    signature = key.sign('\n'.join(lines).encode())
    return {
        'Content-Digest': digest,
        'Signature-Input': f'a2a={params}',
        'Signature': 'a2a=:' + base64.b64encode(signature).decode() + ':',
    }


class Signer(httpx.Auth):
    """Signs every POST as it goes out (after the SDK set its headers)."""

    requires_request_body = True

    def __init__(self, key, keyid):
        self.key, self.keyid = key, keyid
        self.signed: list[httpx.Request] = []

    def auth_flow(self, request):
        if request.method == 'POST':
            extra = sign_headers(self.key, self.keyid, 'POST', str(request.url),
                                 dict(request.headers), request.content)
            request.headers.update(extra)
            self.signed.append(request)
        yield request


def enroll(keys, keyid, key) -> None:
    pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo)
    path = keys.parent / f'{keyid}.pub'
    path.write_bytes(pem)
    done = subprocess.run([AIC_BIN, 'keys', 'import', '--id', keyid, '--public', str(path),
                           '--keys', str(keys)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope='module')
def signed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('signed')
    keys = tmp / 'keys'
    key = Ed25519PrivateKey.generate()
    enroll(keys, 'interop-client', key)
    service = start_serve(tmp / 'store.sqlite', '--require-signatures', '--keys', str(keys))
    with httpx.Client() as http:
        card = http.get(service.base_url + '/.well-known/agent-card.json').json()
    uri = next(e['uri'] for e in card['capabilities']['extensions'] if e.get('required'))
    yield service, key, uri
    alive = service.alive()
    service.stop()
    assert alive, ''.join(service.stderr_lines[-20:])


@pytest.mark.parametrize('version', VERSIONS)
def test_sdk_client_with_signed_requests(signed, version):
    service, key, uri = signed
    signer = Signer(key, 'interop-client')

    async def body():
        headers = {'A2A-Extensions': uri}
        async with httpx.AsyncClient(timeout=30, auth=signer, headers=headers) as http:
            card = await A2ACardResolver(http, service.base_url).get_agent_card()
            keep = [i for i in card.supported_interfaces if i.protocol_binding == 'JSONRPC'
                    and major_minor(i.protocol_version) == version]
            del card.supported_interfaces[:]
            card.supported_interfaces.extend(keep)
            config = ClientConfig(streaming=False, polling=True, httpx_client=http)
            client = ClientFactory(config).create(card)
            task = (await send(client, text_message(f'signed {version}', new_id()))).task
            assert task.status.state == TaskState.TASK_STATE_SUBMITTED
            got = await client.get_task(GetTaskRequest(id=task.id))
            assert got.id == task.id
            canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
            assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        assert len(signer.signed) == 3

    asyncio.run(body())


@pytest.mark.parametrize('version', VERSIONS)
def test_sdk_streaming_client_with_signed_requests(signed, version):
    """Streams are signed requests like the others: a streamed send and a subscription, each
    signed, followed to the completion a local agent makes through `pad`."""
    service, key, uri = signed
    signer = Signer(key, 'interop-client')

    async def body():
        headers = {'A2A-Extensions': uri}
        async with httpx.AsyncClient(timeout=30, auth=signer, headers=headers) as http:
            card = await A2ACardResolver(http, service.base_url).get_agent_card()
            keep = [i for i in card.supported_interfaces if i.protocol_binding == 'JSONRPC'
                    and major_minor(i.protocol_version) == version]
            del card.supported_interfaces[:]
            card.supported_interfaces.extend(keep)
            config = ClientConfig(streaming=True, polling=False, httpx_client=http)
            client = ClientFactory(config).create(card)
            request = SendMessageRequest(message=text_message(f'signed stream {version}', new_id()))
            async with aclosing(client.send_message(request)) as stream:
                task = (await anext(stream)).task
            assert task.status.state == TaskState.TASK_STATE_SUBMITTED
            states = []
            subscription = client.subscribe(SubscribeToTaskRequest(id=task.id))
            async with aclosing(subscription) as stream:
                async for event in stream:
                    if event.HasField('task'):
                        for to in ('working', 'completed'):
                            await asyncio.to_thread(pad, service.db, 'task.transition',
                                                    {'id': task.id, 'by': 'a2a', 'to': to})
                    else:
                        states.append(event.status_update.status.state)
            assert states == [TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]
        assert len(signer.signed) == 2

    asyncio.run(body())


def raw(service, uri, key, keyid='interop-client', body=None, tamper=None, **sign):
    body = body or json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'GetTask',
                               'params': {'id': new_id()}}).encode()
    headers = {'Content-Type': 'application/json', 'A2A-Version': '1.0', 'A2A-Extensions': uri}
    headers.update(sign_headers(key, keyid, 'POST', service.rpc_url, headers, body, **sign))
    sent = tamper(body) if tamper else body
    with httpx.Client(timeout=30) as http:
        return http.post(service.rpc_url, content=sent, headers=headers), headers, sent


def code_of(response) -> str:
    assert response.status_code == 401, response.text
    return response.json()['error']['code']


def test_signed_raw_request_then_its_replay(signed):
    service, key, uri = signed
    first, headers, body = raw(service, uri, key)
    assert first.status_code == 200 and first.json()['error']['code'] == -32001
    with httpx.Client(timeout=30) as http:
        again = http.post(service.rpc_url, content=body, headers=headers)
    assert code_of(again) == 'REPLAYED'


def test_changed_body_unknown_key_stale_and_unsigned(signed):
    service, key, uri = signed
    changed, _, _ = raw(service, uri, key, tamper=lambda b: b.replace(b'GetTask', b'ListTasks'))
    assert code_of(changed) == 'CONTENT_DIGEST_MISMATCH'
    stranger = Ed25519PrivateKey.generate()
    unknown, _, _ = raw(service, uri, stranger, keyid='nobody-enrolled-this')
    assert code_of(unknown) == 'UNKNOWN_SIGNING_KEY'
    wrong_key, _, _ = raw(service, uri, stranger)
    assert code_of(wrong_key) == 'SIGNATURE_INVALID'
    stale, _, _ = raw(service, uri, key, created=int(time.time()) - 600)
    assert code_of(stale) in {'SIGNATURE_EXPIRED', 'SIGNATURE_INVALID'}
    with httpx.Client(timeout=30) as http:
        unsigned = http.post(service.rpc_url, json={'jsonrpc': '2.0', 'id': 1, 'method': 'GetTask',
                                                    'params': {'id': new_id()}},
                             headers={'A2A-Version': '1.0', 'A2A-Extensions': uri})
    assert code_of(unsigned) == 'SIGNATURE_MISSING'

"""The official Python a2a-sdk client, as an A2A user would set it up, plus a record of what it
put on the wire (so a test can say which protocol version it actually spoke)."""

import contextlib
import json

import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest

VERSIONS = ['1.0', '0.3']


class Wire:
    """The JSON-RPC requests the SDK sent: (A2A-Version header, method, params)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str | None, str, dict]] = []
        self.headers: list[httpx.Headers] = []

    async def hook(self, request: httpx.Request) -> None:
        if request.method != 'POST':
            return
        body = json.loads(request.content)
        self.headers.append(request.headers)
        self.sent.append((request.headers.get('a2a-version'), body['method'], body.get('params')))

    def last(self) -> tuple[str | None, str, dict]:
        return self.sent[-1]


def major_minor(version: str) -> str:
    return '.'.join(version.split('.')[:2])


@contextlib.asynccontextmanager
async def client_for(
    base_url: str,
    version: str,
    *,
    polling: bool = True,
    streaming: bool = False,
    timeout: float = 30,
):
    """A client for the card's JSON-RPC interface of `version` ('1.0' or '0.3'); a streaming
    client (`streaming=True`) sends with SendStreamingMessage / message/stream.

    1.0: the SDK's own negotiation (`ClientFactory.create_from_url`) picks the 1.0 interface.
    0.3: the SDK prefers 1.0 when a card lists both on one URL, so the card it resolved is given
    to the factory with only its 0.3 interface, which selects the SDK's v0.3 compat transport.
    """
    wire = Wire()
    http = httpx.AsyncClient(timeout=timeout, event_hooks={'request': [wire.hook]})
    config = ClientConfig(streaming=streaming, polling=polling, httpx_client=http)
    factory = ClientFactory(config)
    try:
        if version == '1.0':
            client = await factory.create_from_url(base_url)
        else:
            card = await A2ACardResolver(http, base_url).get_agent_card()
            keep = [
                i
                for i in card.supported_interfaces
                if i.protocol_binding == 'JSONRPC' and major_minor(i.protocol_version) == version
            ]
            assert keep, f'the card has no JSONRPC {version} interface'
            del card.supported_interfaces[:]
            card.supported_interfaces.extend(keep)
            client = factory.create(card)
        client.wire = wire
        yield client
        await client.close()
    finally:
        await http.aclose()


def text_message(text: str, message_id: str, context_id: str | None = None) -> Message:
    message = Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)])
    if context_id:
        message.context_id = context_id
    return message


async def send(client, message: Message, **context):
    """SendMessage; the one StreamResponse of a non-streaming client."""
    request = SendMessageRequest(message=message)
    responses = [r async for r in client.send_message(request, **context)]
    assert len(responses) == 1, responses
    return responses[0]

"""A small client of the test peer, of our own: a raw TLS socket to 127.0.0.1 with SNI
`peer.example`, trusting only the given CA; requests signed and responses verified (including
the `;req` binding to our request's signature) with `http-message-signatures` 3.0.0.

It is what test_peer.py drives the peer with, independently of the Rust line. Every knob of a
request can be bent (components, parameters, headers, body after signing) to test refusals.
"""

import json
import socket
import ssl
import time
import uuid
from dataclasses import dataclass, field

import http_sf
from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_pem_public_key
from http_message_signatures import ContentDigest, HTTPMessageSigner, MappingKeyResolver, algorithms

from line_profile import (
    LABEL,
    MAX_WINDOW,
    PARAMS,
    PROTOCOL,
    REQUEST_COMPONENTS,
    RESPONSE_COMPONENTS,
    SKEW,
    Headers,
    OwnClockVerifier,
    RequestView,
    ResponseView,
    nonce,
    serialized,
    utc,
)

@dataclass
class Response:
    status: int | None  # None: the connection closed with no response
    headers: Headers
    body: bytes
    request: RequestView
    raw: bytes = b''
    request_body: bytes = b''  # the body bytes we sent

    def json(self):
        return json.loads(self.body)

    @property
    def signed(self) -> bool:
        return 'signature' in self.headers and 'signature-input' in self.headers


@dataclass
class Identity:
    """Who the client is and whom it talks to."""

    workload_id: str
    peer_id: str
    key_id: str
    private_key_pem: bytes
    ext: str
    peer_keys: dict = field(default_factory=dict)  # key_id -> public PEM bytes


class Client:
    def __init__(self, port: int, ca_file: str, identity: Identity, *,
                 hostname: str = 'peer.example', path: str = '/a2a/jsonrpc',
                 authority: str | None = None, timeout: float = 20):
        self.port, self.ca_file, self.id = port, ca_file, identity
        self.hostname, self.path, self.timeout = hostname, path, timeout
        # What the Host header says (and so what @authority signs): hostname:port by default.
        self.authority = authority or f'{hostname}:{port}'
        self.signer = HTTPMessageSigner(
            signature_algorithm=algorithms.ED25519,
            key_resolver=MappingKeyResolver(public_keys={}, private_keys={
                identity.key_id: load_pem_private_key(identity.private_key_pem, None)}),
        )

    # -- requests ----------------------------------------------------------------------------

    def rpc(self, method: str, params: dict, rpc_id=None) -> bytes:
        return json.dumps({'jsonrpc': '2.0', 'id': rpc_id or str(uuid.uuid4()),
                           'method': method, 'params': params}).encode()

    def send_message(self, text: str, message_id: str | None = None, **kw) -> 'Response':
        params = {'message': {'messageId': message_id or str(uuid.uuid4()), 'role': 'ROLE_USER',
                              'parts': [{'text': text}]},
                  'configuration': {'returnImmediately': True}}
        return self.call(self.rpc('SendMessage', params), **kw)

    def get_task(self, task_id: str, **kw) -> 'Response':
        return self.call(self.rpc('GetTask', {'id': task_id}), **kw)

    def cancel_task(self, task_id: str, **kw) -> 'Response':
        return self.call(self.rpc('CancelTask', {'id': task_id}), **kw)

    def build(self, body: bytes, *, components=REQUEST_COMPONENTS, tag=PROTOCOL,
              created: int | None = None, expires: int | None = None, the_nonce=None,
              key_id=None, issuer=None, audience=None, extensions=None, query: str = '',
              headers_after: dict | None = None, body_after: bytes | None = None,
              digest: str | None = None, sign: bool = True) -> tuple[RequestView, bytes]:
        """A signed request and its wire bytes. `the_nonce=False` signs with no nonce;
        `digest` replaces the Content-Digest value
        (signed as given); `headers_after` / `body_after` change the message after signing (to
        break it), a None value deleting that header."""
        created = int(time.time()) if created is None else created
        expires = created + 60 if expires is None else expires
        url = f'https://{self.authority}{self.path}' + (f'?{query}' if query else '')
        headers = Headers([
            ('Host', self.authority),
            ('Content-Type', 'application/json'),
            ('A2A-Version', '1.0'),
            ('A2A-Extensions', self.id.ext if extensions is None else extensions),
            ('Intercom-Issuer', self.id.workload_id if issuer is None else issuer),
            ('Intercom-Audience', self.id.peer_id if audience is None else audience),
            ('Content-Digest', digest or ContentDigest.create(body)),
        ])
        request = RequestView('POST', url, headers)
        if sign:
            self.signer.sign(request, key_id=key_id or self.id.key_id, label=LABEL, tag=tag,
                             created=utc(created), expires=utc(expires),
                             nonce=nonce() if the_nonce is None else (the_nonce or None),
                             covered_component_ids=components, use_existing_digest=True)
        for name, value in (headers_after or {}).items():
            if value is None:
                del headers[name]
            else:
                headers[name] = value
        if body_after is not None:
            body = body_after
        return request, self.wire(request, body, query)

    def wire(self, request: RequestView, body: bytes, query: str = '') -> bytes:
        """The HTTP/1.1 bytes of `request` with `body` (Content-Length added)."""
        target = self.path + (f'?{query}' if query else '')
        head = f'POST {target} HTTP/1.1\r\n'
        for name, value in request.headers.items():
            head += f'{name}: {value}\r\n'
        head += f'Content-Length: {len(body)}\r\nConnection: close\r\n\r\n'
        return head.encode('latin-1') + body

    def call(self, body: bytes, **kw) -> Response:
        request, raw = self.build(body, **kw)
        return self.exchange(request, raw)

    # -- transport ---------------------------------------------------------------------------

    def context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(cafile=self.ca_file)  # the test CA only, no system roots
        ctx.check_hostname = True
        return ctx

    def exchange_kept_alive(self, messages: list) -> list:
        """Several (request, raw) on one connection, each without `Connection: close`; each
        response is read by its Content-Length."""
        out = []
        with socket.create_connection(('127.0.0.1', self.port), timeout=self.timeout) as tcp:
            with self.context().wrap_socket(tcp, server_hostname=self.hostname) as tls:
                pending = b''
                for request, raw in messages:
                    tls.sendall(raw.replace(b'Connection: close\r\n', b''))
                    while b'\r\n\r\n' not in pending:
                        pending += tls.recv(65536)
                    head, _, rest = pending.partition(b'\r\n\r\n')
                    length = parse_response(head + b'\r\n\r\n', request).headers.get(
                        'content-length')
                    while len(rest) < int(length):
                        rest += tls.recv(65536)
                    data = head + b'\r\n\r\n' + rest[:int(length)]
                    pending = rest[int(length):]
                    response = parse_response(data, request)
                    response.request_body = raw.partition(b'\r\n\r\n')[2]
                    out.append(response)
        return out

    def exchange(self, request: RequestView, raw: bytes) -> Response:
        with socket.create_connection(('127.0.0.1', self.port), timeout=self.timeout) as tcp:
            with self.context().wrap_socket(tcp, server_hostname=self.hostname) as tls:
                tls.sendall(raw)
                data = b''
                while True:
                    try:
                        chunk = tls.recv(65536)
                    except (ssl.SSLError, ConnectionResetError):
                        break
                    if not chunk:
                        break
                    data += chunk
        response = parse_response(data, request)
        response.request_body = raw.partition(b'\r\n\r\n')[2]
        return response

    # -- response verification ---------------------------------------------------------------

    def verify(self, response: Response, *, now: int | None = None) -> dict:
        """Verify a response as the line must: one `a2a` label, the exact components (with the
        `;req` binding to our request's signature), the six parameters, the time rules, the
        digest over the received bytes, a known peer key, issuer and audience. Returns the
        signature parameters; raises AssertionError or the library's InvalidSignature."""
        headers = response.headers
        inputs = http_sf.parse(headers['signature-input'].encode(), tltype='dictionary')
        assert list(inputs) == [LABEL], list(inputs)
        members, params = inputs[LABEL]
        covered = tuple(_item(name, p) for name, p in members)
        assert covered == tuple(serialized(c) for c in RESPONSE_COMPONENTS), covered
        assert set(params) == PARAMS, params
        assert params['alg'] == 'ed25519' and params['tag'] == PROTOCOL, params
        now = int(time.time()) if now is None else now
        assert abs(now - params['created']) <= SKEW, (now, params)
        assert now < params['expires'], (now, params)
        assert params['expires'] - params['created'] <= MAX_WINDOW, params
        assert params['keyid'] in self.id.peer_keys, params['keyid']
        verifier = OwnClockVerifier(
            signature_algorithm=algorithms.ED25519,
            key_resolver=MappingKeyResolver(private_keys={}, public_keys={
                k: load_pem_public_key(v) for k, v in self.id.peer_keys.items()}),
        )
        view = ResponseView(response.status, headers, response.request)
        verifier.verify(view, expect_tag=PROTOCOL, expect_label=LABEL, max_age=None,
                        require_components=RESPONSE_COMPONENTS, body=response.body)
        assert headers['intercom-issuer'] == self.id.peer_id, headers['intercom-issuer']
        assert headers['intercom-audience'] == self.id.workload_id, headers['intercom-audience']
        return params


def _item(name, params) -> str:
    out = http_sf.ser(name)
    for key, value in params.items():
        out += f';{key}' if value is True else f';{key}={http_sf.ser(value)}'
    return out


def parse_response(data: bytes, request: RequestView) -> Response:
    if not data:
        return Response(None, Headers(), b'', request, data)
    head, _, body = data.partition(b'\r\n\r\n')
    lines = head.decode('latin-1').split('\r\n')
    status = int(lines[0].split(' ')[1])
    headers = Headers([tuple(part.strip() for part in line.split(':', 1)) for line in lines[1:]])
    length = headers.get('content-length')
    if length is not None:
        body = body[:int(length)]
    return Response(status, headers, body, request, data)

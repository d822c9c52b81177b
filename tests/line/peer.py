"""The signed test peer of the line: the official a2a-sdk 1.3.0 server (its real JSON-RPC
dispatcher, DefaultRequestHandler and a task store) behind a test-only ASGI middleware of ours
that verifies every request's RFC 9421 signature (profile rfc9421-ed25519@1) and signs every
response, built on the independent `http-message-signatures` 3.0.0 library.

Usage: python peer.py CONFIG.json    (a separate process; see line_harness.Peer)

The configuration file (JSON, written by the test):
  dir                       absolute folder of this peer: peer.db, requests.jsonl, control.json
  peer_id, workload_id      UUIDs: our Intercom-Issuer, and the only admitted caller
  workload_key_id           the keyid the caller must sign with
  workload_public_key_pem   that key (Ed25519 SPKI PEM)
  signing_keys              {key_id: Ed25519 PKCS#8 PEM}: every key the peer may sign with
  sign_key_id               the one it signs with unless a `sign_with` fault says otherwise
  ext                       the signing extension's URI (the card lists it, requests must too)
  tls_cert, tls_key         PEM files of the peer.example leaf (chain first)
  store                     "sqlite" (<dir>/peer.db, kept across restarts) or "memory"
  path                      the JSON-RPC path, default /a2a/jsonrpc

Prints one line {"ready": true, "port": P, "pid": N} on stdout once it accepts connections.
The fault knobs (<dir>/control.json, read on every request) are described in FAULTS below.
"""

import asyncio
import errno
import hashlib
import json
import os
import signal
import socket
import sys
import time
import uuid
from pathlib import Path

import http_sf
import uvicorn
from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_pem_public_key
from http_message_signatures import (
    ContentDigest,
    HTTPMessageSigner,
    InvalidSignature,
    MappingKeyResolver,
    algorithms,
)
from http_message_signatures.exceptions import HTTPMessageSignaturesException
from starlette.applications import Starlette
from starlette.authentication import SimpleUser

from line_profile import (  # beside this file: sys.path[0] when run as a script
    LABEL,
    MAX_WINDOW,
    PARAMS,
    PROTOCOL,
    REQUEST_COMPONENTS,
    RESPONSE_COMPONENTS,
    SKEW,
    UNBOUND_RESPONSE_COMPONENTS,
    Headers,
    OwnClockVerifier,
    RequestView,
    ResponseView,
    nonce,
    utc,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    Part,
    Task,
    TaskState,
    TaskStatus,
)

RESPONSE_SECONDS = 60
BIG_ARTIFACT_BYTES = 600 * 1024
URL_PART = 'https://peer.example/files/result.txt'

FAULTS = """
control.json: {"faults": [FAULT, ...], "executor": MODE, "clock_offset_seconds": N}
  FAULT = {"method": "SendMessage"|"GetTask"|"CancelTask"|"*", "kind": K, "times": N (default 1)}
  the first fault whose method matches a verified request applies to it (one per request) and
  loses one of its times; a spent fault is removed from the file. Kinds:
    drop            run the app, then close the connection with no response
    unsigned        the app's response without Signature-Input / Signature
    sign_with       (key_id) sign with that configured key instead of sign_key_id
    wrong_audience  Intercom-Audience is another UUID (still signed)
    delay           (seconds) wait that long before responding
    replay          run the app, then send the previous signed response again, byte for byte
    error           (code, message?) a signed JSON-RPC error instead of calling the app
    big_artifact    SendMessage: the task completes with one 600 KiB text artifact
    url_part        SendMessage: the task completes with a text part and a url part
  MODE = "complete"|"working"|"failed"|"rejected"|"input_required"|"complete_after" or
         {"mode": MODE, "seconds": S}: what the executor does with a new task (the mode in force
         when SendMessage arrives). complete: COMPLETED with one text artifact "done: <text>";
         working: stays WORKING and honours cancel; failed: FAILED; rejected: REJECTED;
         input_required: INPUT_REQUIRED; complete_after: WORKING, then after S seconds as
         complete.
  clock_offset_seconds: added to the peer's clock for verifying and signing.
Refused (401) requests are never faulted.
"""


class Refused(Exception):
    def __init__(self, reason: str, detail: str = ''):
        super().__init__(f'{reason}: {detail}')
        self.reason, self.detail = reason, detail


class Peer:
    def __init__(self, config: dict):
        self.config = config
        self.dir = Path(config['dir'])
        self.peer_id = config['peer_id']
        self.workload_id = config['workload_id']
        self.workload_key_id = config['workload_key_id']
        self.ext = config['ext']
        self.path = config.get('path', '/a2a/jsonrpc')
        self.log_path = self.dir / 'requests.jsonl'
        self.control_path = self.dir / 'control.json'
        workload_key = load_pem_public_key(config['workload_public_key_pem'].encode())
        self.verifier = OwnClockVerifier(
            signature_algorithm=algorithms.ED25519,
            key_resolver=MappingKeyResolver(
                public_keys={self.workload_key_id: workload_key}, private_keys={}
            ),
        )
        private = {k: load_pem_private_key(v.encode(), None)
                   for k, v in config['signing_keys'].items()}
        self.signer = HTTPMessageSigner(
            signature_algorithm=algorithms.ED25519,
            key_resolver=MappingKeyResolver(public_keys={}, private_keys=private),
        )
        self.sign_key_id = config['sign_key_id']
        if self.sign_key_id not in private:
            raise SystemExit('sign_key_id is not among signing_keys')
        self.seen_nonces: set[tuple[str, str]] = set()
        self.last_response: tuple[int, list[tuple[bytes, bytes]], bytes] | None = None
        # messageId -> what the executor does with that message's task
        self.plans: dict[str, dict] = {}
        self.control_lock = asyncio.Lock()
        self._restore_nonces()

    def _restore_nonces(self) -> None:
        """A restarted peer still refuses the nonces it verified before (from its log)."""
        if not self.log_path.exists():
            return
        for line in self.log_path.read_text().splitlines():
            entry = json.loads(line)
            if entry.get('verified'):
                self.seen_nonces.add((entry['keyid'], entry['nonce']))

    # -- control -----------------------------------------------------------------------------

    def read_control(self) -> dict:
        try:
            return json.loads(self.control_path.read_text())
        except FileNotFoundError:
            return {}

    def now(self, control: dict) -> int:
        return int(time.time()) + int(control.get('clock_offset_seconds', 0))

    def take_fault(self, control: dict, rpc_method: str | None) -> dict | None:
        faults = control.get('faults') or []
        for index, fault in enumerate(faults):
            if fault.get('method') not in ('*', rpc_method):
                continue
            times = int(fault.get('times', 1))
            if times <= 0:
                continue
            if times == 1:
                del faults[index]
            else:
                fault['times'] = times - 1
            control['faults'] = faults
            tmp = self.control_path.with_suffix('.tmp')
            tmp.write_text(json.dumps(control))
            os.replace(tmp, self.control_path)
            return dict(fault, times=1)
        return None

    @staticmethod
    def executor_plan(control: dict) -> dict:
        mode = control.get('executor', 'complete')
        if isinstance(mode, str):
            mode = {'mode': mode}
        return dict(mode)

    # -- verification (§4.1, §4.3) -----------------------------------------------------------

    def verify(self, request: RequestView, body: bytes, now: int) -> dict:
        headers = request.headers
        sig_input_value = headers.get('signature-input')
        sig_value = headers.get('signature')
        if sig_input_value is None or sig_value is None:
            raise Refused('signature_missing')
        try:
            inputs = http_sf.parse(sig_input_value.encode(), tltype='dictionary')
            sigs = http_sf.parse(sig_value.encode(), tltype='dictionary')
        except (ValueError, TypeError) as e:
            raise Refused('signature_malformed', str(e)) from e
        if list(inputs) != [LABEL] or list(sigs) != [LABEL]:
            raise Refused('label', f'labels {list(inputs)} / {list(sigs)}')
        members, params = inputs[LABEL]
        if not isinstance(members, list):
            raise Refused('signature_malformed', 'not an inner list')
        covered = tuple(name for name, _ in members)
        if covered != REQUEST_COMPONENTS or any(p for _, p in members):
            raise Refused('components', ' '.join(covered))
        if set(params) != PARAMS:
            raise Refused('params', ','.join(params))
        if params['alg'] != 'ed25519':
            raise Refused('alg', str(params['alg']))
        if params['tag'] != PROTOCOL:
            raise Refused('tag', str(params['tag']))
        created, expires = params['created'], params['expires']
        if type(created) is not int or type(expires) is not int:
            raise Refused('params', 'created/expires not integers')
        if abs(now - created) > SKEW:
            raise Refused('created', f'created {created}, now {now}')
        if now >= expires:
            raise Refused('expired', f'expires {expires}, now {now}')
        if expires - created > MAX_WINDOW or expires <= created:
            raise Refused('window', f'{expires - created} s')
        digest = headers.get('content-digest')
        if digest is None:
            raise Refused('digest', 'no Content-Digest')
        try:
            ContentDigest.verify(digest, body)
        except (InvalidSignature, HTTPMessageSignaturesException) as e:
            raise Refused('digest', str(e)) from e
        if params['keyid'] != self.workload_key_id:
            raise Refused('keyid', str(params['keyid']))
        try:
            self.verifier.verify(request, expect_tag=PROTOCOL, expect_label=LABEL, max_age=None,
                                 require_components=REQUEST_COMPONENTS)
        except (InvalidSignature, HTTPMessageSignaturesException) as e:
            raise Refused('signature_invalid', str(e)) from e
        if headers.get('intercom-issuer') != self.workload_id:
            raise Refused('issuer', str(headers.get('intercom-issuer')))
        if headers.get('intercom-audience') != self.peer_id:
            raise Refused('audience', str(headers.get('intercom-audience')))
        listed = [v.strip() for v in (headers.get('a2a-extensions') or '').split(',')]
        if self.ext not in listed:
            raise Refused('extension', str(headers.get('a2a-extensions')))
        key = (params['keyid'], params['nonce'])
        if key in self.seen_nonces:
            raise Refused('nonce_replayed', params['nonce'])
        self.seen_nonces.add(key)
        return params

    # -- signing (§4.2) ----------------------------------------------------------------------

    def sign(self, request: RequestView, status: int, headers: Headers, body: bytes, now: int,
             key_id: str, audience: str) -> None:
        if 'content-type' not in headers:
            headers['content-type'] = 'application/json'
        headers['intercom-issuer'] = self.peer_id
        headers['intercom-audience'] = audience
        bound = request_signature_member(request) is not None
        del headers['content-digest']
        response = ResponseView(status, headers, request)
        # body= makes the library add Content-Digest (sha-256) over the exact bytes sent.
        self.signer.sign(
            response, key_id=key_id, label=LABEL, tag=PROTOCOL, nonce=nonce(), body=body,
            created=utc(now), expires=utc(now + RESPONSE_SECONDS),
            covered_component_ids=RESPONSE_COMPONENTS if bound else UNBOUND_RESPONSE_COMPONENTS,
        )

    # -- logging -----------------------------------------------------------------------------

    def log(self, entry: dict) -> None:
        with self.log_path.open('a') as f:
            f.write(json.dumps(entry, sort_keys=True) + '\n')
            f.flush()
            os.fsync(f.fileno())


def request_signature_member(request: RequestView) -> bytes | None:
    value = request.headers.get('signature')
    if value is None:
        return None
    try:
        member = http_sf.parse(value.encode(), tltype='dictionary').get(LABEL)
    except (ValueError, TypeError):
        return None
    return member[0] if member and isinstance(member[0], bytes) else None


def json_object(body: bytes) -> dict | None:
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def rpc_fields(body: bytes) -> dict:
    """What the log records of a JSON-RPC body (None where it is not one)."""
    out = {'rpc_method': None, 'rpc_id': None, 'message_id': None, 'task_id': None}
    doc = json_object(body)
    if doc is None:
        return out
    out['rpc_method'] = doc.get('method') if isinstance(doc.get('method'), str) else None
    out['rpc_id'] = doc.get('id')
    params = doc.get('params') if isinstance(doc.get('params'), dict) else {}
    message = params.get('message') if isinstance(params.get('message'), dict) else {}
    if out['rpc_method'] == 'SendMessage':
        out['message_id'] = message.get('messageId')
    if out['rpc_method'] in ('GetTask', 'CancelTask'):
        out['task_id'] = params.get('id')
    return out


def response_fields(body: bytes) -> dict:
    """The task id and state a JSON-RPC result carries, or its error code."""
    out = {'result_task_id': None, 'result_state': None, 'error_code': None}
    doc = json_object(body)
    if doc is None:
        return out
    if isinstance(doc.get('error'), dict):
        out['error_code'] = doc['error'].get('code')
    result = doc.get('result')
    task = result.get('task', result) if isinstance(result, dict) else None
    if isinstance(task, dict):
        out['result_task_id'] = task.get('id')
        status = task.get('status')
        out['result_state'] = status.get('state') if isinstance(status, dict) else None
    return out


def error_body(rpc_id, code: int, message: str, data: dict | None = None) -> bytes:
    error = {'code': code, 'message': message}
    if data:
        error['data'] = data
    return json.dumps({'jsonrpc': '2.0', 'id': rpc_id, 'error': error}).encode()


class SigningMiddleware:
    """Pure ASGI: buffer, verify, run the SDK app, fault, sign, log, send."""

    def __init__(self, app, peer: Peer):
        self.app, self.peer = app, peer

    async def __call__(self, scope, receive, send):
        if scope['type'] != 'http':
            return await self.app(scope, receive, send)
        peer = self.peer
        chunks = []
        while True:
            message = await receive()
            if message['type'] == 'http.disconnect':
                return
            chunks.append(message.get('body', b''))
            if not message.get('more_body'):
                break
        body = b''.join(chunks)
        headers = Headers([(n.decode('latin-1'), v.decode('latin-1'))
                           for n, v in scope['headers']])
        host = headers.get('host') or ''
        query = scope.get('query_string', b'').decode('latin-1')
        raw_path = (scope.get('raw_path') or scope['path'].encode()).decode('latin-1')
        url = f'https://{host}{raw_path}' + (f'?{query}' if query else '')
        request = RequestView(scope['method'], url, headers)

        async with peer.control_lock:
            control = peer.read_control()
            now = peer.now(control)
            fields = rpc_fields(body)
            entry = {
                'http_method': scope['method'], 'path': scope['path'], 'query': query,
                'host': host, 'a2a_version': headers.get('a2a-version'),
                'a2a_extensions': headers.get('a2a-extensions'),
                **fields, 'body_sha256': hashlib.sha256(body).hexdigest(),
                'body_bytes': len(body), 'verified': False, 'refusal': None, 'keyid': None,
                'nonce': None, 'created': None, 'status': None, 'fault': None,
                'result_task_id': None, 'result_state': None, 'error_code': None, 'at': now,
            }
            try:
                params = peer.verify(request, body, now)
            except Refused as refused:
                entry['refusal'] = refused.reason
                entry['refusal_detail'] = refused.detail
                params = None
            if params is not None:
                entry.update(verified=True, keyid=params['keyid'], nonce=params['nonce'],
                             created=params['created'])
                fault = peer.take_fault(control, fields['rpc_method'])
                entry['fault'] = fault
                if fields['rpc_method'] == 'SendMessage' and fields['message_id']:
                    plan = peer.executor_plan(control)
                    if fault and fault['kind'] in ('big_artifact', 'url_part'):
                        plan['result'] = fault['kind']
                    peer.plans[fields['message_id']] = plan
            else:
                fault = None

        if params is None:
            status = 401
            out_headers = Headers([('content-type', 'application/json')])
            out_body = error_body(fields['rpc_id'], -32600, 'request signature refused',
                                  {'reason': entry['refusal']})
        elif fault and fault['kind'] == 'error':
            status = 200
            out_headers = Headers([('content-type', 'application/json')])
            out_body = error_body(fields['rpc_id'], int(fault.get('code', -32603)),
                                  fault.get('message', 'injected error'))
            entry['error_code'] = int(fault.get('code', -32603))
        else:
            scope = dict(scope, user=SimpleUser(peer.workload_id))
            status, out_headers, out_body = await run_app(self.app, scope, body)
            entry.update(response_fields(out_body))

        kind = fault['kind'] if fault else None
        if kind == 'delay':
            await asyncio.sleep(float(fault.get('seconds', 1)))
            now = peer.now(peer.read_control())
        if kind == 'drop':
            entry['status'] = None
            peer.log(entry)
            drop_connection(send)
            return
        if kind == 'replay' and peer.last_response is not None:
            status, raw_headers, out_body = peer.last_response
            entry['status'] = status
            entry['replayed'] = True
            peer.log(entry)
            await send_raw(send, status, raw_headers, out_body)
            return
        out_headers['content-length'] = str(len(out_body))
        if kind != 'unsigned':
            key_id = fault['key_id'] if kind == 'sign_with' else peer.sign_key_id
            audience = str(uuid.uuid4()) if kind == 'wrong_audience' else peer.workload_id
            try:
                peer.sign(request, status, out_headers, out_body, now, key_id, audience)
            except (HTTPMessageSignaturesException, KeyError) as e:
                # A request too broken to name its own components (no Host, say), or a
                # sign_with key that is not configured: sent unsigned, and logged.
                entry['sign_error'] = repr(e)
        entry['status'] = status
        peer.log(entry)
        raw_headers = out_headers.raw()
        if 'signature' in out_headers:
            peer.last_response = (status, raw_headers, out_body)
        await send_raw(send, status, raw_headers, out_body)


async def run_app(app, scope, body: bytes):
    sent_body = False

    async def receive():
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {'type': 'http.request', 'body': body, 'more_body': False}
        await asyncio.Event().wait()  # the client never disconnects while the app runs
        return {'type': 'http.disconnect'}

    start: dict = {}
    chunks: list[bytes] = []

    async def capture(message):
        if message['type'] == 'http.response.start':
            start.update(message)
        elif message['type'] == 'http.response.body':
            chunks.append(message.get('body', b''))

    await app(scope, receive, capture)
    headers = Headers([(n.decode('latin-1'), v.decode('latin-1'))
                       for n, v in start.get('headers', [])])
    return start.get('status', 500), headers, b''.join(chunks)


async def send_raw(send, status: int, raw_headers, body: bytes) -> None:
    await send({'type': 'http.response.start', 'status': status, 'headers': raw_headers})
    await send({'type': 'http.response.body', 'body': body, 'more_body': False})


def drop_connection(send) -> None:
    """Close the TCP connection with no response. uvicorn's h11 cycle is the `send` callable's
    owner; marking it disconnected stops it from answering 500 when the app returns."""
    cycle = getattr(send, '__self__', None)
    transport = getattr(cycle, 'transport', None)
    if transport is None:
        raise RuntimeError('drop needs uvicorn h11 (send.__self__.transport)')
    cycle.disconnected = True
    transport.abort()


class Executor(AgentExecutor):
    def __init__(self, peer: Peer):
        self.peer = peer

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        plan = self.peer.plans.pop(message.message_id, None) or {'mode': 'complete'}
        task = context.current_task or Task(
            id=context.task_id, context_id=context.context_id,
            status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED), history=[message],
        )
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        text = '\n'.join(p.text for p in message.parts if p.HasField('text'))
        mode = plan.get('mode', 'complete')
        if mode == 'failed':
            await updater.failed(updater.new_agent_message([Part(text=f'failed: {text}')]))
            return
        if mode == 'rejected':
            await updater.reject(updater.new_agent_message([Part(text=f'rejected: {text}')]))
            return
        if mode == 'input_required':
            await updater.requires_input(
                updater.new_agent_message([Part(text=f'more input: {text}')]))
            return
        await updater.start_work()
        if mode == 'working':
            return
        if mode == 'complete_after':
            await asyncio.sleep(float(plan.get('seconds', 1)))
        elif mode != 'complete':
            raise ValueError(f'unknown executor mode {mode!r}')
        result = plan.get('result')
        if result == 'big_artifact':
            parts = [Part(text='x' * BIG_ARTIFACT_BYTES)]
        elif result == 'url_part':
            parts = [Part(text=f'done: {text}'),
                     Part(url=URL_PART, media_type='text/plain', filename='result.txt')]
        else:
            parts = [Part(text=f'done: {text}')]
        await updater.add_artifact(parts, name='result')
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def agent_card(peer: Peer, port: int) -> AgentCard:
    url = f'https://peer.example:{port}{peer.path}'
    return AgentCard(
        name='line test peer',
        description='a2a-sdk 1.3.0 behind RFC 9421 signing middleware (tests only)',
        version='1.3.0',
        supported_interfaces=[
            AgentInterface(protocol_binding='JSONRPC', protocol_version='1.0', url=url)],
        capabilities=AgentCapabilities(
            streaming=False, push_notifications=False,
            extensions=[AgentExtension(uri=peer.ext, required=True,
                                       params={'protocol': PROTOCOL})]),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[AgentSkill(id='public-task', name='public task', description='echoes',
                           tags=['test'])],
    )


async def task_store(peer: Peer):
    kind = peer.config.get('store', 'sqlite')
    if kind == 'memory':
        return InMemoryTaskStore()
    if kind != 'sqlite':
        raise SystemExit(f'unknown store {kind!r}')
    from sqlalchemy.ext.asyncio import create_async_engine  # noqa: PLC0415

    from a2a.server.tasks import DatabaseTaskStore  # noqa: PLC0415

    store = DatabaseTaskStore(create_async_engine(f'sqlite+aiosqlite:///{peer.dir}/peer.db'))
    await store.initialize()
    return store


async def bind(sock: socket.socket, port: int) -> None:
    """Binds 127.0.0.1:port. A restarted peer asks for its old port, which the previous process's
    connections or another test's outgoing connection (an ephemeral port) may still hold for a
    moment: EADDRINUSE is retried for up to 10 s before it fails the start."""
    for attempt in range(100):
        try:
            sock.bind(('127.0.0.1', port))
            return
        except OSError as e:
            if e.errno != errno.EADDRINUSE or port == 0 or attempt == 99:
                raise
            await asyncio.sleep(0.1)


async def main() -> None:
    config = json.loads(Path(sys.argv[1]).read_text())
    peer = Peer(config)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    await bind(sock, int(config.get('port', 0)))
    port = sock.getsockname()[1]
    card = agent_card(peer, port)
    handler = DefaultRequestHandler(
        agent_executor=Executor(peer), task_store=await task_store(peer), agent_card=card)
    app = Starlette(routes=create_agent_card_routes(card)
                    + create_jsonrpc_routes(handler, rpc_url=peer.path))
    server = uvicorn.Server(uvicorn.Config(
        SigningMiddleware(app, peer), http='h11', lifespan='off', proxy_headers=False,
        log_level='warning', access_log=False,
        ssl_certfile=config['tls_cert'], ssl_keyfile=config['tls_key'],
    ))
    server.install_signal_handlers = lambda: None
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: setattr(server, 'should_exit', True))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if serving.done():
            serving.result()
            return
        await asyncio.sleep(0.02)
    print(json.dumps({'ready': True, 'port': port, 'pid': os.getpid()}), flush=True)
    await serving


if __name__ == '__main__':
    asyncio.run(main())

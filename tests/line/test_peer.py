"""The signed test peer (peer.py) on its own, through our own client (line_wire): a raw TLS
socket to 127.0.0.1 with SNI peer.example trusting only the test CA, requests signed and
responses verified with http-message-signatures. What the line's scenarios rely on the peer to
do is proven here first: the verification rules of the profile, signed refusals, every fault
knob and executor mode, the request log, restarts and the TLS trust anchor."""

import base64
import contextlib
import hashlib
import json
import sqlite3
import ssl
import time
import uuid

import pytest
from http_message_signatures import InvalidSignature

import line_harness as h
import line_wire as w


def task_of(response: w.Response) -> dict:
    result = response.json()['result']
    return result.get('task', result)


def wait_state(client: w.Client, task_id: str, state: str, timeout: float = 30) -> dict:
    """GetTask until the task is in `state` (polled; fails after `timeout`)."""
    deadline = time.monotonic() + timeout
    while True:
        response = client.get_task(task_id)
        client.verify(response)
        task = task_of(response)
        if task['status']['state'] == state or time.monotonic() > deadline:
            assert task['status']['state'] == state, task
            return task
        time.sleep(0.05)


# -- the happy path --------------------------------------------------------------------------

def test_signed_send_get_cancel_and_the_log(peer):
    peer.control(executor='working')
    client = peer.client()
    message_id = str(uuid.uuid4())
    sent = client.send_message('hello peer', message_id)
    assert sent.status == 200 and sent.signed
    params = client.verify(sent)
    assert params['keyid'] == 'peer-key-1'
    assert base64.urlsafe_b64decode(params['nonce'] + '==') and len(params['nonce']) == 22
    assert params['expires'] - params['created'] == 60
    task = task_of(sent)
    assert task['status']['state'] == 'TASK_STATE_SUBMITTED'
    # The log is written before the response is sent: it is complete when the answer arrives.
    entry = peer.log()[-1]
    assert entry['rpc_method'] == 'SendMessage' and entry['message_id'] == message_id
    assert entry['verified'] and entry['refusal'] is None and entry['status'] == 200
    assert entry['keyid'] == 'workload-1' and entry['result_task_id'] == task['id']
    assert (entry['host'], entry['a2a_version'], entry['a2a_extensions']) == (
        f'peer.example:{peer.port}', '1.0', h.EXT)
    assert entry['result_state'] == 'TASK_STATE_SUBMITTED' and entry['error_code'] is None
    assert entry['body_sha256'] == hashlib.sha256(sent.request_body).hexdigest()

    working = wait_state(client, task['id'], 'TASK_STATE_WORKING')
    assert working['id'] == task['id']
    canceled = client.cancel_task(task['id'])
    client.verify(canceled)
    assert task_of(canceled)['status']['state'] == 'TASK_STATE_CANCELED'

    log = peer.log()
    assert [e['rpc_method'] for e in log][0] == 'SendMessage'
    assert log[-1]['rpc_method'] == 'CancelTask' and log[-1]['task_id'] == task['id']
    assert all(e['verified'] and e['path'] == h.PATH and e['http_method'] == 'POST'
               for e in log)
    assert len({e['nonce'] for e in log}) == len(log)


def test_requests_kept_alive_on_one_connection_are_each_verified_and_signed(peer):
    client = peer.client()
    messages = [client.build(client.rpc('GetTask', {'id': f'task-{i}'})) for i in range(3)]
    responses = client.exchange_kept_alive(messages)
    for response in responses:
        client.verify(response)
        assert response.json()['error']['code'] == -32001
    assert [e['task_id'] for e in peer.log()] == ['task-0', 'task-1', 'task-2']


def test_complete_executor_returns_one_text_artifact(peer):
    client = peer.client()
    task = task_of(client.send_message('summarise this'))
    done = wait_state(client, task['id'], 'TASK_STATE_COMPLETED')
    assert [[p['text'] for p in a['parts']] for a in done['artifacts']] == [
        ['done: summarise this']]
    # Cancel after completion: a signed -32002, not a transport failure.
    late = client.cancel_task(task['id'])
    client.verify(late)
    assert late.json()['error']['code'] == -32002


def test_a_repeated_message_id_creates_a_second_task(peer):
    """What the notes saw: the SDK does not deduplicate messageId. The line must never resend;
    the scenarios prove it from the log's SendMessage entries."""
    client = peer.client()
    message_id = str(uuid.uuid4())
    first = task_of(client.send_message('once', message_id))
    second = task_of(client.send_message('once', message_id))
    assert first['id'] != second['id']
    sends = peer.sends()
    assert [e['message_id'] for e in sends] == [message_id, message_id]
    assert [e['result_task_id'] for e in sends] == [first['id'], second['id']]


# -- refusals: every one is a signed 401 -----------------------------------------------------

NOW = object()


def _refusal_cases():
    other = 'https://example.org/other-extension'
    return {
        'digest_mismatch': (dict(body_after=b'{"jsonrpc":"2.0"}'), 'digest'),
        # (the library will not sign an unknown algorithm: the field is changed after signing)
        'digest_unknown_algorithm': (
            dict(headers_after={'Content-Digest': 'md5=:AAAAAAAAAAAAAAAAAAAAAA==:'}), 'digest'),
        'component_missing': (dict(components=w.REQUEST_COMPONENTS[:-1]), 'components'),
        'components_reordered': (
            dict(components=w.REQUEST_COMPONENTS[1:] + w.REQUEST_COMPONENTS[:1]), 'components'),
        'component_target_uri': (
            dict(components=('@method', '@target-uri') + w.REQUEST_COMPONENTS[2:]),
            'components'),
        'wrong_tag': (dict(tag='rfc9421-ed25519@2'), 'tag'),
        'no_nonce': (dict(the_nonce=False), 'params'),
        'stale_created': (dict(created=-100, expires=100), 'created'),
        'future_created': (dict(created=100, expires=160), 'created'),
        'expired': (dict(created=-20, expires=-1), 'expired'),
        'window_too_long': (dict(created=0, expires=301), 'window'),
        'wrong_keyid': (dict(key_id='workload-2'), 'keyid'),
        'wrong_issuer': (dict(issuer=str(uuid.uuid4())), 'issuer'),
        'wrong_audience': (dict(audience=str(uuid.uuid4())), 'audience'),
        'missing_extension': (dict(extensions=other), 'extension'),
        'header_changed_after_signing': (
            dict(headers_after={'A2A-Version': '0.3'}), 'signature_invalid'),
        'unsigned_request': (dict(headers_after={
            'Signature-Input': None, 'Signature': None}), 'signature_missing'),
    }


@pytest.mark.parametrize('case', sorted(_refusal_cases()))
def test_each_refusal_is_a_signed_401_and_never_reaches_the_sdk(peer, keys, case):
    kw, reason = _refusal_cases()[case]
    kw = dict(kw)
    now = int(time.time())
    for name in ('created', 'expires'):
        if name in kw:
            kw[name] = now + kw[name]
    if 'key_id' in kw:
        # A key the peer does not know, under another id.
        other = keys.peer_key('unknown-workload-key')
        client = peer.client(key=h.KeyPair(kw.pop('key_id'), other.seed, other.private_pem,
                                           other.public_pem))
    else:
        client = peer.client()
    response = client.send_message('refused', **kw)
    assert response.status == 401
    assert response.json()['error']['data']['reason'] == reason
    entry = peer.log()[-1]
    assert (entry['verified'], entry['refusal'], entry['status']) == (False, reason, 401)
    assert entry['result_task_id'] is None and entry['fault'] is None
    if reason == 'signature_missing':
        # Unbound (there is no request signature to bind to), but still signed.
        assert response.signed
        assert '"signature";req' not in response.headers['signature-input']
    else:
        client.verify(response)


def test_sha512_digest_and_any_parameter_order_are_accepted(peer):
    client = peer.client()
    body = client.rpc('SendMessage', {'message': {
        'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'x'}]},
        'configuration': {'returnImmediately': True}})
    digest = 'sha-512=:' + base64.b64encode(hashlib.sha512(body).digest()).decode() + ':'
    response = client.call(body, digest=digest)
    client.verify(response)
    assert response.status == 200
    # The library emits created;keyid;alg;expires;nonce;tag: re-sign the same base with the
    # parameters shuffled by hand and the peer still verifies it.
    request, _ = client.build(body)
    value = request.headers['signature-input']
    head, _, params = value.partition(');')
    shuffled = head + ');' + ';'.join(reversed(params.split(';')))
    signer_base = _base(request, shuffled)
    signature = _sign(peer, signer_base)
    request.headers['Signature-Input'] = shuffled
    request.headers['Signature'] = f'a2a=:{base64.b64encode(signature).decode()}:'
    response = client.exchange(request, client.wire(request, body))
    client.verify(response)
    assert response.status == 200, response.body


def test_a_signature_with_another_alg_is_refused(peer):
    client = peer.client()
    body = client.rpc('GetTask', {'id': 'x'})
    request, _ = client.build(body)
    value = request.headers['signature-input'].replace('alg="ed25519"', 'alg="hmac-sha256"')
    signature = _sign(peer, _base(request, value))
    request.headers['Signature-Input'] = value
    request.headers['Signature'] = f'a2a=:{base64.b64encode(signature).decode()}:'
    response = client.exchange(request, client.wire(request, body))
    assert response.status == 401 and response.json()['error']['data']['reason'] == 'alg'
    client.verify(response)


def _base(request: w.RequestView, sig_input: str) -> bytes:
    """The signature base of `request` for this Signature-Input value, by the library."""
    from http_message_signatures.signatures import HTTPSignatureHandler

    from http_message_signatures import algorithms

    handler = HTTPSignatureHandler(signature_algorithm=algorithms.ED25519, key_resolver=None)
    node = handler._parse_signature_dictionary(sig_input)['a2a']
    base, _, _ = handler._build_signature_base(
        request, covered_component_ids=list(node), signature_params=node.params)
    return base.encode()


def _sign(peer: h.Peer, base: bytes) -> bytes:
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    return load_pem_private_key(peer.workload_key.private_pem, None).sign(base)


def test_two_signature_labels_are_refused(peer):
    client = peer.client()
    request, _ = client.build(client.rpc('GetTask', {'id': 'x'}))
    for name in ('Signature-Input', 'Signature'):
        value = request.headers[name]
        request.headers[name] = value + ', ' + value.replace('a2a=', 'other=', 1)
    body = client.rpc('GetTask', {'id': 'x'})
    response = client.exchange(request, client.wire(request, body))
    assert response.status == 401
    assert response.json()['error']['data']['reason'] == 'label'
    client.verify(response)


def test_a_replayed_request_is_refused_even_after_a_restart(peer):
    client = peer.client()
    body = client.rpc('GetTask', {'id': str(uuid.uuid4())})
    request, raw = client.build(body)
    first = client.exchange(request, raw)
    client.verify(first)
    assert first.status == 200 and first.json()['error']['code'] == -32001
    again = client.exchange(request, raw)
    client.verify(again)
    assert again.status == 401 and again.json()['error']['data']['reason'] == 'nonce_replayed'
    peer.restart()
    after = client.exchange(request, raw)
    assert after.status == 401 and after.json()['error']['data']['reason'] == 'nonce_replayed'
    assert [e['refusal'] for e in peer.log()] == [None, 'nonce_replayed', 'nonce_replayed']


@pytest.mark.parametrize('authority', ['peer.example:443', 'PEER.Example:8443', None])
def test_authority_is_the_host_lowercased_with_443_dropped(peer, authority):
    client = peer.client(authority=authority)
    response = client.send_message('authority')
    client.verify(response)
    assert response.status == 200
    base = _base(response.request, response.request.headers['signature-input']).decode()
    expected = {'peer.example:443': 'peer.example', 'PEER.Example:8443': 'peer.example:8443',
                None: f'peer.example:{peer.port}'}[authority]
    assert f'"@authority": {expected}\n' in base
    assert '"@query": ?\n' in base


def test_a_signature_made_for_another_authority_is_refused(peer):
    client = peer.client(authority='peer.example:8443')
    request, raw = client.build(client.rpc('GetTask', {'id': 'x'}))
    raw = raw.replace(b'Host: peer.example:8443', b'Host: peer.example:9443')
    response = client.exchange(request, raw)
    assert response.status == 401
    assert response.json()['error']['data']['reason'] == 'signature_invalid'


def test_a_query_is_signed_and_verified(peer):
    client = peer.client()
    response = client.send_message('query', query='a=1')
    client.verify(response)
    assert response.status == 200
    assert peer.log()[-1]['query'] == 'a=1'


# -- fault knobs -----------------------------------------------------------------------------

def test_drop_runs_the_app_then_closes_with_no_response(peer):
    peer.control([{'method': 'SendMessage', 'kind': 'drop'}])
    client = peer.client()
    message_id = str(uuid.uuid4())
    response = client.send_message('dropped', message_id)
    assert response.status is None and response.raw == b''
    entry = peer.log()[-1]
    assert entry['fault']['kind'] == 'drop' and entry['status'] is None
    assert entry['message_id'] == message_id
    # The task exists although the caller never heard of it.
    assert wait_state(client, entry['result_task_id'], 'TASK_STATE_COMPLETED')
    assert peer.read_control()['faults'] == []


def test_unsigned_sends_the_apps_response_without_signature(peer):
    peer.control([{'method': 'SendMessage', 'kind': 'unsigned'}])
    client = peer.client()
    response = client.send_message('unsigned')
    assert response.status == 200 and not response.signed
    assert task_of(response)['status']['state'] == 'TASK_STATE_SUBMITTED'
    assert peer.log()[-1]['fault']['kind'] == 'unsigned'
    assert client.send_message('signed again').signed


def test_sign_with_an_unknown_key_is_sent_unsigned_and_logged(peer):
    peer.control([{'method': '*', 'kind': 'sign_with', 'key_id': 'no-such-key'}])
    response = peer.client().send_message('no key')
    assert response.status == 200 and not response.signed
    assert 'no-such-key' in peer.log()[-1]['sign_error']


def test_sign_with_signs_with_another_configured_key(peer_factory, keys):
    current, retired = keys.peer_key('peer-key-2'), keys.peer_key('peer-key-1')
    peer = peer_factory(signing_keys=[current, retired], sign_key_id='peer-key-2')
    peer.control([{'method': '*', 'kind': 'sign_with', 'key_id': 'peer-key-1'}])
    client = peer.client()
    response = client.send_message('old key')
    assert client.verify(response)['keyid'] == 'peer-key-1'
    only_current = peer.client()
    only_current.id.peer_keys = {'peer-key-2': current.public_pem}
    with pytest.raises(AssertionError):
        only_current.verify(response)
    assert client.verify(client.send_message('new key'))['keyid'] == 'peer-key-2'


def test_wrong_audience_is_signed_but_names_another_workload(peer):
    peer.control([{'method': 'SendMessage', 'kind': 'wrong_audience'}])
    client = peer.client()
    response = client.send_message('audience')
    audience = response.headers['intercom-audience']
    assert audience != peer.workload_id and uuid.UUID(audience)
    with pytest.raises(AssertionError, match=audience):
        client.verify(response)


def test_delay_waits_before_responding(peer):
    peer.control([{'method': 'GetTask', 'kind': 'delay', 'seconds': 2}])
    client = peer.client()
    response = client.get_task(str(uuid.uuid4()))
    params = client.verify(response)
    entry = peer.log()[-1]
    assert entry['fault'] == {'method': 'GetTask', 'kind': 'delay', 'seconds': 2, 'times': 1}
    # Signed after the wait: its created is at least a second past the request's arrival.
    assert params['created'] >= entry['at'] + 1
    # A caller with a shorter deadline gets nothing.
    peer.control([{'method': 'GetTask', 'kind': 'delay', 'seconds': 5}])
    impatient = peer.client(timeout=1)
    with pytest.raises(TimeoutError):
        impatient.get_task(str(uuid.uuid4()))


def test_replay_sends_the_previous_signed_response_again(peer):
    client = peer.client()
    first = client.get_task(str(uuid.uuid4()))
    client.verify(first)
    peer.control([{'method': 'GetTask', 'kind': 'replay'}])
    replayed = client.get_task(str(uuid.uuid4()))
    assert replayed.body == first.body
    assert replayed.headers['signature'] == first.headers['signature']
    assert peer.log()[-1]['replayed'] is True
    # Bound to the first request's signature, it fails against ours.
    with pytest.raises(InvalidSignature):
        client.verify(replayed)


def test_error_returns_a_signed_jsonrpc_error_without_calling_the_app(peer):
    peer.control([{'method': 'SendMessage', 'kind': 'error', 'code': -32008}])
    client = peer.client()
    response = client.send_message('needs an extension')
    client.verify(response)
    assert response.status == 200 and response.json()['error']['code'] == -32008
    entry = peer.log()[-1]
    assert entry['result_task_id'] is None and entry['error_code'] == -32008


def test_big_artifact_and_url_part_shape_the_result(peer):
    peer.control([{'method': 'SendMessage', 'kind': 'big_artifact'},
                  {'method': 'SendMessage', 'kind': 'url_part'}])
    client = peer.client()
    big = task_of(client.send_message('big'))
    url = task_of(client.send_message('url'))
    done = wait_state(client, big['id'], 'TASK_STATE_COMPLETED')
    parts = done['artifacts'][0]['parts']
    assert len(parts) == 1 and len(parts[0]['text']) == 600 * 1024
    done = wait_state(client, url['id'], 'TASK_STATE_COMPLETED')
    parts = done['artifacts'][0]['parts']
    assert parts[0] == {'text': 'done: url'}
    assert parts[1]['url'] == 'https://peer.example/files/result.txt'


def test_times_and_method_select_which_requests_are_faulted(peer):
    peer.control([{'method': 'GetTask', 'kind': 'unsigned', 'times': 2}])
    client = peer.client()
    assert client.send_message('not a GetTask').signed
    assert not client.get_task('a').signed
    assert peer.read_control()['faults'] == [
        {'method': 'GetTask', 'kind': 'unsigned', 'times': 1}]
    assert not client.get_task('b').signed
    assert peer.read_control()['faults'] == []
    assert client.get_task('c').signed
    assert [bool(e['fault']) for e in peer.log()] == [False, True, True, False]


@pytest.mark.parametrize('mode,state', [
    ('failed', 'TASK_STATE_FAILED'),
    ('rejected', 'TASK_STATE_REJECTED'),
    ('input_required', 'TASK_STATE_INPUT_REQUIRED'),
    ('working', 'TASK_STATE_WORKING'),
])
def test_executor_modes(peer, mode, state):
    peer.control(executor=mode)
    client = peer.client()
    task = task_of(client.send_message(mode))
    wait_state(client, task['id'], state)


def test_complete_after_stays_working_then_completes(peer):
    peer.control(executor={'mode': 'complete_after', 'seconds': 2})
    client = peer.client()
    task = task_of(client.send_message('later'))
    assert task_of(client.get_task(task['id']))['status']['state'] in (
        'TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')
    done = wait_state(client, task['id'], 'TASK_STATE_COMPLETED')
    assert done['artifacts'][0]['parts'] == [{'text': 'done: later'}]


def test_clock_offset_moves_the_peers_clock(peer):
    peer.control(clock_offset_seconds=1000)
    client = peer.client()
    stale = client.send_message('now')
    assert stale.status == 401
    assert stale.json()['error']['data']['reason'] == 'created'
    now = int(time.time()) + 1000
    response = client.send_message('later', created=now, expires=now + 60)
    assert response.status == 200
    assert client.verify(response, now=now)['created'] >= now


# -- restarts and TLS ------------------------------------------------------------------------

def test_a_restart_keeps_tasks_in_the_sqlite_store(peer):
    client = peer.client()
    task = task_of(client.send_message('persist me'))
    wait_state(client, task['id'], 'TASK_STATE_COMPLETED')
    port = peer.port
    peer.restart(hard=True)
    assert peer.port == port
    assert wait_state(client, task['id'], 'TASK_STATE_COMPLETED')['id'] == task['id']
    # The middleware's authenticated user is the SDK's owner scope: the verified workload id.
    with contextlib.closing(sqlite3.connect(f'file:{peer.dir}/peer.db?mode=ro', uri=True)) as db:
        assert db.execute('SELECT DISTINCT owner FROM tasks').fetchall() == [(peer.workload_id,)]


def test_a_memory_store_forgets_on_restart(peer_factory):
    peer = peer_factory(store='memory')
    client = peer.client()
    task = task_of(client.send_message('forget me'))
    peer.restart()
    response = client.get_task(task['id'])
    client.verify(response)
    assert response.json()['error']['code'] == -32001


def test_a_client_trusting_another_ca_fails_the_handshake(peer, pki):
    client = peer.client(ca_file=pki.other_ca_file)
    with pytest.raises(ssl.SSLCertVerificationError):
        client.send_message('never sent')
    assert peer.log() == []


def test_a_peer_with_another_cas_certificate_is_refused(peer_factory):
    peer = peer_factory('other-peer', other_ca=True)
    with pytest.raises(ssl.SSLCertVerificationError):
        peer.client().send_message('never sent')
    assert peer.log() == []


def test_the_card_lists_the_required_signing_extension(peer):
    """The card route is behind the middleware too: an unsigned GET is a signed 401. The card
    itself (what the line never fetches) is checked in process."""
    import peer as peer_module

    card = peer_module.agent_card(peer_module.Peer(json.loads(peer.config_file.read_text())),
                                  peer.port)
    [ext] = card.capabilities.extensions
    assert (ext.uri, ext.required, dict(ext.params.items())) == (
        h.EXT, True, {'protocol': h.PROTOCOL})

"""What no SDK sends, on raw pipes: malformed JSON-RPC, invalid UTF-8, unknown tools, wrong
types, extra keys, huge arguments. Each gets a clear error, the server keeps serving (the next
request is answered), everything it writes on stdout is JSON-RPC, and it never panics (the world
fixture reads every stderr)."""

import hashlib
import json
import sqlite3
import time

from harness import PATIENCE, Raw

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
RESOURCE_NOT_FOUND = -32002


def still_serving(raw: Raw) -> None:
    assert raw.request('ping')['result'] == {}
    assert raw.tool('intercom_whoami', {})['result']['isError'] is False


def error_of(answer: dict) -> dict:
    assert 'result' not in answer, answer
    return answer['error']


def tool_error(answer: dict) -> dict:
    """The {code, message} of an isError tool result."""
    result = answer['result']
    assert result['isError'] is True, result
    return result['structuredContent']


def test_lines_that_are_not_json_rpc_get_an_error_and_stderr_says_why(world):
    raw = Raw(world, 'garbled')
    raw.initialize()
    for line in (b'garbage{\n', b'\xff\xfe{"jsonrpc":"2.0","id":5,"method":"ping"}\n',
                 b'{"jsonrpc":"2.0","id":6,"method":"ping"\n', b'\x00\x01\x02\n'):
        raw.write(line)
        answer = raw.recv()
        assert answer['id'] is None and error_of(answer)['code'] == PARSE_ERROR, line
        still_serving(raw)
    # JSON, but no JSON-RPC message: -32600, with the id when one can be read.
    for message, request_id in (('{"foo":1}', None), ('[]', None), ('42', None),
                                ('[{"jsonrpc":"2.0","id":8,"method":"ping"}]', None),
                                ('{"jsonrpc":"1.0","id":9,"method":"ping"}', 9),
                                ('{"jsonrpc":"2.0","id":"p","method":"ping","params":"x"}', 'p'),
                                ('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', None)):
        raw.write(message.encode() + b'\n')
        answer = raw.recv()
        assert answer['id'] == request_id and error_of(answer)['code'] == INVALID_REQUEST, \
            message
        still_serving(raw)
    # Blank lines, a carriage return and a byte order mark are no errors.
    raw.write(b'\n\r\n')
    raw.write(b'\xef\xbb\xbf{"jsonrpc":"2.0","id":"bom","method":"ping"}\r\n')
    assert raw.answer('bom')['result'] == {}
    still_serving(raw)
    # A line longer than any message may be (rmcp's 16 MiB).
    raw.write(b'{"jsonrpc":"2.0","id":77,"method":"ping","params":{"pad":"' + b'p' * (17 << 20)
              + b'"}}\n')
    answer = raw.recv()
    assert answer['id'] is None and error_of(answer)['code'] == INVALID_REQUEST, answer
    assert 'longer than' in error_of(answer)['message']
    still_serving(raw)
    err = raw.stderr.read_text()
    assert err.count('is not JSON') == 4 and err.count('is not a JSON-RPC request') == 7, err
    assert 'longer than' in err
    assert raw.close() == 0


def test_a_host_that_closed_its_end_of_stderr_is_still_served(world):
    # Every log line then fails to be written: that must cost nothing (eprintln! panicked, which
    # ended the reading of stdin, and the server with it).
    raw = Raw(world, 'no-stderr', stderr_closed=True)
    raw.initialize()
    for _ in range(3):
        raw.write(b'not json\n')
        assert error_of(raw.recv())['code'] == PARSE_ERROR
        still_serving(raw)
    assert raw.close() == 0


def test_unknown_methods_and_tools_are_json_rpc_errors(world):
    raw = Raw(world, 'strict')
    raw.initialize()
    unknown = error_of(raw.request('bogus/method'))
    assert unknown['code'] == METHOD_NOT_FOUND and 'bogus/method' in unknown['message']
    still_serving(raw)
    tool = error_of(raw.tool('intercom_teleport', {}))
    assert tool['code'] == INVALID_PARAMS and 'intercom_teleport' in tool['message']
    still_serving(raw)
    for method in ('resources/read', 'resources/subscribe'):
        missing = error_of(raw.request(method, {'uri': 'intercom://outbox'}))
        assert missing['code'] == RESOURCE_NOT_FOUND and 'intercom://outbox' in missing['message']
    still_serving(raw)
    assert raw.close() == 0


def test_params_of_the_wrong_shape_are_invalid_params_not_an_unknown_method(world):
    raw = Raw(world, 'shapes')
    raw.initialize()
    for method, params in (('tools/call', {'name': 5}),
                           ('tools/call', {'name': 'intercom_send', 'arguments': 'x'}),
                           ('tools/call', {'name': 'intercom_send', 'arguments': [1]}),
                           ('tools/call', {}), ('tools/call', None),
                           ('resources/read', {'uri': 7}), ('resources/read', {}),
                           ('resources/subscribe', {})):
        bad = error_of(raw.request(method, params))
        assert bad['code'] == INVALID_PARAMS, (method, params, bad)
        assert method in bad['message'], bad
        still_serving(raw)
    assert raw.close() == 0


def test_wrong_types_and_extra_keys_are_tool_errors_with_stable_codes(world):
    raw = Raw(world, 'typed')
    Raw(world, 'bob')
    raw.initialize()
    wrong = [
        ('intercom_send', {'to': 5, 'message': 'x'}, 'to must be a string'),
        ('intercom_send', {'to': 'bob'}, 'needs message'),
        ('intercom_send', None, 'needs to'),
        ('intercom_send', {'to': 'bob', 'message': 'x', 'attachments': {}}, 'array'),
        ('intercom_send', {'to': 'bob', 'message': 'x', 'attachments': [
            {'type': 'binary', 'name': 'a', 'content': 'b'}]}, 'file, snippet or context'),
        ('intercom_ask', {'to': 'bob', 'message': 'x', 'timeout_ms': '10'}, 'timeout_ms'),
        ('intercom_ask', {'to': 'bob', 'message': 'x', 'timeout_ms': 0}, '1 to 120000'),
        ('intercom_ask', {'to': 'bob', 'message': 'x', 'timeout_ms': 120001}, '1 to 120000'),
        ('intercom_ask', {'to': 'bob', 'message': 'x', 'timeout_ms': 1.5}, 'whole number'),
        ('intercom_pending', {'mark_read': 'yes'}, 'boolean'),
        ('intercom_list', {'scope': 'galaxy'}, 'machine, directory, repo'),
        ('intercom_reply', {'message': 'x', 'which': 'middle'}, 'oldest, latest'),
        ('intercom_wait', {'timeout_ms': -1}, 'timeout_ms'),
        ('intercom_set_summary', {'summary': None}, 'needs summary'),
    ]
    for tool, arguments, says in wrong:
        error = tool_error(raw.tool(tool, arguments))
        assert error['code'] == 'INVALID_ARGUMENT', (tool, arguments, error)
        assert says in error['message'], (tool, arguments, error)
    extra = [
        ('intercom_whoami', {'verbose': True}, 'verbose'),
        ('intercom_send', {'to': 'bob', 'message': 'x', 'team': 't'}, 'team'),
        ('intercom_send', {'to': 'bob', 'message': 'x', 'attachments': [
            {'type': 'file', 'name': 'a', 'content': 'b', 'mode': '0644'}]}, 'mode'),
        ('intercom_wait', {'timeout_ms': 5, 'since': 3}, 'since'),
    ]
    for tool, arguments, key in extra:
        error = tool_error(raw.tool(tool, arguments))
        assert error['code'] == 'UNKNOWN_KEY' and f'"{key}"' in error['message'], error
    # Nothing of these was sent: bob has nothing, and nothing waits to be sent.
    status = raw.tool('intercom_status', {})['result']['structuredContent']
    assert status['unconfirmed_sends'] == 0
    still_serving(raw)
    assert raw.close() == 0


def test_huge_arguments_are_refused_and_the_session_stays_well(world):
    raw = Raw(world, 'big')
    bob = Raw(world, 'bob')
    raw.initialize()
    bob.initialize()
    # Over the broker's text limit: the broker refuses it, nothing is kept to send again.
    error = tool_error(raw.tool('intercom_send', {'to': 'bob', 'message': 'x' * (300 * 1024)}))
    assert error['code'] == 'INVALID_MESSAGE', error
    # Over what any frame may hold: refused here, before it could cost the connection.
    for size in (2, 6):
        error = tool_error(raw.tool('intercom_send', {'to': 'bob', 'message': 'x' * (size << 20)}))
        assert error['code'] == 'CONTENT_TOO_LARGE', error
    attachments = [{'type': 'file', 'name': f'f{i}', 'content': 'y' * (400 * 1024)}
                   for i in range(4)]
    error = tool_error(raw.tool('intercom_ask', {'to': 'bob', 'message': 'm',
                                                 'attachments': attachments}))
    assert error['code'] == 'CONTENT_TOO_LARGE', error
    status = raw.tool('intercom_status', {})['result']['structuredContent']
    assert (status['connected'], status['unconfirmed_sends']) == (True, 0), status
    sent = raw.tool('intercom_send', {'to': 'bob', 'message': 'small'})['result']
    assert sent['isError'] is False, sent
    pending = bob.tool('intercom_pending', {})['result']['structuredContent']
    assert [m['text'] for m in pending['messages']] == ['small']
    error = tool_error(raw.tool('intercom_set_summary', {'summary': 's' * (1 << 20)}))
    assert error['code'] == 'INVALID_ARGUMENT'
    still_serving(raw)
    assert raw.close() == 0


def test_an_unsendable_message_kept_by_an_older_version_leaves_the_outbox(world):
    # An outbox written before sends were measured: replayed as it was, the frame would make
    # the broker close the connection after every registration.
    raw = Raw(world, 'old', session_id='old-outbox')
    raw.initialize()
    assert raw.close() == 0
    digest = hashlib.sha256(b'old-outbox').hexdigest()[:32]
    inbox = world.intercom_dir / 'mcp' / f'{digest}.sqlite'
    frame = {'type': 'send', 'to': 'nobody', 'message': {
        'id': 'huge-1', 'timestamp': 1, 'content': {'text': 'x' * (3 << 20)}}}
    with sqlite3.connect(inbox) as db:
        db.execute('INSERT INTO outbox (message_id, frame, queued_at) VALUES (?, ?, 1)',
                   ('huge-1', json.dumps(frame)))
    raw = Raw(world, 'old', session_id='old-outbox')
    bob = Raw(world, 'bob')
    bob.initialize()
    raw.initialize()
    deadline = time.monotonic() + PATIENCE
    while True:
        status = raw.tool('intercom_status', {})['result']['structuredContent']
        if status['unconfirmed_sends'] == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert (status['connected'], status['unconfirmed_sends']) == (True, 0), status
    assert 'leaves the outbox' in raw.stderr.read_text()
    sent = raw.tool('intercom_send', {'to': 'bob', 'message': 'still here'})['result']
    assert sent['isError'] is False, sent
    assert raw.close() == 0
    assert bob.close() == 0

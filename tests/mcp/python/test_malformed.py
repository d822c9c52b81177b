"""What no SDK sends, on raw pipes: malformed JSON-RPC, invalid UTF-8, unknown tools, wrong
types, extra keys, huge arguments. Each gets a clear error, the server keeps serving (the next
request is answered), everything it writes on stdout is JSON-RPC, and it never panics (the world
fixture reads every stderr)."""

from harness import Raw

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


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


def test_unknown_methods_and_tools_are_json_rpc_errors(world):
    raw = Raw(world, 'strict')
    raw.initialize()
    unknown = error_of(raw.request('bogus/method'))
    assert unknown['code'] == METHOD_NOT_FOUND and 'bogus/method' in unknown['message']
    still_serving(raw)
    tool = error_of(raw.tool('intercom_teleport', {}))
    assert tool['code'] == INVALID_PARAMS and 'intercom_teleport' in tool['message']
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

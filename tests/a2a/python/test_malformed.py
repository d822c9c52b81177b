"""Raw requests no SDK would send, through a plain HTTP client: each gets the JSON-RPC error (or
HTTP status) that names what is wrong, and the server keeps answering."""

import asyncio
import json

import httpx
import pytest

from harness import new_id, only_serve

pytestmark = only_serve

V10 = {'A2A-Version': '1.0'}
JSON = {'Content-Type': 'application/json', **V10}

PARSE, INVALID_REQUEST, NO_METHOD, INVALID_PARAMS = -32700, -32600, -32601, -32602


def rpc(method, params, id_=1) -> dict:
    return {'jsonrpc': '2.0', 'id': id_, 'method': method, 'params': params}


def message(**over) -> dict:
    base = {'messageId': new_id(), 'role': 'ROLE_USER', 'parts': [{'text': 'hi'}]}
    base.update(over)
    return base


def post(service, body: bytes, headers=None) -> httpx.Response:
    with httpx.Client(timeout=60) as http:
        headers = JSON if headers is None else headers
        return http.post(service.rpc_url, content=body, headers=headers)


def error_of(response: httpx.Response, *ids) -> dict:
    """The error of a JSON-RPC error answer whose id is one of `ids` (default: null)."""
    assert response.headers.get('content-type', '').startswith('application/json'), response
    answer = response.json()
    assert answer.get('jsonrpc') == '2.0', answer
    assert 'result' not in answer, answer
    assert answer.get('id') in (ids or (None,)), answer
    error = answer['error']
    assert isinstance(error['code'], int) and isinstance(error['message'], str) and error['message']
    return error


def still_answers(service) -> None:
    response = post(service, json.dumps(rpc('GetTask', {'id': new_id()})).encode())
    assert error_of(response, 1)['code'] == -32001
    assert service.alive()


BAD_JSON = [
    ('truncated', b'{"jsonrpc":'),
    ('empty body', b''),
    ('not utf-8', b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"\xff\xfe"}}'),
    ('trailing garbage', b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}} x'),
    ('single quotes', b"{'jsonrpc':'2.0'}"),
]


@pytest.mark.parametrize('name,body', BAD_JSON, ids=[n for n, _ in BAD_JSON])
def test_bad_json_is_parse_error(service, name, body):
    response = post(service, body)
    assert response.status_code == 200
    assert error_of(response, None)['code'] == PARSE
    still_answers(service)


OUT_OF_RANGE = [
    # (body, version header, code, id answered, field named in -32602)
    (b'{"jsonrpc":"2.0","id":1e400,"method":"GetTask","params":{}}', V10, INVALID_REQUEST,
     None, None),
    (b'{"jsonrpc":"2.0","id":1e400,"method":"tasks/get","params":{}}', {}, INVALID_REQUEST,
     None, None),
    (b'{"jsonrpc":"2.0","id":-' + b'9' * 400 + b',"method":"GetTask"}', V10, INVALID_REQUEST,
     None, None),
    (b'{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"t","historyLength":1e400}}',
     V10, INVALID_PARAMS, 2, 'historyLength'),
    (b'{"jsonrpc":"2.0","id":"k","method":"tasks/get","params":{"id":"t","historyLength":1e999}}',
     {}, INVALID_PARAMS, 'k', 'historyLength'),
]


@pytest.mark.parametrize('body,version,code,id_,field', OUT_OF_RANGE,
                         ids=['id-1e400', 'id-1e400-v03', 'id-400-digits', 'param', 'param-v03'])
def test_valid_json_with_a_number_out_of_range_is_no_parse_error(service, body, version, code,
                                                                  id_, field):
    response = post(service, body, {'Content-Type': 'application/json', **version})
    assert response.status_code == 200
    error = error_of(response, id_)
    assert error['code'] == code, error
    assert 'out of range' in error['message'], error
    if field is not None:
        data = error['data']
        named = data[1]['fieldViolations'][0]['field'] if version else data['field']
        assert named == field, error
    still_answers(service)


NOT_A_REQUEST = [
    ('empty batch', []),
    ('a string', 'x'),
    ('a number', 7),
    ('null', None),
    ('jsonrpc 1.0', {'jsonrpc': '1.0', 'id': 1, 'method': 'GetTask', 'params': {'id': 'x'}}),
    ('no jsonrpc', {'id': 1, 'method': 'GetTask', 'params': {'id': 'x'}}),
    ('no method', {'jsonrpc': '2.0', 'id': 1, 'params': {'id': 'x'}}),
    ('method a number', {'jsonrpc': '2.0', 'id': 1, 'method': 5, 'params': {}}),
    ('id an object', {'jsonrpc': '2.0', 'id': {'a': 1}, 'method': 'GetTask', 'params': {}}),
    ('id an array', {'jsonrpc': '2.0', 'id': [1], 'method': 'GetTask', 'params': {}}),
    ('id true', {'jsonrpc': '2.0', 'id': True, 'method': 'GetTask', 'params': {}}),
]


@pytest.mark.parametrize('name,body', NOT_A_REQUEST, ids=[n for n, _ in NOT_A_REQUEST])
def test_not_a_request_is_invalid_request(service, name, body):
    response = post(service, json.dumps(body).encode())
    assert response.status_code == 200
    # JSON-RPC 2.0 §5: the id when it could be read, else null.
    readable = isinstance(body, dict) and type(body.get('id')) is int
    ids = (body['id'], None) if readable else (None,)
    assert error_of(response, *ids)['code'] == INVALID_REQUEST
    still_answers(service)


WRONG_TYPES = [
    ('params a string', 'GetTask', 'x'),
    ('params an array', 'GetTask', ['x']),
    ('GetTask without params', 'GetTask', None),
    ('GetTask id a number', 'GetTask', {'id': 123}),
    ('GetTask id empty', 'GetTask', {'id': ''}),
    ('GetTask historyLength a string', 'GetTask', {'id': 'x', 'historyLength': 'all'}),
    ('CancelTask id null', 'CancelTask', {'id': None}),
    ('SendMessage without message', 'SendMessage', {}),
    ('messageId a number', 'SendMessage', {'message': message(messageId=5)}),
    ('messageId missing', 'SendMessage',
     {'message': {'role': 'ROLE_USER', 'parts': [{'text': 'a'}]}}),
    ('parts an object', 'SendMessage', {'message': message(parts={'text': 'hi'})}),
    ('parts empty', 'SendMessage', {'message': message(parts=[])}),
    ('part with no content', 'SendMessage', {'message': message(parts=[{}])}),
    ('role unknown', 'SendMessage', {'message': message(role='ROLE_BOSS')}),
    ('text a number', 'SendMessage', {'message': message(parts=[{'text': 7}])}),
    ('returnImmediately a string', 'SendMessage',
     {'message': message(), 'configuration': {'returnImmediately': 'yes'}}),
    ('0.3 kind unknown', 'message/send',
     {'message': {'kind': 'message', 'messageId': 'm', 'role': 'user',
                  'parts': [{'kind': 'video', 'text': 'x'}]}}),
    ('0.3 blocking a number', 'message/send',
     {'message': {'kind': 'message', 'messageId': 'm', 'role': 'user',
                  'parts': [{'kind': 'text', 'text': 'x'}]}, 'configuration': {'blocking': 1}}),
    ('ListTasks pageSize negative', 'ListTasks', {'pageSize': -1}),
    ('ListTasks pageSize over 100', 'ListTasks', {'pageSize': 101}),
    ('ListTasks status unknown', 'ListTasks', {'status': 'TASK_STATE_NAPPING'}),
    ('ListTasks pageToken forged', 'ListTasks', {'pageToken': 'not-a-token'}),
]


@pytest.mark.parametrize('name,method,params', WRONG_TYPES, ids=[n for n, _, _ in WRONG_TYPES])
def test_wrong_types_are_invalid_params(service, name, method, params):
    v03 = {'Content-Type': 'application/json', 'A2A-Version': '0.3'}
    headers = JSON if '/' not in method else v03
    body = rpc(method, params)
    if params is None:
        del body['params']
    response = post(service, json.dumps(body).encode(), headers)
    assert response.status_code == 200
    code = error_of(response, 1)['code']
    # Params that are not an object at all make the request itself invalid for some readers of
    # JSON-RPC 2.0 (the a2a-sdk answers -32600): either code names the request as the culprit.
    allowed = {INVALID_PARAMS, INVALID_REQUEST} if name.startswith('params ') else {INVALID_PARAMS}
    assert code in allowed, (name, code)
    still_answers(service)


def test_nothing_stored_from_refused_sends(service):
    """A refused SendMessage leaves no task behind: its messageId is still free."""
    message_id = new_id()
    bad = rpc('SendMessage', {'message': message(messageId=message_id, parts=[])})
    assert error_of(post(service, json.dumps(bad).encode()), 1)['code'] == INVALID_PARAMS
    good = rpc('SendMessage', {'message': message(messageId=message_id),
                               'configuration': {'returnImmediately': True}})
    answer = post(service, json.dumps(good).encode()).json()
    task = answer['result']['task']
    assert task['status']['state'] == 'TASK_STATE_SUBMITTED'
    assert [m['messageId'] for m in task['history']] == [message_id]


def test_unpaired_surrogate_is_refused(service):
    body = (
        '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"'
        + new_id()
        + '","role":"ROLE_USER","parts":[{"text":"a\\ud800b"}]}}}'
    ).encode()
    response = post(service, body)
    # Refused either as JSON (strict readers take a lone surrogate as no text: -32700, id null)
    # or as a parameter (-32602): never stored with U+FFFD in its place.
    error = error_of(response, 1, None)
    assert error['code'] in {INVALID_PARAMS, PARSE}
    assert (response.json()['id'] is None) == (error['code'] == PARSE)
    still_answers(service)


@pytest.mark.parametrize(
    'method', ['Frobnicate', 'tasks/frobnicate', 'sendmessage', 'rpc.discover']
)
def test_unknown_method(service, method):
    response = post(service, json.dumps(rpc(method, {})).encode())
    assert response.status_code == 200
    assert error_of(response, 1)['code'] == NO_METHOD
    still_answers(service)


def test_unsupported_version(service):
    body = json.dumps(rpc('GetTask', {'id': new_id()})).encode()
    response = post(service, body, {'Content-Type': 'application/json', 'A2A-Version': '9.9'})
    assert error_of(response, 1)['code'] == -32009
    still_answers(service)


def test_huge_body_is_413(service):
    text = 'x' * (16 * 1024 * 1024)
    body = json.dumps(rpc('SendMessage', {'message': message(parts=[{'text': text}])})).encode()
    response = post(service, body)
    assert response.status_code == 413
    still_answers(service)


@pytest.mark.parametrize('depth', [200, 100_000])
def test_deep_nesting_is_refused(service, depth):
    nested = '[' * depth + ']' * depth
    body = (
        '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"'
        + new_id()
        + '","role":"ROLE_USER","parts":[{"text":"deep"}],"metadata":{"deep":'
        + nested
        + '}}}}'
    ).encode()
    response = post(service, body)
    assert response.status_code in (200, 400, 413), response.status_code
    if response.status_code == 200:
        code = error_of(response, 1, None)['code']
        assert code in {PARSE, INVALID_REQUEST, INVALID_PARAMS}
    still_answers(service)


@pytest.mark.parametrize('content_type', ['text/plain', 'application/x-www-form-urlencoded', None])
def test_non_json_content_type_is_415(service, content_type):
    body = json.dumps(rpc('GetTask', {'id': new_id()})).encode()
    headers = {**V10, **({'Content-Type': content_type} if content_type else {})}
    with httpx.Client() as http:
        request = http.build_request('POST', service.rpc_url, content=body, headers=headers)
        if content_type is None:
            assert 'content-type' not in request.headers
        response = http.send(request)
    assert response.status_code == 415
    still_answers(service)


def test_json_with_charset_is_accepted(service):
    body = json.dumps(rpc('GetTask', {'id': new_id()})).encode()
    headers = {'Content-Type': 'application/json; charset=utf-8', **V10}
    assert error_of(post(service, body, headers), 1)['code'] == -32001


def test_get_on_rpc_endpoint_is_405(service):
    with httpx.Client() as http:
        assert http.get(service.rpc_url).status_code == 405


def test_unknown_route_is_404(service):
    with httpx.Client() as http:
        assert http.get(service.base_url + '/.well-known/nothing').status_code == 404


OVER_THE_LIMIT = [
    ('/a2a', V10, 1024 * 1024),
    ('/a2a', {}, 1024 * 1024),
    ('/v1/a2a/handoff', {}, 2 * 1024 * 1024 + 64 * 1024),
]


@pytest.mark.parametrize('path,version,limit', OVER_THE_LIMIT)
@pytest.mark.parametrize('over', [1, 3_000_000])
def test_413_reaches_an_async_client_that_sends_the_whole_body(service, path, version, limit,
                                                               over):
    """httpx's async client (the SDK's) writes the whole body before it reads: the 413 must
    still reach it, not a reset connection (httpx.ReadError)."""

    async def body():
        headers = {'Content-Type': 'application/json', **version}
        async with httpx.AsyncClient(timeout=60) as http:
            return await http.post(service.base_url + path, content=b' ' * (limit + over),
                                   headers=headers)

    response = asyncio.run(body())
    assert response.status_code == 413
    assert response.headers['connection'] == 'close'
    assert response.json()['error']['code'] == 'ENVELOPE_TOO_LARGE'
    still_answers(service)


def test_413_leaves_keep_alive_usable(service):
    """Refusing a body over the limit before reading it: the client's next request on the same
    pooled connection is answered (or the refusal said `Connection: close`)."""
    body = json.dumps(rpc('SendMessage', {'message': message(parts=[{'text': 'x' * 1_200_000}])}))
    outcomes = []
    with httpx.Client(timeout=60) as http:
        for _ in range(100):
            try:
                outcomes.append(http.post(service.rpc_url, content=body, headers=JSON).status_code)
            except httpx.TransportError as e:
                outcomes.append(type(e).__name__)
    assert outcomes == [413] * 100, sorted(set(map(str, outcomes)))
    still_answers(service)

"""The handshake and the tool surface, as the official Python SDK sees them."""

import json

import anyio
import pytest
from mcp import types
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

pytestmark = pytest.mark.anyio

INTERCOM_TOOLS = {
    'intercom_whoami', 'intercom_status', 'intercom_list', 'intercom_set_summary',
    'intercom_send', 'intercom_ask', 'intercom_pending', 'intercom_reply', 'intercom_wait',
    'intercom_delivery_status',
}
PAD_TOOLS = {
    'pad_register', 'pad_post', 'pad_unread', 'pad_list', 'pad_task_create', 'pad_task_get',
    'pad_task_transition', 'pad_task_history', 'pad_task_artifact', 'pad_task_artifacts',
}
# The adapters' required parameters (the MCP servers of agent-intercom-claude and -codex).
REQUIRED = {
    'intercom_set_summary': ['summary'],
    'intercom_send': ['to', 'message'],
    'intercom_ask': ['to', 'message'],
    'intercom_reply': ['message'],
    'intercom_delivery_status': ['message_id'],
}
HINTS = ('readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint')


async def initialize_at(server, version: str) -> types.InitializeResult:
    """`initialize` asking for `version`, then what the SDK does with the answer."""
    session = server.session
    result = await session.send_request(
        types.InitializeRequest(params=types.InitializeRequestParams(
            protocol_version=version,
            capabilities=types.ClientCapabilities(),
            client_info=types.Implementation(name='aic-test', version='1'),
        )),
        types.InitializeResult,
    )
    session.adopt(result)
    await session.send_notification(types.InitializedNotification())
    return result


async def test_initialize_answers_each_supported_version_with_that_version(world):
    answers = {}

    async def one(version):
        async with world.mcp(f'v-{version}', initialize=False) as server:
            result = await initialize_at(server, version)
            # The session works at that version.
            tools = await server.session.list_tools()
            answers[version] = (result, len(tools.tools))

    async with anyio.create_task_group() as group:
        for version in HANDSHAKE_PROTOCOL_VERSIONS:
            group.start_soon(one, version)
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        result, tools = answers[version]
        assert result.protocol_version == version
        assert result.server_info.name == 'agent-intercom'
        assert result.capabilities.tools is not None
        assert result.capabilities.resources.subscribe is True
        assert tools == len(INTERCOM_TOOLS | PAD_TOOLS)


async def test_an_unknown_or_initialize_less_version_is_answered_with_the_latest_it_has(world):
    # 2026-07-28 has no initialize (per-request _meta instead); a version nobody knows neither.
    # The server offers the newest version it negotiates by initialize, which the SDK takes.
    for version in ('2026-07-28', '1999-01-01', 'not-a-version'):
        async with world.mcp('v-odd', initialize=False) as server:
            result = await initialize_at(server, version)
            assert result.protocol_version == LATEST_HANDSHAKE_VERSION, version
            assert result.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
            assert (await server.ok('intercom_whoami'))['name'] == 'v-odd'


async def test_the_sdk_default_handshake_and_the_server_description(world):
    async with world.mcp('plain', initialize=False) as server:
        result = await server.session.initialize()
        assert result.protocol_version == LATEST_HANDSHAKE_VERSION
        assert result.server_info.name == 'agent-intercom'
        assert result.server_info.version
        assert 'intercom_send' in result.instructions


async def test_tools_are_the_adapters_with_strict_schemas_and_annotations(world):
    async with world.mcp('lister') as server:
        tools = {t.name: t for t in (await server.session.list_tools()).tools}
    assert set(tools) == INTERCOM_TOOLS | PAD_TOOLS
    for name, tool in tools.items():
        schema = tool.input_schema
        assert schema['type'] == 'object', name
        assert schema['additionalProperties'] is False, name
        assert isinstance(schema['properties'], dict), name
        assert sorted(schema.get('required', [])) == sorted(REQUIRED.get(name, [])) or \
            name.startswith('pad_'), name
        assert tool.description, name
        assert tool.annotations is not None, name
        hints = tool.annotations.model_dump(by_alias=True, exclude_none=True)
        for hint in HINTS:
            assert isinstance(hints[hint], bool), (name, hint)
        assert hints['destructiveHint'] is False, name
        assert hints['title'] == tool.title, name
    for name in ('intercom_whoami', 'intercom_status', 'intercom_list', 'intercom_wait'):
        assert tools[name].annotations.read_only_hint is True, name
    for name in ('intercom_send', 'intercom_ask', 'intercom_reply'):
        assert tools[name].annotations.read_only_hint is False, name
        assert tools[name].annotations.open_world_hint is True, name
        attachments = tools[name].input_schema['properties']['attachments']
        assert attachments['items']['additionalProperties'] is False, name
        assert attachments['items']['properties']['type']['enum'] == ['file', 'snippet', 'context']
    ask = tools['intercom_ask'].input_schema['properties']['timeout_ms']
    assert (ask['minimum'], ask['maximum']) == (1, 120000)
    scope = tools['intercom_list'].input_schema['properties']['scope']
    assert scope['enum'] == ['machine', 'directory', 'repo']
    assert tools['intercom_set_summary'].input_schema['properties']['summary']['maxLength'] == 400
    assert set(tools['intercom_reply'].input_schema['properties']) >= {'which', 'ask', 'to'}
    assert set(tools['intercom_wait'].input_schema['properties']) == {'timeout_ms', 'from'}
    assert 'content' in tools['pad_post'].input_schema['properties']


async def test_the_inbox_resource_is_listed_and_read(world):
    async with world.mcp('reader') as server:
        listed = (await server.session.list_resources()).resources
        assert [str(r.uri) for r in listed] == ['intercom://inbox']
        read = await server.session.read_resource('intercom://inbox')
        assert json.loads(read.contents[0].text) == {'unread': 0, 'open_asks': 0, 'messages': []}

"""The broker's opt-in extensions through the MCP tools (docs/hub.md): a send with queue to an
away session waits for it, receipts and intercom_delivery_status tell delivered from read."""

import pytest

from harness import eventually, new_scope

pytestmark = pytest.mark.anyio


async def status(mcp, message_id: str) -> str:
    return (await mcp.ok('intercom_delivery_status', {'message_id': message_id}))['state']


async def test_a_queued_send_waits_for_an_away_session_and_receipts_tell_read(world):
    team = new_scope()
    async with world.mcp('alice', session_id='alice-hub', scope=team) as alice:
        async with world.mcp('bob', session_id='bob-hub', scope=team) as bob:
            await bob.until_connected()
        # bob is away: by name it is not found, by full id with queue it waits.
        refused = await alice.fails('intercom_send', {'to': 'bob', 'message': 'x', 'queue': True})
        assert refused['code'] == 'SESSION_NOT_FOUND', refused
        sent = await alice.ok('intercom_send', {'to': 'bob-hub', 'message': 'while you were out',
                                                'queue': True, 'receipts': True})
        assert sent['queued'] is True and sent['delivered'] is False, sent
        assert await status(alice, sent['message_id']) == 'queued'
        async with world.mcp('bob', session_id='bob-hub', scope=team) as bob:
            await bob.until_connected()
            async def delivered():
                return await status(alice, sent['message_id']) == 'delivered'
            await eventually(delivered, 'the queued message delivered to bob on his return')
            pending = await bob.ok('intercom_pending', {'mark_read': True})
            assert [m['text'] for m in pending['messages']] == ['while you were out']

            async def read():
                return await status(alice, sent['message_id']) == 'read'
            await eventually(read, 'the read receipt')
        assert await status(alice, 'never-sent') == 'unknown'


async def test_the_delivery_options_are_strict(world):
    async with world.mcp('alice', session_id='alice-opts') as alice:
        wrong = await alice.fails('intercom_send', {'to': 'x', 'message': 'm', 'queue': 'yes'})
        assert wrong['code'] == 'INVALID_ARGUMENT', wrong
        missing = await alice.fails('intercom_delivery_status', {})
        assert missing['code'] == 'INVALID_ARGUMENT', missing

"""kill -9 of an MCP server and of the broker: nothing a sender was told is delivered is lost, the
server comes back with the same identity and scope, and what it could not send goes after."""

import fcntl
import hashlib
import signal
import stat

import anyio
import pytest

from harness import eventually, new_scope

pytestmark = pytest.mark.anyio


def texts(messages) -> list:
    return [m['text'] for m in messages]


async def test_kill9_after_delivered_loses_nothing_and_duplicates_nothing(world):
    team = new_scope()
    async with world.mcp('bob', scope=team) as bob:
        told: dict[str, str] = {}
        async with world.mcp('alice', session_id='alice-kill9', scope=team) as alice:
            killed = anyio.Event()

            async def send(i: int):
                result = await bob.call('intercom_send', {'to': 'alice', 'message': f'm{i}'})
                told[f'm{i}'] = 'error' if result.is_error else 'delivered'
                if not result.is_error and not killed.is_set():
                    # The first `delivered`: the receiver dies at once, before any pending.
                    alice.kill9()
                    killed.set()
            async with anyio.create_task_group() as group:
                for i in range(12):
                    group.start_soon(send, i)
            assert killed.is_set()
        delivered = sorted(m for m, how in told.items() if how == 'delivered')
        assert delivered, told
        async with world.mcp('alice', session_id='alice-kill9', scope=team) as again:
            await again.until_connected()
            kept = texts((await again.ok('intercom_pending'))['messages'])
        # Everything bob was told was delivered is there, each once (a message whose
        # acknowledgement the kill cut may be there too: it was committed first).
        assert set(delivered) <= set(kept), (told, kept)
        assert len(kept) == len(set(kept)), kept


async def test_kill9_of_the_broker_reconnects_and_replays_what_was_sent_meanwhile(world):
    team, other = new_scope(), new_scope()
    async with world.mcp('alice', session_id='alice-replay', scope=team) as alice, \
            world.mcp('bob', session_id='bob-replay', scope=team) as bob:
        await alice.ok('intercom_send', {'to': 'bob', 'message': 'before'})
        await alice.ok('intercom_set_summary', {'summary': 'reviewing'})
        world.kill9_broker()
        # Hold the broker's ownership lock, as a broker starting up would: whatever broker a
        # server starts now finds the directory owned and leaves, so the broker stays down.
        with open(world.intercom_dir / 'broker.owner', 'r+') as owner:
            fcntl.flock(owner, fcntl.LOCK_EX)

            async def down():
                return not await alice.connected() and not await bob.connected()
            await eventually(down, 'both servers see the broker gone')
            refused = await alice.fails('intercom_send', {'to': 'bob-replay',
                                                          'message': 'while down'},
                                        'NOT_CONNECTED')
            assert 'kept' in refused['message']
            assert (await alice.ok('intercom_status'))['unconfirmed_sends'] == 1
            # alice is held still until bob is back, so that bob is there to receive her
            # replay whichever of them would have reached the new broker first.
            alice.signal(signal.SIGSTOP)
        try:
            await bob.until_connected()
        finally:
            alice.signal(signal.SIGCONT)
        await alice.until_connected()

        async def replayed():
            return texts((await bob.ok('intercom_pending'))['messages'])
        await eventually(lambda: _has(replayed, 'while down'), 'the replayed send at bob')

        async def settled():
            return (await alice.ok('intercom_status'))['unconfirmed_sends'] == 0
        await eventually(settled, 'the replay settled')
        assert await replayed() == ['before', 'while down']
        # The same identity, summary and scope as before the restart.
        assert (await alice.ok('intercom_whoami'))['session_id'] == 'alice-replay'
        seen = (await bob.ok('intercom_list'))['sessions']
        assert [(s['id'], s['name'], s['status']) for s in seen] == \
            [('alice-replay', 'alice', 'reviewing')]
        async with world.mcp('mallory', scope=other) as mallory:
            assert (await mallory.ok('intercom_list'))['sessions'] == []
            await mallory.fails('intercom_send', {'to': 'alice', 'message': 'x'},
                                'SESSION_NOT_FOUND')
        await bob.ok('intercom_send', {'to': 'alice', 'message': 'after'})
        assert texts((await alice.ok('intercom_pending'))['messages']) == ['after']


async def _has(probe, text):
    return text in await probe()


async def test_an_ask_waiting_through_a_kill9_of_the_broker_still_gets_its_reply(world):
    async with world.mcp('alice') as alice, world.mcp('bob') as bob:
        answer = {}

        async def ask():
            answer['result'] = await alice.ok('intercom_ask', {
                'to': 'bob', 'message': 'still there?', 'timeout_ms': 120000})

        async def open_asks():
            return (await bob.ok('intercom_pending'))['open_asks']
        async with anyio.create_task_group() as group:
            group.start_soon(ask)
            asked = await eventually(open_asks, 'the ask at bob')
            # The servers start a broker again themselves; the broker reloads the ask.
            world.kill9_broker()
            # The old broker is gone, so a list answered at all is the new broker's.
            await eventually(lambda: _sees(bob, 'alice'), 'both registered again')
            await bob.ok('intercom_reply', {'message': 'yes', 'ask': asked[0]['ask']['id']})
        assert answer['result']['ask_id'] == asked[0]['ask']['id']
        assert answer['result']['reply']['text'] == 'yes'


async def _sees(server, name: str) -> bool:
    listed = await server.call('intercom_list')
    return not listed.is_error and name in [s['name'] for s in
                                            listed.structured_content['sessions']]


async def test_a_replay_that_comes_before_its_recipient_is_delivered_once_it_registers(world):
    team = new_scope()
    async with world.mcp('alice', session_id='alice-early', scope=team) as alice, \
            world.mcp('bob', session_id='bob-late', scope=team) as bob:
        world.kill9_broker()
        with open(world.intercom_dir / 'broker.owner', 'r+') as owner:
            fcntl.flock(owner, fcntl.LOCK_EX)

            async def down():
                return not await alice.connected() and not await bob.connected()
            await eventually(down, 'both servers see the broker gone')
            await alice.fails('intercom_send', {'to': 'bob-late', 'message': 'early'},
                              'NOT_CONNECTED')
            # bob is held still: alice registers and replays before bob is back.
            bob.signal(signal.SIGSTOP)
        try:
            await alice.until_connected()

            async def refused_for_now():
                return 'waits for its recipient' in alice.stderr.read_text()
            await eventually(refused_for_now, 'the replay refused while bob is away')
            assert (await alice.ok('intercom_status'))['unconfirmed_sends'] == 1
        finally:
            bob.signal(signal.SIGCONT)

        async def arrived():
            return texts((await bob.ok('intercom_pending'))['messages']) == ['early']
        await eventually(arrived, 'the kept send delivered once bob registered')

        async def settled():
            return (await alice.ok('intercom_status'))['unconfirmed_sends'] == 0
        await eventually(settled, 'the send settled')


async def test_the_inbox_is_a_private_file_of_the_session_and_can_be_named(world):
    async with world.mcp('bob') as bob:
        async with world.mcp('alice', session_id='alice-private') as alice:
            await bob.ok('intercom_send', {'to': 'alice', 'message': 'for alice only'})
            await alice.ok('intercom_status')
        digest = hashlib.sha256(b'alice-private').hexdigest()[:32]
        folder = world.intercom_dir / 'mcp'
        inbox = folder / f'{digest}.sqlite'
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert stat.S_IMODE(inbox.stat().st_mode) == 0o600
        # --inbox names another file: the session's messages are kept there instead.
        named = world.dir / 'inboxes'
        named.mkdir()
        async with world.mcp('carol', session_id='carol-named',
                             args=('--inbox', str(named / 'carol.sqlite'))) as carol:
            await bob.ok('intercom_send', {'to': 'carol', 'message': 'to the named inbox'})
            carol.kill9()
        async with world.mcp('carol', session_id='carol-named',
                             args=('--inbox', str(named / 'carol.sqlite'))) as carol:
            await carol.until_connected()
            kept = (await carol.ok('intercom_pending'))['messages']
            assert texts(kept) == ['to the named inbox']
        assert stat.S_IMODE((named / 'carol.sqlite').stat().st_mode) == 0o600
        digest = hashlib.sha256(b'carol-named').hexdigest()[:32]
        assert not (folder / f'{digest}.sqlite').exists()


async def test_a_second_server_with_a_live_session_id_waits_and_takes_over(world):
    async with world.mcp('first', session_id='twice') as first:
        async with world.mcp('second', session_id='twice') as second:
            # It served after its first registration wait (the link trying all along); the
            # refusal is told once, not at every attempt.
            assert (await second.ok('intercom_whoami'))['connected'] is False
            assert (await first.ok('intercom_whoami'))['connected'] is True
            err = second.stderr.read_text()
            assert err.count('SESSION_ID_IN_USE') == 1, err
            first.kill9()
            await second.until_connected()
            assert 'registered again' in second.stderr.read_text()

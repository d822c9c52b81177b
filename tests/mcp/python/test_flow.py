"""Two or more MCP servers on one broker: identity, sending, asking, replying, waiting, the inbox
resource, scopes, and a server restarted with the same session id."""

import json
import os
import subprocess

import anyio
import pytest
from mcp import types

from harness import AIC_BIN, eventually, new_scope

pytestmark = pytest.mark.anyio


def texts(messages) -> list:
    return [m['text'] for m in messages]


async def test_identity_comes_from_the_host_variables_and_the_options(world):
    scope = new_scope()
    folder = world.dir / 'my repo!'
    folder.mkdir()
    async with world.mcp(None, session_id='sess-from-env', scope=scope, cwd=folder) as anon, \
            world.mcp('named', args=('--session-id', 'sess-from-flag', '--name', 'flagged'),
                      env={'AGENT_INTERCOM_SESSION_ID': 'ignored', 'AGENT_INTERCOM_MODEL': 'm1'},
                      scope=scope) as flagged, \
            world.mcp('fresh') as fresh:
        me = await anon.ok('intercom_whoami')
        assert me['session_id'] == 'sess-from-env'
        assert me['name'] == 'my-repo'
        assert me['cwd'] == str(folder)
        # Whether it is scoped, never the scope itself.
        assert me['scoped'] is True and scope not in json.dumps(me)
        other = await flagged.ok('intercom_whoami')
        assert (other['session_id'], other['name'], other['model']) == \
            ('sess-from-flag', 'flagged', 'm1')
        generated = await fresh.ok('intercom_whoami')
        assert len(generated['session_id']) == 36 and generated['scoped'] is False
        # Registered at start, before any tool was called: the others see it at once.
        listed = await anon.ok('intercom_list')
        assert [s['id'] for s in listed['sessions']] == ['sess-from-flag']
        assert listed['sessions'][0]['name'] == 'flagged'


async def test_the_first_server_starts_a_broker_when_none_runs(bare_world):
    world = bare_world
    assert not world.broker_answers()
    async with world.mcp('alice') as alice, world.mcp('bob') as bob:
        assert await alice.connected()
        await alice.ok('intercom_send', {'to': 'bob', 'message': 'who started it?'})
        assert texts((await bob.ok('intercom_pending'))['messages']) == ['who started it?']
        # A broker of this agent directory, started by a server (it leaves by itself after the
        # last session; the fixture stops it before that).
        pid = world.broker_pid()
        assert pid is not None and world.owns(pid)


@pytest.mark.parametrize('variables, args, code', [
    ({'AGENT_INTERCOM_SCOPE_ID': 'short'}, [], 'INVALID_SCOPE'),
    ({'AGENT_INTERCOM_SESSION_NAME': 'n' * 257}, [], 'INVALID_ARGUMENT'),
    ({}, ['--model', ''], 'INVALID_ARGUMENT'),
    ({}, ['--session-id', 'i' * 513], 'INVALID_ARGUMENT'),
])
async def test_an_identity_no_broker_takes_is_refused_before_serving(world, variables, args,
                                                                      code):
    # Served, it would be refused at every registration, forever.
    done = subprocess.run([AIC_BIN, 'mcp', *args], env=os.environ | world.env() | variables,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30,
                          check=False)
    assert done.returncode != 0
    assert f'error[{code}]' in done.stderr, done.stderr
    assert 'short' not in done.stderr  # a scope is never echoed
    assert done.stdout == ''


async def test_send_by_name_id_and_prefix_and_the_pending_cursor(world):
    async with world.mcp('alice', session_id='alice-0001') as alice, \
            world.mcp('bob', session_id='bob-0002') as bob:
        for to in ('bob', 'bob-0002', 'bob-'):
            sent = await alice.ok('intercom_send', {'to': to, 'message': f'to {to}'})
            assert sent['delivered'] is True and sent['message_id']
        attachment = {'type': 'snippet', 'name': 'a.rs', 'content': 'fn main() {}',
                      'language': 'rust'}
        await alice.ok('intercom_send', {'to': 'bob', 'message': 'with', 'attachments':
                                         [attachment]})
        await alice.fails('intercom_send', {'to': 'nobody', 'message': 'x'}, 'SESSION_NOT_FOUND')
        pending = await bob.ok('intercom_pending')
        assert texts(pending['messages']) == ['to bob', 'to bob-0002', 'to bob-', 'with']
        assert pending['messages'][0]['from'] == {'id': 'alice-0001', 'name': 'alice'}
        assert pending['messages'][3]['attachments'] == [attachment]
        assert pending['marked_read'] is False and pending['more_unread'] == 0
        # Read once: shown with mark_read, then never again as unread.
        assert texts((await bob.ok('intercom_pending', {'mark_read': True}))['messages']) == \
            texts(pending['messages'])
        assert (await bob.ok('intercom_pending'))['messages'] == []
        status = await bob.ok('intercom_status')
        assert (status['connected'], status['unread'], status['live_sessions']) == (True, 0, 1)


async def test_set_summary_is_shown_to_the_others_and_bounded(world):
    async with world.mcp('alice') as alice, world.mcp('bob') as bob:
        await alice.ok('intercom_set_summary', {'summary': 's' * 400})
        await alice.fails('intercom_set_summary', {'summary': 's' * 401}, 'INVALID_ARGUMENT')
        # 400 characters, but 800 UTF-16 units: more than the broker takes (512). Sent, it
        # would end the connection, and kept, every registration after it.
        emoji = await alice.fails('intercom_set_summary', {'summary': '\U0001F600' * 400},
                                  'INVALID_ARGUMENT')
        assert 'the broker would refuse it' in emoji['message']
        assert await alice.connected()

        async def shown():
            sessions = (await bob.ok('intercom_list'))['sessions']
            return [s['status'] for s in sessions] == ['s' * 400]
        await eventually(shown, 'the summary shown to bob')


async def test_list_scopes_machine_directory_repo(world):
    repo = world.dir / 'repo'
    (repo / 'sub').mkdir(parents=True)
    subprocess.run(['git', 'init', '-q', str(repo)], check=True)
    elsewhere = world.dir / 'elsewhere'
    elsewhere.mkdir()
    async with world.mcp('top', cwd=repo) as top, world.mcp('sub', cwd=repo / 'sub'), \
            world.mcp('twin', cwd=repo), world.mcp('away', cwd=elsewhere):
        def names(listed):
            return sorted(s['name'] for s in listed['sessions'])
        assert names(await top.ok('intercom_list')) == ['away', 'sub', 'twin']
        assert names(await top.ok('intercom_list', {'scope': 'directory'})) == ['twin']
        assert names(await top.ok('intercom_list', {'scope': 'repo'})) == ['sub', 'twin']
        mine = await top.ok('intercom_list', {'scope': 'directory', 'include_self': True})
        assert names(mine) == ['top', 'twin']
        assert [s.get('self') for s in mine['sessions'] if s['name'] == 'top'] == [True]


async def test_other_scopes_neither_list_nor_reach(world):
    team, other = new_scope(), new_scope()
    async with world.mcp('alice', session_id='alice-in-team', scope=team) as alice, \
            world.mcp('bob', session_id='bob-in-team', scope=team) as bob, \
            world.mcp('mallory', session_id='mallory-out', scope=other) as mallory, \
            world.mcp('eve', session_id='eve-unscoped') as eve:
        assert [s['name'] for s in (await alice.ok('intercom_list'))['sessions']] == ['bob']
        for outsider in (mallory, eve):
            assert (await outsider.ok('intercom_list'))['sessions'] == []
            for to in ('alice', 'alice-in', 'bob'):
                await outsider.fails('intercom_send', {'to': to, 'message': 'psst'},
                                     'SESSION_NOT_FOUND')
            await outsider.fails('intercom_ask', {'to': 'bob', 'message': '?',
                                                  'timeout_ms': 1000}, 'SESSION_NOT_FOUND')
        # Nor the other way.
        await alice.fails('intercom_send', {'to': 'mallory', 'message': 'x'},
                          'SESSION_NOT_FOUND')
        assert (await bob.ok('intercom_pending'))['messages'] == []
        assert (await alice.ok('intercom_pending'))['messages'] == []
        # A full session id is resolved globally (docs/wire-v4.md, target resolution): whoever
        # holds one reaches its session from any scope. Pinned here so that a change shows.
        await mallory.ok('intercom_send', {'to': 'bob-in-team', 'message': 'by full id'})
        assert texts((await bob.ok('intercom_pending'))['messages']) == ['by full id']


async def test_ask_and_reply_between_two_servers(world):
    async with world.mcp('alice') as alice, world.mcp('bob') as bob:
        async def answer_when_asked():
            async def asked():
                return (await bob.ok('intercom_pending'))['open_asks']
            asks = await eventually(asked, 'the ask reaching bob')
            assert texts(asks) == ['what is 6 x 7?'] and asks[0]['ask']['state'] == 'open'
            replied = await bob.ok('intercom_reply', {'message': '42'})
            assert replied['delivered'] is True
            assert replied['to']['name'] == 'alice' and replied['ask_id'] == asks[0]['ask']['id']

        async with anyio.create_task_group() as group:
            group.start_soon(answer_when_asked)
            answer = await alice.ok('intercom_ask', {'to': 'bob', 'message': 'what is 6 x 7?',
                                                     'timeout_ms': 60000})
        assert answer['reply']['text'] == '42'
        assert answer['reply']['reply_to'] == answer['ask_id']
        # The reply was handed to the ask, not left unread; the ask is no longer open at bob.
        assert (await alice.ok('intercom_pending'))['messages'] == []
        assert (await bob.ok('intercom_pending'))['open_asks'] == []
        await bob.fails('intercom_reply', {'message': 'again'}, 'NOT_FOUND')


async def test_an_ask_that_times_out_gets_its_late_reply_in_pending(world):
    async with world.mcp('alice') as alice, world.mcp('bob') as bob:
        timed_out = await alice.fails('intercom_ask', {'to': 'bob', 'message': 'slow?',
                                                       'timeout_ms': 1}, 'ASK_TIMEOUT')
        assert 'intercom_pending' in timed_out['message']
        pending = await bob.ok('intercom_pending')
        ask = pending['open_asks'][0]['ask']
        assert ask['id'] in timed_out['message'] and ask['state'] == 'open'
        # The ask was deferred, not cancelled: it can still be answered, by its id.
        await bob.ok('intercom_reply', {'message': 'late answer', 'ask': ask['id']})
        late = (await alice.ok('intercom_pending'))['messages']
        assert texts(late) == ['late answer'] and late[0]['reply_to'] == ask['id']


async def test_wait_is_woken_by_a_send_and_filters_by_sender(world):
    async with world.mcp('alice') as alice, world.mcp('bob') as bob, \
            world.mcp('carol') as carol:
        assert await alice.ok('intercom_wait', {'timeout_ms': 1}) == \
            {'messages': [], 'timed_out': True}
        woken = {}

        async def wait():
            woken['result'] = await alice.ok('intercom_wait', {'timeout_ms': 120000,
                                                               'from': 'bob'})
        async with anyio.create_task_group() as group:
            group.start_soon(wait)
            # A message from someone else does not end a wait for bob.
            await carol.ok('intercom_send', {'to': 'alice', 'message': 'from carol'})
            await anyio.sleep(0)
            assert 'result' not in woken
            await bob.ok('intercom_send', {'to': 'alice', 'message': 'from bob'})
        assert woken['result']['timed_out'] is False
        assert texts(woken['result']['messages']) == ['from bob']
        # Waiting marks nothing read.
        assert texts((await alice.ok('intercom_pending'))['messages']) == \
            ['from carol', 'from bob']


async def test_a_subscriber_is_told_when_the_inbox_changes(world):
    async with world.mcp('alice') as alice, world.mcp('bob') as bob:
        await alice.session.subscribe_resource('intercom://inbox')
        await bob.ok('intercom_send', {'to': 'alice', 'message': 'ding'})

        async def told():
            return [n for n in alice.notifications
                    if isinstance(n, types.ResourceUpdatedNotification)]
        updates = await eventually(told, 'notifications/resources/updated')
        assert str(updates[0].params.uri) == 'intercom://inbox'
        read = await alice.session.read_resource('intercom://inbox')
        view = json.loads(read.contents[0].text)
        assert view['unread'] == 1 and texts(view['messages']) == ['ding']
        # Unsubscribed: no more notifications.
        await alice.session.unsubscribe_resource('intercom://inbox')
        seen = len(await told())
        await bob.ok('intercom_send', {'to': 'alice', 'message': 'dong'})
        await alice.ok('intercom_wait', {'timeout_ms': 60000, 'from': 'bob'})
        await alice.ok('intercom_status')
        assert len(await told()) == seen


async def test_a_restarted_server_keeps_its_unread_messages_and_open_asks(world):
    async with world.mcp('bob') as bob:
        async with world.mcp('alice', session_id='alice-durable') as alice:
            await bob.ok('intercom_send', {'to': 'alice', 'message': 'kept 1'})
            await bob.fails('intercom_ask', {'to': 'alice', 'message': 'kept ask',
                                             'timeout_ms': 1}, 'ASK_TIMEOUT')
            await bob.ok('intercom_send', {'to': 'alice', 'message': 'read before'})
            first = await alice.ok('intercom_pending', {'mark_read': True})
            assert texts(first['messages']) == ['kept 1', 'kept ask', 'read before']
            await bob.ok('intercom_send', {'to': 'alice', 'message': 'kept 2'})
            alice.kill9()
        async with world.mcp('alice', session_id='alice-durable') as again:
            await again.until_connected()
            pending = await again.ok('intercom_pending')
            assert texts(pending['messages']) == ['kept 2']
            assert texts(pending['open_asks']) == ['kept ask']
            await again.ok('intercom_reply', {'message': 'answered after a restart',
                                              'to': 'bob'})
        late = (await bob.ok('intercom_pending'))['messages']
        assert texts(late) == ['answered after a restart']


async def test_scratchpad_tools_act_as_this_session(world):
    async with world.mcp('alice') as alice, world.mcp('bob') as bob:
        posted = await alice.ok('pad_post', {'content': 'hello pad', 'to': 'bob'})
        # A result that is not an object (the scratchpad's unread is a list) is carried as
        # {"result": ...}: MCP's structuredContent is always an object.
        unread = (await bob.ok('pad_unread', {}))['result']
        assert [(m['id'], m['from'], m['to'], m['content']) for m in unread] == \
            [(posted['id'], 'alice', 'bob', 'hello pad')]
        assert (await bob.ok('pad_unread', {}))['result'] == []
        task = await alice.ok('pad_task_create', {'title': 'review', 'assignee': 'bob'})
        assert (task['creator'], task['state']) == ('alice', 'submitted')
        moved = await bob.ok('pad_task_transition', {'id': task['id'], 'to': 'working'})
        assert moved['state'] == 'working'
        history = (await alice.ok('pad_task_history', {'id': task['id']}))['result']
        assert [e['by'] for e in history][-1] == 'bob'
        refused = await alice.fails('pad_post', {'content': 'x', 'bogus': 1})
        assert 'bogus' in refused['message']
        await alice.fails('pad_task_get', {'id': 'no-such-task'}, 'NOT_FOUND')


async def test_pending_pages_and_reply_picks_oldest_latest_or_named(world):
    async with world.mcp('alice') as alice, world.mcp('bob') as bob, \
            world.mcp('carol') as carol, world.mcp('dave') as dave:
        async with anyio.create_task_group() as group:
            for i in range(53):
                group.start_soon(bob.ok, 'intercom_send', {'to': 'alice', 'message': f'n{i}'})
        first = await alice.ok('intercom_pending', {'mark_read': True})
        assert (len(first['messages']), first['more_unread']) == (50, 3)
        rest = await alice.ok('intercom_pending', {'mark_read': True})
        assert (len(rest['messages']), rest['more_unread']) == (3, 0)
        shown = texts(first['messages'] + rest['messages'])
        assert sorted(shown) == sorted(f'n{i}' for i in range(53))
        # Three open asks (one per asker: the broker refuses a second unresolved ask to the
        # same session).
        askers = ((bob, 'b1'), (carol, 'c1'), (dave, 'd1'))
        for asker, text in askers:
            await asker.fails('intercom_ask', {'to': 'alice', 'message': text,
                                               'timeout_ms': 1}, 'ASK_TIMEOUT')
        await bob.fails('intercom_ask', {'to': 'alice', 'message': 'b2', 'timeout_ms': 1},
                        'ASK_ALREADY_PENDING')
        asks = (await alice.ok('intercom_pending'))['open_asks']
        assert texts(asks) == ['b1', 'c1', 'd1']
        await alice.ok('intercom_reply', {'message': 'to d1', 'which': 'latest'})
        await alice.ok('intercom_reply', {'message': 'to c1', 'ask': asks[1]['ask']['id']})
        await alice.ok('intercom_reply', {'message': 'to b1', 'to': 'bob'})
        assert (await alice.ok('intercom_pending'))['open_asks'] == []
        for (asker, text), ask in zip(askers, asks):
            got = (await asker.ok('intercom_pending'))['messages']
            assert [(m['text'], m['reply_to']) for m in got] == \
                [(f'to {text}', ask['ask']['id'])]

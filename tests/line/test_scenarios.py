"""The line's scenario suite against the official a2a-sdk 1.3.0 peer: declare-public, submit,
poll, cancel and read through the real `agent-intercom line session` (the fault-injection
build), over TLS with the test CA, every request and response signed (RFC 9421). Each test is
named by the requirement it proves (docs/line.md, L-NN)."""

import json
import time

import pytest

import line_harness as h

TEXT = 'Summarise the public release notes of version 1.2.'


def declare(line, peer, text=TEXT, **over):
    source = {'text': text, 'public_assertion': True}
    return line.send(line.target(peer, 'declare-public', source=source, **over))


def submit(line, peer, text=TEXT):
    d = declare(line, peer, text)
    assert 'declaration_id' in d, d
    return line.send({'operation': 'submit', 'declaration_id': d['declaration_id']})


def poll(line, peer, task_id, **over):
    return line.send(line.target(peer, 'poll', task_id=task_id, **over))


def settle(line, peer, task_id, want='completed', tries=50):
    """Polls until the peer's task reaches `want` (its executor runs after SendMessage answers,
    so one poll may still see WORKING); each poll is one charged exchange."""
    for _ in range(tries):
        answer = poll(line, peer, task_id)
        if answer.get('status') == want:
            return answer
        time.sleep(0.1)
    raise AssertionError(answer)


def read(line, peer, task_id, **over):
    return line.send(line.target(peer, 'read', task_id=task_id, **over))


def cancel(line, peer, task_id, **over):
    return line.send(line.target(peer, 'cancel', task_id=task_id, **over))


def ledger(line):
    return {(r['scope_kind'], r['scope_key']): (r['used_uses'], r['used_app'], r['reserved_net'],
                                                r['accepted_net'])
            for r in line.dump('line_capacity')}


def check_ledger_is_the_sum(line):
    """L-68: each scope's counters equal the sum of its exchanges' charges."""
    exchanges = line.dump('line_exchange')
    for (kind, key), (uses, app, net, accepted) in ledger(line).items():
        column = {'host': 'host_key', 'purpose': 'purpose_key', 'peer': 'peer_key',
                  'task': 'task_key'}[kind]
        mine = [e for e in exchanges if e[column] == key]
        assert uses == len(mine), (kind, key)
        assert app == sum(e['charged_app'] for e in mine), (kind, key)
        assert net == sum(e['charged_net'] for e in mine), (kind, key)
        assert accepted == sum(e['accepted_net'] or 0 for e in mine), (kind, key)
    with line.db() as conn:
        assert conn.execute('PRAGMA integrity_check').fetchone()[0] == 'ok'
    check_delivery_state(line)


STATES = {'TASK_STATE_SUBMITTED': 'submitted', 'TASK_STATE_WORKING': 'working',
          'TASK_STATE_INPUT_REQUIRED': 'interrupted', 'TASK_STATE_AUTH_REQUIRED': 'interrupted',
          'TASK_STATE_COMPLETED': 'completed', 'TASK_STATE_FAILED': 'failed',
          'TASK_STATE_REJECTED': 'rejected', 'TASK_STATE_CANCELED': 'canceled'}
TERMINAL = {'completed', 'failed', 'rejected', 'canceled'}


def check_delivery_state(line):
    """L-70: each task's status, foreign id and adoption follow from its exchange and
    observation rows alone (the only owner of delivery state)."""
    exchanges, observations = line.dump('line_exchange'), line.dump('line_observation')
    for task in line.dump('line_task'):
        mine = [o for o in observations if o['task_id'] == task['task_id']]
        sent = [e for e in exchanges if e['task_id'] == task['task_id']]
        authenticated = [e for e in sent if e['outcome'] == 'authenticated']
        assert len(mine) == len(authenticated), task
        assert {o['exchange_id'] for o in mine} == {e['exchange_id'] for e in authenticated}
        if not mine:
            assert task['foreign_task_id'] is None, task
            assert task['status'] in ('prepared', 'claimed', 'unknown', 'undelivered', 'refused',
                                      'expired'), task
            continue
        assert {o['foreign_task_id'] for o in mine} == {task['foreign_task_id']}, task
        states = [STATES[o['foreign_state']] for o in mine]
        first_terminal = next((st for st in states if st in TERMINAL), None)
        expected = first_terminal or states[-1]
        assert task['status'] in (expected, 'expired'), (task, states)
        adopted = [o for o in mine if o['adopted']]
        assert len(adopted) <= 1
        assert (task['local_disposition'] == 'adopted') == bool(adopted), task


@pytest.fixture
def enrolled(ready_line, peer):
    answer = ready_line.enroll(peer)
    assert 'error' not in answer, answer
    return ready_line


def unknown(answer, task_id=None):
    assert answer is not None
    assert answer['error'] == 'unknown', answer
    assert set(answer) == {'error', 'task_id'}, answer  # exactly: not even `operation`
    if task_id is not None:
        assert answer['task_id'] == task_id
    return answer['task_id']


# -- the happy path and what each answer carries ----------------------------------------------

def test_r18_r41_r42_r43_r90_submit_poll_read_against_the_sdk_peer(enrolled, peer):
    line = enrolled
    s = submit(line, peer)
    assert set(s) == {'task_id', 'status', 'operation'}, s
    assert s['status'] in ('submitted', 'working', 'completed')
    [sent] = peer.sends()
    assert sent['verified'] is True
    # The local task id is ours, never the peer's.
    assert s['task_id'] != sent['result_task_id']
    p = settle(line, peer, s['task_id'])
    assert set(p) == {'task_id', 'status', 'operation'}, p
    r = read(line, peer, s['task_id'])
    assert r['status'] == 'completed' and r['local_disposition'] == 'adopted'
    obs = r['foreign_observation']
    assert obs['classification'] == 'authenticated-foreign-data'
    assert obs['foreign_task_id'] == sent['result_task_id']
    assert obs['state'] == 'TASK_STATE_COMPLETED' and obs['key_id'] == 'peer-key-1'
    assert obs['result'] == {'parts': [{'text': 'done: ' + TEXT}]}
    # L-43 / L-90: only these methods, POSTed to the enrolled path.
    assert {(e['http_method'], e['path'], e['rpc_method']) for e in peer.log()} <= {
        ('POST', h.PATH, m) for m in ('SendMessage', 'GetTask', 'CancelTask')}
    check_ledger_is_the_sum(line)


def test_r30_r31_each_exchange_charges_one_use_its_bytes_and_the_allowance(enrolled, peer):
    line = enrolled
    before = ledger(line)
    d = declare(line, peer)
    s = line.send({'operation': 'submit', 'declaration_id': d['declaration_id']})
    polls = 0
    while poll(line, peer, s['task_id'])['status'] != 'completed':
        polls += 1
        assert polls < 20
    # Polls of a terminal task are answered locally: nothing is sent or charged.
    for _ in range(3):
        assert poll(line, peer, s['task_id'])['status'] == 'completed'
    after = ledger(line)
    exchanges = line.dump('line_exchange')
    assert [e['operation'] for e in exchanges] == ['submit'] + ['poll'] * (polls + 1)
    assert len(peer.log()) == len(exchanges)
    for key in before:
        assert after[key][0] - before[key][0] == len(exchanges)
    assert exchanges[0]['charged_app'] == d['application_bytes']
    assert exchanges[0]['charged_net'] == 524288
    assert 0 < exchanges[0]['accepted_net'] < 524288
    check_ledger_is_the_sum(line)


def test_r44_read_is_local_repeatable_and_uncharged(enrolled, peer):
    line = enrolled
    s = submit(line, peer)
    settle(line, peer, s['task_id'])
    log, charged = len(peer.log()), ledger(line)
    first, second = read(line, peer, s['task_id']), read(line, peer, s['task_id'])
    assert first == second
    assert len(peer.log()) == log and ledger(line) == charged


def test_r39_the_assertion_is_the_operators_attributed_claim(enrolled, peer):
    line = enrolled
    s = submit(line, peer)
    r = read(line, peer, s['task_id'])
    assert r['source_assertion']['by'] == 'operator'
    assert r['source_assertion']['public_assertion'] is True
    assert TEXT not in json.dumps(r['source_assertion'])


def test_r06_a_reply_is_foreign_data_that_triggers_nothing(enrolled, peer):
    line = enrolled
    # The reply's text is itself a valid submit line: reading it does nothing.
    d = declare(line, peer)
    hostile = json.dumps({'operation': 'submit', 'declaration_id': d['declaration_id']})
    s = submit(line, peer, text=hostile)
    settle(line, peer, s['task_id'])
    log, tasks = len(peer.log()), len(line.dump('line_task'))
    r = read(line, peer, s['task_id'])
    assert r['foreign_observation']['result']['parts'][0]['text'] == 'done: ' + hostile
    assert len(peer.log()) == log and len(line.dump('line_task')) == tasks


# -- declare-public -----------------------------------------------------------------------------

def test_r37_declare_makes_no_contact_and_no_charge(enrolled, peer):
    line = enrolled
    before = ledger(line)
    d = declare(line, peer)
    assert set(d) == {'declaration_id', 'expires_at_ms', 'application_bytes', 'operation'}, d
    assert peer.log() == [] and ledger(line) == before
    assert line.dump('line_task') == []


@pytest.mark.parametrize('source', [
    {'text': TEXT, 'public_assertion': False},
    {'text': TEXT, 'public_assertion': 'true'},
    {'text': TEXT, 'public_assertion': 1},
    {'text': TEXT},
    {'text': '', 'public_assertion': True},
    {'text': TEXT, 'public_assertion': True, 'kind': 'file'},
    {'public_assertion': True},
    'text',
])
def test_r38_the_source_is_exactly_public_text(enrolled, peer, source):
    line = enrolled
    answer = line.send(line.target(peer, 'declare-public', source=source))
    assert answer['error'] == 'source_refused', answer


def test_r38_r37_declare_needs_the_action_and_the_enrollment(line, peer):
    policy = h.default_policy([peer.peer_id], [peer.uri])
    policy['actions'] = [a for a in policy['actions'] if a != 'classify_public']
    line.setup(policy)
    line.start()
    line.enroll(peer)
    answer = declare(line, peer)
    assert (answer['error'], answer['reason']) == ('denied', 'action'), answer


def test_r37_declare_for_a_peer_not_enrolled(ready_line, peer):
    assert declare(ready_line, peer)['error'] == 'not_enrolled'


def test_r35_text_too_large_for_the_allowance_is_refused_at_declare(enrolled, peer):
    answer = declare(enrolled, peer, text='x' * (600 * 1024))
    assert answer['error'] == 'too_large', answer
    assert peer.log() == []


def test_r40_declarations_are_single_use_and_belong_to_their_startup(enrolled, peer):
    line = enrolled
    d = declare(line, peer)
    first = line.send({'operation': 'submit', 'declaration_id': d['declaration_id']})
    assert 'error' not in first, first
    again = line.send({'operation': 'submit', 'declaration_id': d['declaration_id']})
    assert again['error'] == 'declaration_used', again
    other = declare(line, peer)
    line.restart()
    gone = line.send({'operation': 'submit', 'declaration_id': other['declaration_id']})
    assert gone['error'] == 'declaration_unknown', gone
    assert len(peer.sends()) == 1


def test_r40_declarations_expire(line, peer):
    line.setup(h.default_policy([peer.peer_id], [peer.uri], declaration_seconds=1))
    line.start()
    line.enroll(peer)
    d = declare(line, peer)
    time.sleep(1.2)
    answer = line.send({'operation': 'submit', 'declaration_id': d['declaration_id']})
    assert answer['error'] == 'declaration_expired', answer
    assert peer.log() == []


# -- unknowns: intent, claim, send, authentication, outcome -------------------------------------

@pytest.mark.parametrize('point', ['intent-commit', 'ledger-commit', 'outcome-commit'])
@pytest.mark.parametrize('mode', ['uncertain-committed', 'uncertain-absent'])
def test_r51_r52_an_uncertain_commit_is_exactly_unknown(line, peer, point, mode):
    line.setup(h.default_policy([peer.peer_id], [peer.uri]))
    line.start(fault=f'{point}:{mode}')
    line.enroll(peer)
    task_id = unknown(submit(line, peer))
    sends = len(peer.sends())
    assert sends == (1 if point == 'outcome-commit' else 0)
    r = read(line, peer, task_id)
    if point == 'intent-commit' and mode == 'uncertain-absent':
        assert r['error'] == 'task_not_found', r
    else:
        assert r['status'] == 'unknown' or (point == 'outcome-commit' and
                                            mode == 'uncertain-committed'), r
    # Restart: nothing is resent, ever.
    line.restart()
    r2 = read(line, peer, task_id)
    if 'error' not in r2 and not (point == 'outcome-commit' and mode == 'uncertain-committed'):
        assert r2['status'] == 'unknown', r2
    assert len(peer.sends()) == sends
    check_ledger_is_the_sum(line)


@pytest.mark.parametrize('kind', ['drop', 'unsigned', 'wrong_audience', 'replay'])
def test_r17_r51_r54_r56_an_unauthenticated_or_missing_response_is_unknown(enrolled, peer, kind):
    line = enrolled
    if kind == 'replay':
        # A first, signed response to replay later.
        first = submit(line, peer)
        assert 'error' not in first, first
    peer.control(faults=[{'method': 'SendMessage', 'kind': kind}])
    task_id = unknown(submit(line, peer))
    [row] = [t for t in line.dump('line_task') if t['task_id'] == task_id]
    # L-56: nothing of it entered state.
    assert row['foreign_task_id'] is None and row['status'] == 'unknown'
    assert [o for o in line.dump('line_observation') if o['task_id'] == task_id] == []
    # L-54: no foreign id, so a poll is unknown without contact or charge.
    log, charged = len(peer.log()), ledger(line)
    unknown(poll(line, peer, task_id), task_id)
    assert len(peer.log()) == log and ledger(line) == charged
    check_ledger_is_the_sum(line)


def test_r53_after_unknown_nothing_is_ever_resent(enrolled, peer):
    line = enrolled
    peer.control(faults=[{'method': 'SendMessage', 'kind': 'drop'}])
    task_id = unknown(submit(line, peer))
    for _ in range(2):
        unknown(poll(line, peer, task_id))
        read(line, peer, task_id)
        cancel(line, peer, task_id)
        line.restart()
    assert len(peer.sends()) == 1


def test_r57_a_signed_refusal_is_definite(enrolled, peer):
    line = enrolled
    peer.control(faults=[{'method': 'SendMessage', 'kind': 'error', 'code': -32008}])
    answer = submit(line, peer)
    assert (answer['error'], answer['code'], answer['status']) == ('peer_refused', -32008,
                                                                    'refused'), answer
    assert read(line, peer, answer['task_id'])['status'] == 'refused'
    [e] = line.dump('line_exchange')
    assert e['outcome'] == 'peer_refused'
    check_ledger_is_the_sum(line)


def test_r12_r57_another_ca_fails_before_any_request_byte(line, peer_factory, pki):
    peer = peer_factory(other_ca=True)
    line.setup(h.default_policy([peer.peer_id], [peer.uri]))
    line.start()
    line.enroll(peer)  # the enrolled CA is the test CA; the peer presents another's leaf
    answer = submit(line, peer)
    assert (answer['error'], answer['status']) == ('transport_failed', 'undelivered'), answer
    assert peer.log() == []
    [e] = line.dump('line_exchange')
    assert e['outcome'] == 'undelivered' and e['charged_uses'] == 1
    assert read(line, peer, answer['task_id'])['status'] == 'undelivered'
    check_ledger_is_the_sum(line)


def test_r12_a_changed_ca_file_is_refused_before_any_charge(enrolled, peer, pki):
    line = enrolled
    d = declare(line, peer)
    original = pki.ca_file.read_bytes()
    pki.ca_file.write_bytes(pki.other_ca_file.read_bytes())
    try:
        answer = line.send({'operation': 'submit', 'declaration_id': d['declaration_id']})
    finally:
        pki.ca_file.write_bytes(original)
    assert answer['error'] == 'ca_changed', answer
    assert line.dump('line_exchange') == [] and peer.log() == []


def test_r55_each_poll_is_freshly_signed_and_charged(enrolled, peer):
    line = enrolled
    peer.control(executor='working')
    s = submit(line, peer)
    poll(line, peer, s['task_id'])
    poll(line, peer, s['task_id'])
    gets = peer.requests('GetTask')
    assert len(gets) == 2 and gets[0]['nonce'] != gets[1]['nonce']
    assert all(g['verified'] for g in gets)
    assert [e['operation'] for e in line.dump('line_exchange')] == ['submit', 'poll', 'poll']
    check_ledger_is_the_sum(line)


# -- crashes and restart -------------------------------------------------------------------------

@pytest.mark.parametrize('point,sends', [('after-claim-before-send', 0),
                                         ('after-send-before-response', 1)])
def test_r30_r58_r59_r68_a_crash_around_the_send_leaves_the_charge_and_unknown(line, peer, point,
                                                                          sends):
    line.setup(h.default_policy([peer.peer_id], [peer.uri]))
    line.start(fault=f'{point}:abort')
    line.enroll(peer)
    d = declare(line, peer)
    answer = line.send({'operation': 'submit', 'declaration_id': d['declaration_id']})
    assert answer is None  # the process died there
    line.kill_all()
    line.start()
    [task] = line.dump('line_task')
    [e] = line.dump('line_exchange')
    assert task['status'] == 'unknown' and e['outcome'] == 'unknown'
    assert e['charged_uses'] == 1 and e['charged_net'] == 524288
    # L-59: startup contacted nobody. (The peer handles a request whose client is gone in its
    # own time: wait for it.)
    if sends:
        peer.wait_log(sends, timeout=20)
    assert len(peer.log()) == sends
    r = read(line, peer, task['task_id'])
    assert r['status'] == 'unknown'
    unknown(poll(line, peer, task['task_id']))
    assert len(peer.sends()) == sends
    check_ledger_is_the_sum(line)


# -- cancel ----------------------------------------------------------------------------------------

def test_r47_r48_cancel_closes_adoption_then_asks_the_peer(enrolled, peer):
    line = enrolled
    peer.control(executor='working')
    s = submit(line, peer)
    answer = cancel(line, peer, s['task_id'])
    assert answer['local_disposition'] == 'adoption_closed', answer
    assert answer['remote'] == 'acknowledged'
    [c] = peer.requests('CancelTask')
    assert c['verified']
    r = read(line, peer, s['task_id'])
    assert r['local_disposition'] == 'adoption_closed'
    assert r['foreign_observation']['adopted'] is False


@pytest.mark.parametrize('point,closed', [('cancel-close', False), ('after-cancel-close', True)])
def test_r47_a_crash_around_closing_adoption_sends_nothing(line, peer, point, closed):
    line.setup(h.default_policy([peer.peer_id], [peer.uri]))
    line.start(fault=f'{point}:abort')
    line.enroll(peer)
    # The peer completes the task a moment later, after the crash.
    peer.control(executor={'mode': 'complete_after', 'seconds': 1})
    s = submit(line, peer)
    charged = ledger(line)
    assert cancel(line, peer, s['task_id']) is None
    line.kill_all()
    line.start()
    assert peer.requests('CancelTask') == [] and ledger(line) == charged
    r = read(line, peer, s['task_id'])
    assert r['local_disposition'] == ('adoption_closed' if closed else 'open')
    # The COMPLETED the peer reaches is observed; it is adopted only while adoption is open.
    settle(line, peer, s['task_id'])
    r = read(line, peer, s['task_id'])
    assert r['foreign_observation']['state'] == 'TASK_STATE_COMPLETED'
    assert r['foreign_observation']['adopted'] is (not closed), r
    assert (r['foreign_observation']['result'] is None) is closed, r


def test_r49_cancel_after_an_admitted_terminal_is_refused(enrolled, peer):
    line = enrolled
    s = submit(line, peer)
    settle(line, peer, s['task_id'])
    log = len(peer.log())
    answer = cancel(line, peer, s['task_id'])
    assert answer['error'] == 'already_terminal', answer
    assert len(peer.log()) == log
    assert read(line, peer, s['task_id'])['status'] == 'completed'


def test_r50_cancel_without_a_foreign_id_closes_adoption_only(enrolled, peer):
    line = enrolled
    peer.control(faults=[{'method': 'SendMessage', 'kind': 'drop'}])
    task_id = unknown(submit(line, peer))
    log = len(peer.log())
    answer = cancel(line, peer, task_id)
    assert (answer['remote'], answer['local_disposition']) == ('not_contacted',
                                                               'adoption_closed'), answer
    assert len(peer.log()) == log


def test_trap5_cancel_racing_completion(enrolled, peer):
    """Adoption closes before CancelTask; the peer completed in between and says -32002; the
    later observation is COMPLETED but never adopted."""
    line = enrolled
    peer.control(executor={'mode': 'complete_after', 'seconds': 1})
    s = submit(line, peer)
    time.sleep(2)  # the peer completes; we have not polled
    answer = cancel(line, peer, s['task_id'])
    assert answer['remote'] == 'not_cancelable', answer
    assert answer['local_disposition'] == 'adoption_closed'
    p = poll(line, peer, s['task_id'])
    assert p['status'] == 'completed', p
    r = read(line, peer, s['task_id'])
    assert r['local_disposition'] == 'adoption_closed'
    assert r['foreign_observation']['state'] == 'TASK_STATE_COMPLETED'
    assert r['foreign_observation']['adopted'] is False
    assert r['foreign_observation']['result'] is None


# -- targets and authority -------------------------------------------------------------------------

def test_r24_poll_cancel_read_repeat_the_tasks_selectors(line, peer):
    policy = h.default_policy([peer.peer_id], [peer.uri],
                              purposes=[h.PURPOSE, 'public-other'])
    line.setup(policy)
    line.start()
    line.enroll(peer)
    line.enroll(peer, purpose='public-other')
    s = submit(line, peer)
    for op in ('poll', 'cancel', 'read'):
        answer = line.send(line.target(peer, op, task_id=s['task_id'], purpose='public-other'))
        assert answer['error'] == 'target_mismatch', (op, answer)


def test_r28_authority_is_evaluated_now_not_carried(line, peer):
    policy = h.default_policy([peer.peer_id], [peer.uri])
    line.setup(policy)
    line.start()
    line.enroll(peer)
    s = submit(line, peer)
    line.close()
    policy2 = dict(policy, generation=2,
                   actions=[a for a in policy['actions'] if a != 'read'])
    line.write_config(policy2)
    assert line.establish_policy().code == 0
    line.start()
    answer = read(line, peer, s['task_id'])
    assert (answer['error'], answer['reason']) == ('denied', 'action'), answer


def test_r26_a_newer_generation_between_declare_and_submit(line, peer):
    policy = h.default_policy([peer.peer_id], [peer.uri])
    line.setup(policy)
    line.start()
    line.enroll(peer)
    d = declare(line, peer)
    line.write_config(dict(policy, generation=2))
    assert line.establish_policy().code == 0
    answer = line.send({'operation': 'submit', 'declaration_id': d['declaration_id']})
    assert answer['error'] == 'stale_generation', answer
    assert line.dump('line_exchange') == [] and peer.log() == []


def test_r62_revoke_fences_every_later_exchange(enrolled, peer):
    line = enrolled
    peer.control(executor='working')
    s = submit(line, peer)
    log = len(peer.log())
    revoked = line.send(line.target(peer, 'revoke'))
    assert revoked.get('revoked') is True, revoked
    assert poll(line, peer, s['task_id'])['error'] == 'revoked'
    assert cancel(line, peer, s['task_id'])['error'] == 'revoked'
    assert declare(line, peer)['error'] == 'revoked'
    assert len(peer.log()) == log
    # L-62 (proposal): the task stays readable.
    assert read(line, peer, s['task_id'])['task_id'] == s['task_id']


def test_r61_after_rotation_the_old_key_never_verifies(line, peer_factory, keys):
    old, new = keys.peer_key('peer-key-1'), keys.peer_key('peer-key-2')
    peer = peer_factory(signing_keys=[old, new])
    line.setup(h.default_policy([peer.peer_id], [peer.uri]))
    line.start()
    line.enroll(peer, key=old)
    peer.control(executor='working')
    s = submit(line, peer)
    rotated = line.send(line.target(peer, 'rotate', key=line.key_record(new, peer.peer_id)))
    assert rotated.get('key_id') == 'peer-key-2', rotated
    # The peer still signs with the old key: unknown, nothing adopted.
    unknown(poll(line, peer, s['task_id']))
    peer.control(executor='working', faults=[{'method': '*', 'kind': 'sign_with',
                                              'key_id': 'peer-key-2', 'times': 5}])
    p = poll(line, peer, s['task_id'])
    assert p.get('status') == 'working', p


def test_r05_no_secret_in_output_or_database_after_every_operation(enrolled, peer):
    line = enrolled
    s = submit(line, peer)
    settle(line, peer, s['task_id'])
    read(line, peer, s['task_id'])
    cancel(line, peer, s['task_id'])
    peer.control(faults=[{'method': 'SendMessage', 'kind': 'drop'}])
    submit(line, peer)
    line.close()
    assert line.scan() == []


def test_r45_only_text_parts_are_retained(enrolled, peer):
    line = enrolled
    peer.control(faults=[{'method': 'SendMessage', 'kind': 'url_part'}])
    s = submit(line, peer)
    settle(line, peer, s['task_id'])
    obs = read(line, peer, s['task_id'])['foreign_observation']
    assert obs['omitted_parts'] and all(p['kind'] == 'url' for p in obs['omitted_parts'])
    assert all(set(p) == {'text'} for p in obs['result']['parts'])
    assert {e['http_method'] for e in peer.log()} == {'POST'}


def test_r35_a_response_over_the_allowance_is_never_adopted(enrolled, peer):
    line = enrolled
    peer.control(faults=[{'method': 'SendMessage', 'kind': 'big_artifact'}])
    s = submit(line, peer)
    unknown(poll(line, peer, s['task_id']))
    obs = line.dump('line_observation')
    assert all(o['result_json'] is None or len(o['result_json']) < 600 * 1024 for o in obs)
    check_ledger_is_the_sum(line)


def test_r46_a_task_expires(line, peer):
    line.setup(h.default_policy([peer.peer_id], [peer.uri], task_seconds=2,
                                network_seconds=2))
    line.start()
    line.enroll(peer)
    peer.control(executor='working')
    s = submit(line, peer)
    time.sleep(2.2)
    log = len(peer.log())
    assert poll(line, peer, s['task_id'])['error'] == 'expired'
    assert cancel(line, peer, s['task_id'])['error'] == 'already_terminal'
    assert len(peer.log()) == log
    assert read(line, peer, s['task_id'])['status'] == 'expired'


def test_r16_key_validity_is_checked_when_a_response_is_verified(line, peer, keys):
    now = time.time()
    line.setup(h.default_policy([peer.peer_id], [peer.uri], task_seconds=86400))
    line.start()
    key = line.key_record(keys.peer_key('peer-key-1'), peer.peer_id,
                          expires_at=h.iso(now + 2 * 3600))
    assert 'error' not in line.send(dict(line.enroll_line(peer), key=key))
    peer.control(executor='working')
    s = submit(line, peer)
    assert s['status'] in ('submitted', 'working'), s
    # Three hours later (both clocks), the enrolled key has expired: the peer's response no
    # longer authenticates, however well it is signed.
    later_ms = int((now + 3 * 3600) * 1000)
    line.restart(test_now_ms=later_ms)
    peer.control(executor='working', clock_offset_seconds=h.Peer.clock_offset_for(later_ms))
    unknown(poll(line, peer, s['task_id']), s['task_id'])
    [get] = peer.requests('GetTask')
    assert get['verified'] is True  # the peer accepted our request; we refused its answer
    check_ledger_is_the_sum(line)


@pytest.mark.parametrize('point', ['intent-commit', 'ledger-commit', 'after-claim-before-send',
                                   'after-send-before-response', 'outcome-commit'])
def test_r68_a_crash_at_every_point_of_a_submit(line, peer, point):
    """abort at each point a submit meets, then restart: the database is intact, the ledger is
    the sum of the exchanges, at most one SendMessage was ever sent, and a read says `unknown`
    (or `task_not_found` when the intent never committed)."""
    line.setup(h.default_policy([peer.peer_id], [peer.uri]))
    line.start(fault=f'{point}:abort')
    line.enroll(peer)
    d = declare(line, peer)
    assert line.send({'operation': 'submit', 'declaration_id': d['declaration_id']}) is None
    line.kill_all()
    line.start()
    tasks = line.dump('line_task')
    if point == 'intent-commit':
        assert tasks == [] and line.dump('line_exchange') == []
    else:
        [task] = tasks
        assert task['status'] == 'unknown', task
        exchanges = line.dump('line_exchange')
        assert [e['outcome'] for e in exchanges] == ([] if point == 'ledger-commit'
                                                    else ['unknown'])
        assert read(line, peer, task['task_id'])['status'] == 'unknown'
        unknown(poll(line, peer, task['task_id']))
    if point in ('after-send-before-response', 'outcome-commit'):
        peer.wait_log(1, timeout=20)
    assert len(peer.sends()) == (1 if point in ('after-send-before-response',
                                                'outcome-commit') else 0)
    check_ledger_is_the_sum(line)


def test_r23_the_endpoint_is_the_exact_uri_with_its_port(enrolled, peer):
    """The target's endpoint is the enrollment's `https://{hostname}:{port}{path}`, byte for
    byte: without its port, with another spelling of the host or path, it is refused before
    anything happens."""
    line = enrolled
    for endpoint in (f'https://{h.HOSTNAME}{h.PATH}', f'https://PEER.example:{peer.port}{h.PATH}',
                     f'https://{h.HOSTNAME}:{peer.port}{h.PATH}/',
                     f'https://127.0.0.1:{peer.port}{h.PATH}'):
        answer = line.send(line.target(peer, 'declare-public', endpoint=endpoint,
                                       source={'text': TEXT, 'public_assertion': True}))
        assert answer['error'] in ('denied', 'not_enrolled', 'invalid_field'), (endpoint, answer)
    assert peer.log() == [] and line.dump('line_exchange') == []
    assert 'declaration_id' in declare(line, peer)


def test_r70_delivery_state_follows_from_its_rows_alone(enrolled, peer):
    """After a completed, a refused, an unknown and a cancelled task, each task's foreign id,
    status and adoption are what its exchange and observation rows say (check_delivery_state)."""
    line = enrolled
    done = submit(line, peer)
    settle(line, peer, done['task_id'])
    peer.control(faults=[{'method': 'SendMessage', 'kind': 'error', 'code': -32008}])
    assert submit(line, peer)['error'] == 'peer_refused'
    peer.control(faults=[{'method': 'SendMessage', 'kind': 'drop'}])
    unknown(submit(line, peer))
    peer.control(executor='working')
    working = submit(line, peer)
    cancel(line, peer, working['task_id'])
    assert len(line.dump('line_task')) == 4
    check_delivery_state(line)
    check_ledger_is_the_sum(line)

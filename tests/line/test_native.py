"""The native run lab (`agent-intercom line native-lab`, profile native-public-peer@1) against
the a2a-sdk 1.3.0 signed peer: admission without contact, request idempotence, tick with at
most one exchange, the exactly-once resume, status, cancel-run, restart and reauthorize-run.
Tests are named by requirement (docs/line.md, L-71 to L-89)."""

import time

import pytest

import line_harness as h

TEXT = 'Summarise the public changelog.'
NATIVE = ['admit', 'adopt', 'resume', 'inspect']


def lab_policy(peer, **over):
    policy = h.default_policy([peer.peer_id], [peer.uri])
    policy['actions'] = policy['actions'] + NATIVE
    policy.update(over)
    return policy


@pytest.fixture
def lab(line, peer):
    line.setup(lab_policy(peer))
    line.start_native()
    answer = line.enroll(peer)
    assert 'error' not in answer, answer
    return line


def admit(line, peer, request_id='req-1', text=TEXT, **over):
    return line.send(line.target(peer, 'submit-public-run', request_id=request_id,
                                 source={'text': text, 'public_assertion': True}, **over))


def tick(line, run_id):
    return line.send({'operation': 'tick', 'run_id': run_id})


def tick_until(line, run_id, tries=50):
    """Ticks until the run settles (or the session dies: None), polling at most `tries` times;
    the answers in order."""
    answers = []
    for _ in range(tries):
        answer = tick(line, run_id)
        answers.append(answer)
        if answer is None or 'error' in answer or answer['status'] != 'awaiting_peer':
            return answers
        time.sleep(0.1)
    raise AssertionError(answers)


def status(line, run_id):
    return line.send({'operation': 'status', 'run_id': run_id})


def checkpoints(line, run_id):
    return [(r['step_id'], r['kind']) for r in
            line.rows('SELECT step_id, kind FROM run_checkpoint WHERE run_id = ? ORDER BY seq',
                      (run_id,))]


def test_r74_the_same_environment_starts_both_profiles(line, peer):
    line.setup(lab_policy(peer))
    assert line.start().ready['profile'] == 'outbound-public-text@1'
    line.close()
    ready = line.start_native().ready
    assert ready['profile'] == 'native-public-peer@1'
    assert ready['workload_id'] == line.workload_id
    # enroll, rotate and revoke are the lab's too; the outbound task operations are not.
    assert 'error' not in line.enroll(peer)
    assert line.send(line.target(peer, 'declare-public', source={'text': TEXT,
                                  'public_assertion': True}))['error'] == 'unknown_operation'


def test_r65_the_lab_needs_the_native_revision(line, peer):
    line.write_config(lab_policy(peer))
    assert line.migrate(1).code == 0
    assert line.set_operator_credential().code == 0
    assert line.establish_policy().code == 0
    with pytest.raises(h.SessionRefused) as refused:
        line.start_native()
    assert refused.value.error()['error'] == 'migration_required'
    assert line.migrate(2).code == 0
    line.start_native()


def test_r71_r77_admission_binds_the_task_and_makes_no_contact(lab, peer):
    before = lab.dump('line_capacity')
    run = admit(lab, peer)
    assert run['status'] == 'awaiting_peer', run
    assert peer.log() == [] and lab.dump('line_capacity') == before
    st = status(lab, run['run_id'])
    b = st['binding']
    assert (b['station'], b['workflow_id'], b['step_id'], b['occurrence']) == (
        'native-public-peer-lab', 'public-peer-reply@1', 'ask-peer', 1)
    assert b['request_id'] == 'req-1' and b['session_id'] == run['session_id']
    assert b['target']['peer_id'] == peer.peer_id and b['target']['endpoint'] == peer.uri
    assert st['binding_digest'] == run['binding_digest'] and st['task_id'] == run['task_id']
    assert checkpoints(lab, run['run_id']) == [('ask-peer', 'admitted')]
    [task] = lab.dump('line_task')
    assert task['owner_kind'] == 'native' and task['status'] == 'prepared'


def test_r78_request_idempotence(lab, peer):
    run = admit(lab, peer)
    rows = {t: len(lab.dump(t)) for t in ('run_record', 'line_task', 'run_checkpoint')}
    again = admit(lab, peer, session_id=run['session_id'])
    assert (again['run_id'], again['task_id']) == (run['run_id'], run['task_id'])
    assert {t: len(lab.dump(t)) for t in rows} == rows
    changed = admit(lab, peer, session_id=run['session_id'], text=TEXT + ' (changed)')
    assert changed['error'] == 'request_conflict', changed
    other_session = admit(lab, peer)
    assert other_session['error'] == 'request_conflict', other_session
    unknown_session = admit(lab, peer, request_id='req-2', session_id=h.new_uuid())
    assert unknown_session['error'] == 'session_unknown', unknown_session


def test_r79_r80_tick_does_one_exchange_and_the_terminal_resumes_once(lab, peer):
    run = admit(lab, peer)
    first = tick(lab, run['run_id'])
    assert first['performed'] == 'submit' and first['status'] == 'awaiting_peer', first
    assert len(peer.log()) == 1
    polls = tick_until(lab, run['run_id'])
    assert all(a['performed'] == 'poll' for a in polls), polls
    assert (polls[-1]['status'], polls[-1]['outcome']) == ('completed', 'resumed'), polls
    assert len(peer.log()) == 1 + len(polls)
    for _ in range(3):
        later = tick(lab, run['run_id'])
        assert (later['performed'], later['status']) == ('none', 'completed'), later
    assert len(peer.log()) == 1 + len(polls)
    assert checkpoints(lab, run['run_id']) == [
        ('ask-peer', 'admitted'), ('ask-peer', 'adopted'), ('record-reply', 'resumed')]
    st = status(lab, run['run_id'])
    assert st['reply']['classification'] == 'authenticated-foreign-data'
    assert st['reply']['result']['parts'] == [{'text': 'done: ' + TEXT}]


def test_r81_status_shows_the_reply_only_under_read(line, peer):
    line.setup(lab_policy(peer))
    line.start_native()
    line.enroll(peer)
    run = admit(line, peer)
    tick(line, run['run_id'])
    assert tick_until(line, run['run_id'])[-1]['status'] == 'completed'
    line.close()
    policy = lab_policy(peer, generation=2)
    policy['actions'] = [a for a in policy['actions'] if a != 'read']
    line.write_config(policy)
    assert line.establish_policy().code == 0
    line.start_native()
    st = status(line, run['run_id'])
    assert st['status'] == 'completed' and 'reply' not in st, st


def test_r76_native_actions_grant_no_submit_or_poll(line, peer):
    policy = lab_policy(peer)
    policy['actions'] = [a for a in policy['actions'] if a not in ('submit', 'poll')]
    line.setup(policy)
    line.start_native()
    line.enroll(peer)
    run = admit(line, peer)
    answer = tick(line, run['run_id'])
    assert (answer['error'], answer['reason']) == ('denied', 'action'), answer
    assert peer.log() == []


def test_r82_cancel_run_keeps_remote_uncertainty_visible(lab, peer):
    peer.control(faults=[{'method': 'SendMessage', 'kind': 'drop'}])
    run = admit(lab, peer)
    t = tick(lab, run['run_id'])
    assert (t['status'], t['outcome']) == ('unknown', 'unknown'), t
    assert lab.send({'operation': 'cancel-run', 'run_id': run['run_id']})['error'] == \
        'already_terminal'
    # A settled run has nothing to reauthorize.
    again = lab.send({'operation': 'reauthorize-run', 'run_id': run['run_id'],
                      'task_id': run['task_id'], 'binding_digest': run['binding_digest'],
                      'actions': ['poll']})
    assert again['error'] == 'already_terminal', again
    assert lab.dump('run_reauthorization') == []
    fresh = admit(lab, peer, request_id='req-2')
    peer.control(executor='working')
    tick(lab, fresh['run_id'])
    answer = lab.send({'operation': 'cancel-run', 'run_id': fresh['run_id']})
    assert (answer['status'], answer['local_exchange'], answer['remote']) == (
        'cancelled', 'retired', 'observed'), answer
    assert peer.requests('CancelTask') == []
    assert tick(lab, fresh['run_id'])['performed'] == 'none'


def test_r83_r89_an_uncertain_submit_settles_unknown_and_is_never_replaced(lab, peer):
    peer.control(faults=[{'method': 'SendMessage', 'kind': 'drop'}])
    run = admit(lab, peer)
    t = tick(lab, run['run_id'])
    assert (t['status'], t['outcome']) == ('unknown', 'unknown'), t
    assert status(lab, run['run_id'])['status'] == 'unknown'
    for _ in range(2):
        tick(lab, run['run_id'])
    assert len(peer.sends()) == 1


def test_r84_a_worker_failure_never_settles(line, peer):
    line.setup(lab_policy(peer))
    line.start_native(fault='worker:uncertain-absent')
    line.enroll(peer)
    run = admit(line, peer)
    tick(line, run['run_id'])
    answer = tick_until(line, run['run_id'])[-1]
    assert answer['error'] == 'worker_failed', answer
    assert status(line, run['run_id'])['status'] == 'awaiting_peer'


def test_r85_r86_r87_r88_restart_needs_reauthorization(line, peer):
    line.setup(lab_policy(peer))
    line.start_native()
    line.enroll(peer)
    run = admit(line, peer)
    line.close()
    line.start_native()
    # Evidence is restored, but nothing is sent before reauthorize-run.
    assert status(line, run['run_id'])['status'] == 'awaiting_peer'
    assert tick(line, run['run_id'])['error'] == 'reauthorization_required'
    assert peer.log() == []
    base = {'operation': 'reauthorize-run', 'run_id': run['run_id'], 'task_id': run['task_id'],
            'binding_digest': run['binding_digest']}
    assert line.send(dict(base, binding_digest='0' * 64, actions=['submit']))['error'] == \
        'binding_mismatch'
    assert line.send(dict(base, actions=['cancel']))['error'] == 'invalid_field'
    assert line.send(dict(base, actions=['submit']))['error'] == 'reaffirm_required'
    ok = line.send(dict(base, actions=['submit', 'poll', 'read', 'adopt', 'resume'],
                        reaffirm_public_source=True))
    assert ok['actions'] == ['adopt', 'poll', 'read', 'resume', 'submit'], ok
    assert tick(line, run['run_id'])['performed'] == 'submit'
    [sent] = peer.sends()
    [task] = line.dump('line_task')
    # L-88: the original body (its digest) reached the peer.
    assert sent['body_sha256'] == task['body_sha256']
    # A second restart needs its own reauthorization.
    line.close()
    line.start_native()
    assert tick(line, run['run_id'])['error'] == 'reauthorization_required'


def test_r89_reauthorizing_an_uncertain_submit_is_refused(line, peer):
    line.setup(lab_policy(peer))
    line.start_native(fault='after-send-before-response:abort')
    line.enroll(peer)
    run = admit(line, peer)
    assert tick(line, run['run_id']) is None  # died after sending
    line.kill_all()
    line.start_native()
    peer.wait_log(1, timeout=20)
    answer = line.send({'operation': 'reauthorize-run', 'run_id': run['run_id'],
                        'task_id': run['task_id'], 'binding_digest': run['binding_digest'],
                        'actions': ['submit'], 'reaffirm_public_source': True})
    assert answer['error'] == 'uncertain_submit', answer
    line.send({'operation': 'reauthorize-run', 'run_id': run['run_id'],
               'task_id': run['task_id'], 'binding_digest': run['binding_digest'],
               'actions': ['poll']})
    t = tick(line, run['run_id'])
    assert (t['status'], t['outcome']) == ('unknown', 'unknown'), t
    assert len(peer.sends()) == 1


def test_r75_r80_trap10_a_crash_between_adopt_and_resume_resumes_once(line, peer):
    line.setup(lab_policy(peer))
    line.start_native(fault='run-adopted:abort')
    line.enroll(peer)
    run = admit(line, peer)
    tick(line, run['run_id'])
    assert tick_until(line, run['run_id'])[-1] is None  # died after the adopted checkpoint
    line.kill_all()
    line.start_native()
    line.send({'operation': 'reauthorize-run', 'run_id': run['run_id'],
               'task_id': run['task_id'], 'binding_digest': run['binding_digest'],
               'actions': ['adopt', 'resume']})
    for _ in range(3):
        tick(line, run['run_id'])
    assert checkpoints(line, run['run_id']).count(('record-reply', 'resumed')) == 1
    assert status(line, run['run_id'])['status'] == 'completed'


def test_r73_downgrade_is_refused_while_native_rows_remain(lab, peer):
    admit(lab, peer)
    lab.close()
    refused = lab.migrate(1)
    assert refused.code != 0 and refused.error()['error'] == 'downgrade_refused', refused
    assert len(lab.dump('run_record')) == 1


def test_r07_r05_r91_the_lab_listens_nowhere_and_writes_no_secret(lab, peer):
    assert h.listening_sockets(lab.session.pid) == []
    run = admit(lab, peer)
    tick(lab, run['run_id'])
    tick_until(lab, run['run_id'])
    status(lab, run['run_id'])
    assert h.listening_sockets(lab.session.pid) == []
    lab.close()
    assert lab.scan() == []


def test_r83_a_stalled_peer_gives_an_explicit_outcome_and_the_next_command_works(line, peer):
    line.setup(lab_policy(peer, network_seconds=2))
    line.start_native()
    line.enroll(peer)
    peer.control(executor='working')
    run = admit(line, peer)
    assert tick(line, run['run_id'])['performed'] == 'submit'
    peer.control(executor='working', faults=[{'method': 'GetTask', 'kind': 'delay',
                                              'seconds': 5}])
    t = tick(line, run['run_id'])
    assert (t['performed'], t['outcome'], t['status']) == ('poll', 'unknown',
                                                           'awaiting_peer'), t
    assert status(line, run['run_id'])['status'] == 'awaiting_peer'


def test_r86_each_reauthorized_action_is_admitted_now(line, peer):
    line.setup(lab_policy(peer))
    line.start_native()
    line.enroll(peer)
    run = admit(line, peer)
    line.close()
    policy = lab_policy(peer, generation=2)
    policy['actions'] = [a for a in policy['actions'] if a != 'adopt']
    line.write_config(policy)
    assert line.establish_policy().code == 0
    line.start_native()
    answer = line.send({'operation': 'reauthorize-run', 'run_id': run['run_id'],
                        'task_id': run['task_id'], 'binding_digest': run['binding_digest'],
                        'actions': ['poll', 'adopt']})
    assert (answer['error'], answer['reason']) == ('denied', 'action'), answer
    assert line.dump('run_reauthorization') == []

"""Enrollment through the real binary: the host commands, a live `agent-intercom line session`,
the exact enroll line for the running signed peer, what the database then holds, and the byte
scan of everything that run wrote (stdout, stderr, the database and its journal): zero hits."""

import base64
import hashlib

import pytest

import line_harness as h


def test_a_session_that_refuses_raises_with_its_exit_status_and_error(line, peer):
    line.write_config(h.default_policy([peer.peer_id], [peer.uri]))
    with pytest.raises(h.SessionRefused) as refused:
        line.start()
    assert refused.value.code == 1
    assert refused.value.error()['error'] == 'migration_required'
    assert line.scan() == []


def test_enroll_the_running_peer_without_contacting_it(line, peer, keys):
    line.setup(h.default_policy([peer.peer_id], [peer.uri]))
    session = line.start()
    assert session.ready['profile'] == 'outbound-public-text@1'
    assert session.ready['workload_id'] == line.workload_id

    # The session listens nowhere (the peer does: the control that the check sees sockets).
    assert h.listening_sockets(session.pid) == []
    assert [port for _, port in h.listening_sockets(peer.proc.pid)] == [peer.port]

    answer = line.enroll(peer)
    assert answer['operation'] == 'enroll', answer
    assert answer['peer_id'] == peer.peer_id
    assert answer['category'] == h.CATEGORY
    assert answer['endpoint'] == peer.uri
    assert (answer['key_id'], answer['key_version']) == ('peer-key-1', 1)
    # Enrollment makes no contact: no card fetch, no request.
    assert peer.log() == []

    [row] = line.dump('line_peer')
    assert (row['address'], row['hostname'], row['port'], row['path']) == (
        '127.0.0.1', h.HOSTNAME, peer.port, h.PATH)
    assert row['ca_file'] == str(peer.pki.ca_file)
    assert row['ca_sha256'] == hashlib.sha256(peer.pki.ca_file.read_bytes()).hexdigest()
    [key] = line.dump('line_peer_key')
    assert (key['key_id'], key['issuer'], key['audience'], key['state']) == (
        'peer-key-1', peer.peer_id, line.workload_id, 'active')

    # Durable: after a restart the identity is immutable.
    line.restart()
    again = line.enroll(peer, key=keys.peer_key('peer-key-2'))
    assert again['error'] == 'already_enrolled', again
    assert line.close() == 0
    assert peer.log() == []
    assert line.scan() == []


def test_enroll_with_the_peer_down_works_too(line, peer):
    line.setup(h.default_policy([peer.peer_id], [peer.uri]))
    peer.stop()
    line.start()
    answer = line.enroll(peer)
    assert answer['operation'] == 'enroll' and 'error' not in answer, answer
    assert line.close() == 0
    assert line.scan() == []


def test_the_byte_scan_finds_every_form_it_looks_for(ready_line, peer):
    """The scan is not vacuous: each form of each secret planted in the output is found, and
    the database (with any journal) is part of what it reads."""
    line = ready_line
    assert line.enroll(peer)['operation'] == 'enroll'
    line.close()
    assert line.scan() == []
    assert 'line.sqlite' in line.scanned_files()
    assert len(line.scanned_files()['line.sqlite']) > 4096
    needles = line.secret_needles()
    assert {'seed:raw', 'seed:base64', 'seed:base64url-nopad', 'seed:hex', 'seed:HEX',
            'credential:raw', 'credential:base64', 'pem-body'} <= set(needles)
    for name, needle in needles.items():
        before = bytes(line.printed)
        line.printed += b'..' + needle + b'..'
        assert (name, 'output') in line.scan(), name
        line.printed = bytearray(before)
    seed_b64 = base64.b64encode(line.keys.workload.seed)
    assert needles['seed:base64'] == seed_b64

"""Fixtures of the line's scenario suite (tests/line): the PKI, the keys, the signed a2a-sdk
peer (a separate process) and the line (host commands and a live session). Everything a test
starts is killed at its teardown. The classes are in line_harness.py; the peer in peer.py."""

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import line_harness as h  # noqa: E402


@pytest.fixture
def pki(tmp_path) -> h.Pki:
    """A CA and a peer.example leaf, plus an OTHER CA with its own peer.example leaf."""
    return h.make_pki(tmp_path / 'pki')


@pytest.fixture
def keys(tmp_path) -> h.Keys:
    """The workload key `workload-1` (0600 PKCS#8 file), the operator credential (0600) and
    the peer key `peer-key-1`; `keys.peer_key(id)` makes more."""
    return h.make_keys(tmp_path / 'keys')


@pytest.fixture
def ids() -> SimpleNamespace:
    """Fresh UUIDs: workload_id, peer_id."""
    return SimpleNamespace(workload_id=h.new_uuid(), peer_id=h.new_uuid())


@pytest.fixture
def peer_factory(tmp_path, pki, keys, ids):
    """make(name='peer', *, signing_keys=[KeyPair...], sign_key_id=None, store='sqlite',
    ext=EXT, path=PATH, other_ca=False, peer_id=None, start=True) -> a started Peer."""
    made = []

    def make(name: str = 'peer', *, signing_keys=None, peer_id=None, start=True, **kw):
        peer = h.Peer(tmp_path / name, pki=pki, peer_id=peer_id or ids.peer_id,
                      workload_id=ids.workload_id, workload_key=keys.workload,
                      signing_keys=signing_keys or [keys.peer_key('peer-key-1')], **kw)
        made.append(peer)
        return peer.start() if start else peer

    yield make
    for peer in made:
        peer.kill()


@pytest.fixture
def peer(peer_factory) -> h.Peer:
    """A started peer: sqlite store, signing with peer-key-1."""
    return peer_factory()


@pytest.fixture
def line(tmp_path, keys, ids):
    """The line over tmp_path/line (not set up: call line.setup(policy) or the host commands
    yourself); every session it started is killed at teardown."""
    ln = h.Line(tmp_path / 'line', keys=keys, workload_id=ids.workload_id)
    yield ln
    ln.kill_all()


@pytest.fixture
def ready_line(line, peer):
    """The line set up with the default policy admitting `peer` (its exact URI), a session
    started; enroll is up to the test (line.enroll(peer))."""
    line.setup(h.default_policy([peer.peer_id], [peer.uri]))
    line.start()
    return line

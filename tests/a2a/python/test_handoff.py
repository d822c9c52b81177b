"""Two machines on loopback: two `agent-intercom serve` processes with separate stores and
separate keys directories exchange signed envelopes made by `agent-intercom pack send --to`.
Each accepts what the other's enrolled key signed, lands it in its own store as the sender's
task or message, and refuses a replay, a tampered envelope and an unknown key (401 with the
stable code)."""

import json
import subprocess

import httpx
import pytest

from harness import AIC_BIN, new_id, only_serve, pad, start_serve

pytestmark = only_serve


def aic(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([AIC_BIN, *args], capture_output=True, text=True, check=False)
    if check:
        assert done.returncode == 0, (args, done.stderr)
    return done


class Machine:
    def __init__(self, root, name: str, key: str):
        self.name, self.key = name, key
        self.keys = root / f'{name}-keys'
        self.db = root / f'{name}.sqlite'
        aic('keys', 'generate', '--kind', 'ed25519', '--id', key, '--keys', str(self.keys))
        self.public = root / f'{key}.pub'
        self.public.write_text(aic('keys', 'export-public', '--id', key,
                                   '--keys', str(self.keys)).stdout)
        self.service = None

    def enroll(self, other: 'Machine') -> None:
        aic('keys', 'import', '--id', other.key, '--public', str(other.public),
            '--keys', str(self.keys))

    def start(self) -> None:
        self.service = start_serve(self.db, '--keys', str(self.keys))

    def pack(self, root, content_type: str, payload: dict, recipient: str, *extra: str):
        path = root / f'payload-{new_id()}.json'
        path.write_text(json.dumps(payload))
        return aic('pack', 'send', '--keys', str(self.keys), '--key', self.key,
                   '--content-type', content_type, '--payload', str(path),
                   '--recipient', recipient, *extra, check=False)


@pytest.fixture(scope='module')
def pair(tmp_path_factory):
    root = tmp_path_factory.mktemp('two-machines')
    a, b = Machine(root, 'a', 'alpha'), Machine(root, 'b', 'beta')
    a.enroll(b)
    b.enroll(a)
    a.start()
    b.start()
    yield root, a, b
    for m in (a, b):
        alive = m.service.alive()
        m.service.stop()
        assert alive, ''.join(m.service.stderr_lines[-20:])


def test_pack_send_to_the_other_service_lands_a_task(pair):
    root, a, b = pair
    title = f'port the parser {new_id()}'
    sent = a.pack(root, 'a2a_task', {'title': title}, 'bob', '--to', b.service.base_url)
    assert sent.returncode == 0, sent.stderr
    landed = json.loads(sent.stdout)
    task = pad(b.db, 'task.get', {'id': landed['task']['id'], 'agent': 'bob'})
    assert task['title'] == title and task['state'] == 'submitted'
    assert task['assignee'] == 'bob' and task['creator'] == 'alpha'
    # Nothing of it in the sender's own store.
    with pytest.raises(Exception):
        pad(a.db, 'task.get', {'id': landed['task']['id'], 'agent': 'bob'})


def test_and_back_a_private_message(pair):
    root, a, b = pair
    content = f'reviewed, see the branch {new_id()}'
    sent = b.pack(root, 'a2a_message', {'content': content, 'privacy': 'private'}, 'alice',
                  '--to', a.service.base_url)
    assert sent.returncode == 0, sent.stderr
    notes = [m for m in pad(a.db, 'unread', {'agent': 'alice'}) if m['content'] == content]
    assert len(notes) == 1 and notes[0]['from'] == 'beta' and notes[0]['privacy'] == 'private'
    assert [m for m in pad(a.db, 'unread', {'agent': 'mallory'}) if m['content'] == content] == []


def post(service, body: bytes) -> httpx.Response:
    with httpx.Client(timeout=30) as http:
        return http.post(service.base_url + '/v1/a2a/handoff', content=body,
                         headers={'Content-Type': 'application/json'})


def test_replayed_tampered_unknown_and_unsigned_are_401(pair):
    root, a, b = pair
    out = root / f'env-{new_id()}.json'
    made = a.pack(root, 'a2a_message', {'content': 'once only'}, 'bob', '--out', str(out))
    assert made.returncode == 0, made.stderr
    envelope = out.read_bytes()
    first = post(b.service, envelope)
    assert first.status_code == 201, first.text
    replay = post(b.service, envelope)
    assert replay.status_code == 401 and replay.json()['error']['code'] == 'REPLAYED'

    doc = json.loads(envelope)
    doc['payload']['content'] = 'changed on the way'
    tampered = post(b.service, json.dumps(doc).encode())
    assert tampered.status_code == 401
    assert tampered.json()['error']['code'] == 'SIGNATURE_INVALID'

    # A key the receiver never enrolled.
    aic('keys', 'generate', '--kind', 'ed25519', '--id', 'gamma', '--keys', str(a.keys))
    gamma = Machine.__new__(Machine)
    gamma.keys, gamma.key = a.keys, 'gamma'
    stranger = gamma.pack(root, 'a2a_message', {'content': 'who?'}, 'bob')
    assert stranger.returncode == 0, stranger.stderr
    unknown = post(b.service, stranger.stdout.encode())
    assert unknown.status_code == 401
    assert unknown.json()['error']['code'] == 'UNKNOWN_SIGNING_KEY'

    del doc['signature']
    unsigned = post(b.service, json.dumps(doc).encode())
    assert unsigned.status_code == 401
    assert unsigned.json()['error']['code'] in {'SIGNATURE_MISSING', 'ENVELOPE_MALFORMED'}
    delivered = [m for m in pad(b.db, 'unread', {'agent': 'bob'})
                 if m['content'] in ('changed on the way', 'who?')]
    assert delivered == []

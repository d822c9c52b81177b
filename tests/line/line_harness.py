"""The line's scenario harness: the test PKI and keys, the signed test peer as a separate
process (peer.py), the line host commands and a live `agent-intercom line session`, read-only
views of its database, and a byte scanner for the secrets. conftest.py wraps these in fixtures.

Environment:
  AIC_LINE_BIN  the agent-intercom binary (default target/debug/agent-intercom)
"""

import base64
import contextlib
import datetime
import json
import os
import queue
import secrets
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.x509.oid import NameOID

import line_wire

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
AIC_LINE_BIN = os.environ.get('AIC_LINE_BIN') or str(ROOT / 'target' / 'debug' / 'agent-intercom')
PEER_SCRIPT = HERE / 'peer.py'
PROTOCOL = 'rfc9421-ed25519@1'
# The signing extension's URI: the line's own (agent_intercom_core::httpsig::LINE_EXTENSION_URI);
# the card lists it (required) and every request names it in A2A-Extensions.
EXT = 'https://github.com/ctliz/agent-intercom/ext/line-rfc9421-ed25519/v1'
HOSTNAME = 'peer.example'
PATH = '/a2a/jsonrpc'
PURPOSE = 'public-summary'
TASK_SCHEMA = 'public-text@1'
CATEGORY = 'public-task'
STARTUP_SECONDS = 60
ANSWER_SECONDS = 60
LINE_ENV = (
    'AGENT_INTERCOM_LINE_DATABASE', 'AGENT_INTERCOM_LINE_SIGNING_KEY_FILE',
    'AGENT_INTERCOM_LINE_OPERATOR_CREDENTIAL_FILE', 'AGENT_INTERCOM_LINE_FAULT',
    'AGENT_INTERCOM_LINE_TEST_NOW',
)


def write_secret(path: Path, data: bytes) -> Path:
    """A private file: created 0600 (never readable by others, not even briefly)."""
    path = Path(path)
    if path.exists():
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, 'wb') as f:
        f.write(data)
    return path


def iso(ts: float, offset_hours: int = 0) -> str:
    """A timezone-aware RFC 3339 time (Z for UTC, else +HH:00)."""
    tz = datetime.timezone(datetime.timedelta(hours=offset_hours))
    text = datetime.datetime.fromtimestamp(int(ts), tz=tz).isoformat()
    return text.replace('+00:00', 'Z')


# -- PKI ---------------------------------------------------------------------------------------

@dataclass
class Pki:
    """A CA and its peer.example leaf, and an OTHER CA with its own peer.example leaf."""

    ca_file: Path
    cert_file: Path
    key_file: Path
    other_ca_file: Path
    other_cert_file: Path
    other_key_file: Path


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _ca(cn: str):
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(_name(cn))
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False,
            encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                       critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _leaf(ca_key, ca_cert, hostname: str):
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder().subject_name(_name(hostname)).issuer_name(ca_cert.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]),
                       critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def make_pki(folder: Path, hostname: str = HOSTNAME) -> Pki:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    pem = serialization.Encoding.PEM
    files = {}
    for prefix, cn in (('', 'line test CA'), ('other-', 'line OTHER test CA')):
        ca_key, ca_cert = _ca(cn)
        key, cert = _leaf(ca_key, ca_cert, hostname)
        files[prefix + 'ca'] = write_secret(folder / f'{prefix}ca.pem', ca_cert.public_bytes(pem))
        files[prefix + 'cert'] = write_secret(
            folder / f'{prefix}peer-cert.pem', cert.public_bytes(pem) + ca_cert.public_bytes(pem))
        files[prefix + 'key'] = write_secret(folder / f'{prefix}peer-key.pem', key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return Pki(files['ca'], files['cert'], files['key'],
               files['other-ca'], files['other-cert'], files['other-key'])


# -- keys --------------------------------------------------------------------------------------

@dataclass
class KeyPair:
    """An Ed25519 key: its id, raw seed, PKCS#8 private PEM and SPKI public PEM."""

    key_id: str
    seed: bytes
    private_pem: bytes
    public_pem: bytes
    file: Path | None = None  # the 0600 private file, when written

    @classmethod
    def new(cls, key_id: str) -> 'KeyPair':
        key = ed25519.Ed25519PrivateKey.generate()
        seed = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                 serialization.NoEncryption())
        private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
        return cls(key_id, seed, private, public)

    def write(self, path: Path) -> 'KeyPair':
        self.file = write_secret(path, self.private_pem)
        return self


@dataclass
class Keys:
    """The workload's key (file 0600), the operator credential (file 0600, 48 random bytes as
    base64url text, not PEM) and the peer's keys by key id."""

    workload: KeyPair
    credential: bytes
    credential_file: Path
    peer: dict = field(default_factory=dict)

    def peer_key(self, key_id: str) -> KeyPair:
        if key_id not in self.peer:
            self.peer[key_id] = KeyPair.new(key_id)
        return self.peer[key_id]


def make_keys(folder: Path, workload_key_id: str = 'workload-1',
              peer_key_ids=('peer-key-1',)) -> Keys:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    workload = KeyPair.new(workload_key_id).write(folder / 'workload.pem')
    credential = base64.urlsafe_b64encode(secrets.token_bytes(48)).rstrip(b'=')
    keys = Keys(workload, credential, write_secret(folder / 'operator.credential', credential))
    for key_id in peer_key_ids:
        keys.peer_key(key_id)
    return keys


# -- the peer ----------------------------------------------------------------------------------

class Peer:
    """peer.py as a child process. `start()` reads its ready line (the port); a restart keeps
    the folder (peer.db, requests.jsonl, control.json) and the port."""

    def __init__(self, folder: Path, *, pki: Pki, peer_id: str, workload_id: str,
                 workload_key: KeyPair, signing_keys: list, sign_key_id: str | None = None,
                 ext: str = EXT, store: str = 'sqlite', path: str = PATH,
                 other_ca: bool = False):
        self.dir = Path(folder)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.pki, self.peer_id, self.workload_id = pki, peer_id, workload_id
        self.workload_key, self.ext, self.store, self.path = workload_key, ext, store, path
        self.signing_keys = {k.key_id: k for k in signing_keys}
        self.sign_key_id = sign_key_id or signing_keys[0].key_id
        self.other_ca = other_ca
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.stderr: list[str] = []
        self.config_file = self.dir / 'peer-config.json'

    def _config(self) -> dict:
        return {
            'dir': str(self.dir), 'peer_id': self.peer_id, 'workload_id': self.workload_id,
            'workload_key_id': self.workload_key.key_id,
            'workload_public_key_pem': self.workload_key.public_pem.decode(),
            'signing_keys': {k: v.private_pem.decode() for k, v in self.signing_keys.items()},
            'sign_key_id': self.sign_key_id, 'ext': self.ext,
            'tls_cert': str(self.pki.other_cert_file if self.other_ca else self.pki.cert_file),
            'tls_key': str(self.pki.other_key_file if self.other_ca else self.pki.key_file),
            'store': self.store, 'path': self.path, 'port': self.port or 0,
        }

    def start(self, timeout: float = STARTUP_SECONDS) -> 'Peer':
        assert self.proc is None, 'peer already running'
        write_secret(self.config_file, json.dumps(self._config()).encode())
        self.proc = subprocess.Popen(
            [sys.executable, str(PEER_SCRIPT), str(self.config_file)], stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(self.dir),
            env=dict(os.environ, PYTHONDONTWRITEBYTECODE='1'))
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=_pump, args=(self.proc.stdout, lines), daemon=True).start()
        threading.Thread(target=_collect, args=(self.proc.stderr, self.stderr),
                         daemon=True).start()
        try:
            ready = json.loads(lines.get(timeout=timeout) or 'null')
        except queue.Empty:
            ready = None
        if not (isinstance(ready, dict) and ready.get('ready')):
            self.kill()
            raise RuntimeError(f'peer did not start: {"".join(self.stderr)[-3000:]}')
        self.port = ready['port']
        return self

    def stop(self, timeout: float = 15) -> None:
        """SIGTERM, then SIGKILL after `timeout`."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc = None

    def restart(self, *, hard: bool = False, timeout: float = STARTUP_SECONDS) -> 'Peer':
        """Same folder, same store, same port (SO_REUSEADDR)."""
        self.kill() if hard else self.stop()
        return self.start(timeout)

    # -- knobs and the log -------------------------------------------------------------------

    @property
    def control_file(self) -> Path:
        return self.dir / 'control.json'

    def control(self, faults: list | None = None, executor=None,
                clock_offset_seconds: int | None = None) -> dict:
        """Replace control.json (atomically); with no arguments, remove every fault."""
        doc: dict = {'faults': list(faults or [])}
        if executor is not None:
            doc['executor'] = executor
        if clock_offset_seconds is not None:
            doc['clock_offset_seconds'] = clock_offset_seconds
        tmp = self.control_file.with_suffix('.tmp')
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, self.control_file)
        return doc

    @staticmethod
    def clock_offset_for(test_now_ms: int) -> int:
        """The clock_offset_seconds that puts the peer's clock at the line's
        AGENT_INTERCOM_LINE_TEST_NOW (UNIX ms), as of now."""
        return round(test_now_ms / 1000 - time.time())

    def read_control(self) -> dict:
        try:
            return json.loads(self.control_file.read_text())
        except FileNotFoundError:
            return {}

    def log(self) -> list:
        """The request log: one dict per HTTP request, in arrival order."""
        path = self.dir / 'requests.jsonl'
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line]

    def wait_log(self, count: int, timeout: float = 30) -> list:
        """The log once it holds at least `count` entries (polled; raises on timeout)."""
        def enough():
            entries = self.log()
            return entries if len(entries) >= count else None

        return wait_for(enough, timeout)

    def requests(self, rpc_method: str) -> list:
        """The log's entries of one JSON-RPC method (SendMessage, GetTask, CancelTask)."""
        return [e for e in self.log() if e.get('rpc_method') == rpc_method]

    def sends(self) -> list:
        """The log's SendMessage entries."""
        return self.requests('SendMessage')

    # -- how the line and our client reach it ------------------------------------------------

    @property
    def uri(self) -> str:
        return f'https://{HOSTNAME}:{self.port}{self.path}'

    def endpoint(self, ca_file: Path | None = None) -> dict:
        return {'address': '127.0.0.1', 'hostname': HOSTNAME, 'port': self.port,
                'path': self.path, 'ca_file': str(ca_file or self.pki.ca_file)}

    def client(self, *, ca_file: Path | None = None, key: KeyPair | None = None,
               **kw) -> line_wire.Client:
        identity = line_wire.Identity(
            workload_id=self.workload_id, peer_id=self.peer_id,
            key_id=(key or self.workload_key).key_id,
            private_key_pem=(key or self.workload_key).private_pem, ext=self.ext,
            peer_keys={k: v.public_pem for k, v in self.signing_keys.items()})
        return line_wire.Client(self.port, str(ca_file or self.pki.ca_file), identity,
                                path=self.path, **kw)


def _pump(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def _collect(stream, sink: list) -> None:
    for line in stream:
        sink.append(line)


# -- the line ----------------------------------------------------------------------------------

@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    def json(self):
        return json.loads(self.stdout) if self.stdout.strip() else None

    def error(self):
        return refusal(self.stderr)


def refusal(stderr: str):
    """A refusal in the CLI's one format, `agent-intercom: error[CODE]: detail[; {members}]`, as
    {'error': CODE, 'detail': detail, **members}; None when stderr is not one such line."""
    lines = stderr.splitlines()
    prefix = 'agent-intercom: error['
    if len(lines) != 1 or not lines[0].startswith(prefix) or ']: ' not in lines[0]:
        return None
    code, message = lines[0][len(prefix):].split(']: ', 1)
    detail, _, members = message.partition('; {')
    out = {'error': code, 'detail': detail}
    if members:
        out.update(json.loads('{' + members))
    return out


def default_policy(peers: list, endpoints: list, generation: int = 1, **over) -> dict:
    policy = {
        'generation': generation,
        'actions': ['enroll', 'classify_public', 'submit', 'poll', 'cancel', 'read', 'rotate',
                    'revoke'],
        'purposes': [PURPOSE],
        'categories': [CATEGORY],
        'task_schemas': [TASK_SCHEMA],
        'peers': list(peers),
        'endpoints': list(endpoints),
        'limits': {kind: {'uses': 100, 'application_bytes': 10_000_000,
                          'network_bytes': 100 * 524_288}
                   for kind in ('host', 'purpose', 'peer', 'task')},
        'declaration_seconds': 600,
        'task_seconds': 3600,
        'network_seconds': 10,
    }
    policy.update(over)
    return policy


class Session:
    """A live `agent-intercom line session`: one JSON line in, one JSON line out."""

    def __init__(self, line: 'Line', argv: list, env: dict, timeout: float):
        self.line = line
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.lines: queue.Queue = queue.Queue()
        self.stderr = bytearray()
        self._readers = [threading.Thread(target=self._pump_out, daemon=True),
                         threading.Thread(target=self._pump_err, daemon=True)]
        for reader in self._readers:
            reader.start()
        first = self._next(timeout)
        self.ready = json.loads(first) if first else None
        if not (isinstance(self.ready, dict) and self.ready.get('ready')):
            code = self.wait(10)
            for reader in self._readers:
                reader.join(10)
            raise SessionRefused(code, bytes(self.stderr).decode(errors='replace'))

    def _pump_out(self) -> None:
        for raw in self.proc.stdout:
            self.line.printed += raw
            self.lines.put(raw.decode())
        self.lines.put(None)

    def _pump_err(self) -> None:
        for raw in self.proc.stderr:
            self.line.printed += raw
            self.stderr += raw

    def _next(self, timeout: float) -> str | None:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty as e:
            raise TimeoutError(f'no answer within {timeout} s') from e

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send_raw(self, text: str, timeout: float = ANSWER_SECONDS) -> dict | None:
        """Write one line (newline added) and return the parsed answer, None at end of output."""
        self.proc.stdin.write(text.encode() + b'\n')
        self.proc.stdin.flush()
        answer = self._next(timeout)
        return json.loads(answer) if answer is not None else None

    def send(self, obj: dict, timeout: float = ANSWER_SECONDS) -> dict | None:
        return self.send_raw(json.dumps(obj), timeout)

    def close(self, timeout: float = 30) -> int:
        """End of input, then the exit status (SIGKILL after `timeout`)."""
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        return self.wait(timeout)

    def wait(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def alive(self) -> bool:
        return self.proc.poll() is None


class SessionRefused(Exception):
    def __init__(self, code: int, stderr: str):
        super().__init__(f'session refused to start (exit {code}): {stderr}')
        self.code, self.stderr = code, stderr

    def error(self):
        return refusal(self.stderr)


class Line:
    """The line host (migrate, credential, policy) and its sessions, over one folder."""

    def __init__(self, folder: Path, *, keys: Keys, workload_id: str, bin: str = AIC_LINE_BIN):
        self.dir = Path(folder)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.keys, self.workload_id, self.bin = keys, workload_id, bin
        self.db_file = self.dir / 'line.sqlite'
        self.config_file = self.dir / 'line-config.json'
        self.signing_key_id = keys.workload.key_id
        self.printed = bytearray()  # every byte any line process wrote (stdout and stderr)
        self.sessions: list[Session] = []
        self.session: Session | None = None

    # -- configuration and host commands -----------------------------------------------------

    def write_config(self, policy: dict, *, workload_id: str | None = None,
                     signing_key_id: str | None = None, raw: dict | None = None) -> Path:
        doc = raw if raw is not None else {
            'workload_id': workload_id or self.workload_id,
            'signing_key_id': signing_key_id or self.signing_key_id,
            'policy': policy,
        }
        self.config_file.write_text(json.dumps(doc))
        return self.config_file

    def env(self, *, fault: str | None = None, test_now_ms: int | None = None,
            extra: dict | None = None) -> dict:
        env = {k: v for k, v in os.environ.items() if k not in LINE_ENV}
        env.update({
            'AGENT_INTERCOM_LINE_DATABASE': str(self.db_file),
            'AGENT_INTERCOM_LINE_SIGNING_KEY_FILE': str(self.keys.workload.file),
            'AGENT_INTERCOM_LINE_OPERATOR_CREDENTIAL_FILE': str(self.keys.credential_file),
        })
        if fault is not None:
            env['AGENT_INTERCOM_LINE_FAULT'] = fault
        if test_now_ms is not None:
            env['AGENT_INTERCOM_LINE_TEST_NOW'] = str(test_now_ms)
        env.update(extra or {})
        return env

    def run(self, *args: str, env: dict | None = None, stdin: bytes = b'',
            timeout: float = 60) -> Result:
        done = subprocess.run([self.bin, *args], input=stdin, capture_output=True,
                              env=env or self.env(), timeout=timeout, check=False)
        self.printed += done.stdout + done.stderr
        return Result(done.returncode, done.stdout.decode(errors='replace'),
                      done.stderr.decode(errors='replace'))

    def migrate(self, to: int | None = None) -> Result:
        extra = ['--to', str(to)] if to is not None else []
        return self.run('line', 'host', 'migrate', '--db', str(self.db_file), *extra)

    def set_operator_credential(self) -> Result:
        return self.run('line', 'host', 'set-operator-credential', '--db', str(self.db_file))

    def establish_policy(self) -> Result:
        return self.run('line', 'host', 'establish-policy', '--db', str(self.db_file),
                        '--config', str(self.config_file))

    def setup(self, policy: dict) -> None:
        """Write the configuration, migrate, set the credential, establish the policy."""
        self.write_config(policy)
        for step in (self.migrate, self.set_operator_credential, self.establish_policy):
            result = step()
            assert result.code == 0, (step.__name__, result)

    # -- sessions ----------------------------------------------------------------------------

    def start(self, *, fault: str | None = None, test_now_ms: int | None = None,
              env: dict | None = None, timeout: float = STARTUP_SECONDS) -> Session:
        """Start a session and read its ready line (raises SessionRefused when it refuses)."""
        session = Session(self, [self.bin, 'line', 'session', '--config', str(self.config_file)],
                          env or self.env(fault=fault, test_now_ms=test_now_ms), timeout)
        self.sessions.append(session)
        self.session = session
        return session

    def start_native(self, *, fault: str | None = None, test_now_ms: int | None = None,
                     env: dict | None = None, timeout: float = STARTUP_SECONDS) -> Session:
        """Start the native run lab (`line native-lab`) and read its ready line."""
        session = Session(self, [self.bin, 'line', 'native-lab', '--config',
                                 str(self.config_file)],
                          env or self.env(fault=fault, test_now_ms=test_now_ms), timeout)
        self.sessions.append(session)
        self.session = session
        return session

    def send(self, obj: dict, timeout: float = ANSWER_SECONDS) -> dict | None:
        assert self.session is not None, 'no session'
        return self.session.send(obj, timeout)

    def close(self, timeout: float = 30) -> int | None:
        if self.session is None:
            return None
        code = self.session.close(timeout)
        self.session = None
        return code

    def restart(self, **kw) -> Session:
        self.close()
        return self.start(**kw)

    def kill_all(self) -> None:
        for session in self.sessions:
            session.kill()
        self.session = None

    # -- the lines the operator types --------------------------------------------------------

    def key_record(self, key: KeyPair, peer_id: str, *, valid_from: str | None = None,
                   expires_at: str | None = None, **over) -> dict:
        now = time.time()
        record = {
            'key_id': key.key_id, 'public_key_pem': key.public_pem.decode(),
            'issuer': peer_id, 'protocol': PROTOCOL, 'audience': self.workload_id,
            'assurance': 'operator-enrolled',
            'valid_from': valid_from or iso(now - 86400, 2),
            'expires_at': expires_at or iso(now + 30 * 86400),
        }
        record.update(over)
        return record

    def enroll_line(self, peer: Peer, *, key: KeyPair | None = None, purpose: str = PURPOSE,
                    task_schema: str = TASK_SCHEMA, category: str | None = None,
                    ca_file: Path | None = None, key_over: dict | None = None,
                    endpoint_over: dict | None = None) -> dict:
        key = key or peer.signing_keys[peer.sign_key_id]
        line = {
            'operation': 'enroll', 'peer_id': peer.peer_id, 'purpose': purpose,
            'task_schema': task_schema,
            'key': self.key_record(key, peer.peer_id, **(key_over or {})),
            'endpoint': dict(peer.endpoint(ca_file), **(endpoint_over or {})),
        }
        if category is not None:
            line['category'] = category
        return line

    def enroll(self, peer: Peer, **kw) -> dict | None:
        return self.send(self.enroll_line(peer, **kw))

    def target(self, peer: Peer, operation: str, *, purpose: str = PURPOSE,
               task_schema: str = TASK_SCHEMA, category: str | None = None, **extra) -> dict:
        """A target-bearing line: the exact selectors of the enrollment, plus `extra`."""
        line = {'operation': operation, 'peer_id': peer.peer_id, 'purpose': purpose,
                'task_schema': task_schema, 'endpoint': peer.uri}
        if category is not None:
            line['category'] = category
        line.update(extra)
        return line

    # -- the database, read only -------------------------------------------------------------

    def db(self) -> sqlite3.Connection:
        """A read-only connection (close it soon: it holds a shared lock while reading)."""
        return sqlite3.connect(f'file:{self.db_file}?mode=ro', uri=True, timeout=10)

    def rows(self, sql: str, params=()) -> list:
        with contextlib.closing(self.db()) as conn:
            conn.row_factory = sqlite3.Row
            return [dict(r) for r in conn.execute(sql, params)]

    def dump(self, table: str) -> list:
        """Every row of a table (ledger: line_capacity, line_exchange, line_observation...)."""
        assert table.isidentifier(), table
        return self.rows(f'SELECT * FROM {table} ORDER BY rowid')

    # -- the byte scan -----------------------------------------------------------------------

    def secret_needles(self) -> dict:
        """name -> bytes: every form of the workload seed, its PEM body and the credential."""
        needles = {}
        for name, secret in (('seed', self.keys.workload.seed),
                             ('credential', self.keys.credential)):
            needles.update({f'{name}:{form}': value for form, value in forms(secret).items()})
        body = [ln for ln in self.keys.workload.private_pem.decode().splitlines()
                if ln and not ln.startswith('-----')]
        needles['pem-body'] = ''.join(body).encode()
        for i, ln in enumerate(body):
            needles[f'pem-line-{i}'] = ln.encode()
        return needles

    def scanned_files(self) -> dict:
        """The database file and any journal (-journal, -wal, -shm) beside it."""
        return {p.name: p.read_bytes() for p in sorted(self.dir.iterdir())
                if p.name.startswith(self.db_file.name)}

    def scan(self) -> list:
        """(needle, where) for every secret form found in what the line wrote: stdout and
        stderr of every process, the database and its journal. [] means zero hits."""
        hays = {'output': bytes(self.printed), **self.scanned_files()}
        return [(name, where) for name, needle in self.secret_needles().items()
                for where, hay in hays.items() if needle in hay]


def listening_sockets(pid: int) -> list:
    """(local address hex, port) of every TCP socket in LISTEN state that process `pid` holds
    (from /proc: what `ss -ltnp` shows for it)."""
    inodes = set()
    for fd in Path(f'/proc/{pid}/fd').iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith('socket:['):
            inodes.add(target[8:-1])
    found = []
    for table in ('/proc/net/tcp', '/proc/net/tcp6'):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if cols[3] == '0A' and cols[9] in inodes:  # 0A: TCP_LISTEN
                address, port = cols[1].split(':')
                found.append((address, int(port, 16)))
    return found


def wait_for(predicate, timeout: float = 30, interval: float = 0.05):
    """Poll `predicate()` until it returns a truthy value (returned) or `timeout` passes
    (AssertionError)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f'not within {timeout} s: {predicate}'
        time.sleep(interval)


def forms(secret: bytes) -> dict:
    b64 = base64.b64encode(secret)
    url = base64.urlsafe_b64encode(secret)
    return {
        'raw': secret, 'base64': b64, 'base64-nopad': b64.rstrip(b'='),
        'base64url': url, 'base64url-nopad': url.rstrip(b'='),
        'hex': secret.hex().encode(), 'HEX': secret.hex().upper().encode(),
    }


def new_uuid() -> str:
    return str(uuid.uuid4())

"""`agent-intercom mcp` under the official MCP Python SDK (`mcp`): each test has a world of its
own (a temporary agent directory, HOME and scratchpad, and a broker it started), in which it
starts MCP servers as the SDK starts them (stdio_client + ClientSession).

Environment: AIC_BIN, the agent-intercom binary (default target/debug/agent-intercom).
"""

import json
import os
import queue
import secrets
import signal
import subprocess
import threading
import time
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp import types

ROOT = Path(__file__).resolve().parents[3]
AIC_BIN = os.environ.get('AIC_BIN') or str(ROOT / 'target' / 'debug' / 'agent-intercom')
# Bounds on waiting for something that must happen; never asserted as durations.
PATIENCE = 30.0
# Runs `sh -c` with the pid file as $0: the shell writes its pid and becomes the server.
PID_THEN_EXEC = 'echo $$ >"$0"; exec "$@"'


def new_scope() -> str:
    """A fresh scope id (what AGENT_INTERCOM_SCOPE_ID holds)."""
    return 'scope-' + secrets.token_hex(12)


async def eventually(probe, what: str, patience: float = PATIENCE):
    """Calls the async `probe` until it returns something truthy; fails after `patience` s."""
    deadline = time.monotonic() + patience
    while True:
        value = await probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f'never happened: {what} (last: {value!r})')
        await anyio.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (killed, not yet reaped) is not alive.
    try:
        return Path(f'/proc/{pid}/stat').read_text().split(')')[-1].split()[0] != 'Z'
    except OSError:
        return False


class Mcp:
    """One `agent-intercom mcp` process and the SDK's session on it."""

    def __init__(self, session: ClientSession, pidfile: Path, stderr: Path, name: str):
        self.session = session
        self.pidfile = pidfile
        self.stderr = stderr
        self.name = name
        self.notifications: list = []
        self.arrived = anyio.Event()

    @property
    def pid(self) -> int:
        return int(self.pidfile.read_text().strip())

    def on_message(self, message) -> None:
        self.notifications.append(message)
        self.arrived.set()
        self.arrived = anyio.Event()

    async def call(self, tool: str, args: dict | None = None, **kw) -> types.CallToolResult:
        return await self.session.call_tool(tool, args, **kw)

    async def ok(self, tool: str, args: dict | None = None, **kw) -> dict:
        """The structured result of a call that must succeed."""
        result = await self.call(tool, args, **kw)
        assert not result.is_error, f'{self.name} {tool}: {result.structured_content}'
        assert isinstance(result.structured_content, dict)
        # The text content carries the same JSON (for clients that read only text).
        assert json.loads(result.content[0].text) == result.structured_content
        return result.structured_content

    async def fails(self, tool: str, args: dict | None = None, code: str | None = None) -> dict:
        """The {code, message} of a call that must be an isError result."""
        result = await self.call(tool, args)
        assert result.is_error, f'{self.name} {tool} succeeded: {result.structured_content}'
        error = result.structured_content
        assert set(error) == {'code', 'message'}, error
        if code is not None:
            assert error['code'] == code, error
        return error

    async def connected(self) -> bool:
        return (await self.ok('intercom_whoami'))['connected']

    async def until_connected(self) -> None:
        await eventually(self.connected, f'{self.name} registered')

    def kill9(self) -> None:
        os.kill(self.pid, signal.SIGKILL)

    def signal(self, sig: int) -> None:
        os.kill(self.pid, sig)


class World:
    """A temporary agent directory with its own broker, and the servers started in it."""

    def __init__(self, tmp: Path):
        self.dir = tmp
        self.agent_dir = tmp / 'agent'
        self.agent_dir.mkdir()
        self.count = 0
        self.stderr_files: list[Path] = []
        self.pids: list[Path] = []
        self.servers: list[Mcp] = []
        self.broker: subprocess.Popen | None = None

    @property
    def intercom_dir(self) -> Path:
        return self.agent_dir / 'intercom'

    @property
    def socket(self) -> Path:
        return self.intercom_dir / 'broker.sock'

    def env(self) -> dict:
        return {'PI_CODING_AGENT_DIR': str(self.agent_dir), 'HOME': str(self.dir)}

    def start_broker(self) -> None:
        """A broker of this world that never exits by itself, and waits until it answers."""
        err = self.dir / f'broker-{self.count}.err'
        self.count += 1
        self.stderr_files.append(err)
        with open(err, 'w') as log:
            self.broker = subprocess.Popen(
                [AIC_BIN, 'broker', '--idle-exit', '0'],
                env=os.environ | self.env(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        self.wait_broker()

    def broker_answers(self) -> bool:
        done = subprocess.run([AIC_BIN, 'broker', 'status'], env=os.environ | self.env(),
                              capture_output=True, check=False)
        return done.returncode == 0

    def wait_broker(self) -> None:
        deadline = time.monotonic() + PATIENCE
        while not self.broker_answers():
            assert time.monotonic() < deadline, 'the broker never answered'
            time.sleep(0.05)

    def broker_pid(self) -> int | None:
        """The pid of the broker that owns the directory now (whoever started it)."""
        try:
            return int((self.intercom_dir / 'broker.pid').read_text().strip())
        except (OSError, ValueError):
            return None

    def kill9_broker(self) -> None:
        """SIGKILL of the broker that owns the directory now."""
        pid = self.broker_pid()
        assert pid is not None and alive(pid), 'no broker runs'
        os.kill(pid, signal.SIGKILL)
        if self.broker is not None and self.broker.pid == pid:
            self.broker.wait()
        deadline = time.monotonic() + PATIENCE
        while alive(pid):
            assert time.monotonic() < deadline, 'the broker outlived SIGKILL'
            time.sleep(0.02)

    @asynccontextmanager
    async def mcp(self, name: str | None, session_id: str | None = None, scope: str | None = None,
                  args: tuple = (), env: dict | None = None, cwd: Path | None = None,
                  initialize: bool = True):
        """An `agent-intercom mcp` started by the SDK's stdio_client, its session initialized
        (unless told otherwise). The identity comes from the variables an MCP host sets."""
        n = self.count
        self.count += 1
        label = name or 'unnamed'
        pidfile = self.dir / f'{label}-{n}.pid'
        err = self.dir / f'{label}-{n}.err'
        self.stderr_files.append(err)
        self.pids.append(pidfile)
        variables = self.env()
        if name is not None:
            variables['AGENT_INTERCOM_SESSION_NAME'] = name
        if session_id is not None:
            variables['AGENT_INTERCOM_SESSION_ID'] = session_id
        if scope is not None:
            variables['AGENT_INTERCOM_SCOPE_ID'] = scope
        variables |= env or {}
        params = StdioServerParameters(
            command='/bin/sh',
            args=['-c', PID_THEN_EXEC, str(pidfile), AIC_BIN, 'mcp',
                  '--db', str(self.dir / 'pad.sqlite'), *args],
            env=variables,
            cwd=str(cwd or self.dir),
        )
        async with AsyncExitStack() as stack:
            log = stack.enter_context(open(err, 'w'))
            read, write = await stack.enter_async_context(stdio_client(params, errlog=log))
            holder: list[Mcp] = []

            async def handler(message) -> None:
                if holder:
                    holder[0].on_message(message)

            session = await stack.enter_async_context(
                ClientSession(read, write, message_handler=handler, read_timeout_seconds=PATIENCE))
            server = Mcp(session, pidfile, err, label)
            holder.append(server)
            self.servers.append(server)
            if initialize:
                await session.initialize()
            yield server

    def stop(self) -> list[str]:
        """Stops what this world started (its servers, its brokers, a broker a server started);
        returns the lines of every stderr that tell of a panic, and every line of a server's
        stdout the SDK could not read as JSON-RPC."""
        for pidfile in self.pids:
            try:
                pid = int(pidfile.read_text().strip())
            except (OSError, ValueError):
                continue
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        if self.broker is not None and self.broker.poll() is None:
            self.broker.terminate()
            self.broker.wait(10)
        pid = self.broker_pid()
        if pid is not None and alive(pid) and self.owns(pid):
            os.kill(pid, signal.SIGTERM)
        panics = [f'{server.name} stdout: {message!r}' for server in self.servers
                  for message in server.notifications if isinstance(message, Exception)]
        for path in self.stderr_files:
            try:
                text = path.read_text(errors='replace')
            except OSError:
                continue
            panics += [f'{path.name}: {line}' for line in text.splitlines()
                       if 'panicked' in line or 'RUST_BACKTRACE' in line]
        return panics

    def owns(self, pid: int) -> bool:
        """Whether `pid` is an agent-intercom broker of this world's agent directory."""
        try:
            environ = Path(f'/proc/{pid}/environ').read_bytes().split(b'\0')
            argv = Path(f'/proc/{pid}/cmdline').read_bytes().split(b'\0')
        except OSError:
            return False
        mine = f'PI_CODING_AGENT_DIR={self.agent_dir}'.encode()
        return b'broker' in argv and mine in environ


class Raw:
    """`agent-intercom mcp` on raw pipes, for what no SDK would send: bytes in, JSON lines out."""

    def __init__(self, world: World, name: str, session_id: str | None = None,
                 stderr_closed: bool = False):
        """With stderr_closed, the server's stderr is a pipe whose reading end is closed at
        once (a host that does not read it)."""
        err = world.dir / f'raw-{name}-{world.count}.err'
        world.count += 1
        world.stderr_files.append(err)
        self.stderr = err
        self.proc = subprocess.Popen(
            [AIC_BIN, 'mcp', '--db', str(world.dir / 'pad.sqlite')],
            env=os.environ | world.env() | {
                'AGENT_INTERCOM_SESSION_NAME': name,
                'AGENT_INTERCOM_SESSION_ID': session_id or secrets.token_hex(8),
            },
            cwd=world.dir,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if stderr_closed else open(err, 'wb'),
        )
        if stderr_closed:
            self.proc.stderr.close()
        pidfile = world.dir / f'raw-{name}.pid'
        pidfile.write_text(str(self.proc.pid))
        world.pids.append(pidfile)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 1000

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def write(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        self.write(json.dumps(message).encode() + b'\n')

    def recv(self) -> dict:
        """The next line the server writes, as JSON (every line it writes must be JSON)."""
        line = self.lines.get(timeout=PATIENCE)
        assert line is not None, 'the server closed its stdout'
        return json.loads(line)

    def request(self, method: str, params: dict | None = None) -> dict:
        """A request and its answer (notifications in between are skipped)."""
        self.next_id += 1
        message = {'jsonrpc': '2.0', 'id': self.next_id, 'method': method}
        if params is not None:
            message['params'] = params
        self.send(message)
        return self.answer(self.next_id)

    def answer(self, request_id) -> dict:
        while True:
            message = self.recv()
            if 'id' in message and message['id'] == request_id:
                return message
            assert 'method' in message, f'an answer to something else: {message}'

    def initialize(self, version: str = '2025-06-18') -> dict:
        answer = self.request('initialize', {
            'protocolVersion': version, 'capabilities': {},
            'clientInfo': {'name': 'raw', 'version': '0'}})
        self.send({'jsonrpc': '2.0', 'method': 'notifications/initialized'})
        return answer

    def tool(self, name: str, arguments) -> dict:
        return self.request('tools/call', {'name': name, 'arguments': arguments})

    def close(self) -> int:
        self.proc.stdin.close()
        return self.proc.wait(PATIENCE)

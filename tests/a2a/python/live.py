"""Live sessions for the `serve --broker` tests: a broker of a temporary agent directory
(`agent-intercom broker`), Node sessions on it (tests/a2a/live/session.js: the Node package's
broker client over the built addon), and `serve --broker` on the same directory."""

import asyncio
import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path

from a2a.types.a2a_pb2 import GetTaskRequest

from harness import AIC_BIN, ROOT, Service

SESSION_JS = ROOT / 'tests' / 'a2a' / 'live' / 'session.js'
WAIT_SECONDS = 60


def environment(extra: dict | None = None) -> dict:
    """The tests' environment, unscoped, with `extra`."""
    env = {k: v for k, v in os.environ.items() if k != 'AGENT_INTERCOM_SCOPE_ID'}
    env.update(extra or {})
    return env


class Broker:
    """`agent-intercom broker` of `agent_dir`, never idle-exiting; kill9() and start() again.
    Its settings come from `env` (PI_INTERCOM_ASK_TIMEOUT_MS ...), which the gateway is given
    too: a broker the gateway starts itself, when it finds none, has the same."""

    def __init__(self, agent_dir: Path, env: dict | None = None):
        self.agent_dir = agent_dir
        self.env = environment(env)
        self.proc = None
        self.start()

    def start(self) -> None:
        argv = [AIC_BIN, 'broker', '--agent-dir', str(self.agent_dir), '--idle-exit', '0']
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, env=self.env,
        )
        line = self.proc.stdout.readline()
        # After a kill -9 the gateway may have started one first (as every client may).
        assert 'started' in line or 'already running' in line, f'no broker: {line!r}'
        threading.Thread(target=lambda: self.proc.stdout.read(), daemon=True).start()

    def kill9(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


class NodeSession:
    """One Node session process; its events arrive in `events` (dicts)."""

    def __init__(self, agent_dir: Path, name: str, session_id: str):
        self.name = name
        self.session_id = session_id
        self.proc = subprocess.Popen(
            ['node', str(SESSION_JS), str(agent_dir)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self.events: queue.Queue = queue.Queue()
        self.seen: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.register()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.events.put(json.loads(line))

    def command(self, **command) -> None:
        self.proc.stdin.write(json.dumps(command) + '\n')
        self.proc.stdin.flush()

    def wait(self, event: str, check=lambda e: True, seconds: float = WAIT_SECONDS) -> dict:
        """The next event of kind `event` that passes `check` (others are kept in `seen`)."""
        deadline = time.monotonic() + seconds
        for earlier in self.seen:
            if earlier['event'] == event and check(earlier):
                self.seen.remove(earlier)
                return earlier
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                err = self.proc.stderr.read() if self.proc.poll() is not None else ''
                raise AssertionError(f'{self.name}: no {event} in {seconds} s; seen {self.seen} {err}')
            try:
                got = self.events.get(timeout=left)
            except queue.Empty:
                continue
            if got['event'] == 'error' and event != 'error':
                raise AssertionError(f'{self.name}: {got}')
            if got['event'] == event and check(got):
                return got
            self.seen.append(got)

    def register(self) -> None:
        self.command(op='register', sessionId=self.session_id, name=self.name)
        self.wait('registered')

    def close(self) -> None:
        self.command(op='close')
        self.wait('closed')

    def ask(self, task_id: str) -> dict:
        """The gateway's ask of A2A task `task_id` (a `message` event)."""
        ask_id = 'a2a-task-' + task_id
        return self.wait('message', lambda e: e['message']['id'] == ask_id)

    def reply(self, ask: dict, text: str, attachments=None, queue_it=False) -> dict:
        self.command(
            op='reply', to=ask['from']['id'], replyTo=ask['message']['id'], text=text,
            attachments=attachments, queue=queue_it,
        )
        return self.wait('replied')

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def start_gateway(db: Path, agent_dir: Path, *extra: str, env: dict | None = None) -> Service:
    """`serve --broker` on `agent_dir`; it registers in the background."""
    env = environment(env)
    argv = [
        AIC_BIN, 'serve', '--listen', '127.0.0.1:0', '--db', str(db), '--broker',
        '--agent-dir', str(agent_dir), *extra,
    ]
    return Service(argv, db, env)


def texts(task) -> dict[str, list[str]]:
    return {a.name: [p.text for p in a.parts] for a in task.artifacts}


async def poll(client, task_id: str, state, seconds: float = 60):
    """GetTask until the task is in `state`."""
    for _ in range(int(seconds * 10)):
        task = await client.get_task(GetTaskRequest(id=task_id))
        if task.status.state == state:
            return task
        await asyncio.sleep(0.1)
    raise AssertionError(f'task {task_id} is {task.status.state}, not {state}')

"""Starting `agent-intercom serve` (or, for the portable tests, the a2a-sdk's own server) on
loopback with a temporary store, and running `agent-intercom pad` against the same store.

Environment:
  AIC_BIN     the agent-intercom binary (default: target/debug/agent-intercom)
  A2A_SERVER  `serve` (default) or `sdk`: the tests marked portable then run against
              bench/a2a/sdk_server.py, which shows that what they expect is what the SDK's own
              server does; the others are skipped.
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
AIC_BIN = os.environ.get('AIC_BIN') or str(ROOT / 'target' / 'debug' / 'agent-intercom')
SERVER_KIND = os.environ.get('A2A_SERVER', 'serve')
STARTUP_SECONDS = 60
LISTENING = re.compile(r'listening on (http://127\.0\.0\.1:\d+)')

only_serve = pytest.mark.skipif(
    SERVER_KIND != 'serve', reason='needs agent-intercom serve (scratchpad, restart, limits)'
)


class Service:
    """One running server process; `base_url` is http://127.0.0.1:PORT."""

    def __init__(self, argv: list[str], db: Path | None, env: dict | None = None):
        self.db = db
        self.argv = argv
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.stderr_lines: list[str] = []
        self.base_url = self._wait_listening()
        threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.proc.stdout,), daemon=True).start()

    def _wait_listening(self) -> str:
        found: list[str] = []

        def read() -> None:
            for line in self.proc.stdout:
                match = LISTENING.search(line)
                if match:
                    found.append(match.group(1))
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(STARTUP_SECONDS)
        if not found:
            self.proc.kill()
            err = self.proc.stderr.read() if self.proc.stderr else ''
            raise RuntimeError(f'{self.argv} did not print its address: {err[-2000:]}')
        return found[0]

    def _drain(self, stream) -> None:
        for line in stream:
            self.stderr_lines.append(line)

    @property
    def rpc_url(self) -> str:
        return self.base_url + '/a2a'

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill9(self) -> None:
        """SIGKILL: no shutdown code runs."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_serve(db: Path, *extra: str) -> Service:
    return Service([AIC_BIN, 'serve', '--listen', '127.0.0.1:0', '--db', str(db), *extra], db)


def start_sdk_server() -> Service:
    script = ROOT / 'bench' / 'a2a' / 'sdk_server.py'
    return Service([sys.executable, str(script), '--store', 'memory'], None)


def start_default(tmp: Path) -> Service:
    if SERVER_KIND == 'sdk':
        return start_sdk_server()
    return start_serve(tmp / 'store.sqlite')


class PadError(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(f'{message} [{code}]')
        self.code = code


def pad(db: Path, op: str, args: dict) -> object:
    """One `agent-intercom pad --db DB OP JSON` call: the parsed result, or PadError."""
    done = subprocess.run(
        [AIC_BIN, 'pad', '--db', str(db), op, json.dumps(args)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        match = re.match(r'agent-intercom: error\[([A-Z_]+)\]: ', done.stderr)
        raise PadError(match.group(1) if match else 'UNKNOWN', done.stderr.strip())
    return json.loads(done.stdout)


def new_id() -> str:
    return str(uuid.uuid4())

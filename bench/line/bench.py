"""Benchmark (not a test): one signed A2A GetTask exchange over TLS against the same a2a-sdk
1.3.0 signed peer (tests/line/peer.py), made by
  1. `agent-intercom line session` (release build): a `poll` line, which also charges the
     ledger, verifies the bound response, and commits the exchange and the observation to SQLite
     (synchronous=FULL) before it answers;
  2. a Python client on the same independent RFC 9421 library the peer uses
     (tests/line/line_wire.py: http-message-signatures 3.0.0, a raw TLS socket, response
     signature verified), which keeps nothing.
Prints a Markdown table: exchanges, wall ms per exchange (median and p95), client CPU ms per
exchange, and the client's peak RSS. Usage (after `cargo build --release -p agent-intercom-cli`):
  target/a2a-venv/bin/python bench/line/bench.py [N (300)]
"""

import resource
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'tests' / 'line'))

import line_harness as h  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 300


def cpu_ms(pid: int) -> float:
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime + stime
    return ticks * 1000 / 100  # USER_HZ


def peak_rss_kib(pid: int) -> int:
    for line in Path(f'/proc/{pid}/status').read_text().splitlines():
        if line.startswith('VmHWM:'):
            return int(line.split()[1])
    return 0


def row(name, walls, cpu, rss):
    walls = sorted(walls)
    p95 = walls[int(len(walls) * 0.95) - 1]
    return (f'| {name} | {len(walls)} | {statistics.median(walls):.2f} | {p95:.2f} | '
            f'{cpu / len(walls):.2f} | {rss / 1024:.1f} |')


def main():
    tmp = Path(tempfile.mkdtemp(prefix='line-bench-'))
    pki, keys = h.make_pki(tmp / 'pki'), h.make_keys(tmp / 'keys')
    workload_id, peer_id = h.new_uuid(), h.new_uuid()
    peer = h.Peer(tmp / 'peer', pki=pki, peer_id=peer_id, workload_id=workload_id,
                  workload_key=keys.workload, signing_keys=[keys.peer_key('peer-key-1')])
    peer.start()
    try:
        big = {'uses': 10**9, 'application_bytes': 10**12, 'network_bytes': 10**15}
        policy = h.default_policy([peer_id], [peer.uri],
                                  limits={k: big for k in ('host', 'purpose', 'peer', 'task')})
        line = h.Line(tmp / 'line', keys=keys, workload_id=workload_id,
                      bin=str(ROOT / 'target' / 'release' / 'agent-intercom'))
        line.setup(policy)
        session = line.start()
        assert 'error' not in line.enroll(peer)
        peer.control(executor='working')
        d = line.send(line.target(peer, 'declare-public',
                                  source={'text': 'benchmark', 'public_assertion': True}))
        task = line.send({'operation': 'submit', 'declaration_id': d['declaration_id']})
        poll = line.target(peer, 'poll', task_id=task['task_id'])
        for _ in range(10):  # warm-up
            line.send(poll)
        walls, before = [], cpu_ms(session.pid)
        for _ in range(N):
            start = time.perf_counter()
            answer = line.send(poll)
            walls.append((time.perf_counter() - start) * 1000)
            assert answer.get('status') == 'working', answer
        ours = row('`agent-intercom line session` poll', walls,
                   cpu_ms(session.pid) - before, peak_rss_kib(session.pid))
        line.close()

        foreign = peer.sends()[0]['result_task_id']
        client = peer.client()
        for _ in range(10):
            client.get_task(foreign)
        walls, before = [], time.process_time()
        for _ in range(N):
            start = time.perf_counter()
            response = client.get_task(foreign)
            client.verify(response)  # the bound response signature, as the line checks it
            walls.append((time.perf_counter() - start) * 1000)
            assert response.status == 200, response
        theirs = row('Python client (http-message-signatures 3.0.0)', walls,
                     (time.process_time() - before) * 1000,
                     resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    finally:
        peer.kill()
    print('| client | exchanges | wall ms median | wall ms p95 | client CPU ms / exchange '
          '| client peak RSS MiB |')
    print('|---|---|---|---|---|---|')
    print(ours)
    print(theirs)


if __name__ == '__main__':
    main()

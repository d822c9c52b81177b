//! The broker load tool (a benchmark, not a test).
//!
//!   cargo run --release -p agent-intercom-broker --example load -- [--sessions N] [--messages M]
//!       [--window W] [--asks K] [--ask-pairs P] [--hold H] [--big B]
//!       [--broker PATH-TO-agent-intercom | --socket PATH] [--perf OUT]
//!
//! Starts `agent-intercom broker` as a child process in a private directory (limits raised with
//! --set so that the rate limiter measures nothing but itself), then measures: registration time
//! for N sessions; delivered messages per second with receiver acknowledgements (each session
//! sends to the next one); ask -> reply round trips p50/p99/max, one asker alone, then P askers
//! at once (each asking its own session; 2P sessions); fan-in N-1 -> 1; holding H idle
//! sessions; and the broker's peak RSS (VmHWM) and current RSS after each phase.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn broker_binary() -> PathBuf {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--broker") {
        return PathBuf::from(&args[i + 1]);
    }
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/examples/load -> target/<profile>/agent-intercom
    exe.parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("agent-intercom")
}

fn rss_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// The process's CPU time so far, in milliseconds: the sum of its threads' time on a CPU in
/// nanoseconds (`/proc/PID/task/*/schedstat`), or where the kernel has no schedstat, user +
/// system time in clock ticks (`/proc/PID/stat`, 10 ms steps: too coarse for a short phase). A
/// thread that exits between two readings takes its time with it; the brokers measured here keep
/// theirs (the event loop, the store's checkpoint thread, Node's own).
fn cpu_ms(pid: u32) -> f64 {
    thread_cpu_ns(pid).map_or_else(|| ticks_ms(pid), |ns| ns as f64 / 1e6)
}

fn thread_cpu_ns(pid: u32) -> Option<u64> {
    let mut total = 0u64;
    let mut any = false;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        // A thread that ended since the listing has no file left: it is skipped.
        let Ok(stat) = std::fs::read_to_string(task.path().join("schedstat")) else {
            continue;
        };
        total += stat.split_whitespace().next()?.parse::<u64>().ok()?;
        any = true;
    }
    any.then_some(total)
}

fn ticks_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name (which may hold spaces) start at its closing paren.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
    // SAFETY: sysconf has no memory preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of stat(5), 12 and 13 after the paren.
    (ticks(11) + ticks(12)) * 1e3 / hz
}

struct Conn {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
}

impl Conn {
    async fn connect(socket: &Path) -> Conn {
        let stream = UnixStream::connect(socket).await.expect("connect");
        let (r, w) = stream.into_split();
        Conn {
            reader: BufReader::with_capacity(64 * 1024, r),
            writer: w,
        }
    }

    async fn send(&mut self, v: &Value) {
        self.writer
            .write_all(&agent_intercom_broker::wire::encode(v))
            .await
            .expect("write");
    }

    async fn recv(&mut self) -> Value {
        let len = self.reader.read_u32().await.expect("read") as usize;
        let mut body = vec![0u8; len];
        self.reader.read_exact(&mut body).await.expect("read");
        serde_json::from_slice(&body).expect("json")
    }

    async fn register(socket: &Path, id: &str) -> Conn {
        Conn::register_in(socket, id, None).await
    }

    async fn register_in(socket: &Path, id: &str, scope: Option<String>) -> Conn {
        let mut c = Conn::connect(socket).await;
        let mut frame = json!({
            "type": "register",
            "protocol": "pi-intercom",
            "version": 4,
            "sessionId": id,
            "session": {
                "cwd": "/load",
                "model": "load",
                "pid": 1,
                "startedAt": 1,
                "lastActivity": 1,
                "name": id,
            },
        });
        if let Some(scope) = scope {
            frame["scopeId"] = json!(scope);
        }
        c.send(&frame).await;
        loop {
            if c.recv().await["type"] == "registered" {
                return c;
            }
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Each session sends `per_session` messages to `target(i)`, keeping `window` unacknowledged,
/// and acknowledges every message it receives. Returns delivered messages per second.
async fn throughput(
    socket: &Path,
    n: usize,
    per_session: u64,
    window: u64,
    target: impl Fn(usize) -> usize,
    tag: &str,
) -> (f64, u64) {
    let mut conns = Vec::new();
    for i in 0..n {
        conns.push(Conn::register(socket, &format!("{tag}-{i}")).await);
    }
    let delivered = Arc::new(AtomicU64::new(0));
    let expected_in: Vec<u64> = {
        let mut v = vec![0u64; n];
        for i in 0..n {
            if per_session > 0 && target(i) != i {
                v[target(i)] += per_session;
            }
        }
        v
    };
    let start = Instant::now();
    let mut tasks = Vec::new();
    for (i, conn) in conns.into_iter().enumerate() {
        let to = format!("{tag}-{}", target(i));
        let sends = if target(i) == i { 0 } else { per_session };
        let receives = expected_in[i];
        let delivered = delivered.clone();
        tasks.push(tokio::spawn(async move {
            let Conn {
                mut reader,
                mut writer,
            } = conn;
            let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
            let (ack_tx, mut ack_rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
            let sender = tokio::spawn(async move {
                let mut in_flight = 0u64;
                let mut sent = 0u64;
                let mut finished = 0u64;
                let mut acks_open = true;
                let mut buf = Vec::new();
                loop {
                    while sent < sends && in_flight < window {
                        buf.extend(agent_intercom_broker::wire::encode(&json!({
                            "type": "send",
                            "to": to,
                            "message": {
                                "id": format!("m{sent}"),
                                "timestamp": 1,
                                "content": { "text": "load" },
                            },
                        })));
                        sent += 1;
                        in_flight += 1;
                    }
                    while let Ok(ack) = ack_rx.try_recv() {
                        buf.extend(agent_intercom_broker::wire::encode(&ack));
                    }
                    if !buf.is_empty() {
                        writer.write_all(&buf).await.expect("write");
                        buf.clear();
                    }
                    if finished >= sends && !acks_open {
                        break;
                    }
                    tokio::select! {
                        d = done_rx.recv(), if finished < sends => {
                            if d.is_some() { in_flight -= 1; finished += 1; }
                        }
                        a = ack_rx.recv(), if acks_open => match a {
                            Some(ack) => buf.extend(agent_intercom_broker::wire::encode(&ack)),
                            None => acks_open = false,
                        },
                    }
                }
                writer
            });
            let mut got = 0u64;
            let mut done = 0u64;
            while got < receives || done < sends {
                let len = reader.read_u32().await.expect("read") as usize;
                let mut body = vec![0u8; len];
                reader.read_exact(&mut body).await.expect("read");
                let v: Value = serde_json::from_slice(&body).unwrap();
                match v["type"].as_str() {
                    Some("message") => {
                        got += 1;
                        let _ = ack_tx.send(json!({
                            "type": "message_received",
                            "deliveryId": v["deliveryId"],
                        }));
                    }
                    Some("delivered") => {
                        done += 1;
                        delivered.fetch_add(1, Ordering::Relaxed);
                        let _ = done_tx.send(());
                    }
                    Some("delivery_failed") => panic!("delivery failed: {v}"),
                    _ => {}
                }
            }
            drop(ack_tx);
            drop(done_tx);
            let writer = sender.await.unwrap();
            (reader, writer)
        }));
    }
    let mut keep = Vec::new();
    for t in tasks {
        keep.push(t.await.unwrap());
    }
    let secs = start.elapsed().as_secs_f64();
    let total = delivered.load(Ordering::Relaxed);
    drop(keep);
    (total as f64 / secs, total)
}

/// `count` asks from a session of its own to another, each timed from its send to its reply.
/// The askers of a phase start together once all have registered (`ready`): a registration
/// tells every session of the scope, and the first asks must not be timed through that storm.
async fn ask_round_trips(
    socket: &Path,
    count: usize,
    tag: usize,
    ready: Arc<tokio::sync::Barrier>,
) -> Vec<Duration> {
    let mut asker = Conn::register(socket, &format!("asker{tag}")).await;
    let mut asked = Conn::register(socket, &format!("asked{tag}")).await;
    ready.wait().await;
    let mut samples = Vec::with_capacity(count);
    for i in 0..count {
        let t = Instant::now();
        asker
            .send(&json!({
                "type": "send",
                "to": format!("asked{tag}"),
                "message": {
                    "id": format!("q{i}"),
                    "timestamp": 1,
                    "expectsReply": true,
                    "content": { "text": "?" },
                },
            }))
            .await;
        loop {
            let v = asked.recv().await;
            if v["type"] == "message" {
                asked
                    .send(&json!({ "type": "message_received", "deliveryId": v["deliveryId"] }))
                    .await;
                asked
                    .send(&json!({
                        "type": "send",
                        "to": format!("asker{tag}"),
                        "message": {
                            "id": format!("r{i}"),
                            "timestamp": 1,
                            "replyTo": format!("q{i}"),
                            "content": { "text": "!" },
                        },
                    }))
                    .await;
                break;
            }
        }
        loop {
            let v = asker.recv().await;
            if v["type"] == "message" {
                samples.push(t.elapsed());
                asker
                    .send(&json!({ "type": "message_received", "deliveryId": v["deliveryId"] }))
                    .await;
                break;
            }
        }
    }
    samples.sort();
    samples
}

/// `agent-intercom broker` in `dir`, with every limit raised so that only the load is measured
/// (`limit` sessions and unregistered connections).
fn spawn_broker(dir: &Path, limit: &str) -> Child {
    Command::new(broker_binary())
        .args(["broker", "--agent-dir"])
        .arg(dir)
        .args(["--idle-exit", "0", "--log-level", "error"])
        .args([
            "--set",
            &format!("max_sessions={limit}"),
            "--set",
            &format!("max_unregistered={limit}"),
        ])
        .args([
            "--set",
            "rate_capacity=1000000000",
            "--set",
            "rate_refill_per_second=1000000000",
        ])
        .args([
            "--set",
            "max_pending_deliveries=1000000",
            "--set",
            "max_pending_deliveries_per_session=100000",
        ])
        .stdout(Stdio::null())
        .spawn()
        .expect("start the broker (build it first: cargo build --release -p agent-intercom-cli)")
}

fn main() {
    let sessions = arg("--sessions", 64) as usize;
    let messages = arg("--messages", 200_000);
    let window = arg("--window", 32);
    let asks = arg("--asks", 5_000) as usize;
    let hold = arg("--hold", 10_000) as usize;
    let big = arg("--big", 1_000) as usize;
    let ask_pairs = arg("--ask-pairs", 32) as usize;
    let dir = std::env::temp_dir().join(format!("aic-load-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let args: Vec<String> = std::env::args().collect();
    let external = args
        .iter()
        .position(|a| a == "--socket")
        .map(|i| PathBuf::from(&args[i + 1]));
    let socket = external
        .clone()
        .unwrap_or_else(|| dir.join("intercom/broker.sock"));
    let limit = (hold + big + 100).max(20_000).to_string();
    let mut child: Option<Child> = external.is_none().then(|| spawn_broker(&dir, &limit));
    let pid = match &child {
        Some(c) => c.id(),
        None => std::fs::read_to_string(socket.with_file_name("broker.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap(),
    };
    while agent_intercom_broker::health(&socket, Duration::from_millis(200))
        != agent_intercom_broker::Health::Compatible
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    // --perf OUT: the broker's CPU profile over the run (perf record, the cpu-clock event).
    let mut perf = args.iter().position(|a| a == "--perf").map(|i| {
        let perf = Command::new("perf")
            .args([
                "record",
                "-q",
                "-e",
                "cpu-clock",
                "-F",
                "1999",
                "-o",
                &args[i + 1],
            ])
            .args(["-p", &pid.to_string()])
            .stdout(Stdio::null())
            .spawn()
            .expect("start perf");
        std::thread::sleep(Duration::from_millis(300));
        perf
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!("broker pid {pid}; idle RSS {} KiB", rss_kib(pid, "VmRSS:"));
    println!();
    println!("| measurement | result |");
    println!("| --- | ---: |");
    rt.block_on(async {
        let t = Instant::now();
        let mut regs = Vec::new();
        for i in 0..sessions {
            regs.push(Conn::register(&socket, &format!("reg-{i}")).await);
        }
        println!(
            "| register {sessions} sessions (sequential) | {:.1} ms ({:.0} µs each) |",
            t.elapsed().as_secs_f64() * 1e3,
            t.elapsed().as_secs_f64() * 1e6 / sessions as f64
        );
        drop(regs);
        tokio::time::sleep(Duration::from_millis(200)).await;

        let per = messages / sessions as u64;
        let cpu = cpu_ms(pid);
        let (rate, total) = throughput(
            &socket,
            sessions,
            per,
            window,
            |i| (i + 1) % sessions,
            "ring",
        )
        .await;
        println!(
            "| delivered msgs/s, {sessions} sessions, ring, receiver acks (window {window}) | \
             {rate:.0} ({total} msgs; broker RSS after {} KiB) |",
            rss_kib(pid, "VmRSS:")
        );
        println!(
            "| broker CPU per delivered message (ring) | {:.2} µs |",
            (cpu_ms(pid) - cpu) * 1e3 / total.max(1) as f64
        );

        let (rate, total) = throughput(&socket, sessions, per, window, |_| 0, "fanin").await;
        println!(
            "| delivered msgs/s, fan-in {} -> 1 | {rate:.0} ({total} msgs) |",
            sessions - 1
        );

        let alone = Arc::new(tokio::sync::Barrier::new(1));
        let samples = ask_round_trips(&socket, asks.max(1), 0, alone).await;
        println!(
            "| ask -> reply round trip, {asks} asks: p50 / p99 / max | {:.0} / {:.0} / {:.0} µs |",
            percentile(&samples, 0.5).as_secs_f64() * 1e6,
            percentile(&samples, 0.99).as_secs_f64() * 1e6,
            samples.last().unwrap().as_secs_f64() * 1e6
        );
        if let Some(per) = asks.checked_div(ask_pairs) {
            // `ask_pairs` askers at once, each asking its own session (2 x ask_pairs sessions).
            let per = per.max(1);
            let ready = Arc::new(tokio::sync::Barrier::new(ask_pairs));
            let pairs: Vec<_> = (1..=ask_pairs)
                .map(|tag| {
                    let socket = socket.clone();
                    let ready = ready.clone();
                    tokio::spawn(async move { ask_round_trips(&socket, per, tag, ready).await })
                })
                .collect();
            let mut samples = Vec::new();
            for pair in pairs {
                samples.extend(pair.await.unwrap());
            }
            samples.sort();
            println!(
                "| ask -> reply round trip, {} sessions asking in pairs, {} asks: \
                 p50 / p99 / max | {:.0} / {:.0} / {:.0} µs |",
                2 * ask_pairs,
                samples.len(),
                percentile(&samples, 0.5).as_secs_f64() * 1e6,
                percentile(&samples, 0.99).as_secs_f64() * 1e6,
                samples.last().unwrap().as_secs_f64() * 1e6
            );
        }

        if big > 0 {
            let per = (messages / big as u64).max(1);
            let (rate, total) =
                throughput(&socket, big, per, window, |i| (i + 1) % big, "big").await;
            println!("| delivered msgs/s, {big} sessions, ring | {rate:.0} ({total} msgs) |");
        }

        if hold > 0 {
            // Held sessions live in scopes of 100 (teams): every join is announced to its scope,
            // and each held connection keeps reading what it is sent, as adapters do.
            let t = Instant::now();
            let mut held = Vec::new();
            for i in 0..hold {
                let scope = format!("Scope_hold_{:06}", i / 100);
                let Conn { mut reader, writer } =
                    Conn::register_in(&socket, &format!("hold-{i}"), Some(scope)).await;
                let drain = tokio::spawn(async move {
                    let mut sink = vec![0u8; 64 * 1024];
                    while let Ok(n) = reader.read(&mut sink).await {
                        if n == 0 {
                            break;
                        }
                    }
                });
                held.push((writer, drain));
            }
            let took = t.elapsed();
            tokio::time::sleep(Duration::from_millis(500)).await;
            println!(
                "| hold {hold} registered sessions (scopes of 100): register time / broker RSS | \
                 {:.2} s / {} KiB |",
                took.as_secs_f64(),
                rss_kib(pid, "VmRSS:")
            );
            for (_, drain) in &held {
                drain.abort();
            }
            drop(held);
        }
    });
    println!(
        "| broker peak RSS (VmHWM) over the run | {} KiB |",
        rss_kib(pid, "VmHWM:")
    );
    if let Some(mut perf) = perf.take() {
        // SAFETY: kill has no memory preconditions; `perf` is our own child.
        unsafe { libc::kill(perf.id() as i32, libc::SIGINT) };
        let _ = perf.wait();
    }
    if let Some(mut child) = child.take() {
        // SAFETY: kill has no memory preconditions; `pid` is our own child.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
        let _ = child.wait();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

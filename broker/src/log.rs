//! Lines on stderr that never hold up or fail the thread that logs them.
//!
//! `eprintln!` writes on the caller's thread and panics when the write fails. Whoever starts a
//! broker decides what its stderr is, and it may be a pipe nobody reads: a non-blocking one (as
//! Node gives a child's stdio) fails with `EAGAIN` once full, which made `eprintln!` panic and
//! stop the broker, and a blocking one would hold the broker's only thread until someone read it.
//! So every line goes, whole, through a bounded queue to a thread of its own (started at the first
//! line), which writes it with one `write` where it can. A line that finds the queue full is
//! dropped and counted, and the next line written says how many were dropped. A line the thread
//! cannot write within [`STALL`] is dropped and counted too, and after it lines are tried without
//! waiting until one goes through. Nothing here panics, and a closed stderr is written to as if
//! it were read.

use std::fmt;
use std::io::{self, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::time::{Duration, Instant};

/// Lines that may wait for the writer.
const QUEUE: usize = 1024;
/// How long the writer waits for a full, non-blocking stderr before it drops a line.
pub const STALL: Duration = Duration::from_secs(1);

struct Sink {
    queue: SyncSender<Vec<u8>>,
    /// Lines queued and not yet written (or dropped by the writer).
    pending: AtomicUsize,
    /// Lines dropped since the last one written.
    dropped: AtomicU64,
}

static SINK: OnceLock<Option<Sink>> = OnceLock::new();

/// Writes `args` and a newline to stderr as one line, later (see the module).
pub fn line(args: fmt::Arguments<'_>) {
    let mut text = Vec::with_capacity(128);
    let _ = writeln!(text, "{args}");
    let Some(sink) = sink() else {
        // No writer thread could be started: written here, and never a panic.
        write_out(&text, Duration::ZERO);
        return;
    };
    sink.pending.fetch_add(1, Ordering::SeqCst);
    match sink.queue.try_send(text) {
        Ok(()) => {}
        Err(TrySendError::Full(_)) => {
            sink.pending.fetch_sub(1, Ordering::SeqCst);
            sink.dropped.fetch_add(1, Ordering::Relaxed);
        }
        Err(TrySendError::Disconnected(text)) => {
            sink.pending.fetch_sub(1, Ordering::SeqCst);
            write_out(&text, Duration::ZERO);
        }
    }
}

/// Waits until every line queued so far is written (or dropped), at most `within`: for a process
/// about to end, whose last lines would otherwise be lost with the writer.
pub fn flush(within: Duration) {
    let Some(sink) = SINK.get().and_then(Option::as_ref) else {
        return;
    };
    let deadline = Instant::now() + within;
    while sink.pending.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn sink() -> Option<&'static Sink> {
    SINK.get_or_init(|| {
        let (queue, lines) = mpsc::sync_channel(QUEUE);
        std::thread::Builder::new()
            .name("agent-intercom-log".into())
            .spawn(move || write_lines(lines))
            .ok()
            .map(|_| Sink {
                queue,
                pending: AtomicUsize::new(0),
                dropped: AtomicU64::new(0),
            })
    })
    .as_ref()
}

fn write_lines(lines: Receiver<Vec<u8>>) {
    // Whether the last line was dropped because stderr stayed full: the next ones are then tried
    // without waiting, until one goes through.
    let mut stalled = false;
    for text in lines {
        // The sink exists: this thread is its writer.
        let Some(sink) = SINK.get().and_then(Option::as_ref) else {
            return;
        };
        let wait = if stalled { Duration::ZERO } else { STALL };
        let dropped = sink.dropped.swap(0, Ordering::Relaxed);
        let told = dropped == 0
            || write_out(
                format!("agent-intercom: {dropped} log lines dropped (stderr was not read)\n")
                    .as_bytes(),
                wait,
            );
        stalled = !(told && write_out(&text, wait));
        if stalled {
            // This line, and the count it was to carry.
            let lost = if told { 1 } else { dropped + 1 };
            sink.dropped.fetch_add(lost, Ordering::Relaxed);
        }
        sink.pending.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Writes `bytes` to stderr, waiting at most `wait` while a non-blocking stderr is full; false
/// if it stayed full. Any other error is given up silently (true: nothing to count).
fn write_out(bytes: &[u8], wait: Duration) -> bool {
    let mut err = io::stderr().lock();
    let start = Instant::now();
    let mut rest = bytes;
    while !rest.is_empty() {
        match err.write(rest) {
            Ok(0) => return true,
            Ok(n) => rest = &rest[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if start.elapsed() >= wait {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(_) => return true,
        }
    }
    true
}

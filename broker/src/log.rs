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
        let _ = write_out(&mut io::stderr().lock(), &text, Duration::ZERO);
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
            let _ = write_out(&mut io::stderr().lock(), &text, Duration::ZERO);
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
    // A count no later line will carry: said now, if stderr takes it.
    if sink.pending.load(Ordering::SeqCst) == 0 {
        let dropped = sink.dropped.swap(0, Ordering::Relaxed);
        if dropped > 0 {
            line(format_args!("{}", dropped_line(dropped)));
            let deadline = Instant::now() + within.min(STALL);
            while sink.pending.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
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
    let mut out = Writer::default();
    for text in lines {
        // The sink exists: this thread is its writer.
        let Some(sink) = SINK.get().and_then(Option::as_ref) else {
            return;
        };
        let dropped = sink.dropped.swap(0, Ordering::Relaxed);
        let mut err = io::stderr().lock();
        let told =
            dropped == 0 || out.line(&mut err, format!("{}\n", dropped_line(dropped)).as_bytes());
        let done = told && out.line(&mut err, &text);
        drop(err);
        if !done {
            // This line, and the count it was to carry.
            let lost = if told { 1 } else { dropped + 1 };
            sink.dropped.fetch_add(lost, Ordering::Relaxed);
        }
        sink.pending.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The line that says how many lines were dropped.
fn dropped_line(dropped: u64) -> String {
    format!("agent-intercom: {dropped} log lines dropped (stderr was not read)")
}

/// The writer thread's view of stderr.
#[derive(Default)]
struct Writer {
    /// The last line was dropped because stderr stayed full: the next ones are tried without
    /// waiting, until one goes through.
    stalled: bool,
    /// The last line was cut short (a part of it written): the next starts on a line of its own.
    cut: bool,
}

impl Writer {
    /// Writes one line to `out` (stderr); false if it was dropped (it stayed full).
    fn line(&mut self, out: &mut impl Write, text: &[u8]) -> bool {
        let wait = if self.stalled { Duration::ZERO } else { STALL };
        let joined;
        let bytes = if self.cut {
            joined = [b"\n", text].concat();
            &joined[..]
        } else {
            text
        };
        let (written, done) = write_out(out, bytes, wait);
        if done {
            self.stalled = false;
            self.cut = false;
            return true;
        }
        self.stalled = true;
        // Whether stderr now ends inside a line: after a cut, unless just the newline went out;
        // otherwise, if any of this line did.
        self.cut = if self.cut { written != 1 } else { written > 0 };
        false
    }
}

/// Writes `bytes` to `out` (stderr), waiting at most `wait` while it is non-blocking and full: how
/// many bytes went out, and whether all did (or it gave another error, which is let be).
fn write_out(out: &mut impl Write, bytes: &[u8], wait: Duration) -> (usize, bool) {
    let start = Instant::now();
    let mut written = 0;
    while written < bytes.len() {
        match out.write(&bytes[written..]) {
            Ok(0) => return (written, true),
            Ok(n) => written += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if start.elapsed() >= wait {
                    return (written, false);
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(_) => return (written, true),
        }
    }
    (written, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::net::UnixStream;

    /// Everything the reader end holds now.
    fn drain(reader: &mut UnixStream) -> Vec<u8> {
        reader.set_nonblocking(true).unwrap();
        let mut all = Vec::new();
        let mut chunk = [0u8; 65536];
        loop {
            match reader.read(&mut chunk) {
                Ok(0) => return all,
                Ok(n) => all.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return all,
                Err(e) => panic!("{e}"),
            }
        }
    }

    /// A full non-blocking socket drops a line; a line cut short is ended before the next one.
    #[test]
    fn lines_cut_short_are_ended_and_lines_that_find_it_full_are_dropped() {
        let (mut ours, mut theirs) = UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        let chunk = [b'.'; 4096];
        while ours.write(&chunk).is_ok() {}
        // Stalled already, so that no line waits (a fresh writer waits up to STALL).
        let mut writer = Writer {
            stalled: true,
            cut: false,
        };
        assert!(!writer.line(&mut ours, b"dropped\n"));
        assert!(!writer.cut, "nothing of it went out");
        drain(&mut theirs);
        // Longer than the socket holds: a part goes out, the rest is dropped.
        let mut long = vec![b'y'; 1 << 21];
        long.push(b'\n');
        assert!(!writer.line(&mut ours, &long));
        assert!(writer.cut);
        let part = drain(&mut theirs);
        assert!(!part.is_empty() && part.len() < long.len() && part.iter().all(|&b| b == b'y'));
        assert!(writer.line(&mut ours, b"next\n"));
        assert_eq!(drain(&mut theirs), b"\nnext\n");
        assert!(!writer.cut && !writer.stalled);
        assert!(writer.line(&mut ours, b"after\n"));
        assert_eq!(drain(&mut theirs), b"after\n");
    }
}

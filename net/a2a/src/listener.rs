//! The listening socket, guarded so that no client can hold the service's connections:
//!
//! - at most `max_connections` at once. When all are held and another arrives, the one that has
//!   waited longest for a request head is closed to make room; when none is waiting for a head
//!   (every one has a request in progress), the newcomer waits for a slot.
//! - a connection must deliver a whole request head (up to its empty line) within the head
//!   timeout of being accepted, and again of each response written: a trickle of bytes does not
//!   extend it. Bodies and request handling have their own limits (`http.rs`).
//! - a connection that neither sends nor takes a byte for the idle timeout (a stalled upload, a
//!   client not reading its answer) is closed.
//!
//! An expired head timeout and an eviction close the connection without a response, as hyper
//! closes an idle keep-alive connection.
//!
//! A connection whose response is a stream ([`Conn::stream`]) is busy until the stream ends, and
//! then closes: it is never evicted, awaits no head, and only its writes are held to the idle
//! timeout (a client that stops taking the stream); the stream's own limits bound how many.
//!
//! A connection answered with a refusal that left its request body unread ([`Conn::linger`])
//! is closed gently: its sending side is shut (the client sees the end of the answer), then
//! what the client still sends is read and discarded until it closes its side, up to a bound of
//! bytes and of time ([`Linger`]) or an eviction. Closing a socket with unread bytes, or
//! receiving more after the close, resets the connection, and a client that sends its whole
//! body before reading would lose the answer to the reset.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

/// How long a connection may take, per stage.
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// Without progress in either direction.
    pub idle: Duration,
    /// To deliver a request head, from the accept or the last response write.
    pub head: Duration,
}

/// How a connection answered with a refusal is closed: what the client still sends is read and
/// discarded until it closes, for at most `time` after the answer and `bytes` in all.
#[derive(Clone, Copy, Debug)]
pub struct Linger {
    /// The longest the discarding lasts.
    pub time: Duration,
    /// The most bytes discarded.
    pub bytes: usize,
}

/// A [`TcpListener`] with a connection cap, eviction and per-connection timeouts.
pub struct Guarded {
    inner: TcpListener,
    permits: Arc<Semaphore>,
    registry: Arc<Registry>,
    timeouts: Timeouts,
    linger: Linger,
}

impl Guarded {
    /// Guards `inner`: at most `max_connections` at once, each held to `timeouts`, and closed
    /// after a refusal as `linger` says.
    pub fn new(
        inner: TcpListener,
        max_connections: usize,
        timeouts: Timeouts,
        linger: Linger,
    ) -> Guarded {
        Guarded {
            inner,
            permits: Arc::new(Semaphore::new(max_connections.max(1))),
            registry: Arc::new(Registry::new()),
            timeouts,
            linger,
        }
    }

    async fn next_stream(&mut self) -> (TcpStream, SocketAddr) {
        loop {
            match self.inner.accept().await {
                Ok(accepted) => return accepted,
                // Out of file descriptors and the like: wait a little rather than spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }

    /// A slot for a connection just accepted: a free one, else one freed by closing the
    /// connection that has waited longest for a head, else the next one freed.
    async fn slot(&self) -> OwnedSemaphorePermit {
        loop {
            // Registered before looking, so a connection that starts waiting meanwhile is seen.
            let started_waiting = self.registry.started_waiting.notified();
            tokio::pin!(started_waiting);
            started_waiting.as_mut().enable();
            if let Ok(permit) = self.permits.clone().try_acquire_owned() {
                return permit;
            }
            self.registry.evict_one();
            tokio::select! {
                permit = self.permits.clone().acquire_owned() => match permit {
                    Ok(permit) => return permit,
                    // The semaphore is never closed.
                    Err(_) => std::future::pending().await,
                },
                _ = started_waiting => {}
            }
        }
    }
}

impl axum::serve::Listener for Guarded {
    type Io = GuardedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (GuardedStream, SocketAddr) {
        let (stream, addr) = self.next_stream().await;
        let permit = self.slot().await;
        let _ = stream.set_nodelay(true);
        let stream = GuardedStream::new(stream, permit, &self.registry, self.timeouts, self.linger);
        (stream, addr)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing done under these locks can leave the data half changed.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The open connections, to pick one to close when all slots are held.
struct Registry {
    epoch: Instant,
    open: Mutex<Vec<Arc<Slot>>>,
    /// Told when a connection starts waiting for a head (it may be evicted from then on).
    started_waiting: Notify,
}

/// What the listener knows of one connection.
struct Slot {
    /// [`BUSY`] while a request is in progress, [`KILLED`] once evicted (its next read or write
    /// fails), else since when it has waited for a request head (nanoseconds after the
    /// registry's epoch, plus 1). One word, so that a connection is never evicted once its
    /// head is complete.
    state: AtomicU64,
    /// The task to wake once evicted.
    waker: Mutex<Option<Waker>>,
    /// Whether the connection is to be closed gently ([`Conn::linger`]).
    linger: AtomicBool,
    /// Whether its response is a stream ([`Conn::stream`]).
    streaming: AtomicBool,
}

/// A handle on the connection a request came on (the request's `ConnectInfo`).
#[derive(Clone)]
pub struct Conn(Arc<Slot>);

impl Conn {
    /// Closes the connection gently after the answer being written (a refusal with
    /// `Connection: close` that leaves the request body unread): what the client still sends
    /// is discarded, within the [`Linger`] bounds, instead of resetting the connection.
    pub fn linger(&self) {
        self.0.linger.store(true, Ordering::SeqCst);
    }

    /// Marks the response about to be written as a stream, the last on its connection (it says
    /// `Connection: close`): the connection keeps its slot while the stream lasts, however long,
    /// with no request head expected and no limit on how long the client stays silent; only a
    /// client that stops taking the stream is cut, after the idle timeout.
    pub fn stream(&self) {
        self.0.streaming.store(true, Ordering::SeqCst);
    }

    /// Whether [`Conn::stream`] was called.
    pub fn is_streaming(&self) -> bool {
        self.0.streaming.load(Ordering::SeqCst)
    }
}

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, Guarded>> for Conn {
    fn connect_info(stream: axum::serve::IncomingStream<'_, Guarded>) -> Conn {
        Conn(stream.io().slot.clone())
    }
}

const BUSY: u64 = 0;
const KILLED: u64 = u64::MAX;

impl Registry {
    fn new() -> Registry {
        Registry {
            epoch: Instant::now(),
            open: Mutex::new(Vec::new()),
            started_waiting: Notify::new(),
        }
    }

    fn stamp(&self) -> u64 {
        let nanos = Instant::now().duration_since(self.epoch).as_nanos();
        u64::try_from(nanos).unwrap_or(KILLED - 2).min(KILLED - 2) + 1
    }

    fn register(&self) -> Arc<Slot> {
        let slot = Arc::new(Slot {
            state: AtomicU64::new(self.stamp()),
            waker: Mutex::new(None),
            linger: AtomicBool::new(false),
            streaming: AtomicBool::new(false),
        });
        lock(&self.open).push(slot.clone());
        slot
    }

    fn remove(&self, slot: &Arc<Slot>) {
        let mut open = lock(&self.open);
        if let Some(at) = open.iter().position(|s| Arc::ptr_eq(s, slot)) {
            open.swap_remove(at);
        }
    }

    /// Closes the connection that has waited longest for a head, unless one closed before is
    /// still on its way out (its slot is about to be free) or none is waiting.
    fn evict_one(&self) {
        let open = lock(&self.open);
        // A connection that completes its head or is answered meanwhile is passed over.
        for _ in 0..open.len() {
            let mut oldest: Option<(u64, &Arc<Slot>)> = None;
            for slot in open.iter() {
                let state = slot.state.load(Ordering::SeqCst);
                if state == KILLED {
                    return;
                }
                if state != BUSY && oldest.is_none_or(|(since, _)| state < since) {
                    oldest = Some((state, slot));
                }
            }
            match oldest {
                Some((since, slot)) if slot.kill(since) => return,
                Some(_) => {}
                None => return,
            }
        }
    }
}

impl Slot {
    /// Evicts the connection if it still waits for a head since `since`.
    fn kill(&self, since: u64) -> bool {
        let swapped =
            self.state
                .compare_exchange(since, KILLED, Ordering::SeqCst, Ordering::SeqCst);
        if swapped.is_err() {
            return false;
        }
        if let Some(waker) = lock(&self.waker).take() {
            waker.wake();
        }
        true
    }

    fn killed(&self) -> bool {
        self.state.load(Ordering::SeqCst) == KILLED
    }

    /// Moves to `to` (a request began, or a response was written) unless evicted first.
    fn set(&self, to: u64) -> Result<(), io::Error> {
        self.state
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |s| {
                (s != KILLED).then_some(to)
            })
            .map(|_| ())
            .map_err(|_| evicted())
    }

    /// Before returning `Pending`: whether evicted; else `cx` is woken when it is.
    fn park(&self, cx: &mut Context<'_>) -> bool {
        {
            let mut waker = lock(&self.waker);
            if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *waker = Some(cx.waker().clone());
            }
        }
        // Looked at after the waker is stored, so an eviction in between is not missed.
        self.killed()
    }
}

fn evicted() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "closed to make room for a new connection",
    )
}

/// Finds the end of a request head: an empty line after a non-empty one. Lines end in CRLF or
/// a bare LF, and empty lines before the request line are skipped, as httparse does, so a
/// stream of line ends never counts as a head.
#[derive(Default)]
struct HeadScan {
    /// Whether a byte other than CR and LF has been seen.
    started: bool,
    /// Whether nothing but a CR has come since the last LF.
    line_start: bool,
}

impl HeadScan {
    /// Whether `bytes` complete the head.
    fn feed(&mut self, bytes: &[u8]) -> bool {
        for &b in bytes {
            match b {
                b'\n' if self.started && self.line_start => return true,
                b'\n' => self.line_start = true,
                b'\r' => {}
                _ => {
                    self.started = true;
                    self.line_start = false;
                }
            }
        }
        false
    }
}

/// Fails a read or a write that has waited for the idle timeout without progress: the wait
/// starts when an operation first returns `Pending` after the previous one completed.
struct Watchdog {
    deadline: Pin<Box<Sleep>>,
    waiting: bool,
}

impl Watchdog {
    fn new() -> Watchdog {
        Watchdog {
            deadline: Box::pin(tokio::time::sleep_until(Instant::now())),
            waiting: false,
        }
    }

    fn progressed(&mut self) {
        self.waiting = false;
    }

    /// After a `Pending`: whether the wait has lasted `idle` (the caller then fails).
    fn expired(&mut self, idle: Duration, cx: &mut Context<'_>) -> bool {
        if !self.waiting {
            self.waiting = true;
            self.deadline.as_mut().reset(Instant::now() + idle);
        }
        self.deadline.as_mut().poll(cx).is_ready()
    }

    fn watch<T>(
        &mut self,
        idle: Duration,
        cx: &mut Context<'_>,
        poll: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        match poll {
            Poll::Ready(result) => {
                self.progressed();
                Poll::Ready(result)
            }
            Poll::Pending if self.expired(idle, cx) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "connection idle for too long",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Where a connection is in its request cycle.
struct Head {
    /// Whether it waits for a request head (else a request is in progress).
    waiting: bool,
    scan: HeadScan,
    deadline: Pin<Box<Sleep>>,
}

/// The gentle close of a connection: its bounds, and once begun, how far it is.
struct Lingering {
    bounds: Linger,
    state: Option<Drain>,
}

/// A gentle close under way.
struct Drain {
    /// Whether the sending side has been shut.
    shut: bool,
    /// Bytes discarded so far.
    discarded: usize,
    /// When the discarding stops.
    deadline: Pin<Box<Sleep>>,
}

/// A connection whose reads and writes fail after the idle timeout, whose reads fail when a
/// request head is late, which the listener may close to make room, and which is closed gently
/// after a refusal.
pub struct GuardedStream {
    stream: TcpStream,
    _permit: OwnedSemaphorePermit,
    registry: Arc<Registry>,
    slot: Arc<Slot>,
    timeouts: Timeouts,
    head: Head,
    reads: Watchdog,
    writes: Watchdog,
    linger: Lingering,
}

/// A write of an interim response (`100 Continue`): the request goes on.
fn interim(written: &[u8]) -> bool {
    written.starts_with(b"HTTP/1.1 1")
}

impl GuardedStream {
    fn new(
        stream: TcpStream,
        permit: OwnedSemaphorePermit,
        registry: &Arc<Registry>,
        timeouts: Timeouts,
        linger: Linger,
    ) -> GuardedStream {
        GuardedStream {
            stream,
            _permit: permit,
            registry: registry.clone(),
            slot: registry.register(),
            timeouts,
            head: Head {
                waiting: true,
                scan: HeadScan::default(),
                deadline: Box::pin(tokio::time::sleep(timeouts.head)),
            },
            reads: Watchdog::new(),
            writes: Watchdog::new(),
            linger: Lingering {
                bounds: linger,
                state: None,
            },
        }
    }

    fn late_head(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "no complete request head within {} ms",
                self.timeouts.head.as_millis()
            ),
        )
    }

    /// A read while waiting for a head: its bytes may complete the head; else, once the head
    /// timeout has passed, the read fails, however many bytes came.
    fn head_read(
        &mut self,
        cx: &mut Context<'_>,
        poll: Poll<io::Result<()>>,
        read: &[u8],
    ) -> Poll<io::Result<()>> {
        match poll {
            Poll::Ready(Ok(())) if !read.is_empty() => {
                if self.head.scan.feed(read) {
                    self.slot.set(BUSY)?;
                    self.head.waiting = false;
                    Poll::Ready(Ok(()))
                } else if Instant::now() >= self.head.deadline.deadline() {
                    Poll::Ready(Err(self.late_head()))
                } else {
                    Poll::Ready(Ok(()))
                }
            }
            // The end of the stream, or an error.
            Poll::Ready(done) => Poll::Ready(done),
            Poll::Pending => self.head_pending(cx),
        }
    }

    /// Nothing came: fails once evicted or late, else wakes up when either happens.
    fn head_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.slot.park(cx) {
            Poll::Ready(Err(evicted()))
        } else if self.head.deadline.as_mut().poll(cx).is_ready() {
            Poll::Ready(Err(self.late_head()))
        } else {
            Poll::Pending
        }
    }

    /// After a write that began with `first`: a response is being written, so the next
    /// request's head is awaited from now (an interim response leaves the request going on).
    fn wrote(&mut self, cx: &mut Context<'_>, first: &[u8]) -> io::Result<()> {
        // A stream is the connection's last response: no request head is awaited after it.
        if !self.head.waiting && (interim(first) || self.slot.streaming.load(Ordering::SeqCst)) {
            return Ok(());
        }
        self.slot.set(self.registry.stamp())?;
        self.head.scan = HeadScan::default();
        let deadline = Instant::now() + self.timeouts.head;
        self.head.deadline.as_mut().reset(deadline);
        // Hyper may not read again before the next byte comes (its last read may have been
        // pending since the request began): the deadline and an eviction must wake it.
        let _ = self.head.deadline.as_mut().poll(cx);
        if self.slot.park(cx) {
            return Err(evicted());
        }
        if !self.head.waiting {
            self.head.waiting = true;
            self.registry.started_waiting.notify_waiters();
        }
        Ok(())
    }

    fn write_with(
        &mut self,
        cx: &mut Context<'_>,
        first: &[u8],
        write: impl FnOnce(Pin<&mut TcpStream>, &mut Context<'_>) -> Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        if self.slot.killed() {
            return Poll::Ready(Err(evicted()));
        }
        let poll = match write(Pin::new(&mut self.stream), cx) {
            Poll::Ready(Ok(n)) if n > 0 => match self.wrote(cx, &first[..n.min(first.len())]) {
                Ok(()) => Poll::Ready(Ok(n)),
                Err(e) => Poll::Ready(Err(e)),
            },
            Poll::Pending if self.head.waiting && self.slot.park(cx) => Poll::Ready(Err(evicted())),
            other => other,
        };
        self.writes.watch(self.timeouts.idle, cx, poll)
    }
}

impl Drop for GuardedStream {
    fn drop(&mut self) {
        self.registry.remove(&self.slot);
    }
}

impl AsyncRead for GuardedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.slot.killed() {
            return Poll::Ready(Err(evicted()));
        }
        let before = buf.filled().len();
        let mut poll = Pin::new(&mut this.stream).poll_read(cx, buf);
        if this.head.waiting {
            poll = this.head_read(cx, poll, &buf.filled()[before..]);
        } else if this.slot.streaming.load(Ordering::SeqCst) {
            // While a stream is sent the client has nothing to say; reading only tells when it
            // has gone.
            return poll;
        }
        this.reads.watch(this.timeouts.idle, cx, poll)
    }
}

impl AsyncWrite for GuardedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.write_with(cx, buf, |stream, cx| stream.poll_write(cx, buf))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.slot.killed() {
            return Poll::Ready(Err(evicted()));
        }
        let poll = Pin::new(&mut this.stream).poll_flush(cx);
        this.writes.watch(this.timeouts.idle, cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if !this.slot.linger.load(Ordering::SeqCst) {
            return Pin::new(&mut this.stream).poll_shutdown(cx);
        }
        let bounds = this.linger.bounds;
        let drain = this.linger.state.get_or_insert_with(|| Drain {
            shut: false,
            discarded: 0,
            deadline: Box::pin(tokio::time::sleep(bounds.time)),
        });
        if !drain.shut {
            std::task::ready!(Pin::new(&mut this.stream).poll_shutdown(cx))?;
            drain.shut = true;
        }
        // Read and discard until the client closes its side, a read fails, a bound is reached
        // or the connection is evicted; each of these ends the close.
        let mut scratch = [0u8; 16 * 1024];
        loop {
            if drain.discarded >= bounds.bytes
                || Instant::now() >= drain.deadline.deadline()
                || this.slot.killed()
            {
                return Poll::Ready(Ok(()));
            }
            let room = scratch.len().min(bounds.bytes - drain.discarded);
            let mut buf = ReadBuf::new(&mut scratch[..room]);
            match Pin::new(&mut this.stream).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => drain.discarded += buf.filled().len(),
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Pending => {
                    if drain.deadline.as_mut().poll(cx).is_ready() || this.slot.park(cx) {
                        return Poll::Ready(Ok(()));
                    }
                    return Poll::Pending;
                }
            }
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let first: &[u8] = bufs.iter().find(|b| !b.is_empty()).map_or(&[], |b| b);
        self.write_with(cx, first, |stream, cx| stream.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::HeadScan;

    fn ends(chunks: &[&[u8]]) -> Option<usize> {
        let mut scan = HeadScan::default();
        chunks.iter().position(|c| scan.feed(c))
    }

    #[test]
    fn the_head_ends_at_its_empty_line_across_reads() {
        assert_eq!(ends(&[b"GET / HTTP/1.1\r\nHost: x\r\n\r\nbody"]), Some(0));
        assert_eq!(
            ends(&[b"GET / HTTP/1.1\r\nHost: x\r", b"\n\r", b"\n"]),
            Some(2)
        );
        assert_eq!(ends(&[b"GET / HTTP/1.1\n", b"\n"]), Some(1));
        assert_eq!(ends(&[b"GET / HTTP/1.1\r\n", b"\n"]), Some(1));
        assert_eq!(ends(&[b"\r\n\r\n\n\n", b"GET / HTTP/1.1\r\n\r\n"]), Some(1));
    }

    #[test]
    fn a_head_without_its_empty_line_never_ends() {
        assert_eq!(ends(&[b"\r\n\r\n", b"\r\n", b"\n\n"]), None);
        assert_eq!(
            ends(&[b"GET / HTTP/1.1\r\n", b"X-Slow: a", b"a", b"\r\nY: b"]),
            None
        );
        assert_eq!(ends(&[b"GET / HTTP/1.1\r\n\rX: y\r\n"]), None);
    }
}

//! The listening socket with two guards: at most so many connections at once (the next one
//! waits in the kernel's backlog), and a connection that neither sends nor takes a byte for the
//! idle timeout (a slow client, a stalled upload, an idle keep-alive) is closed.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

/// A [`TcpListener`] with a connection cap and an idle timeout per connection.
pub struct Guarded {
    inner: TcpListener,
    permits: Arc<Semaphore>,
    idle: Duration,
}

impl Guarded {
    /// Guards `inner`: at most `max_connections` at once, each closed after `idle` without
    /// progress.
    pub fn new(inner: TcpListener, max_connections: usize, idle: Duration) -> Guarded {
        Guarded {
            inner,
            permits: Arc::new(Semaphore::new(max_connections.max(1))),
            idle,
        }
    }
}

impl axum::serve::Listener for Guarded {
    type Io = GuardedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (GuardedStream, SocketAddr) {
        let permit = match self.permits.clone().acquire_owned().await {
            Ok(p) => p,
            // The semaphore is never closed.
            Err(_) => std::future::pending().await,
        };
        loop {
            match self.inner.accept().await {
                Ok((stream, addr)) => {
                    let _ = stream.set_nodelay(true);
                    return (GuardedStream::new(stream, permit, self.idle), addr);
                }
                // Out of file descriptors and the like: wait a little rather than spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
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

/// A connection whose reads and writes fail with `TimedOut` after waiting for the idle timeout.
pub struct GuardedStream {
    stream: TcpStream,
    _permit: OwnedSemaphorePermit,
    idle: Duration,
    reads: Watchdog,
    writes: Watchdog,
}

impl GuardedStream {
    fn new(stream: TcpStream, permit: OwnedSemaphorePermit, idle: Duration) -> GuardedStream {
        GuardedStream {
            stream,
            _permit: permit,
            idle,
            reads: Watchdog::new(),
            writes: Watchdog::new(),
        }
    }
}

impl AsyncRead for GuardedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let poll = Pin::new(&mut this.stream).poll_read(cx, buf);
        this.reads.watch(this.idle, cx, poll)
    }
}

impl AsyncWrite for GuardedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let poll = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.writes.watch(this.idle, cx, poll)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let poll = Pin::new(&mut this.stream).poll_flush(cx);
        this.writes.watch(this.idle, cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let poll = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.writes.watch(this.idle, cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

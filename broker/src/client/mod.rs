//! Blocking clients of the broker's wire (4-byte big-endian length + UTF-8 JSON), and the
//! `health` probe.
//!
//! - [`Client`]: what an embedder talks through (the C ABI's `aic_client`). Frames go out and
//!   come in as JSON text; [`Client::register`] registers, locally or as a remote principal
//!   with an `access` credential (checking the remote-access-v1 contract and the provenance the
//!   broker answers with, as the Pi adapter's client does); [`access_control`] sends one
//!   `access_control` frame on a connection of its own. Every failure is an [`Error`] with a
//!   stable code: `NOT_CONNECTED`, `INVALID_FRAME`, `REMOTE_ACCESS_INCOMPATIBLE`, the broker's
//!   own refusal codes (`ACCESS_DENIED`, `INVALID_REQUEST`, ... : [`BROKER_ERROR_CODES`]), or
//!   `INVALID_ARGUMENT`, `UNKNOWN_KEY` and `INVALID_JSON` for a request refused before anything
//!   is sent. An `error` frame with a code protocol v4 does not define is `INVALID_FRAME`, its
//!   message naming the code; one without a string code is `INVALID_FRAME` too. A connection
//!   is thread-safe: one thread may wait for a frame while others send.
//! - [`RawClient`]: the same connection for tests and tools that want to see the wire as it is
//!   (frames as [`Value`], `io::Result`, a closed connection as no frame).
//! - [`health`]: probes a socket as the adapters do.
//!
//! What a request may hold and what every answer means is decided in [`rules`], pure
//! functions that the Node package's client calls too; this module adds the socket.

pub mod rules;

use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use agent_intercom_core::{Error, ErrorCode};
use serde_json::Value;

pub use rules::{
    ACCESS_CONTROL_FIELDS, Access, AccessControlRequest, Answer, BROKER_ERROR_CODES, Health,
    REGISTER_FIELDS, Received, RegisterRequest, broker_refusal, check_registered, parse_json,
};

use crate::config::{self, DEFAULT_MAX_FRAME_BYTES};
use crate::wire;
use rules::FrameBuffer;

/// How long [`Client::register`] waits for `registered`, and how long a send waits for the
/// broker to take a frame, before the connection counts as lost (`NOT_CONNECTED`).
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

const READ_CHUNK: usize = 64 * 1024;

fn fail(code: ErrorCode, message: impl Into<String>) -> Error {
    Error::new(code, message)
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section leaves its data consistent, so a panic in one poisons nothing.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The largest frame any broker accepts (the top of `max_frame_bytes`' range).
fn max_outgoing_frame() -> u64 {
    config::LIMITS
        .iter()
        .find(|l| l.key == "max_frame_bytes")
        .map_or(DEFAULT_MAX_FRAME_BYTES, |l| l.max)
}
/// Waits until `fd` is readable (or hung up) or `wait` passed; true when readable.
fn wait_readable(fd: i32, wait: Duration) -> io::Result<bool> {
    let ms = wait.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32;
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    match unsafe { libc::poll(&mut poll, 1, ms) } {
        n if n < 0 => Err(io::Error::last_os_error()),
        0 => Ok(false),
        _ => Ok(true),
    }
}

/// A connection to a broker (see the module docs).
pub struct Client {
    stream: UnixStream,
    inbox: Mutex<FrameBuffer>,
    /// Held while a frame is written, so frames of concurrent senders never interleave.
    outbox: Mutex<()>,
    /// Why the connection is unusable, once it is (the stream is shut down then).
    lost: Mutex<Option<String>>,
}

impl Client {
    /// Connects to a broker's socket (the local one, or the remote gateway).
    pub fn connect(socket: &Path) -> Result<Client, Error> {
        if socket.as_os_str().is_empty() {
            return Err(fail(ErrorCode::InvalidArgument, "the socket path is empty"));
        }
        let stream = UnixStream::connect(socket).map_err(|e| {
            let code = if e.kind() == io::ErrorKind::InvalidInput {
                ErrorCode::InvalidArgument // too long for a socket address
            } else {
                ErrorCode::NotConnected
            };
            fail(code, format!("cannot connect to {}: {e}", socket.display()))
        })?;
        Client::from_stream(stream)
    }

    /// A connection over a stream already connected (to a broker, or a socket pair).
    pub fn from_stream(stream: UnixStream) -> Result<Client, Error> {
        stream
            .set_write_timeout(Some(ANSWER_TIMEOUT))
            .map_err(|e| {
                fail(
                    ErrorCode::NotConnected,
                    format!("cannot set up the connection: {e}"),
                )
            })?;
        Ok(Client {
            stream,
            inbox: Mutex::new(FrameBuffer::default()),
            outbox: Mutex::new(()),
            lost: Mutex::new(None),
        })
    }

    /// The underlying stream.
    pub fn stream(&self) -> &UnixStream {
        &self.stream
    }

    fn check_open(&self) -> Result<(), Error> {
        match &*lock(&self.lost) {
            Some(why) => Err(fail(
                ErrorCode::NotConnected,
                format!("the connection is closed: {why}"),
            )),
            None => Ok(()),
        }
    }

    /// Marks the connection unusable (the first reason stays) and shuts it down.
    fn lose(&self, error: Error) -> Error {
        let mut lost = lock(&self.lost);
        if lost.is_none() {
            *lost = Some(error.message().to_string());
            let _ = self.stream.shutdown(std::net::Shutdown::Both);
        }
        error
    }

    /// Closes the connection; later calls fail with `NOT_CONNECTED`.
    pub fn close(&self) {
        self.lose(fail(ErrorCode::NotConnected, "closed by this client"));
    }

    /// Sends bytes as they are, all or nothing usable: a partial write loses the connection.
    pub fn send_bytes(&self, bytes: &[u8]) -> Result<(), Error> {
        let _writing = lock(&self.outbox);
        self.check_open()?;
        let mut sent = 0;
        while sent < bytes.len() {
            let rest = &bytes[sent..];
            // SAFETY: `rest` is valid for reads of its length. MSG_NOSIGNAL: a closed peer is
            // an error here, never a SIGPIPE that kills the embedding process.
            let n = unsafe {
                libc::send(
                    self.stream.as_raw_fd(),
                    rest.as_ptr().cast(),
                    rest.len(),
                    libc::MSG_NOSIGNAL,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                let message = match e.kind() {
                    io::ErrorKind::Interrupted => continue,
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => format!(
                        "the broker did not take the frame within {} s",
                        ANSWER_TIMEOUT.as_secs()
                    ),
                    _ => format!("cannot send to the broker: {e}"),
                };
                return Err(self.lose(fail(ErrorCode::NotConnected, message)));
            }
            sent += n as usize;
        }
        Ok(())
    }

    /// Sends one frame.
    pub fn send(&self, frame: &Value) -> Result<(), Error> {
        self.send_bytes(&wire::encode(frame))
    }

    /// Sends one frame given as JSON text, as it is: a JSON object with a string `type`
    /// (`INVALID_JSON`, `INVALID_ARGUMENT` otherwise), no larger than any broker accepts.
    pub fn send_text(&self, text: &str) -> Result<(), Error> {
        let max = max_outgoing_frame();
        if text.len() as u64 > max {
            return Err(fail(
                ErrorCode::InvalidArgument,
                format!(
                    "a frame of {} bytes is larger than any broker accepts ({max})",
                    text.len()
                ),
            ));
        }
        let value = parse_json(text, "frame")?;
        if !value.get("type").is_some_and(Value::is_string) {
            return Err(fail(
                ErrorCode::InvalidArgument,
                "frame must be a JSON object with a string type",
            ));
        }
        let mut frame = Vec::with_capacity(4 + text.len());
        frame.extend_from_slice(&(text.len() as u32).to_be_bytes());
        frame.extend_from_slice(text.as_bytes());
        self.send_bytes(&frame)
    }

    /// The next frame, or `None` when none arrived within `timeout` (zero: only one already
    /// there). A closed connection is `NOT_CONNECTED`; a frame over the frame limit or not JSON
    /// is `INVALID_FRAME` and loses the connection (the stream cannot be resynchronised).
    pub fn recv(&self, timeout: Duration) -> Result<Option<Received>, Error> {
        let mut inbox = lock(&self.inbox);
        self.check_open()?;
        let deadline = Instant::now().checked_add(timeout);
        let mut chunk = vec![0u8; READ_CHUNK];
        loop {
            if let Some(body) = inbox.next_body().map_err(|e| self.lose(e))? {
                return rules::read_frame(body).map_err(|e| self.lose(e)).map(Some);
            }
            let left = deadline.map_or(Duration::MAX, |d| {
                d.saturating_duration_since(Instant::now())
            });
            match wait_readable(self.stream.as_raw_fd(), left) {
                Ok(true) => {}
                Ok(false) if deadline.is_some_and(|d| Instant::now() >= d) => return Ok(None),
                Ok(false) => continue,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(self.lose(fail(
                        ErrorCode::NotConnected,
                        format!("cannot wait for the broker: {e}"),
                    )));
                }
            }
            match io::Read::read(&mut &self.stream, &mut chunk) {
                Ok(0) => {
                    self.check_open()?; // closed by this client (close, from another thread)
                    let message = if inbox.is_empty() {
                        "the broker closed the connection"
                    } else {
                        "the broker closed the connection in the middle of a frame"
                    };
                    return Err(self.lose(fail(ErrorCode::NotConnected, message)));
                }
                Ok(n) => inbox.push(&chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                    ) => {}
                Err(e) => {
                    return Err(self.lose(fail(
                        ErrorCode::NotConnected,
                        format!("cannot read from the broker: {e}"),
                    )));
                }
            }
        }
    }

    /// The next frame, which must come within `timeout`: no frame is `NOT_CONNECTED`.
    fn answer(&self, timeout: Duration, to: &str) -> Result<Received, Error> {
        self.recv(timeout)?.ok_or_else(|| {
            self.lose(fail(
                ErrorCode::NotConnected,
                format!(
                    "the broker did not answer {to} within {} s",
                    timeout.as_secs_f64()
                ),
            ))
        })
    }

    /// Registers (see [`RegisterRequest::parse`] for the request) and returns the `registered`
    /// frame. What the answer means is [`rules::register_answer`]'s to say: an error frame is
    /// the broker's refusal; an answer no client can use (a `registered` frame that does not
    /// answer the request, or another frame) loses the connection, which the broker would
    /// otherwise hold registered on the strength of an answer this client refuses.
    pub fn register(&self, request: &Value) -> Result<Received, Error> {
        let request = RegisterRequest::parse(request, "request")?;
        self.send(request.frame())?;
        let answer = self.answer(ANSWER_TIMEOUT, "register")?;
        match rules::register_answer(&answer.value, request.access()) {
            Ok(Answer::Accepted) => Ok(answer),
            Ok(Answer::Refused(error)) => Err(error),
            Err(error) => Err(self.lose(error)),
        }
    }
}

/// Sends one `access_control` frame (see [`AccessControlRequest::parse`]) on a connection of
/// its own to `socket` (the local socket for `adminToken` requests, the remote gateway for
/// `access` ones) and returns the `access_control_result`, which must carry the request's id
/// and action. An error frame is the broker's refusal; no answer within `timeout` is
/// `NOT_CONNECTED`. The connection is closed either way (the broker ends it after its reply).
pub fn access_control(
    socket: &Path,
    request: &Value,
    timeout: Duration,
) -> Result<Received, Error> {
    let request = AccessControlRequest::parse(request, "request")?;
    access_control_on(Client::connect(socket)?, &request, timeout)
}

/// [`access_control`] on a connection already made, which is this request's alone (the broker
/// ends it after its reply).
pub fn access_control_on(
    client: Client,
    request: &AccessControlRequest,
    timeout: Duration,
) -> Result<Received, Error> {
    client.send(request.frame())?;
    let answer = client.answer(timeout, "access_control")?;
    client.close();
    rules::access_control_answer(&answer.value, request.request_id(), request.action())?;
    Ok(answer)
}

/// A connection to a broker, frames as [`Value`]s: for tests and tools.
pub struct RawClient {
    client: Client,
}

fn io_error(error: Error) -> io::Error {
    let kind = match error.code() {
        ErrorCode::NotConnected => io::ErrorKind::BrokenPipe,
        _ => io::ErrorKind::InvalidData,
    };
    io::Error::new(kind, error.message().to_string())
}

impl RawClient {
    /// Connects to the broker's socket.
    pub fn connect(socket: &Path) -> io::Result<RawClient> {
        let stream = UnixStream::connect(socket)?;
        Ok(RawClient {
            client: Client::from_stream(stream).map_err(io_error)?,
        })
    }

    /// Sends one frame.
    pub fn send(&mut self, frame: &Value) -> io::Result<()> {
        self.client.send(frame).map_err(io_error)
    }

    /// Sends bytes as they are (for malformed-input tests).
    pub fn send_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.client.send_bytes(bytes).map_err(io_error)
    }

    /// The next frame; `Ok(None)` when the broker closed the connection or nothing arrived
    /// within `timeout`. A frame over the default frame limit or not JSON is an error.
    pub fn recv(&mut self, timeout: Duration) -> io::Result<Option<Value>> {
        match self.client.recv(timeout) {
            Ok(frame) => Ok(frame.map(|f| f.value)),
            Err(e) if e.code() == ErrorCode::NotConnected => Ok(None),
            Err(e) => Err(io_error(e)),
        }
    }

    /// The underlying stream.
    pub fn stream(&self) -> &UnixStream {
        self.client.stream()
    }

    /// The connection as a [`Client`].
    pub fn client(&self) -> &Client {
        &self.client
    }
}

/// Probes the socket with a `health` frame, as the adapters do ([`rules::health_answer`] says
/// what the answer means), waiting up to `timeout` for each step.
pub fn health(socket: &Path, timeout: Duration) -> Health {
    let request_id = uuid::Uuid::new_v4().to_string();
    let answer = probe(socket, timeout, &rules::health_request(&request_id));
    rules::health_answer(answer.as_ref(), &request_id)
}

/// The opt-in extensions the broker at `socket` speaks (docs/hub.md), asked on a connection of
/// its own; none when it is not a compatible broker or has none.
pub fn extensions(socket: &Path, timeout: Duration) -> Vec<String> {
    let request_id = uuid::Uuid::new_v4().to_string();
    let answer = probe(socket, timeout, &rules::extensions_request(&request_id));
    rules::extensions_answer(answer.as_ref(), &request_id)
}

/// One request on a connection of its own, and the frame that comes back within `timeout`.
fn probe(socket: &Path, timeout: Duration, request: &Value) -> Option<Value> {
    let mut client = RawClient::connect(socket).ok()?;
    let _ = client.stream().set_write_timeout(Some(timeout));
    client.send(request).ok()?;
    client.recv(timeout).ok().flatten()
}

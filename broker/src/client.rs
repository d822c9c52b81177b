//! A minimal blocking client speaking raw frames: for tests, tools and embedders that want to
//! see the wire as it is.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::wire;

/// A connection to a broker.
pub struct RawClient {
    stream: UnixStream,
}

impl RawClient {
    /// Connects to the broker's socket.
    pub fn connect(socket: &Path) -> io::Result<RawClient> {
        Ok(RawClient {
            stream: UnixStream::connect(socket)?,
        })
    }

    /// Sends one frame.
    pub fn send(&mut self, frame: &Value) -> io::Result<()> {
        self.stream.write_all(&wire::encode(frame))
    }

    /// Sends bytes as they are (for malformed-input tests).
    pub fn send_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// The next frame; `Ok(None)` when the broker closed the connection or nothing arrived
    /// within `timeout`.
    pub fn recv(&mut self, timeout: Duration) -> io::Result<Option<Value>> {
        self.stream.set_read_timeout(Some(timeout))?;
        let mut header = [0u8; 4];
        match self.stream.read_exact(&mut header) {
            Ok(()) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::UnexpectedEof
                        | io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::ConnectionReset
                ) =>
            {
                return Ok(None);
            }
            Err(e) => return Err(e),
        }
        let len = u32::from_be_bytes(header) as u64;
        if len > crate::config::DEFAULT_MAX_FRAME_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a frame of {len} bytes is larger than a broker sends"),
            ));
        }
        let mut body = vec![0u8; len as usize];
        self.stream
            .set_read_timeout(Some(Duration::from_secs(10)))?;
        self.stream.read_exact(&mut body)?;
        crate::jstext::parse_frame(&body)
            .map(Some)
            .map_err(io::Error::other)
    }

    /// The underlying stream.
    pub fn stream(&self) -> &UnixStream {
        &self.stream
    }
}

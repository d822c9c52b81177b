//! One HTTP/1.1 response reader, for the line's HTTPS client ([`crate::wire`]) and the plain
//! HTTP client of `agent-intercom pack send --to`: the head, then a body framed by
//! `Content-Length` or chunked coding (or, where the caller allows it, by the end of the
//! connection), within a byte budget and a deadline.
//!
//! It is strict: the status line is `HTTP/1.1` or `HTTP/1.0` with a status from 100 to 599,
//! every field has a token name and a colon, a length is given once, a chunk ends with CRLF,
//! chunked trailers are refused, and a body longer than its `Content-Length` is refused. It
//! never reads more than the budget, nor a head over [`MAX_HEAD_BYTES`].

use std::fmt;
use std::time::Duration;

use agent_intercom_core::httpsig::{Headers, Response};

/// The longest response head (status line and fields) read.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// The longest chunk size line read.
const MAX_CHUNK_LINE_BYTES: usize = 1024;

/// Where response bytes come from: fills the buffer within the time left (`Ok(0)` at the end of
/// the connection).
pub type Source<'a> = dyn FnMut(&mut [u8], Duration) -> std::io::Result<usize> + 'a;

/// How a body with neither `Content-Length` nor chunked coding ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unframed {
    /// It is refused: a close could not be told from a cut (the line).
    Refused,
    /// It ends with the connection (RFC 9112, section 6.3, rule 8).
    AtClose,
}

/// A response read whole.
#[derive(Clone, Debug)]
pub struct Reply {
    /// The status and fields, as received.
    pub response: Response,
    /// The body (dechunked).
    pub body: Vec<u8>,
    /// The bytes read, head and framing included.
    pub bytes_read: u64,
}

/// Why no response was read.
#[derive(Debug)]
pub enum Failure {
    /// Reading failed (a reset, a read timeout).
    Io(std::io::Error),
    /// The deadline passed.
    Late,
    /// The connection ended before the response did.
    Closed,
    /// The response is larger than the budget.
    TooLarge,
    /// Not an HTTP/1.x response as this reader takes it (what, for people).
    Malformed(&'static str),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Io(e) => write!(f, "the response was cut: {e}"),
            Failure::Late => f.write_str("the response did not arrive in time"),
            Failure::Closed => {
                f.write_str("the connection closed before the response was complete")
            }
            Failure::TooLarge => f.write_str("the response is larger than the allowance"),
            Failure::Malformed(what) => f.write_str(what),
        }
    }
}

/// Reads one response of at most `budget` bytes from `source` before `remaining()` runs out.
pub fn read_response(
    source: &mut Source<'_>,
    budget: u64,
    remaining: &dyn Fn() -> Duration,
    unframed: Unframed,
) -> Result<Reply, Failure> {
    let mut reader = Reader {
        source,
        remaining,
        buf: Vec::new(),
        budget,
        read: 0,
    };
    let head_end = loop {
        if let Some(i) = find(&reader.buf, b"\r\n\r\n") {
            break i;
        }
        if reader.buf.len() > MAX_HEAD_BYTES {
            return Err(Failure::Malformed("the response head is too long"));
        }
        reader.more()?;
    };
    let rest = reader.buf.split_off(head_end + 4);
    let (status, headers) = parse_head(&reader.buf[..head_end])?;
    reader.buf.clear();
    let body = match framing(&headers)? {
        Framing::Chunked => read_chunked(&mut reader, rest)?,
        Framing::Length(n) => read_length(&mut reader, rest, n)?,
        Framing::None if unframed == Unframed::AtClose => read_to_close(&mut reader, rest)?,
        Framing::None => {
            return Err(Failure::Malformed(
                "the response has no single valid Content-Length",
            ));
        }
    };
    let mut response =
        Response::new(status).map_err(|_| Failure::Malformed("the response status is invalid"))?;
    response.headers = headers;
    Ok(Reply {
        response,
        body,
        bytes_read: reader.read,
    })
}

/// How a response's body is framed.
enum Framing {
    Chunked,
    Length(u64),
    None,
}

fn framing(headers: &Headers) -> Result<Framing, Failure> {
    let chunked = headers
        .values("transfer-encoding")
        .any(|v| std::str::from_utf8(v).is_ok_and(|t| t.to_ascii_lowercase().contains("chunked")));
    if chunked {
        return Ok(Framing::Chunked);
    }
    let lengths: Vec<Option<u64>> = headers
        .values("content-length")
        .map(|v| {
            std::str::from_utf8(v)
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok())
        })
        .collect();
    match lengths.as_slice() {
        [] => Ok(Framing::None),
        [Some(n)] => Ok(Framing::Length(*n)),
        _ => Err(Failure::Malformed(
            "the response has no single valid Content-Length",
        )),
    }
}

struct Reader<'a, 'b> {
    source: &'a mut Source<'b>,
    remaining: &'a dyn Fn() -> Duration,
    buf: Vec<u8>,
    budget: u64,
    read: u64,
}

impl Reader<'_, '_> {
    /// Appends what arrives next to `buf`; an error at the end of the stream, the deadline or
    /// the budget.
    fn more(&mut self) -> Result<(), Failure> {
        if self.next()? == 0 {
            return Err(Failure::Closed);
        }
        Ok(())
    }

    /// Appends what arrives next to `buf`: how many bytes, 0 at the end of the stream.
    fn next(&mut self) -> Result<usize, Failure> {
        let left = (self.remaining)();
        if left.is_zero() {
            return Err(Failure::Late);
        }
        let mut chunk = [0u8; 16 * 1024];
        let n = (self.source)(&mut chunk, left).map_err(Failure::Io)?;
        self.read += n as u64;
        if self.read > self.budget {
            return Err(Failure::TooLarge);
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n)
    }

    /// `data` with what arrives next appended.
    fn more_into(&mut self, data: &mut Vec<u8>) -> Result<(), Failure> {
        self.more()?;
        data.append(&mut self.buf);
        Ok(())
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The status and fields of a response head (without its final empty line).
fn parse_head(head: &[u8]) -> Result<(u16, Headers), Failure> {
    let malformed = Failure::Malformed;
    let text =
        std::str::from_utf8(head).map_err(|_| malformed("the response head is not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let code = parts.next().unwrap_or_default();
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(malformed("the response is not HTTP/1.x"));
    }
    let status: u16 = code
        .parse()
        .ok()
        .filter(|c| (100..=599).contains(c))
        .ok_or(malformed("the response status is invalid"))?;
    let mut headers = Headers::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err(malformed("a response field has no colon"));
        };
        let valid_name = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !valid_name {
            return Err(malformed("a response field name is invalid"));
        }
        headers.push(name, value.trim_matches([' ', '\t']).as_bytes().to_vec());
    }
    Ok((status, headers))
}

fn read_length(reader: &mut Reader<'_, '_>, mut body: Vec<u8>, n: u64) -> Result<Vec<u8>, Failure> {
    if n > reader.budget {
        return Err(Failure::TooLarge);
    }
    while (body.len() as u64) < n {
        reader.more_into(&mut body)?;
    }
    if body.len() as u64 != n {
        return Err(Failure::Malformed(
            "the response body is longer than its Content-Length",
        ));
    }
    Ok(body)
}

fn read_to_close(reader: &mut Reader<'_, '_>, mut body: Vec<u8>) -> Result<Vec<u8>, Failure> {
    while reader.next()? > 0 {
        body.append(&mut reader.buf);
    }
    Ok(body)
}

fn read_chunked(reader: &mut Reader<'_, '_>, mut data: Vec<u8>) -> Result<Vec<u8>, Failure> {
    let bad_size = Failure::Malformed("bad chunk size");
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(i) = find(&data, b"\r\n") {
                break i;
            }
            if data.len() > MAX_CHUNK_LINE_BYTES {
                return Err(Failure::Malformed("a chunk size line is too long"));
            }
            reader.more_into(&mut data)?;
        };
        let Ok(size_text) = std::str::from_utf8(&data[..line_end]) else {
            return Err(bad_size);
        };
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let Ok(size) = u64::from_str_radix(size_text, 16) else {
            return Err(bad_size);
        };
        if size > reader.budget {
            return Err(Failure::TooLarge);
        }
        data.drain(..line_end + 2);
        if size == 0 {
            // The trailer section: only its end is accepted (no trailer fields).
            while data.len() < 2 {
                reader.more_into(&mut data)?;
            }
            if &data[..2] != b"\r\n" {
                return Err(Failure::Malformed("chunked trailers are not accepted"));
            }
            return Ok(body);
        }
        let need = size as usize + 2;
        while data.len() < need {
            reader.more_into(&mut data)?;
        }
        if &data[size as usize..need] != b"\r\n" {
            return Err(Failure::Malformed("a chunk is not followed by CRLF"));
        }
        body.extend_from_slice(&data[..size as usize]);
        data.drain(..need);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `wire` as a response arriving in pieces of `piece` bytes, within `budget`.
    fn read_as(
        wire: &[u8],
        piece: usize,
        budget: u64,
        unframed: Unframed,
    ) -> Result<(u16, Vec<u8>), Failure> {
        let mut at = 0;
        let mut source = |buf: &mut [u8], _left: Duration| {
            let n = piece.min(buf.len()).min(wire.len() - at);
            buf[..n].copy_from_slice(&wire[at..at + n]);
            at += n;
            Ok(n)
        };
        let forever = || Duration::from_secs(60);
        read_response(&mut source, budget, &forever, unframed)
            .map(|r| (r.response.status(), r.body))
    }

    fn read_from(wire: &[u8], piece: usize, budget: u64) -> Result<(u16, Vec<u8>), Failure> {
        read_as(wire, piece, budget, Unframed::Refused)
    }

    #[test]
    fn bodies_are_framed_by_length_or_chunks() {
        let plain = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        for piece in [1, 3, 4096] {
            let (status, body) = read_from(plain, piece, 1 << 20).unwrap();
            assert_eq!((status, body.as_slice()), (200, &b"hello"[..]));
        }
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                        5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
        for piece in [1, 7, 4096] {
            let (status, body) = read_from(chunked, piece, 1 << 20).unwrap();
            assert_eq!((status, body.as_slice()), (200, &b"hello world"[..]));
        }
        let refused: [&[u8]; 7] = [
            // no length, two lengths, a body longer than its length, cut short
            b"HTTP/1.1 200 OK\r\n\r\nhello",
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhello",
            b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhello",
            // trailers, a chunk without its CRLF, a bad size
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        ];
        for wire in refused {
            assert!(
                read_from(wire, 4096, 1 << 20).is_err(),
                "{}",
                String::from_utf8_lossy(wire)
            );
        }
        // Over the budget: a declared length, a chunk size, or what actually arrives.
        let big = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n";
        assert!(matches!(read_from(big, 4096, 64), Err(Failure::TooLarge)));
        assert!(matches!(read_from(plain, 4096, 10), Err(Failure::TooLarge)));
        let big_chunk = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffff\r\n";
        assert!(matches!(
            read_from(big_chunk, 4096, 1 << 10),
            Err(Failure::TooLarge)
        ));
        // A head that never ends is cut at its limit.
        let mut endless = b"HTTP/1.1 200 OK\r\n".to_vec();
        endless.extend(std::iter::repeat_n(b'a', MAX_HEAD_BYTES + 10));
        assert!(read_from(&endless, 4096, 1 << 20).is_err());
    }

    #[test]
    fn an_unframed_body_ends_with_the_connection_only_where_allowed() {
        let close = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end";
        let (status, body) = read_as(close, 3, 1 << 20, Unframed::AtClose).unwrap();
        assert_eq!((status, body.as_slice()), (200, &b"until the end"[..]));
        let empty = b"HTTP/1.0 204 No Content\r\n\r\n";
        let (status, body) = read_as(empty, 4096, 1 << 20, Unframed::AtClose).unwrap();
        assert_eq!((status, body.len()), (204, 0));
        assert!(matches!(
            read_as(close, 4096, 10, Unframed::AtClose),
            Err(Failure::TooLarge)
        ));
        assert!(read_from(close, 4096, 1 << 20).is_err());
        // A length or chunks still bind; a cut is still a cut.
        let cut = b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhello";
        assert!(matches!(
            read_as(cut, 4096, 1 << 20, Unframed::AtClose),
            Err(Failure::Closed)
        ));
        assert!(matches!(
            read_as(b"HTTP/1.1 200", 4096, 1 << 20, Unframed::AtClose),
            Err(Failure::Closed)
        ));
    }

    #[test]
    fn the_deadline_and_the_source_end_a_read() {
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        let mut source = |buf: &mut [u8], _left: Duration| {
            buf[..4].copy_from_slice(&wire[..4]);
            Ok(4)
        };
        let gone = || Duration::ZERO;
        let late = read_response(&mut source, 1 << 20, &gone, Unframed::Refused);
        assert!(matches!(late, Err(Failure::Late)));
        let mut failing = |_: &mut [u8], _: Duration| -> std::io::Result<usize> {
            Err(std::io::ErrorKind::TimedOut.into())
        };
        let forever = || Duration::from_secs(60);
        let cut = read_response(&mut failing, 1 << 20, &forever, Unframed::Refused);
        assert!(matches!(cut, Err(Failure::Io(ref e)) if e.kind() == std::io::ErrorKind::TimedOut));
    }

    #[test]
    fn heads_parse_strictly() {
        let (status, headers) =
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX:  a \t").unwrap();
        assert_eq!(status, 200);
        assert_eq!(headers.values("x").next(), Some(&b"a"[..]));
        for bad in [
            &b"HTTP/2 200 OK"[..],
            b"HTTP/1.1 99 X",
            b"HTTP/1.1 600 X",
            b"HTTP/1.1 200 OK\r\nno colon",
            b"HTTP/1.1 200 OK\r\nbad name: v",
            b"HTTP/1.1 abc OK",
            b"SSH-2.0",
            b"\xff",
        ] {
            assert!(parse_head(bad).is_err(), "{bad:?}");
        }
    }
}

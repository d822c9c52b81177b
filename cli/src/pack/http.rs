//! The HTTP/1.1 client of `pack send --to URL`: one POST over a plain TCP connection (http://
//! only), with connect, write and read timeouts and a bound on what is read back.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use agent_intercom_core::{Error, ErrorCode};

/// The largest response read (headers and body).
pub const MAX_RESPONSE_BYTES: usize = 1024 * 1024;
/// Where a URL without a path posts to: the handoff route of `agent-intercom serve`.
pub const HANDOFF_PATH: &str = "/v1/a2a/handoff";

/// A parsed `http://host[:port][/path]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The host as written (an IPv6 literal without its brackets).
    pub host: String,
    /// The port (80 by default).
    pub port: u16,
    /// The path and query; [`HANDOFF_PATH`] for none or `/`.
    pub path: String,
    /// The `Host` header's value.
    pub authority: String,
}

fn bad(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

/// Reads an http:// URL (no user info, no fragment).
pub fn target(url: &str) -> Result<Target, Error> {
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        bad(format!(
            "--to takes an http:// URL (https is not supported by this client), not {url:?}"
        ))
    })?;
    if rest.contains('#') || rest.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad(
            "the URL must have no fragment, space or control character",
        ));
    }
    let (authority, path) = match rest.find(['/', '?']) {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, ""),
    };
    if authority.contains('@') {
        return Err(bad("the URL must carry no user name or password"));
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6
            .split_once(']')
            .ok_or_else(|| bad("an IPv6 host is written [address]"))?;
        (host, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err(bad("the URL names no host"));
    }
    let port = match port {
        None => 80,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| bad(format!("the port {p:?} is not a port number")))?,
    };
    let path = match path {
        "" | "/" => HANDOFF_PATH.to_string(),
        p if p.starts_with('?') => format!("{HANDOFF_PATH}{p}"),
        p => p.to_string(),
    };
    Ok(Target {
        host: host.to_string(),
        port,
        path,
        authority: authority.to_string(),
    })
}

/// A response: its status and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The body (decoded if it was chunked).
    pub body: Vec<u8>,
}

fn unreachable(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::NotConnected, message)
}

/// POSTs `body` as `application/json` to `target`, waiting at most `timeout` for each of
/// connecting, writing and reading (and the whole exchange).
pub fn post(
    target: &Target,
    body: &[u8],
    bearer: Option<&str>,
    timeout: Duration,
) -> Result<Response, Error> {
    let deadline = Instant::now() + timeout;
    let addrs: Vec<_> = (target.host.as_str(), target.port)
        .to_socket_addrs()
        .map_err(|e| unreachable(format!("cannot resolve {}: {e}", target.host)))?
        .collect();
    let mut last = None;
    let mut stream = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let mut stream = stream.ok_or_else(|| {
        unreachable(format!(
            "cannot connect to {}: {}",
            target.authority,
            last.map_or_else(|| "no address".to_string(), |e| e.to_string())
        ))
    })?;
    let io = |what: &str, e: std::io::Error| {
        let timed_out = matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        );
        if timed_out {
            unreachable(format!(
                "{} did not answer in {timeout:?} ({what})",
                target.authority
            ))
        } else {
            unreachable(format!("{what} {}: {e}", target.authority))
        }
    };
    stream
        .set_write_timeout(Some(timeout))
        .and_then(|()| stream.set_read_timeout(Some(timeout)))
        .map_err(|e| io("cannot set timeouts on", e))?;
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\
         User-Agent: agent-intercom/{}\r\n",
        target.path,
        target.authority,
        body.len(),
        agent_intercom_core::VERSION
    );
    if let Some(token) = bearer {
        head += &format!("Authorization: Bearer {token}\r\n");
    }
    head += "\r\n";
    stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body))
        .and_then(|()| stream.flush())
        .map_err(|e| io("cannot send to", e))?;
    let mut received = Vec::new();
    let mut buffer = [0u8; 16 * 1024];
    loop {
        if Instant::now() > deadline {
            return Err(unreachable(format!(
                "{} did not answer in {timeout:?}",
                target.authority
            )));
        }
        if let Some(response) = complete(&received)? {
            return Ok(response);
        }
        let n = stream
            .read(&mut buffer)
            .map_err(|e| io("cannot read the response of", e))?;
        if n == 0 {
            return finish(&received);
        }
        received.extend_from_slice(&buffer[..n]);
        if received.len() > MAX_RESPONSE_BYTES {
            return Err(Error::new(
                ErrorCode::InvalidFrame,
                format!("the response is larger than {MAX_RESPONSE_BYTES} bytes; refused"),
            ));
        }
    }
}

fn invalid(message: &str) -> Error {
    Error::new(
        ErrorCode::InvalidFrame,
        format!("not an HTTP/1.1 response: {message}"),
    )
}

struct Head {
    status: u16,
    length: Option<usize>,
    chunked: bool,
    body_at: usize,
}

/// The head of a response, once it has all arrived.
fn head(received: &[u8]) -> Result<Option<Head>, Error> {
    let Some(end) = received.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Ok(None);
    };
    let text = std::str::from_utf8(&received[..end]).map_err(|_| invalid("a head not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    if !version.starts_with("HTTP/1.") {
        return Err(invalid("no HTTP/1.x status line"));
    }
    let status = parts
        .next()
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|s| (100..=999).contains(s))
        .ok_or_else(|| invalid("no status code"))?;
    let (mut length, mut chunked) = (None, false);
    for line in lines {
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| invalid("a header line"))?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .parse::<usize>()
                    .map_err(|_| invalid("Content-Length"))?,
            );
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().contains("chunked");
        }
    }
    Ok(Some(Head {
        status,
        length,
        chunked,
        body_at: end + 4,
    }))
}

/// The response, when everything its head announces has arrived.
fn complete(received: &[u8]) -> Result<Option<Response>, Error> {
    let Some(h) = head(received)? else {
        return Ok(None);
    };
    let body = &received[h.body_at..];
    if h.chunked {
        return Ok(dechunk(body)?.map(|body| Response {
            status: h.status,
            body,
        }));
    }
    match h.length {
        Some(n) if body.len() >= n => Ok(Some(Response {
            status: h.status,
            body: body[..n].to_vec(),
        })),
        _ => Ok(None),
    }
}

/// The response at the end of the connection.
fn finish(received: &[u8]) -> Result<Response, Error> {
    let h = head(received)?.ok_or_else(|| invalid("the connection closed before the head"))?;
    let body = &received[h.body_at..];
    if h.chunked || h.length.is_some_and(|n| body.len() < n) {
        return Err(invalid("the connection closed before the end of the body"));
    }
    Ok(Response {
        status: h.status,
        body: body.to_vec(),
    })
}

/// A chunked body, once its last chunk has arrived.
fn dechunk(mut data: &[u8]) -> Result<Option<Vec<u8>>, Error> {
    let mut out = Vec::new();
    loop {
        let Some(end) = data.windows(2).position(|w| w == b"\r\n") else {
            return Ok(None);
        };
        let size_text = std::str::from_utf8(&data[..end]).map_err(|_| invalid("a chunk size"))?;
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| invalid("a chunk size"))?;
        data = &data[end + 2..];
        if size == 0 {
            return Ok(Some(out));
        }
        let Some(end) = size.checked_add(2).filter(|n| *n <= MAX_RESPONSE_BYTES + 2) else {
            return Err(invalid("a chunk larger than the response limit"));
        };
        if data.len() < end {
            return Ok(None);
        }
        out.extend_from_slice(&data[..size]);
        data = &data[end..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let t = target("http://127.0.0.1:8080").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("127.0.0.1", 8080, HANDOFF_PATH)
        );
        let t = target("http://[::1]:9/x?y=1").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("::1", 9, "/x?y=1")
        );
        assert_eq!(target("http://h").unwrap().port, 80);
        assert_eq!(target("http://h/").unwrap().path, HANDOFF_PATH);
        for bad in [
            "https://h",
            "h:1",
            "http://",
            "http://u@h",
            "http://h:0",
            "http://h:x",
            "http://h/#f",
        ] {
            assert!(target(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn responses() {
        let plain = b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 2\r\n\r\nokEXTRA";
        assert_eq!(complete(plain).unwrap().unwrap().body, b"ok");
        assert_eq!(
            complete(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab").unwrap(),
            None
        );
        let chunked =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n1\r\nd\r\n0\r\n\r\n";
        assert_eq!(complete(chunked).unwrap().unwrap().body, b"abcd");
        let huge = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n";
        assert!(complete(huge).is_err());
        assert_eq!(
            finish(b"HTTP/1.0 204 No Content\r\n\r\n").unwrap().status,
            204
        );
        assert!(finish(b"SSH-2.0\r\n\r\n").is_err());
        assert!(finish(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nab").is_err());
    }
}

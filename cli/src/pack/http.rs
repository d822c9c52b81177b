//! The HTTP/1.1 client of `pack send --to URL`: one POST over a plain TCP connection (http://
//! only), with connect, write and read timeouts and a bound on what is read back. The response
//! is read by the line's HTTP/1.1 reader ([`agent_intercom_line::http1`]), a body without a
//! length or chunks ending with the connection.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use agent_intercom_core::{Error, ErrorCode};
use agent_intercom_line::http1::{self, Failure, Unframed};

/// The largest response read (head and body).
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
    let left = || deadline.saturating_duration_since(Instant::now());
    let mut source = |buf: &mut [u8], left: Duration| {
        stream.set_read_timeout(Some(left))?;
        stream.read(buf)
    };
    let budget = MAX_RESPONSE_BYTES as u64;
    match http1::read_response(&mut source, budget, &left, Unframed::AtClose) {
        Ok(reply) => Ok(Response {
            status: reply.response.status(),
            body: reply.body,
        }),
        Err(Failure::Late) => Err(unreachable(format!(
            "{} did not answer in {timeout:?}",
            target.authority
        ))),
        Err(Failure::Io(e)) => Err(io("cannot read the response of", e)),
        Err(Failure::TooLarge) => Err(Error::new(
            ErrorCode::InvalidFrame,
            format!("the response is larger than {MAX_RESPONSE_BYTES} bytes; refused"),
        )),
        Err(why @ (Failure::Closed | Failure::Malformed(_))) => Err(Error::new(
            ErrorCode::InvalidFrame,
            format!("not an HTTP/1.1 response: {why}"),
        )),
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
}

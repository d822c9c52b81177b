//! The neutral HTTP message a signature is made over: a request (method, target URI, header
//! lines) or a response (status, header lines, and the request it answers).
//!
//! No HTTP library's types: the service (axum), the outbound line (hyper) and the tests build
//! these from whatever they hold. Header names are kept lowercased (HTTP field names are
//! case-insensitive; RFC 9421 identifies a field by its lowercased name); values are bytes, as
//! on the wire, so a value that is not ASCII reaches the signature rules and is refused there.

use crate::error::{Error, ErrorCode};

/// Header lines in the order they were received, repeats allowed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Headers {
    lines: Vec<(String, Vec<u8>)>,
}

impl Headers {
    /// No header lines.
    pub fn new() -> Headers {
        Headers::default()
    }

    /// Appends one line (the name is lowercased; a repeated name adds a line).
    pub fn push(&mut self, name: &str, value: impl Into<Vec<u8>>) {
        self.lines.push((name.to_ascii_lowercase(), value.into()));
    }

    /// Removes every line of `name`.
    pub fn remove(&mut self, name: &str) {
        let name = name.to_ascii_lowercase();
        self.lines.retain(|(n, _)| *n != name);
    }

    /// The values of the lines of `name`, in order.
    pub fn values<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a [u8]> + 'a {
        let name = name.to_ascii_lowercase();
        self.lines
            .iter()
            .filter(move |(n, _)| *n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// Whether some line is named `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.values(name).next().is_some()
    }

    /// Every line: (lowercased name, value).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.lines.iter().map(|(n, v)| (n.as_str(), v.as_slice()))
    }

    /// The lines of `name` joined with `", "` (how RFC 9110 combines field lines), or `None`.
    pub(crate) fn combined(&self, name: &str) -> Option<Vec<u8>> {
        let mut out: Option<Vec<u8>> = None;
        for value in self.values(name) {
            match out.as_mut() {
                Some(joined) => {
                    joined.extend_from_slice(b", ");
                    joined.extend_from_slice(value);
                }
                None => out = Some(value.to_vec()),
            }
        }
        out
    }
}

/// A request: method, target URI and header lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    method: String,
    target: Target,
    /// The header lines.
    pub headers: Headers,
}

impl Request {
    /// A request without headers. `target_uri` is the absolute target URI (RFC 9110 §7.1, as the
    /// server reconstructs it: scheme, authority, path and query, no fragment, no user info);
    /// anything else is `INVALID_ARGUMENT`.
    pub fn new(method: &str, target_uri: &str) -> Result<Request, Error> {
        if method.is_empty() || !method.bytes().all(is_tchar) {
            return Err(invalid("the method must be an HTTP token"));
        }
        Ok(Request {
            method: method.to_string(),
            target: Target::parse(target_uri)?,
            headers: Headers::new(),
        })
    }

    /// The request with one more header line.
    pub fn with_header(mut self, name: &str, value: impl Into<Vec<u8>>) -> Request {
        self.headers.push(name, value);
        self
    }

    /// The method, as given.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The target URI in its normalised form (the `@target-uri` value).
    pub fn target_uri(&self) -> String {
        self.target.uri()
    }

    pub(crate) fn target(&self) -> &Target {
        &self.target
    }
}

/// A response: status and header lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    status: u16,
    /// The header lines.
    pub headers: Headers,
}

impl Response {
    /// A response without headers; the status must be 100 to 999 (`INVALID_ARGUMENT`).
    pub fn new(status: u16) -> Result<Response, Error> {
        if !(100..=999).contains(&status) {
            return Err(invalid("the status must be a three-digit code"));
        }
        Ok(Response {
            status,
            headers: Headers::new(),
        })
    }

    /// The response with one more header line.
    pub fn with_header(mut self, name: &str, value: impl Into<Vec<u8>>) -> Response {
        self.headers.push(name, value);
        self
    }

    /// The status code.
    pub fn status(&self) -> u16 {
        self.status
    }
}

/// The message a signature base is built from: a request, or a response with (for the
/// components marked `;req`) the request it answers.
#[derive(Clone, Copy, Debug)]
pub enum Message<'a> {
    /// A request.
    Request(&'a Request),
    /// A response, and the request it answers when known.
    Response {
        /// The response.
        response: &'a Response,
        /// The request it answers.
        request: Option<&'a Request>,
    },
}

impl<'a> Message<'a> {
    /// The message's own header lines.
    pub fn headers(&self) -> &'a Headers {
        match self {
            Message::Request(request) => &request.headers,
            Message::Response { response, .. } => &response.headers,
        }
    }
}

/// A parsed absolute target URI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    /// Lowercased.
    scheme: String,
    /// Lowercased; an IPv6 literal keeps its brackets.
    host: String,
    port: Option<u16>,
    /// As written; empty when the URI has no path.
    path: String,
    /// Without the `?`; `Some("")` for a bare `?`.
    query: Option<String>,
}

impl Target {
    fn parse(text: &str) -> Result<Target, Error> {
        if !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(invalid(
                "the target URI must be visible ASCII without spaces",
            ));
        }
        if text.contains('#') {
            return Err(invalid("the target URI must not have a fragment"));
        }
        let (scheme, rest) = text
            .split_once("://")
            .ok_or_else(|| invalid("the target URI must be absolute (scheme://authority)"))?;
        let scheme_ok = scheme
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic())
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
        if !scheme_ok {
            return Err(invalid("the target URI's scheme is not a scheme"));
        }
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        if authority.contains('@') {
            return Err(invalid("the target URI must not carry user info"));
        }
        let (host, port) = split_host_port(authority)?;
        let (path, query) = match tail.split_once('?') {
            Some((path, query)) => (path, Some(query.to_string())),
            None => (tail, None),
        };
        Ok(Target {
            scheme: scheme.to_ascii_lowercase(),
            host: host.to_ascii_lowercase(),
            port,
            path: path.to_string(),
            query,
        })
    }

    /// `@scheme`.
    pub(crate) fn scheme(&self) -> &str {
        &self.scheme
    }

    /// `@authority`: host, and the port unless it is the scheme's default (RFC 9110 §4.2.3).
    pub(crate) fn authority(&self) -> String {
        let default = match self.scheme.as_str() {
            "https" => Some(443),
            "http" => Some(80),
            _ => None,
        };
        match self.port {
            Some(port) if Some(port) != default => format!("{}:{port}", self.host),
            _ => self.host.clone(),
        }
    }

    /// `@path`: `/` when empty.
    pub(crate) fn path(&self) -> &str {
        if self.path.is_empty() {
            "/"
        } else {
            &self.path
        }
    }

    /// `@query`: with its `?`; `?` alone when empty or absent.
    pub(crate) fn query(&self) -> String {
        format!("?{}", self.query.as_deref().unwrap_or(""))
    }

    /// The query without its `?`, when the URI has one.
    pub(crate) fn raw_query(&self) -> Option<&str> {
        self.query.as_deref()
    }

    /// `@request-target` (origin form): path, and `?query` when the URI has a `?`.
    pub(crate) fn request_target(&self) -> String {
        match &self.query {
            Some(query) => format!("{}?{query}", self.path()),
            None => self.path().to_string(),
        }
    }

    /// `@target-uri`: `scheme://authority` + `@request-target`, normalised as RFC 9110 §4.2.3
    /// says (lowercase scheme and host, default port omitted, empty path as `/`).
    pub(crate) fn uri(&self) -> String {
        format!(
            "{}://{}{}",
            self.scheme,
            self.authority(),
            self.request_target()
        )
    }
}

fn split_host_port(authority: &str) -> Result<(&str, Option<u16>), Error> {
    let (host, port) = if authority.starts_with('[') {
        let close = authority
            .find(']')
            .ok_or_else(|| invalid("the target URI's IPv6 host has no closing bracket"))?;
        let (host, rest) = authority.split_at(close + 1);
        let literal_ok = host[1..close]
            .bytes()
            .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
        if !literal_ok || close == 1 {
            return Err(invalid("the target URI's IPv6 host is not an address"));
        }
        match rest {
            "" => (host, None),
            _ => match rest.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return Err(invalid("the target URI's authority is malformed")),
            },
        }
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let host_ok = !host.is_empty()
        && (host.starts_with('[')
            || host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=%".contains(&b)));
    if !host_ok {
        return Err(invalid("the target URI's host is empty or malformed"));
    }
    let port = match port {
        None | Some("") => None,
        Some(digits) if digits.len() <= 5 && digits.bytes().all(|b| b.is_ascii_digit()) => Some(
            digits
                .parse::<u16>()
                .map_err(|_| invalid("the target URI's port is above 65535"))?,
        ),
        Some(_) => return Err(invalid("the target URI's port is not a number")),
    };
    Ok((host, port))
}

/// An RFC 9110 token character.
pub(crate) fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn invalid(message: &str) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(text: &str) -> Target {
        Target::parse(text).unwrap()
    }

    #[test]
    fn authorities_drop_only_the_default_port() {
        assert_eq!(
            target("https://Example.COM:443/a").authority(),
            "example.com"
        );
        assert_eq!(
            target("https://example.com:8443/a").authority(),
            "example.com:8443"
        );
        assert_eq!(target("http://example.com:80").authority(), "example.com");
        assert_eq!(
            target("http://example.com:443").authority(),
            "example.com:443"
        );
        assert_eq!(target("https://[::1]:443/").authority(), "[::1]");
        assert_eq!(target("https://[::1]:9/").authority(), "[::1]:9");
        assert_eq!(target("HTTPS://h:/x").uri(), "https://h/x");
    }

    #[test]
    fn paths_and_queries() {
        let t = target("https://h");
        assert_eq!((t.path(), t.query().as_str()), ("/", "?"));
        assert_eq!(t.request_target(), "/");
        let t = target("https://h/p?");
        assert_eq!(
            (t.query().as_str(), t.request_target().as_str()),
            ("?", "/p?")
        );
        let t = target("https://h?a=1");
        assert_eq!(t.uri(), "https://h/?a=1");
        assert_eq!(target("https://h/p?a=1&b").query(), "?a=1&b");
    }

    #[test]
    fn bad_targets_are_refused() {
        for bad in [
            "/relative",
            "https://",
            "https://u@h/",
            "https://h/#f",
            "https://h:99999/",
            "https://h:8x/",
            "https://[zz]/",
            "https://h /",
            "https://hé/",
            "1ttp://h/",
            "https://[::1/",
        ] {
            let e = Target::parse(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
        }
        assert!(Request::new("GET POST", "https://h/").is_err());
        assert!(Request::new("", "https://h/").is_err());
        assert!(Response::new(99).is_err());
    }

    #[test]
    fn headers_are_case_insensitive_and_repeatable() {
        let mut h = Headers::new();
        h.push("X-A", "1");
        h.push("x-a", "2");
        h.push("Y", "3");
        assert_eq!(h.combined("x-A").unwrap(), b"1, 2");
        assert!(h.contains("y"));
        h.remove("X-a");
        assert_eq!(h.combined("x-a"), None);
    }
}

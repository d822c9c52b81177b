//! The local administrator's read of a running broker, for `agent-intercom watch`
//! (docs/watch.md).
//!
//! It is one of the administrative actions of `access_control` ([`ACTION`]): on a fresh
//! connection to the local socket, with the admin token of `broker-admin.json`, before any
//! register, answered with `access_control_result {requestId, action, snapshot}` and the
//! connection closed. A session never sees it, the gateway refuses it, and a request without the
//! token is refused as every other administrative action is (`ACCESS_DENIED`).
//!
//! The snapshot holds no scope: the broker groups sessions under labels of its own ("scope 1",
//! "scope 2", in the order each group's oldest session registered, and [`UNSCOPED_LABEL`]),
//! and no message body, message id or credential.

use std::os::unix::net::UnixStream;
use std::time::Duration;

use agent_intercom_core::{Error, ErrorCode};
use serde_json::{Value, json};

use crate::BrokerConfig;
use crate::client::{self, AccessControlRequest, Client};

/// The `access_control` action that reads a snapshot.
pub const ACTION: &str = "watch_snapshot";
/// `snapshot.version`: raised when a member changes meaning or goes away.
pub const SNAPSHOT_VERSION: i64 = 1;
/// The traffic counters' interval (`snapshot.traffic.intervalMs`).
pub const TRAFFIC_INTERVAL_MS: u64 = 5_000;
/// How many intervals the traffic counters keep (five minutes).
pub const TRAFFIC_INTERVALS: usize = 60;
/// Rows at most in each list of a snapshot (sessions, asks, offline recipients); the counts
/// say how many there are in all.
pub const MAX_ROWS: usize = 200;
/// Bytes at most of the rows of one list, so that a snapshot stays far below a frame's limit
/// whatever the sessions' texts hold.
pub const MAX_LIST_BYTES: usize = 256 * 1024;
/// Characters at most of a text in a snapshot (a name, a working directory, a status line,
/// an id); longer ones are cut and end with `…`.
pub const MAX_TEXT_CHARS: usize = 200;
/// Characters of a session id shown as its short id.
pub const SHORT_ID_CHARS: usize = 8;
/// The label of the sessions registered without a scope.
pub const UNSCOPED_LABEL: &str = "unscoped";

/// The label of the `n`th scope group (from 1).
pub fn scope_label(n: usize) -> String {
    format!("scope {n}")
}

/// Reads a snapshot from the broker of `config` (its local socket, the admin token of its
/// `broker-admin.json`), waiting up to `timeout` for the answer.
///
/// Errors: `NOT_CONNECTED` when no broker answers on the socket (the message says no broker is
/// running there) or the answer does not come in time; `IO` when the admin token cannot be
/// read; `ACCESS_DENIED` when there is none, or the broker refuses it; `INVALID_REQUEST` from
/// a broker that does not know the action (an older one); `INVALID_FRAME` for an answer that is
/// not this request's.
pub fn snapshot(config: &BrokerConfig, timeout: Duration) -> Result<Value, Error> {
    let socket = &config.socket_path;
    let stream = UnixStream::connect(socket).map_err(|e| {
        Error::new(
            ErrorCode::NotConnected,
            format!("no broker is running at {}: {e}", socket.display()),
        )
    })?;
    let connection = Client::from_stream(stream)?;
    let admin = config.admin_path();
    let token = crate::access::read_admin_token(&admin)
        .map_err(|e| Error::new(ErrorCode::Io, format!("cannot read the admin token: {e}")))?
        .ok_or_else(|| {
            Error::new(
                ErrorCode::AccessDenied,
                format!(
                    "{} holds no admin token (the broker at {} did not write one)",
                    admin.display(),
                    socket.display()
                ),
            )
        })?;
    let request = json!({ "action": ACTION, "adminToken": token });
    let request = AccessControlRequest::parse(&request, "request")?;
    let answer = client::access_control_on(connection, &request, timeout).map_err(|e| {
        if e.code() == ErrorCode::InvalidRequest {
            Error::new(
                ErrorCode::InvalidRequest,
                format!(
                    "the broker at {} does not serve {ACTION} (an older broker, or another \
                     implementation): {}",
                    socket.display(),
                    e.message()
                ),
            )
        } else {
            e
        }
    })?;
    match answer.value.get("snapshot") {
        Some(snapshot @ Value::Object(_)) => Ok(snapshot.clone()),
        _ => Err(Error::new(
            ErrorCode::InvalidFrame,
            "the broker answered watch_snapshot without a snapshot object",
        )),
    }
}

/// `text` cut to [`MAX_TEXT_CHARS`] characters (the last one `…` when it was cut).
pub fn clip(text: &str) -> String {
    if text.chars().count() <= MAX_TEXT_CHARS {
        return text.to_string();
    }
    let mut out: String = text.chars().take(MAX_TEXT_CHARS - 1).collect();
    out.push('…');
    out
}

/// The short form of a session id: its first [`SHORT_ID_CHARS`] characters.
pub fn short_id(id: &str) -> String {
    id.chars().take(SHORT_ID_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_and_short_id_count_characters() {
        assert_eq!(clip("abc"), "abc");
        let long = "é".repeat(MAX_TEXT_CHARS + 5);
        let cut = clip(&long);
        assert_eq!(cut.chars().count(), MAX_TEXT_CHARS);
        assert!(cut.ends_with('…'));
        assert_eq!(
            clip(&"x".repeat(MAX_TEXT_CHARS)).chars().count(),
            MAX_TEXT_CHARS
        );
        assert_eq!(short_id("0123456789abcdef"), "01234567");
        assert_eq!(short_id("ab"), "ab");
        assert_eq!(scope_label(2), "scope 2");
    }
}

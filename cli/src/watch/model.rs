//! The broker's snapshot as the screen uses it: read from the JSON the broker sends
//! (`agent_intercom_broker::watch`), and the short forms of times and sizes.

use serde_json::Value;

/// One session row.
#[derive(Clone, Debug, Default)]
pub struct Session {
    pub id: String,
    pub short_id: String,
    pub name: Option<String>,
    pub group: String,
    pub model: String,
    pub cwd: String,
    pub status: Option<String>,
    pub idle_ms: u64,
    pub origin: String,
    pub remote_host: Option<String>,
    pub pid: String,
    pub queued: u64,
    pub asking: u64,
}

/// One end of an ask.
#[derive(Clone, Debug, Default)]
pub struct Party {
    pub id: String,
    pub short_id: String,
    pub name: Option<String>,
    pub connected: bool,
}

impl Party {
    /// Its name, else its short id; "(away)" when it is not connected.
    pub fn label(&self) -> String {
        let name = self.name.as_deref().unwrap_or(&self.short_id);
        if self.connected {
            name.to_string()
        } else {
            format!("{name} (away)")
        }
    }
}

/// An ask in flight.
#[derive(Clone, Debug, Default)]
pub struct Ask {
    pub from: Party,
    pub to: Party,
    pub age_ms: u64,
    pub expires_in_ms: u64,
    pub deferred: bool,
}

/// A session that is not connected and has queued messages.
#[derive(Clone, Debug, Default)]
pub struct Offline {
    pub id: String,
    pub short_id: String,
    pub queued: u64,
    pub queued_bytes: u64,
}

/// The whole snapshot.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub pid: u64,
    pub uptime_ms: u64,
    pub store_bytes: u64,
    pub sessions_total: u64,
    pub asks_total: u64,
    pub deferred_asks: u64,
    pub queued_messages: u64,
    pub groups: Vec<(String, u64)>,
    pub sessions: Vec<Session>,
    pub asks: Vec<Ask>,
    pub offline: Vec<Offline>,
    pub interval_ms: u64,
    pub messages: Vec<u64>,
    pub ask_rates: Vec<u64>,
    pub total_messages: u64,
    pub total_asks: u64,
}

/// `text` safe to put on a terminal: every control character (C0, DEL, C1: what could start an
/// escape sequence) becomes U+FFFD. Names, statuses and directories are whatever sessions sent,
/// remote principals' included, and the drawing library passes them through as they are.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}

fn text(v: &Value, key: &str) -> String {
    printable(v.get(key).and_then(Value::as_str).unwrap_or(""))
}

fn opt_text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(printable)
}

fn num(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn list<T>(v: &Value, key: &str, read: impl Fn(&Value) -> T) -> Vec<T> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().map(read).collect())
        .unwrap_or_default()
}

fn party(v: &Value) -> Party {
    Party {
        id: text(v, "id"),
        short_id: text(v, "shortId"),
        name: opt_text(v, "name"),
        connected: v.get("connected").and_then(Value::as_bool).unwrap_or(false),
    }
}

impl Snapshot {
    /// Reads the broker's snapshot; a member that is missing reads as empty.
    pub fn from_json(v: &Value) -> Snapshot {
        let broker = &v["broker"];
        let counts = &v["counts"];
        let traffic = &v["traffic"];
        Snapshot {
            pid: num(broker, "pid"),
            uptime_ms: num(broker, "uptimeMs"),
            store_bytes: num(broker, "storeBytes"),
            sessions_total: num(counts, "sessions"),
            asks_total: num(counts, "asks"),
            deferred_asks: num(counts, "deferredAsks"),
            queued_messages: num(counts, "queuedMessages"),
            groups: list(v, "groups", |g| (text(g, "label"), num(g, "sessions"))),
            sessions: list(v, "sessions", |s| Session {
                id: text(s, "id"),
                short_id: text(s, "shortId"),
                name: opt_text(s, "name"),
                group: text(s, "group"),
                model: text(s, "model"),
                cwd: text(s, "cwd"),
                status: opt_text(s, "status"),
                idle_ms: num(s, "idleMs"),
                origin: text(s, "origin"),
                remote_host: opt_text(s, "remoteHostId"),
                pid: s.get("pid").map(Value::to_string).unwrap_or_default(),
                queued: num(s, "queued"),
                asking: num(s, "asking"),
            }),
            asks: list(v, "asks", |a| Ask {
                from: party(&a["from"]),
                to: party(&a["to"]),
                age_ms: num(a, "ageMs"),
                expires_in_ms: num(a, "expiresInMs"),
                deferred: a.get("deferred").and_then(Value::as_bool).unwrap_or(false),
            }),
            offline: list(v, "offline", |o| Offline {
                id: text(o, "id"),
                short_id: text(o, "shortId"),
                queued: num(o, "queued"),
                queued_bytes: num(o, "queuedBytes"),
            }),
            interval_ms: num(traffic, "intervalMs"),
            messages: list(traffic, "messages", |n| n.as_u64().unwrap_or(0)),
            ask_rates: list(traffic, "asks", |n| n.as_u64().unwrap_or(0)),
            total_messages: num(traffic, "totalMessages"),
            total_asks: num(traffic, "totalAsks"),
        }
    }
}

/// A duration in its two largest units: `42s`, `3m05s`, `2h10m`, `4d03h`.
pub fn duration(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        3600..86400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{:02}h", s / 86400, s % 86400 / 3600),
    }
}

/// A size in bytes, KiB, MiB or GiB.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_forms() {
        assert_eq!(duration(999), "0s");
        assert_eq!(duration(59_000), "59s");
        assert_eq!(duration(185_000), "3m05s");
        assert_eq!(duration(7_800_000), "2h10m");
        assert_eq!(duration(356_400_000), "4d03h");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(49_152), "48.0 KiB");
        assert_eq!(bytes(3 * 1024 * 1024), "3.0 MiB");
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        let cleaned = printable("a\x1b]0;t\x07b\u{9b}2J\u{7f}é");
        assert_eq!(cleaned, "a\u{fffd}]0;t\u{fffd}b\u{fffd}2J\u{fffd}é");
        let s = Snapshot::from_json(&serde_json::json!({
            "sessions": [{ "id": "x\x1b", "name": "n\x1b[2J", "status": "\x07", "cwd": "\u{9b}" }],
            "asks": [{ "from": { "name": "\x1b" }, "to": { "shortId": "\x1b" } }],
        }));
        let row = &s.sessions[0];
        let texts = [
            &row.id,
            row.name.as_ref().unwrap(),
            row.status.as_ref().unwrap(),
            &row.cwd,
        ];
        assert!(texts.iter().all(|t| !t.chars().any(char::is_control)));
        assert_eq!(s.asks[0].from.label(), "\u{fffd} (away)");
    }

    #[test]
    fn a_partial_snapshot_reads_as_empty() {
        let s = Snapshot::from_json(&serde_json::json!({ "sessions": [{ "id": "x" }] }));
        assert_eq!(s.sessions.len(), 1);
        assert_eq!(s.sessions[0].id, "x");
        assert!(s.asks.is_empty() && s.messages.is_empty());
    }
}

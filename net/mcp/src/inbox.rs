//! The durable inbox of one MCP session: every message the broker delivers is committed here
//! before the broker is told it arrived (`message_received`), so "delivered" means "on disk";
//! the outbox of sends not yet settled, replayed after a reconnect; and the asks this session
//! made. One SQLite file per session id, with the scratchpad's file hygiene (0600, no planted
//! link, WAL, `synchronous=NORMAL`: a commit survives the process being killed).

use std::path::Path;

use agent_intercom_core::{Error, ErrorCode};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

/// What errors call the file.
const WHAT: &str = "the MCP inbox";

/// The schema, applied when `user_version` is 0.
const SCHEMA: &str = "
    CREATE TABLE inbox (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        sender_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        sender TEXT NOT NULL,
        message TEXT NOT NULL,
        received_at INTEGER NOT NULL,
        read_at INTEGER,
        ask TEXT,
        ask_reason TEXT,
        UNIQUE (sender_id, message_id)
    );
    CREATE INDEX inbox_unread ON inbox (read_at, seq);
    CREATE TABLE outbox (
        message_id TEXT PRIMARY KEY,
        frame TEXT NOT NULL,
        queued_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
";
/// Revision 2: the delivery id of each message, for its read receipt.
const ADD_DELIVERY_ID: &str = "ALTER TABLE inbox ADD COLUMN delivery_id TEXT;";
const SCHEMA_VERSION: i64 = 2;

/// The state of an inbound ask: open until this session replies or the asker gives it up.
pub const ASK_OPEN: &str = "open";
/// Replied to (the reply was delivered).
pub const ASK_ANSWERED: &str = "answered";
/// Given up by the asker (cancelled, expired, ...); `ask_reason` says why.
pub const ASK_CANCELLED: &str = "cancelled";

/// One stored message.
#[derive(Clone, Debug, PartialEq)]
pub struct Stored {
    /// Arrival order (1, 2, ...).
    pub seq: i64,
    /// The sender's session record as the broker sent it.
    pub from: Value,
    /// The message as the sender wrote it (`id`, `timestamp`, `content`, `replyTo`?,
    /// `expectsReply`?).
    pub message: Value,
    /// When it was committed here, ms since the epoch.
    pub received_at: i64,
    /// When `intercom_pending` showed it with `mark_read`, if it did.
    pub read_at: Option<i64>,
    /// For an ask: `open`, `answered` or `cancelled`.
    pub ask: Option<String>,
    /// Why an ask was cancelled (the broker's reason).
    pub ask_reason: Option<String>,
    /// The broker's delivery id of its latest delivery (what a read receipt names).
    pub delivery_id: Option<String>,
}

impl Stored {
    /// The message's id.
    pub fn message_id(&self) -> &str {
        self.message["id"].as_str().unwrap_or_default()
    }

    /// The sender's session id.
    pub fn sender_id(&self) -> &str {
        self.from["id"].as_str().unwrap_or_default()
    }
}

/// What committing a delivery did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Receipt {
    /// A new message, stored as `seq`.
    Stored(i64),
    /// The same message (sender and id) was stored before: nothing new.
    Duplicate,
}

/// The inbox, the outbox and the counters of one session.
pub struct Inbox {
    conn: Connection,
    max_messages: u64,
}

fn io(e: rusqlite::Error) -> Error {
    agent_intercom_scratchpad::file::sqlite_error(WHAT, e)
}

fn bad_row(what: &str) -> Error {
    Error::new(
        ErrorCode::StoreCorrupt,
        format!("{WHAT} holds a row whose {what} is not JSON; it was left untouched"),
    )
}

impl Inbox {
    /// Opens (or creates) the inbox at `path`, keeping at most `max_messages` messages: past it
    /// the oldest read ones go first, then the oldest unread ones, each counted and reported
    /// ([`Inbox::take_evicted`]), never dropped silently. A file of a newer schema is refused
    /// (`STORE_NEWER_SCHEMA`).
    pub fn open(path: &Path, max_messages: u64) -> Result<Inbox, Error> {
        let conn = agent_intercom_scratchpad::file::open_private(path, WHAT)?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(io)?;
        if version > SCHEMA_VERSION {
            return Err(Error::new(
                ErrorCode::StoreNewerSchema,
                format!("{WHAT} has schema version {version}, newer than {SCHEMA_VERSION}"),
            ));
        }
        if version < SCHEMA_VERSION {
            let create = if version == 0 { SCHEMA } else { "" };
            conn.execute_batch(&format!(
                "BEGIN IMMEDIATE; {create} {ADD_DELIVERY_ID} \
                 PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
            ))
            .map_err(io)?;
        }
        Ok(Inbox {
            conn,
            max_messages: max_messages.max(1),
        })
    }

    /// Commits a delivered message (`from` the broker's session record, `message` as sent,
    /// `delivery_id` the broker's). The same sender and message id again is
    /// [`Receipt::Duplicate`]: the broker delivered it again because its acknowledgement was
    /// lost, and it is acknowledged again (its newest delivery id kept).
    pub fn receive(
        &mut self,
        from: &Value,
        message: &Value,
        delivery_id: &str,
        now: i64,
    ) -> Result<Receipt, Error> {
        let sender_id = from["id"].as_str().unwrap_or_default();
        let message_id = message["id"].as_str().unwrap_or_default();
        let ask = (message["expectsReply"] == Value::Bool(true)).then_some(ASK_OPEN);
        let tx = self.conn.transaction().map_err(io)?;
        // Already here: only its newest delivery id is kept.
        let seen = tx
            .execute(
                "UPDATE inbox SET delivery_id = ?3 WHERE sender_id = ?1 AND message_id = ?2",
                params![sender_id, message_id, delivery_id],
            )
            .map_err(io)?;
        if seen > 0 {
            tx.commit().map_err(io)?;
            return Ok(Receipt::Duplicate);
        }
        tx.execute(
            "INSERT INTO inbox
             (sender_id, message_id, sender, message, received_at, ask, delivery_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                sender_id,
                message_id,
                from.to_string(),
                message.to_string(),
                now,
                ask,
                delivery_id
            ],
        )
        .map_err(io)?;
        let seq = tx.last_insert_rowid();
        evict(&tx, self.max_messages)?;
        tx.commit().map_err(io)?;
        Ok(Receipt::Stored(seq))
    }

    /// Messages not yet marked read, oldest first.
    pub fn unread(&self) -> Result<Vec<Stored>, Error> {
        self.select("WHERE read_at IS NULL ORDER BY seq", [])
    }

    /// The oldest `limit` unread messages (a page: the count is [`Inbox::counts`]).
    pub fn unread_page(&self, limit: usize) -> Result<Vec<Stored>, Error> {
        self.select(
            "WHERE read_at IS NULL ORDER BY seq LIMIT ?1",
            [limit as i64],
        )
    }

    /// The oldest `limit` open asks.
    pub fn open_asks_page(&self, limit: usize) -> Result<Vec<Stored>, Error> {
        self.select("WHERE ask = 'open' ORDER BY seq LIMIT ?1", [limit as i64])
    }

    /// Asks to this session still open, oldest first (read or not).
    pub fn open_asks(&self) -> Result<Vec<Stored>, Error> {
        self.select("WHERE ask = 'open' ORDER BY seq", [])
    }

    /// The message `seq`, if it is still here.
    pub fn get(&self, seq: i64) -> Result<Option<Stored>, Error> {
        Ok(self.select("WHERE seq = ?1", [seq])?.pop())
    }

    /// Unread messages after `after` (a seq), oldest first: what arrived since.
    pub fn unread_after(&self, after: i64) -> Result<Vec<Stored>, Error> {
        self.select("WHERE read_at IS NULL AND seq > ?1 ORDER BY seq", [after])
    }

    /// The newest seq (0 when empty).
    pub fn last_seq(&self) -> Result<i64, Error> {
        self.conn
            .query_row("SELECT COALESCE(MAX(seq), 0) FROM inbox", [], |r| r.get(0))
            .map_err(io)
    }

    fn select<P: rusqlite::Params>(&self, filter: &str, params: P) -> Result<Vec<Stored>, Error> {
        let sql = format!(
            "SELECT seq, sender, message, received_at, read_at, ask, ask_reason, delivery_id \
             FROM inbox {filter}"
        );
        let mut statement = self.conn.prepare_cached(&sql).map_err(io)?;
        let rows = statement
            .query_map(params, |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, Option<i64>>(4)?,
                    r.get::<_, Option<String>>(5)?,
                    r.get::<_, Option<String>>(6)?,
                    r.get::<_, Option<String>>(7)?,
                ))
            })
            .map_err(io)?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, sender, message, received_at, read_at, ask, ask_reason, delivery_id) =
                row.map_err(io)?;
            out.push(Stored {
                seq,
                from: serde_json::from_str(&sender).map_err(|_| bad_row("sender"))?,
                message: serde_json::from_str(&message).map_err(|_| bad_row("message"))?,
                received_at,
                read_at,
                ask,
                ask_reason,
                delivery_id,
            });
        }
        Ok(out)
    }

    /// Marks `seqs` read at `now` (those already read keep their time).
    pub fn mark_read(&mut self, seqs: &[i64], now: i64) -> Result<(), Error> {
        let tx = self.conn.transaction().map_err(io)?;
        for seq in seqs {
            tx.execute(
                "UPDATE inbox SET read_at = ?2 WHERE seq = ?1 AND read_at IS NULL",
                params![seq, now],
            )
            .map_err(io)?;
        }
        tx.commit().map_err(io)
    }

    /// Sets the state of the ask `message_id` from `sender_id` (when it is still open);
    /// true when it changed.
    pub fn settle_ask(
        &mut self,
        sender_id: &str,
        message_id: &str,
        state: &str,
        reason: Option<&str>,
    ) -> Result<bool, Error> {
        let changed = self
            .conn
            .execute(
                "UPDATE inbox SET ask = ?3, ask_reason = ?4
                 WHERE sender_id = ?1 AND message_id = ?2 AND ask = 'open'",
                params![sender_id, message_id, state, reason],
            )
            .map_err(io)?;
        Ok(changed > 0)
    }

    /// The messages evicted unread since the last call, and resets the count: the caller
    /// reports them.
    pub fn take_evicted(&mut self) -> Result<u64, Error> {
        let tx = self.conn.transaction().map_err(io)?;
        let n: Option<i64> = tx
            .query_row(
                "SELECT value FROM meta WHERE key = 'evicted_unread'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(io)?;
        tx.execute("DELETE FROM meta WHERE key = 'evicted_unread'", [])
            .map_err(io)?;
        tx.commit().map_err(io)?;
        Ok(n.unwrap_or(0).max(0) as u64)
    }

    /// The number of evicted unread messages not yet reported.
    pub fn evicted(&self) -> Result<u64, Error> {
        let n: Option<i64> = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'evicted_unread'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(io)?;
        Ok(n.unwrap_or(0).max(0) as u64)
    }

    /// Counts: unread messages and open asks.
    pub fn counts(&self) -> Result<(u64, u64), Error> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FILTER (WHERE read_at IS NULL),
                        COUNT(*) FILTER (WHERE ask = 'open') FROM inbox",
                [],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
            )
            .map_err(io)
    }

    /// Keeps a `send` frame until it is settled (delivered or refused), so a reconnect can send
    /// it again; the broker's duplicate suppression makes a second send of the same message id
    /// harmless.
    pub fn queue(&mut self, message_id: &str, frame: &Value, now: i64) -> Result<(), Error> {
        self.conn
            .execute(
                "INSERT INTO outbox (message_id, frame, queued_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (message_id) DO NOTHING",
                params![message_id, frame.to_string(), now],
            )
            .map_err(io)?;
        Ok(())
    }

    /// Forgets a settled send.
    pub fn settle(&mut self, message_id: &str) -> Result<(), Error> {
        self.conn
            .execute("DELETE FROM outbox WHERE message_id = ?1", [message_id])
            .map_err(io)?;
        Ok(())
    }

    /// When the unsettled send `message_id` was queued, if it is still in the outbox.
    pub fn queued_at(&self, message_id: &str) -> Result<Option<i64>, Error> {
        self.conn
            .query_row(
                "SELECT queued_at FROM outbox WHERE message_id = ?1",
                [message_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(io)
    }

    /// The sends not yet settled, oldest first.
    pub fn unsettled(&self) -> Result<Vec<Value>, Error> {
        let mut statement = self
            .conn
            .prepare_cached("SELECT frame FROM outbox ORDER BY queued_at, message_id")
            .map_err(io)?;
        let rows = statement
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(io)?;
        let mut out = Vec::new();
        for row in rows {
            out.push(serde_json::from_str(&row.map_err(io)?).map_err(|_| bad_row("frame"))?);
        }
        Ok(out)
    }
}

/// Past the bound: the oldest read messages that are not open asks go first, then the oldest
/// others, which are counted as evicted unread.
fn evict(tx: &rusqlite::Transaction<'_>, max: u64) -> Result<(), Error> {
    let count: i64 = tx
        .query_row("SELECT COUNT(*) FROM inbox", [], |r| r.get(0))
        .map_err(io)?;
    let over = count - max as i64;
    if over <= 0 {
        return Ok(());
    }
    let read = tx
        .execute(
            "DELETE FROM inbox WHERE seq IN (SELECT seq FROM inbox
             WHERE read_at IS NOT NULL AND (ask IS NULL OR ask != 'open') ORDER BY seq LIMIT ?1)",
            [over],
        )
        .map_err(io)? as i64;
    let rest = over - read;
    if rest > 0 {
        let unread = tx
            .execute(
                "DELETE FROM inbox WHERE seq IN (SELECT seq FROM inbox ORDER BY seq LIMIT ?1)",
                [rest],
            )
            .map_err(io)?;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('evicted_unread', ?1)
             ON CONFLICT (key) DO UPDATE SET value = value + ?1",
            [unread as i64],
        )
        .map_err(io)?;
    }
    Ok(())
}

/// The view of a stored message a tool shows: protocol ids kept where a model needs them to
/// act (`ask` to reply to an explicit ask).
pub fn view(stored: &Stored) -> Value {
    let mut out = json!({
        "seq": stored.seq,
        "from": {
            "id": stored.from["id"],
            "name": stored.from["name"],
        },
        "text": stored.message["content"]["text"],
        "sent_at": stored.message["timestamp"],
    });
    if let Some(attachments) = stored.message["content"].get("attachments") {
        out["attachments"] = attachments.clone();
    }
    if let Some(reply_to) = stored.message.get("replyTo") {
        out["reply_to"] = reply_to.clone();
    }
    if let Some(state) = &stored.ask {
        out["ask"] = json!({"id": stored.message_id(), "state": state});
        if let Some(reason) = &stored.ask_reason {
            out["ask"]["reason"] = reason.clone().into();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("aic-inbox-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("inbox.sqlite")
    }

    fn from(id: &str) -> Value {
        json!({"id": id, "name": id, "cwd": "/", "model": "m", "pid": 1, "startedAt": 1,
               "lastActivity": 1})
    }

    fn message(id: &str, ask: bool) -> Value {
        json!({"id": id, "timestamp": 5, "expectsReply": ask, "content": {"text": id}})
    }

    #[test]
    fn a_delivery_is_kept_once_and_survives_a_reopen() {
        let path = temp("once");
        let mut inbox = Inbox::open(&path, 10).unwrap();
        assert_eq!(
            inbox
                .receive(&from("a"), &message("m1", false), "d", 1)
                .unwrap(),
            Receipt::Stored(1)
        );
        assert_eq!(
            inbox
                .receive(&from("a"), &message("m1", false), "d", 2)
                .unwrap(),
            Receipt::Duplicate
        );
        // Another sender may use the same message id.
        assert_eq!(
            inbox
                .receive(&from("b"), &message("m1", true), "d", 3)
                .unwrap(),
            Receipt::Stored(2)
        );
        drop(inbox);
        let mut inbox = Inbox::open(&path, 10).unwrap();
        let unread = inbox.unread().unwrap();
        assert_eq!(unread.len(), 2);
        assert_eq!((unread[0].sender_id(), unread[0].message_id()), ("a", "m1"));
        assert_eq!(inbox.open_asks().unwrap().len(), 1);
        inbox.mark_read(&[1], 9).unwrap();
        assert_eq!(inbox.unread().unwrap().len(), 1);
        assert_eq!(inbox.get(1).unwrap().unwrap().read_at, Some(9));
        assert!(inbox.settle_ask("b", "m1", ASK_ANSWERED, None).unwrap());
        assert!(
            !inbox
                .settle_ask("b", "m1", ASK_CANCELLED, Some("x"))
                .unwrap()
        );
        assert_eq!(inbox.counts().unwrap(), (1, 0));
    }

    #[test]
    fn past_the_bound_read_messages_go_first_and_unread_ones_are_counted() {
        let path = temp("bound");
        let mut inbox = Inbox::open(&path, 3).unwrap();
        for i in 1..=3 {
            inbox
                .receive(&from("a"), &message(&format!("m{i}"), false), "d", i)
                .unwrap();
        }
        inbox.mark_read(&[2], 10).unwrap();
        inbox
            .receive(&from("a"), &message("m4", false), "d", 4)
            .unwrap();
        let left: Vec<i64> = inbox.unread().unwrap().iter().map(|s| s.seq).collect();
        assert_eq!(left, [1, 3, 4], "the read one went");
        assert_eq!(inbox.evicted().unwrap(), 0);
        inbox
            .receive(&from("a"), &message("m5", false), "d", 5)
            .unwrap();
        let left: Vec<i64> = inbox.unread().unwrap().iter().map(|s| s.seq).collect();
        assert_eq!(left, [3, 4, 5]);
        assert_eq!(inbox.take_evicted().unwrap(), 1);
        assert_eq!(inbox.take_evicted().unwrap(), 0, "reported once");
    }

    #[test]
    fn the_outbox_keeps_what_is_not_settled() {
        let path = temp("outbox");
        let mut inbox = Inbox::open(&path, 3).unwrap();
        inbox
            .queue("x", &json!({"type": "send", "n": 1}), 1)
            .unwrap();
        inbox
            .queue("y", &json!({"type": "send", "n": 2}), 2)
            .unwrap();
        inbox
            .queue("x", &json!({"type": "send", "n": 3}), 3)
            .unwrap();
        inbox.settle("y").unwrap();
        assert_eq!(inbox.queued_at("x").unwrap(), Some(1));
        assert_eq!(inbox.queued_at("y").unwrap(), None);
        drop(inbox);
        let inbox = Inbox::open(&path, 3).unwrap();
        assert_eq!(
            inbox.unsettled().unwrap(),
            [json!({"type": "send", "n": 1})]
        );
    }

    #[test]
    fn a_newer_schema_or_a_non_database_is_refused_and_left_alone() {
        let path = temp("newer");
        drop(Inbox::open(&path, 3).unwrap());
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", 7).unwrap();
        drop(conn);
        let refused = Inbox::open(&path, 3).err().unwrap();
        assert_eq!(refused.code(), ErrorCode::StoreNewerSchema);
        let garbage = temp("garbage");
        std::fs::write(&garbage, vec![b'x'; 4096]).unwrap();
        let refused = Inbox::open(&garbage, 3).err().unwrap();
        assert_eq!(refused.code(), ErrorCode::StoreCorrupt, "{refused}");
        assert_eq!(std::fs::read(&garbage).unwrap(), vec![b'x'; 4096]);
    }
}

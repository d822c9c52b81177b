//! Durable broker state in SQLite (WAL): ask edges and duplicate-suppression results, so both
//! survive a crash (kill -9) and a restart; and, for the opt-in extensions, the sessions known
//! by id, the offline queue and the states of tracked messages. Scopes are never stored.

use std::fs::OpenOptions;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_intercom_scratchpad::checkpoint::{Checkpointer, Policy, busy_wait};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

/// The store's schema version. A store with a newer version is refused, never rewritten.
///
/// The offline queue added tables (`known_sessions`, `offline_queue`, `message_status`) and a
/// column (`deliveries.kept`, default 0) without changing what was there: a broker of before
/// reads and writes such a store as it always did (it ignores the additions), so the version
/// stays 1 and brokers of either kind can own the same directory in turn. The same holds for
/// the keyed tables becoming `WITHOUT ROWID` (see [`KEYED`]): same columns, same keys, same SQL.
pub const SCHEMA_VERSION: i64 = 1;

/// The tables keyed by text (a session id and a message id), whose rows each message writes:
/// name, columns, key. They are `WITHOUT ROWID`: a row lives once, in its key's b-tree, where a
/// rowid table writes it twice (the table, and the index its text key needs), so a commit
/// writes about half the pages to the log. A store made before is rebuilt into this form when
/// it opens (see [`Store::open`]), keeping every row.
const KEYED: [(&str, &str, &str); 4] = [
    (
        "ask_edges",
        "from_id TEXT NOT NULL, message_id TEXT NOT NULL, to_id TEXT NOT NULL, \
         created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, state TEXT NOT NULL",
        "from_id, message_id",
    ),
    (
        "deliveries",
        "from_id TEXT NOT NULL, message_id TEXT NOT NULL, fingerprint TEXT NOT NULL, \
         to_id TEXT NOT NULL, response TEXT NOT NULL, retryable INTEGER NOT NULL, \
         expires_at INTEGER NOT NULL, kept INTEGER NOT NULL DEFAULT 0",
        "from_id, message_id",
    ),
    (
        "message_status",
        "from_id TEXT NOT NULL, message_id TEXT NOT NULL, delivery_id TEXT NOT NULL, \
         to_id TEXT NOT NULL, state TEXT NOT NULL, receipts INTEGER NOT NULL, \
         expires_at INTEGER NOT NULL",
        "from_id, message_id",
    ),
    (
        "known_sessions",
        "id TEXT NOT NULL, last_seen INTEGER NOT NULL, remote INTEGER NOT NULL",
        "id",
    ),
];

/// The columns of a [`KEYED`] table's definition, by name.
fn column_names(columns: &str) -> String {
    columns
        .split(',')
        .filter_map(|c| c.split_whitespace().next())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why the store could not be used.
#[derive(Debug)]
pub enum StoreError {
    /// The store was written by a newer broker.
    NewerSchema(i64),
    /// SQLite says the file is not a database, or is damaged.
    Corrupt(String),
    /// SQLite or the file system failed.
    Io(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::NewerSchema(v) => write!(
                f,
                "the broker store has schema version {v}, newer than {SCHEMA_VERSION}; \
                 refusing to touch it"
            ),
            StoreError::Corrupt(e) => write!(f, "broker store is damaged: {e}"),
            StoreError::Io(e) => write!(f, "broker store: {e}"),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
        match e.sqlite_error_code() {
            Some(NotADatabase | DatabaseCorrupt) => StoreError::Corrupt(e.to_string()),
            _ => StoreError::Io(e.to_string()),
        }
    }
}

/// A persisted ask edge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeRow {
    /// Asking session.
    pub from: String,
    /// The ask's message id.
    pub message_id: String,
    /// Asked session.
    pub to: String,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// Milliseconds since the epoch.
    pub expires_at: i64,
    /// "blocking" or "deferred".
    pub state: String,
}

/// A persisted delivery result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryRow {
    /// Sender.
    pub from: String,
    /// Message id.
    pub message_id: String,
    /// Digest of {to, replyTo, expectsReply, content}.
    pub fingerprint: String,
    /// Recipient.
    pub to: String,
    /// The `delivered` or `delivery_failed` frame, as JSON.
    pub response: String,
    /// A failure the sender may retry with the same id.
    pub retryable: bool,
    /// Milliseconds since the epoch.
    pub expires_at: i64,
    /// The result of a send with `queue`: it answers a repeat of the send whether or not the
    /// recipient is connected (kept for the retention window).
    pub kept: bool,
}

/// A message waiting in the offline queue for its recipient.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueuedRow {
    /// Its place in the queue (the queue's order, over all recipients).
    pub seq: i64,
    /// The delivery id its sender was told (`delivery_queued`) and its recipient will see.
    pub delivery_id: String,
    /// Recipient (a full session id).
    pub to: String,
    /// Sender.
    pub from: String,
    /// Message id.
    pub message_id: String,
    /// Digest of {to, replyTo, expectsReply, content}.
    pub fingerprint: String,
    /// The sender's SessionInfo when it sent the message, as JSON (never a scope).
    pub from_info: String,
    /// The message object as its sender wrote it, as JSON.
    pub message: String,
    /// An ask: its edge is open while the message waits.
    pub expects_reply: bool,
    /// The ask it answers, if a reply.
    pub reply_to: Option<String>,
    /// The sender asked for a read receipt.
    pub receipts: bool,
    /// Milliseconds since the epoch.
    pub queued_at: i64,
    /// Milliseconds since the epoch: then the sender is told `QUEUE_EXPIRED`.
    pub expires_at: i64,
}

/// The state of a tracked message (a send with `queue` or `receipts`), for `delivery_status`
/// and read receipts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusRow {
    /// Sender.
    pub from: String,
    /// Message id.
    pub message_id: String,
    /// Its delivery id.
    pub delivery_id: String,
    /// Recipient.
    pub to: String,
    /// `accepted`, `queued`, `delivered`, `read`, `failed` or `expired`.
    pub state: String,
    /// The sender asked for a read receipt.
    pub receipts: bool,
    /// Milliseconds since the epoch: the row is forgotten then.
    pub expires_at: i64,
}

/// The open store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// Copies the write-ahead log back on a thread of its own (dropped after `conn`).
    checkpoints: Checkpointer,
}

/// The files SQLite keeps beside the database (its write-ahead log and shared memory), by the
/// suffix of the database's path.
const SIDE_FILES: [&str; 2] = ["-wal", "-shm"];

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    PathBuf::from(format!("{}{suffix}", path.display()))
}

/// Every file of the store at `path`: the database, its side files and the rollback journal
/// SQLite would make outside WAL mode. Each must be a regular file where it exists.
pub(crate) fn store_files(path: &Path) -> impl Iterator<Item = PathBuf> + '_ {
    std::iter::once("")
        .chain(SIDE_FILES)
        .chain(["-journal"])
        .map(move |suffix| with_suffix(path, suffix))
}

fn restrict(path: &Path) {
    if path.exists() {
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
}

impl Store {
    /// Opens (or creates, mode 0600) the store, on a plain path (never as an SQLite URI) and
    /// never through a symbolic link. A file SQLite reports as not a database, or as corrupt, is
    /// moved aside to `<name>.corrupt-<millis>` (never deleted) and a fresh store is created; any
    /// other failure (the file is locked or busy, unreadable, on a full disk) is returned and the
    /// file is left exactly as it is.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        match Store::open_inner(path) {
            Ok(store) => Ok(store),
            Err(StoreError::Corrupt(first)) => {
                let stamp = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis())
                    .unwrap_or(0);
                let aside = path.with_extension(format!("sqlite.corrupt-{stamp}"));
                std::fs::rename(path, &aside)
                    .map_err(|e| StoreError::Io(format!("{first}; moving it aside failed: {e}")))?;
                for suffix in SIDE_FILES {
                    let _ = std::fs::rename(with_suffix(path, suffix), with_suffix(&aside, suffix));
                }
                crate::log::line(format_args!(
                    "agent-intercom broker: store unreadable ({first}); moved aside to {}",
                    aside.display()
                ));
                Store::open_inner(path)
            }
            Err(other) => Err(other),
        }
    }

    fn open_inner(path: &Path) -> Result<Store, StoreError> {
        for file in store_files(path) {
            if std::fs::symlink_metadata(&file).is_ok_and(|m| !m.file_type().is_file()) {
                return Err(StoreError::Io(format!(
                    "refusing {}: it is a symbolic link or not a regular file",
                    file.display()
                )));
            }
        }
        // Create the file ourselves so it (and SQLite's -wal/-shm, which copy its mode) is 0600.
        OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .map_err(|e| StoreError::Io(format!("{}: {e}", path.display())))?;
        restrict(path);
        let mut conn = connect(path)?;
        // The broker owns the directory (broker.owner), so no other broker writes the store
        // while it runs; the locking is SQLite's normal one all the same, because the
        // checkpoints run on a second connection (an exclusive lock would shut it out).
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        let mut tables = String::from(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);",
        );
        for (name, columns, key) in &KEYED[..2] {
            tables.push_str(&keyed_table(name, columns, key));
        }
        conn.execute_batch(&tables)?;
        let version: Option<i64> = conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        match version {
            None => {
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)",
                    [SCHEMA_VERSION],
                )?;
            }
            Some(v) if v > SCHEMA_VERSION => return Err(StoreError::NewerSchema(v)),
            Some(_) => {}
        }
        // The additions of the offline queue (see SCHEMA_VERSION), made only once the version
        // was found to be ours.
        let mut tables = String::new();
        for (name, columns, key) in &KEYED[2..] {
            tables.push_str(&keyed_table(name, columns, key));
        }
        conn.execute_batch(&tables)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS offline_queue (
               seq INTEGER PRIMARY KEY, delivery_id TEXT NOT NULL UNIQUE, to_id TEXT NOT NULL,
               from_id TEXT NOT NULL, message_id TEXT NOT NULL, fingerprint TEXT NOT NULL,
               from_info TEXT NOT NULL, message TEXT NOT NULL, expects_reply INTEGER NOT NULL,
               reply_to TEXT, receipts INTEGER NOT NULL, queued_at INTEGER NOT NULL,
               expires_at INTEGER NOT NULL, UNIQUE (from_id, message_id));",
        )?;
        let kept: bool = conn
            .prepare("SELECT 1 FROM pragma_table_info('deliveries') WHERE name = 'kept'")?
            .exists([])?;
        if !kept {
            conn.execute_batch(
                "ALTER TABLE deliveries ADD COLUMN kept INTEGER NOT NULL DEFAULT 0",
            )?;
        }
        without_rowid(&conn)?;
        conn.execute_batch(
            "CREATE INDEX IF NOT EXISTS message_status_delivery ON message_status (delivery_id);",
        )?;
        let own = path.to_path_buf();
        let checkpoints = Checkpointer::install(
            &mut conn,
            Policy::default(),
            Arc::new(move || connect(&own)),
        )?;
        // Make sure every byte of the file is readable: a damaged page fails here, not later.
        let check: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
        if check != "ok" {
            return Err(StoreError::Corrupt(format!(
                "integrity check failed: {check}"
            )));
        }
        for suffix in SIDE_FILES {
            restrict(&with_suffix(path, suffix));
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            checkpoints,
        })
    }

    /// How many PASSIVE, RESTART and TRUNCATE checkpoints the store's thread ran.
    pub fn checkpoints(&self) -> [u64; 3] {
        self.checkpoints.counts()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes of the store's files: the database and its side files (what `watch` shows).
    pub fn bytes(&self) -> u64 {
        ["", SIDE_FILES[0], SIDE_FILES[1]]
            .into_iter()
            .filter_map(|suffix| std::fs::symlink_metadata(with_suffix(&self.path, suffix)).ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum()
    }

    /// Opens a transaction unless one is open: writes until [`Store::commit`] are one commit.
    pub fn begin(&self) -> Result<(), StoreError> {
        if self.conn.is_autocommit() {
            self.conn.execute_batch("BEGIN")?;
        }
        Ok(())
    }

    /// Commits the open transaction, if any.
    pub fn commit(&self) -> Result<(), StoreError> {
        if !self.conn.is_autocommit() {
            self.conn.execute_batch("COMMIT")?;
        }
        Ok(())
    }

    /// Live edges (expired ones are deleted).
    pub fn load_edges(&self, now_ms: i64) -> Result<Vec<EdgeRow>, StoreError> {
        self.conn
            .execute("DELETE FROM ask_edges WHERE expires_at <= ?1", [now_ms])?;
        let mut stmt = self.conn.prepare(
            "SELECT from_id, message_id, to_id, created_at, expires_at, state FROM ask_edges \
             ORDER BY created_at, from_id, message_id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(EdgeRow {
                from: r.get(0)?,
                message_id: r.get(1)?,
                to: r.get(2)?,
                created_at: r.get(3)?,
                expires_at: r.get(4)?,
                state: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Live delivery results but the kept ones, which are looked up when needed (expired ones
    /// are deleted).
    pub fn load_deliveries(&self, now_ms: i64) -> Result<Vec<DeliveryRow>, StoreError> {
        self.conn
            .execute("DELETE FROM deliveries WHERE expires_at <= ?1", [now_ms])?;
        let mut stmt = self.conn.prepare(
            "SELECT from_id, message_id, fingerprint, to_id, response, retryable, expires_at, \
             kept FROM deliveries WHERE kept = 0",
        )?;
        let rows = stmt.query_map([], delivery_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Inserts or replaces an edge.
    pub fn put_edge(&self, e: &EdgeRow) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO ask_edges \
                 (from_id, message_id, to_id, created_at, expires_at, state) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                e.from,
                e.message_id,
                e.to,
                e.created_at,
                e.expires_at,
                e.state
            ])?;
        Ok(())
    }

    /// Sets an edge's state.
    pub fn set_edge_state(
        &self,
        from: &str,
        message_id: &str,
        state: &str,
    ) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "UPDATE ask_edges SET state = ?3 WHERE from_id = ?1 AND message_id = ?2",
            )?
            .execute(params![from, message_id, state])?;
        Ok(())
    }

    /// Deletes an edge.
    pub fn delete_edge(&self, from: &str, message_id: &str) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM ask_edges WHERE from_id = ?1 AND message_id = ?2")?
            .execute(params![from, message_id])?;
        Ok(())
    }

    /// Inserts or replaces a delivery result.
    pub fn put_delivery(&self, d: &DeliveryRow) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO deliveries \
                 (from_id, message_id, fingerprint, to_id, response, retryable, expires_at, kept) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                d.from,
                d.message_id,
                d.fingerprint,
                d.to,
                d.response,
                d.retryable as i64,
                d.expires_at,
                d.kept as i64
            ])?;
        Ok(())
    }

    /// One delivery result, if stored.
    pub fn get_delivery(
        &self,
        from: &str,
        message_id: &str,
    ) -> Result<Option<DeliveryRow>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT from_id, message_id, fingerprint, to_id, response, retryable, expires_at, \
                 kept FROM deliveries WHERE from_id = ?1 AND message_id = ?2",
            )?
            .query_row(params![from, message_id], delivery_row)
            .optional()?)
    }

    /// Deletes a delivery result.
    pub fn delete_delivery(&self, from: &str, message_id: &str) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM deliveries WHERE from_id = ?1 AND message_id = ?2")?
            .execute(params![from, message_id])?;
        Ok(())
    }

    /// Deletes every delivery result a session sent or received (its remote access ended: a
    /// replay must be decided anew, not answered from before).
    pub fn delete_deliveries_of(&self, session: &str) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM deliveries WHERE from_id = ?1 OR to_id = ?1")?
            .execute(params![session])?;
        Ok(())
    }

    /// Overwrites the recorded schema version (for tests of the newer-schema refusal).
    #[doc(hidden)]
    pub fn debug_set_schema_version(&self, version: i64) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
            [version],
        )?;
        Ok(())
    }

    /// Deletes expired delivery results.
    pub fn prune_deliveries(&self, now_ms: i64) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM deliveries WHERE expires_at <= ?1")?
            .execute([now_ms])?;
        Ok(())
    }

    /// Records that session `id` was connected at `now_ms` (registered, or just left).
    pub fn touch_session(&self, id: &str, now_ms: i64, remote: bool) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO known_sessions (id, last_seen, remote) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![id, now_ms, remote as i64])?;
        Ok(())
    }

    /// When session `id` was last connected, and whether it was a remote principal.
    pub fn known_session(&self, id: &str) -> Result<Option<(i64, bool)>, StoreError> {
        Ok(self
            .conn
            .prepare_cached("SELECT last_seen, remote FROM known_sessions WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? != 0)))
            .optional()?)
    }

    /// Every queued message, in queue order.
    pub fn load_queued(&self) -> Result<Vec<QueuedRow>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT seq, delivery_id, to_id, from_id, message_id, fingerprint, from_info, \
             message, expects_reply, reply_to, receipts, queued_at, expires_at \
             FROM offline_queue ORDER BY seq",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(QueuedRow {
                seq: r.get(0)?,
                delivery_id: r.get(1)?,
                to: r.get(2)?,
                from: r.get(3)?,
                message_id: r.get(4)?,
                fingerprint: r.get(5)?,
                from_info: r.get(6)?,
                message: r.get(7)?,
                expects_reply: r.get::<_, i64>(8)? != 0,
                reply_to: r.get(9)?,
                receipts: r.get::<_, i64>(10)? != 0,
                queued_at: r.get(11)?,
                expires_at: r.get(12)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Queues a message.
    pub fn put_queued(&self, q: &QueuedRow) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT INTO offline_queue (seq, delivery_id, to_id, from_id, message_id, \
                 fingerprint, from_info, message, expects_reply, reply_to, receipts, queued_at, \
                 expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )?
            .execute(params![
                q.seq,
                q.delivery_id,
                q.to,
                q.from,
                q.message_id,
                q.fingerprint,
                q.from_info,
                q.message,
                q.expects_reply as i64,
                q.reply_to,
                q.receipts as i64,
                q.queued_at,
                q.expires_at
            ])?;
        Ok(())
    }

    /// Takes a message out of the queue (delivered, failed or expired).
    pub fn delete_queued(&self, delivery_id: &str) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM offline_queue WHERE delivery_id = ?1")?
            .execute([delivery_id])?;
        Ok(())
    }

    /// Inserts or replaces a tracked message's state.
    pub fn put_status(&self, s: &StatusRow) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO message_status \
                 (from_id, message_id, delivery_id, to_id, state, receipts, expires_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                s.from,
                s.message_id,
                s.delivery_id,
                s.to,
                s.state,
                s.receipts as i64,
                s.expires_at
            ])?;
        Ok(())
    }

    /// A tracked message of `from`, by its message id.
    pub fn status_of(&self, from: &str, message_id: &str) -> Result<Option<StatusRow>, StoreError> {
        self.status_where(
            "from_id = ?1 AND message_id = ?2",
            params![from, message_id],
        )
    }

    /// A tracked message, by its delivery id.
    pub fn status_by_delivery(&self, delivery_id: &str) -> Result<Option<StatusRow>, StoreError> {
        self.status_where("delivery_id = ?1", params![delivery_id])
    }

    fn status_where(
        &self,
        condition: &str,
        values: &[&dyn rusqlite::ToSql],
    ) -> Result<Option<StatusRow>, StoreError> {
        let sql = format!(
            "SELECT from_id, message_id, delivery_id, to_id, state, receipts, expires_at \
             FROM message_status WHERE {condition}"
        );
        Ok(self
            .conn
            .prepare_cached(&sql)?
            .query_row(values, |r| {
                Ok(StatusRow {
                    from: r.get(0)?,
                    message_id: r.get(1)?,
                    delivery_id: r.get(2)?,
                    to: r.get(3)?,
                    state: r.get(4)?,
                    receipts: r.get::<_, i64>(5)? != 0,
                    expires_at: r.get(6)?,
                })
            })
            .optional()?)
    }

    /// At start: a tracked message still `accepted` (its delivery was in flight when the broker
    /// stopped) or `queued` without its queue entry did not arrive: it is `failed`.
    pub fn settle_stale_statuses(&self) -> Result<(), StoreError> {
        self.conn.execute_batch(
            "UPDATE message_status SET state = 'failed' WHERE state = 'accepted' OR \
             (state = 'queued' AND delivery_id NOT IN (SELECT delivery_id FROM offline_queue))",
        )?;
        Ok(())
    }

    /// Forgets tracked states past their time and sessions last seen before `seen_before`.
    pub fn prune_offline(&self, now_ms: i64, seen_before: i64) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM message_status WHERE expires_at <= ?1")?
            .execute([now_ms])?;
        self.conn
            .prepare_cached("DELETE FROM known_sessions WHERE last_seen < ?1")?
            .execute([seen_before])?;
        Ok(())
    }
}

/// A connection to the store file (the broker's, or its checkpoints'): on a plain path (no
/// SQLITE_OPEN_URI: a file name, whatever it looks like), never through a symbolic link.
fn connect(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let mut conn = Connection::open_with_flags(path, flags)?;
    // A checkpoint that blocks writers lasts milliseconds: tried every 200 µs, for 5 s.
    conn.busy_handler(Some(busy_wait::<5>))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

/// `CREATE TABLE IF NOT EXISTS` for a [`KEYED`] table, under `name`.
fn keyed_table(name: &str, columns: &str, key: &str) -> String {
    format!("CREATE TABLE IF NOT EXISTS {name} ({columns}, PRIMARY KEY ({key})) WITHOUT ROWID;")
}

/// Rebuilds each [`KEYED`] table a store of before has as a rowid table into its `WITHOUT ROWID`
/// form, rows and all, in one transaction: a failure leaves the store as it was.
fn without_rowid(conn: &Connection) -> Result<(), StoreError> {
    let mut rebuild = String::new();
    for (name, columns, key) in KEYED {
        let rowid: bool = conn
            .prepare(
                "SELECT 1 FROM pragma_table_list WHERE schema = 'main' AND name = ?1 AND wr = 0",
            )?
            .exists([name])?;
        if rowid {
            let names = column_names(columns);
            rebuild.push_str(&keyed_table(&format!("{name}_keyed"), columns, key));
            rebuild.push_str(&format!(
                "INSERT INTO {name}_keyed ({names}) SELECT {names} FROM {name};
                 DROP TABLE {name};
                 ALTER TABLE {name}_keyed RENAME TO {name};"
            ));
        }
    }
    if !rebuild.is_empty() {
        conn.execute_batch(&format!("BEGIN IMMEDIATE; {rebuild} COMMIT;"))
            .inspect_err(|_| {
                let _ = conn.execute_batch("ROLLBACK");
            })?;
    }
    Ok(())
}

fn delivery_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<DeliveryRow> {
    Ok(DeliveryRow {
        from: r.get(0)?,
        message_id: r.get(1)?,
        fingerprint: r.get(2)?,
        to: r.get(3)?,
        response: r.get(4)?,
        retryable: r.get::<_, i64>(5)? != 0,
        expires_at: r.get(6)?,
        kept: r.get::<_, i64>(7)? != 0,
    })
}

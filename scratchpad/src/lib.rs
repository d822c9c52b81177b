//! # agent-intercom-scratchpad
//!
//! The agent scratchpad of the a2a-contract-v1 on one SQLite database (WAL; writes in
//! `BEGIN IMMEDIATE` transactions), safe for many processes at once. The rules (visibility, TTL,
//! addressing) are `agent_intercom_core::scratchpad`'s; this crate stores, orders and bounds.
//!
//! - **Visibility**: one function (`agent_intercom_core::scratchpad::visible`) decides for
//!   [`Store::read_unread`] and [`Store::list`]. Team membership: an agent belongs to the team id
//!   it registered with ([`Store::register_agent`]) in a project; a team message is for the team
//!   its sender had in that project when it posted, and for the members that team had then (the
//!   join is recorded at its place in the commit sequence; a later member is not offered it).
//! - **Order**: priority (critical first), then creation time, then id: stable for pagination.
//! - **Read once**: `read_unread` returns each visible message to an agent once (a per-agent read
//!   mark is written in the same transaction). Each call looks only at messages committed since
//!   the agent's previous call (a per-agent, per-project cursor over a store-wide commit
//!   sequence). A message that was not visible to the agent when it arrived (private to others,
//!   another team's) is not offered later either, even if the agent joins that team: visibility
//!   itself says so, for every read.
//! - **Expiry**: expired rows are deleted by the mutation that observes them (every post and
//!   every read), so time-to-live needs no background job. Time comes from a [`Clock`].
//! - **Bounds**: at most `per_project_cap` live messages per project root and `per_recipient_cap`
//!   per recipient; a post over a bound evicts the lowest priority, then the oldest, and reports
//!   the evicted ids.

pub mod api;
pub mod paths;

pub use paths::default_path;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_intercom_core::scratchpad::{
    self, MessageView, Priority, Privacy, ReaderView, TaskState, TaskView,
};
use agent_intercom_core::{Error, ErrorCode};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// The store's schema version. A newer store is refused and left untouched.
pub const SCHEMA_VERSION: i64 = 5;

/// Where time comes from (tests inject a manual clock).
pub trait Clock: Send + Sync {
    /// Milliseconds since the epoch.
    fn now_ms(&self) -> i64;
}

/// The system clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    }
}

/// Limits.
#[derive(Clone, Debug)]
pub struct Config {
    /// Live messages per project root, at most.
    pub per_project_cap: usize,
    /// Live messages addressed to one recipient, at most.
    pub per_recipient_cap: usize,
    /// Largest message content, in bytes.
    pub max_content_bytes: usize,
    /// Whether `full` (unredacted) exports are allowed at all.
    pub allow_full_export: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            per_project_cap: 10_000,
            per_recipient_cap: 1_000,
            max_content_bytes: 64 * 1024,
            allow_full_export: false,
        }
    }
}

/// A message to post.
#[derive(Clone, Debug, Default)]
pub struct NewMessage {
    /// Sender.
    pub from: String,
    /// Recipient (required for private).
    pub to: Option<String>,
    /// Free-form category ("note", "handoff", "question", "task-update" ...).
    pub category: String,
    /// "low", "normal" (default), "high", "critical".
    pub priority: Option<String>,
    /// "public" (default), "team", "private".
    pub privacy: Option<String>,
    /// The text.
    pub content: String,
    /// JSON text, stored as given (must be valid JSON when present).
    pub metadata: Option<String>,
    /// The task it belongs to.
    pub task_id: Option<String>,
    /// Project root.
    pub project_root: Option<String>,
    /// Hours to live (default 24, 1..=720).
    pub ttl_hours: Option<i64>,
}

/// A stored message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// UUIDv7.
    pub id: String,
    /// Sender.
    pub from: String,
    /// Recipient.
    pub to: Option<String>,
    /// Category.
    pub category: String,
    /// Priority name.
    pub priority: String,
    /// Privacy name.
    pub privacy: String,
    /// Text.
    pub content: String,
    /// JSON text.
    pub metadata: Option<String>,
    /// Task.
    pub task_id: Option<String>,
    /// Project root.
    pub project_root: Option<String>,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// Milliseconds since the epoch.
    pub expires_at: i64,
}

/// What a post did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Posted {
    /// The new message's id.
    pub id: String,
    /// When it expires.
    pub expires_at: i64,
    /// Messages evicted to stay within the bounds (never silent).
    pub evicted: Vec<String>,
}

/// A page of [`Store::list`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    /// Messages in order.
    pub messages: Vec<Message>,
    /// Pass as `after` to get the next page; `None` at the end.
    pub next: Option<String>,
}

/// The open store.
pub struct Store {
    conn: Connection,
    clock: Arc<dyn Clock>,
    config: Config,
}

/// The schema, one forward step per version: `MIGRATIONS[i]` takes a store from version `i` to
/// `i + 1`. Never edit a step that has shipped; add one.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [
    "CREATE TABLE agents (
     agent_id TEXT NOT NULL, project_root TEXT NOT NULL, team_id TEXT,
     registered_at INTEGER NOT NULL, PRIMARY KEY (agent_id, project_root));
     CREATE TABLE messages (
     id TEXT PRIMARY KEY, from_agent TEXT NOT NULL, to_agent TEXT, category TEXT NOT NULL,
     priority INTEGER NOT NULL, privacy INTEGER NOT NULL, content TEXT NOT NULL, metadata TEXT,
     task_id TEXT, project_root TEXT NOT NULL, created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL, sender_team TEXT);
     CREATE INDEX messages_project ON messages (project_root, priority, created_at, id);
     CREATE INDEX messages_to ON messages (to_agent);
     CREATE INDEX messages_expiry ON messages (expires_at);
     CREATE TABLE reads (
     agent_id TEXT NOT NULL, message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
     PRIMARY KEY (agent_id, message_id));",
    "CREATE TABLE tasks (
     id TEXT PRIMARY KEY, creator TEXT NOT NULL, assignee TEXT, title TEXT NOT NULL,
     state INTEGER NOT NULL, project_root TEXT NOT NULL, created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL);
     CREATE TABLE task_history (
     task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE, seq INTEGER NOT NULL,
     from_state INTEGER, to_state INTEGER NOT NULL, by_agent TEXT NOT NULL, reason TEXT,
     at INTEGER NOT NULL, PRIMARY KEY (task_id, seq));
     CREATE TABLE task_artifacts (
     task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE, seq INTEGER NOT NULL,
     by_agent TEXT NOT NULL, name TEXT NOT NULL, content TEXT NOT NULL, at INTEGER NOT NULL,
     PRIMARY KEY (task_id, seq));
     CREATE TABLE buckets (key TEXT PRIMARY KEY, milli_tokens INTEGER NOT NULL, refilled_at INTEGER NOT NULL);
     CREATE TABLE costs (
     agent TEXT NOT NULL, tool TEXT NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
     cached_tokens INTEGER NOT NULL, calls INTEGER NOT NULL, cost_micros INTEGER NOT NULL,
     PRIMARY KEY (agent, tool));",
    "CREATE TABLE events (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, actor TEXT NOT NULL, target TEXT,
     project_root TEXT NOT NULL, ref_id TEXT NOT NULL, at INTEGER NOT NULL);",
    // A store-wide sequence in commit order (writes are serialised), so "unread" scans only
    // what arrived after an agent's cursor; live counts kept by triggers, so a post does not
    // count rows.
    "ALTER TABLE messages ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
     WITH o AS (SELECT id, ROW_NUMBER() OVER (ORDER BY created_at, id) AS n FROM messages)
     UPDATE messages SET seq = o.n FROM o WHERE o.id = messages.id;
     CREATE INDEX messages_seq ON messages (seq);
     CREATE INDEX messages_project_seq ON messages (project_root, seq);
     CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
     INSERT INTO counters (name, value) SELECT 'message_seq', coalesce(max(seq), 0) FROM messages;
     CREATE TABLE message_counts (
     kind INTEGER NOT NULL, key TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (kind, key));
     INSERT INTO message_counts SELECT 0, project_root, count(*) FROM messages GROUP BY project_root;
     INSERT INTO message_counts SELECT 1, to_agent, count(*) FROM messages
     WHERE to_agent IS NOT NULL GROUP BY to_agent;
     CREATE TRIGGER messages_counted AFTER INSERT ON messages BEGIN
     INSERT INTO message_counts (kind, key, n) VALUES (0, NEW.project_root, 1)
     ON CONFLICT (kind, key) DO UPDATE SET n = n + 1;
     INSERT INTO message_counts (kind, key, n) SELECT 1, NEW.to_agent, 1 WHERE NEW.to_agent IS NOT NULL
     ON CONFLICT (kind, key) DO UPDATE SET n = n + 1;
     END;
     CREATE TRIGGER messages_uncounted AFTER DELETE ON messages BEGIN
     UPDATE message_counts SET n = n - 1 WHERE kind = 0 AND key = OLD.project_root;
     UPDATE message_counts SET n = n - 1 WHERE kind = 1 AND key = OLD.to_agent;
     END;
     CREATE TABLE read_cursors (
     agent_id TEXT NOT NULL, project_key TEXT NOT NULL, seq INTEGER NOT NULL,
     PRIMARY KEY (agent_id, project_key));",
    // Where in the commit sequence an agent joined its current team: team messages committed
    // before are not for it. Registrations that predate the column count from the start.
    "ALTER TABLE agents ADD COLUMN team_seq INTEGER NOT NULL DEFAULT 0;",
];

/// How long a write waits for the store's lock before failing with `STORE_IO`.
pub const BUSY_GIVE_UP: Duration = Duration::from_secs(30);

fn busy_wait(attempt: i32) -> bool {
    // Sleeps of 0.5 to 1.5 ms (jitter from the clock), so ~1 ms per attempt on average.
    let max_attempts = BUSY_GIVE_UP.as_millis() as i32;
    if attempt >= max_attempts {
        return false;
    }
    let jitter = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() % 1000);
    std::thread::sleep(Duration::from_micros(500 + u64::from(jitter)));
    true
}

fn io(e: rusqlite::Error) -> Error {
    match &e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::NotADatabase
                || f.code == rusqlite::ErrorCode::DatabaseCorrupt =>
        {
            Error::new(
                ErrorCode::StoreCorrupt,
                format!(
                    "the scratchpad store is not a readable database ({e}); it was left untouched"
                ),
            )
        }
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::DiskFull
                || f.code == rusqlite::ErrorCode::SystemIoFailure =>
        {
            Error::new(
                ErrorCode::StoreIo,
                format!(
                    "scratchpad store could not write to disk ({e}; is the disk full?); the \
                     operation was rolled back"
                ),
            )
        }
        rusqlite::Error::SqliteFailure(f, _)
            if f.extended_code == rusqlite::ffi::SQLITE_CANTOPEN_SYMLINK =>
        {
            Error::new(
                ErrorCode::StoreIo,
                format!(
                    "refusing the scratchpad store: its path holds a symbolic link ({e}); nothing \
                     was written"
                ),
            )
        }
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::ReadOnly
                || f.code == rusqlite::ErrorCode::CannotOpen
                || f.code == rusqlite::ErrorCode::PermissionDenied =>
        {
            Error::new(
                ErrorCode::StoreIo,
                format!(
                    "scratchpad store cannot be written ({e}); is it read-only? nothing was changed"
                ),
            )
        }
        _ => Error::new(ErrorCode::StoreIo, format!("scratchpad store: {e}")),
    }
}

fn path_io(what: String, e: &std::io::Error) -> Error {
    Error::new(
        ErrorCode::StoreIo,
        format!("cannot open the scratchpad store: {what}: {e}; nothing was changed"),
    )
}

fn symlink_refused(path: &Path) -> Error {
    Error::new(
        ErrorCode::StoreIo,
        format!(
            "refusing the scratchpad store: {} is a symbolic link (a store and its -wal, -shm and \
             -journal files must be plain files); nothing was written",
            path.display()
        ),
    )
}

/// The store's file as SQLite is given it (see [`Store::open`]): absolute, in its directory's
/// resolved location, checked for planted symbolic links, and created 0600 when new.
fn store_file(path: &Path) -> Result<std::path::PathBuf, Error> {
    if path.as_os_str().is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "the scratchpad store path is empty",
        ));
    }
    let absolute =
        std::path::absolute(path).map_err(|e| path_io(path.display().to_string(), &e))?;
    let (Some(dir), Some(name)) = (absolute.parent(), absolute.file_name()) else {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("the scratchpad store path {} names no file", path.display()),
        ));
    };
    // SQLITE_OPEN_NOFOLLOW refuses a link in any component: the directory's links are the user's
    // layout (a symlinked home), so they are resolved here; the file's own name is not.
    let dir = std::fs::canonicalize(dir)
        .map_err(|e| path_io(format!("its directory {}", dir.display()), &e))?;
    let file = dir.join(name);
    for side in ["", "-wal", "-shm", "-journal"] {
        let mut side_path = file.clone().into_os_string();
        side_path.push(side);
        let side_path = std::path::PathBuf::from(side_path);
        match std::fs::symlink_metadata(&side_path) {
            Ok(m) if m.file_type().is_symlink() => return Err(symlink_refused(&side_path)),
            Ok(m) if !m.is_file() => {
                return Err(Error::new(
                    ErrorCode::StoreIo,
                    format!(
                        "refusing the scratchpad store: {} is not a regular file",
                        side_path.display()
                    ),
                ));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(path_io(side_path.display().to_string(), &e)),
        }
    }
    // O_CREAT|O_EXCL never follows a symbolic link (POSIX), so a link planted since the check
    // above makes this fail rather than create a file elsewhere. Another process creating the
    // store at the same time is fine.
    let mut create = std::fs::OpenOptions::new();
    create.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut create, 0o600);
    match create.open(&file) {
        Ok(_) => Ok(file),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            match std::fs::symlink_metadata(&file) {
                Ok(m) if m.file_type().is_symlink() => Err(symlink_refused(&file)),
                _ => Ok(file),
            }
        }
        Err(e) => Err(path_io(file.display().to_string(), &e)),
    }
}

/// Project roots are stored as text; "no project" is the empty string so it can be compared.
fn root_key(root: Option<&str>) -> &str {
    root.unwrap_or("")
}

fn root_value(key: String) -> Option<String> {
    (!key.is_empty()).then_some(key)
}

const COLUMNS: &str = "id, from_agent, to_agent, category, priority, privacy, content, metadata, task_id, project_root, created_at, expires_at, sender_team";

/// A message as stored: what visibility needs beyond the message itself. Selected as
/// `{COLUMNS}, seq`.
struct Stored {
    message: Message,
    /// The sender's team when it posted.
    sender_team: Option<String>,
    /// Its position in the store's commit sequence.
    seq: i64,
}

fn row_to_message(r: &rusqlite::Row<'_>) -> rusqlite::Result<Stored> {
    let priority: i64 = r.get(4)?;
    let privacy: i64 = r.get(5)?;
    Ok(Stored {
        message: Message {
            id: r.get(0)?,
            from: r.get(1)?,
            to: r.get(2)?,
            category: r.get(3)?,
            priority: Priority::ALL
                .get(priority as usize)
                .map_or("normal", |p| p.as_str())
                .to_string(),
            privacy: Privacy::ALL
                .get(privacy as usize)
                .map_or("private", |p| p.as_str())
                .to_string(),
            content: r.get(6)?,
            metadata: r.get(7)?,
            task_id: r.get(8)?,
            project_root: root_value(r.get(9)?),
            created_at: r.get(10)?,
            expires_at: r.get(11)?,
        },
        sender_team: r.get(12)?,
        seq: r.get(13)?,
    })
}

/// The reading agent, with its team in the active project and where in the commit sequence it
/// joined that team.
struct Reader<'a> {
    agent: &'a str,
    team: Option<String>,
    team_seq: i64,
    project_root: Option<&'a str>,
}

impl Store {
    /// Opens (or creates) the store at `path`. A store of a newer schema is refused
    /// (`STORE_NEWER_SCHEMA`); an unreadable file is refused (`STORE_CORRUPT`). Neither is ever
    /// replaced or rewritten.
    ///
    /// `path` is always a file name, never an SQLite URI or special name: a relative path is
    /// taken from the current directory (so `:memory:` and `file:x?mode=memory` are ordinary
    /// files there), the empty path is refused (`INVALID_ARGUMENT`), the directory's own symbolic
    /// links are resolved, and a symbolic link at the store file or its `-wal`, `-shm` or
    /// `-journal` side files is refused (`STORE_IO`) with nothing created or written through it.
    /// A new store file is created with mode 0600.
    pub fn open(path: &Path, config: Config, clock: Arc<dyn Clock>) -> Result<Store, Error> {
        let path = store_file(path)?;
        // Not SQLite's default flags: no SQLITE_OPEN_URI (a name is a name), no CREATE (the file
        // was created above, 0600), and NOFOLLOW (SQLite refuses a link anywhere in the path,
        // and opens the store and its side files with O_NOFOLLOW).
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX
            | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let mut conn = Connection::open_with_flags(&path, flags).map_err(io)?;
        // SQLite's own busy handler backs off to 100 ms sleeps, and its lock is not fair: under
        // several busy writers a waiter can lose every race for its whole timeout. Short, jittered
        // sleeps keep waiters competitive; give up after about BUSY_GIVE_UP.
        conn.busy_handler(Some(busy_wait)).map_err(io)?;
        // Switching a new file to WAL takes an exclusive lock and reports SQLITE_BUSY without
        // consulting the busy handler when another process is opening the same file right now.
        let started = std::time::Instant::now();
        loop {
            match conn.pragma_update(None, "journal_mode", "WAL") {
                Ok(()) => break,
                Err(rusqlite::Error::SqliteFailure(f, _))
                    if f.code == rusqlite::ErrorCode::DatabaseBusy
                        && started.elapsed() < BUSY_GIVE_UP =>
                {
                    busy_wait(0);
                }
                Err(e) => return Err(io(e)),
            }
        }
        // WAL with synchronous=NORMAL: a committed transaction survives the process being
        // killed (not necessarily a power cut). The write-ahead log is folded back into the
        // database every ~40 MB instead of SQLite's ~4 MB: the post that triggers the
        // checkpoint pays for it, and fewer, larger checkpoints keep the p99 of posts low.
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(io)?;
        conn.pragma_update(None, "wal_autocheckpoint", 10_000)
            .map_err(io)?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(io)?;
        if version > SCHEMA_VERSION {
            return Err(Error::new(
                ErrorCode::StoreNewerSchema,
                format!(
                    "the scratchpad store has schema version {version}, newer than {SCHEMA_VERSION}; refusing to touch it"
                ),
            ));
        }
        let mut store = Store {
            conn,
            clock,
            config,
        };
        store.migrate(version)?;
        Ok(store)
    }

    /// Forward migrations from `from`, each step in its own transaction; a step another process
    /// applied meanwhile is skipped (the version is re-read under the write lock).
    fn migrate(&mut self, from: i64) -> Result<(), Error> {
        for (step, sql) in MIGRATIONS.iter().enumerate().skip(from.max(0) as usize) {
            let to = step as i64 + 1;
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(io)?;
            let current: i64 = tx
                .pragma_query_value(None, "user_version", |r| r.get(0))
                .map_err(io)?;
            if current < to {
                tx.execute_batch(sql).map_err(io)?;
                tx.pragma_update(None, "user_version", to).map_err(io)?;
            }
            tx.commit().map_err(io)?;
        }
        self.conn
            .pragma_update(None, "foreign_keys", "ON")
            .map_err(io)?;
        Ok(())
    }

    /// Registers (or re-registers) an agent in a project, with an optional team id.
    pub fn register_agent(
        &mut self,
        agent: &str,
        project_root: Option<&str>,
        team: Option<&str>,
    ) -> Result<(), Error> {
        if agent.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "agent must be a non-empty string",
            ));
        }
        let now = self.clock.now_ms();
        self.conn
            .execute(
                // Joining (or changing) a team records the commit position: the team's earlier
                // messages are not for the newcomer. Re-registering in the same team keeps it.
                "INSERT INTO agents (agent_id, project_root, team_id, registered_at, team_seq)
                 VALUES (?1, ?2, ?3, ?4, (SELECT value FROM counters WHERE name = 'message_seq'))
                 ON CONFLICT (agent_id, project_root) DO UPDATE SET team_id = excluded.team_id,
                   team_seq = CASE WHEN agents.team_id IS excluded.team_id THEN agents.team_seq
                                   ELSE excluded.team_seq END",
                params![agent, root_key(project_root), team, now],
            )
            .map_err(io)?;
        Ok(())
    }

    /// Posts a message, purging expired ones and evicting to stay within the bounds. Refused with
    /// a stable code (and nothing changed) for a bad TTL, a private message without recipient,
    /// an unknown priority or privacy, oversized content or invalid metadata.
    pub fn post(&mut self, m: &NewMessage) -> Result<Posted, Error> {
        let priority = Priority::parse(m.priority.as_deref().unwrap_or("normal"), "priority")?;
        let privacy = Privacy::parse(m.privacy.as_deref().unwrap_or("public"), "privacy")?;
        let ttl = scratchpad::ttl_hours(m.ttl_hours)?;
        scratchpad::check_addressing(privacy, m.to.as_deref())?;
        if m.from.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "from must be a non-empty string",
            ));
        }
        if m.content.len() > self.config.max_content_bytes {
            return Err(Error::new(
                ErrorCode::ContentTooLarge,
                format!(
                    "content is {} bytes; at most {} are accepted",
                    m.content.len(),
                    self.config.max_content_bytes
                ),
            ));
        }
        if let Some(meta) = &m.metadata {
            agent_intercom_core::canonical::parse(meta).map_err(|e| {
                Error::new(
                    ErrorCode::InvalidArgument,
                    format!("metadata must be JSON: {}", e.message()),
                )
            })?;
        }
        let now = self.clock.now_ms();
        let expires_at = now + ttl as i64 * 3_600_000;
        let id = uuid::Uuid::now_v7().to_string();
        let root = root_key(m.project_root.as_deref()).to_string();
        let (per_project, per_recipient) =
            (self.config.per_project_cap, self.config.per_recipient_cap);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(io)?;
        tx.execute("DELETE FROM messages WHERE expires_at <= ?1", [now])
            .map_err(io)?;
        let sender_team: Option<String> = tx
            .query_row(
                "SELECT team_id FROM agents WHERE agent_id = ?1 AND project_root = ?2",
                params![m.from, root],
                |r| r.get(0),
            )
            .optional()
            .map_err(io)?
            .flatten();
        let mut evicted = Vec::new();
        // Room in the project, then for the recipient: lowest priority first, then oldest. The
        // live counts are kept by triggers (message_counts), so a post does not count rows.
        let live = |tx: &rusqlite::Transaction<'_>, kind: i64, key: &str| -> Result<i64, Error> {
            tx.query_row(
                "SELECT n FROM message_counts WHERE kind = ?1 AND key = ?2",
                params![kind, key],
                |r| r.get(0),
            )
            .optional()
            .map_err(io)
            .map(|n| n.unwrap_or(0))
        };
        let mut evict = |tx: &rusqlite::Transaction<'_>,
                         sql: &str,
                         key: &str,
                         over: i64|
         -> Result<(), Error> {
            if over <= 0 {
                return Ok(());
            }
            let victims: Vec<String> = {
                let mut stmt = tx.prepare(sql).map_err(io)?;
                stmt.query_map(params![key, over], |r| r.get::<_, String>(0))
                    .map_err(io)?
                    .collect::<Result<_, _>>()
                    .map_err(io)?
            };
            for victim in &victims {
                tx.execute("DELETE FROM messages WHERE id = ?1", [victim])
                    .map_err(io)?;
            }
            evicted.extend(victims);
            Ok(())
        };
        let over = live(&tx, 0, &root)? + 1 - per_project as i64;
        evict(
            &tx,
            "SELECT id FROM messages WHERE project_root = ?1 ORDER BY priority ASC, created_at ASC, id ASC LIMIT ?2",
            &root,
            over,
        )?;
        if let Some(to) = &m.to {
            let over = live(&tx, 1, to)? + 1 - per_recipient as i64;
            evict(
                &tx,
                "SELECT id FROM messages WHERE to_agent = ?1 ORDER BY priority ASC, created_at ASC, id ASC LIMIT ?2",
                to,
                over,
            )?;
        }
        let seq: i64 = tx
            .query_row(
                "UPDATE counters SET value = value + 1 WHERE name = 'message_seq' RETURNING value",
                [],
                |r| r.get(0),
            )
            .map_err(io)?;
        tx.execute(
            &format!("INSERT INTO messages ({COLUMNS}, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"),
            params![
                id,
                m.from,
                m.to,
                m.category,
                priority as i64,
                privacy as i64,
                m.content,
                m.metadata,
                m.task_id,
                root,
                now,
                expires_at,
                sender_team,
                seq
            ],
        )
        .map_err(io)?;
        emit(
            &tx,
            "message.posted",
            &m.from,
            m.to.as_deref(),
            &root,
            &id,
            now,
        )?;
        tx.commit().map_err(io)?;
        Ok(Posted {
            id,
            expires_at,
            evicted,
        })
    }

    fn reader<'a>(
        tx: &rusqlite::Transaction<'_>,
        agent: &'a str,
        project_root: Option<&'a str>,
    ) -> Result<Reader<'a>, Error> {
        let (team, team_seq) = tx
            .query_row(
                "SELECT team_id, team_seq FROM agents WHERE agent_id = ?1 AND project_root = ?2",
                params![agent, root_key(project_root)],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(io)?
            .unwrap_or((None, 0));
        Ok(Reader {
            agent,
            team,
            team_seq,
            project_root,
        })
    }

    /// Messages visible to `agent` that it has not read yet, in order; each is returned once.
    /// `project_root` is the active project (only its messages are visible when set).
    pub fn read_unread(
        &mut self,
        agent: &str,
        project_root: Option<&str>,
    ) -> Result<Vec<Message>, Error> {
        let now = self.clock.now_ms();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(io)?;
        tx.execute("DELETE FROM messages WHERE expires_at <= ?1", [now])
            .map_err(io)?;
        let reader = Store::reader(&tx, agent, project_root)?;
        let filter = if project_root.is_some() {
            "AND m.project_root = ?2"
        } else {
            "AND ?2 = ?2"
        };
        // Only what committed after this agent's cursor (for this project key) is new; messages
        // it read through another project key are excluded by their read marks.
        let key = root_key(project_root);
        let cursor: i64 = tx
            .query_row(
                "SELECT seq FROM read_cursors WHERE agent_id = ?1 AND project_key = ?2",
                params![agent, key],
                |r| r.get(0),
            )
            .optional()
            .map_err(io)?
            .unwrap_or(0);
        let head: i64 = tx
            .query_row(
                "SELECT value FROM counters WHERE name = 'message_seq'",
                [],
                |r| r.get(0),
            )
            .map_err(io)?;
        let sql = format!(
            "SELECT {}, m.seq FROM messages m WHERE m.seq > ?3 {filter}
               AND NOT EXISTS (SELECT 1 FROM reads r WHERE r.agent_id = ?1 AND r.message_id = m.id)
             ORDER BY m.priority DESC, m.created_at ASC, m.id ASC",
            COLUMNS
                .split(", ")
                .map(|c| format!("m.{c}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let rows: Vec<Stored> = {
            let mut stmt = tx.prepare(&sql).map_err(io)?;
            let mapped = stmt
                .query_map(params![agent, key, cursor], row_to_message)
                .map_err(io)?;
            mapped.collect::<Result<_, _>>().map_err(io)?
        };
        let visible: Vec<Message> = rows
            .into_iter()
            .filter(|m| is_visible(m, &reader, now))
            .map(|m| m.message)
            .collect();
        for m in &visible {
            tx.execute(
                "INSERT OR IGNORE INTO reads (agent_id, message_id) VALUES (?1, ?2)",
                params![agent, m.id],
            )
            .map_err(io)?;
        }
        if head > cursor {
            tx.execute(
                "INSERT INTO read_cursors (agent_id, project_key, seq) VALUES (?1, ?2, ?3)
                 ON CONFLICT (agent_id, project_key) DO UPDATE SET seq = excluded.seq",
                params![agent, key, head],
            )
            .map_err(io)?;
        }
        tx.commit().map_err(io)?;
        Ok(visible)
    }

    /// Messages visible to `agent` (read or not), in order, `limit` per page (1..=1000) after the
    /// message id `after`. Optional filters: category and sender.
    pub fn list(
        &mut self,
        agent: &str,
        project_root: Option<&str>,
        category: Option<&str>,
        from: Option<&str>,
        limit: usize,
        after: Option<&str>,
    ) -> Result<Page, Error> {
        if !(1..=1000).contains(&limit) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "limit must be from 1 to 1000",
            ));
        }
        let now = self.clock.now_ms();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(io)?;
        tx.execute("DELETE FROM messages WHERE expires_at <= ?1", [now])
            .map_err(io)?;
        let reader = Store::reader(&tx, agent, project_root)?;
        let rows: Vec<Stored> = {
            let mut stmt = tx
                .prepare(&format!(
                    "SELECT {COLUMNS}, seq FROM messages WHERE (?1 = 0 OR project_root = ?2) AND (?3 IS NULL OR category = ?3)
                     AND (?4 IS NULL OR from_agent = ?4) ORDER BY priority DESC, created_at ASC, id ASC"
                ))
                .map_err(io)?;
            let mapped = stmt
                .query_map(
                    params![
                        project_root.is_some() as i64,
                        root_key(project_root),
                        category,
                        from
                    ],
                    row_to_message,
                )
                .map_err(io)?;
            mapped.collect::<Result<_, _>>().map_err(io)?
        };
        tx.commit().map_err(io)?;
        let visible: Vec<Message> = rows
            .into_iter()
            .filter(|m| is_visible(m, &reader, now))
            .map(|m| m.message)
            .collect();
        let start = match after {
            None => 0,
            Some(id) => visible
                .iter()
                .position(|m| m.id == id)
                .map(|i| i + 1)
                .ok_or_else(|| {
                    Error::new(
                        ErrorCode::InvalidArgument,
                        "after must name a message of the previous page",
                    )
                })?,
        };
        let messages: Vec<Message> = visible[start..].iter().take(limit).cloned().collect();
        let next = (start + messages.len() < visible.len())
            .then(|| messages.last().map(|m| m.id.clone()))
            .flatten();
        Ok(Page { messages, next })
    }
}

/// A task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// UUIDv7.
    pub id: String,
    /// Who created it (the only one who may cancel it).
    pub creator: String,
    /// Who works on it.
    pub assignee: Option<String>,
    /// What it is.
    pub title: String,
    /// State name.
    pub state: String,
    /// Project root.
    pub project_root: Option<String>,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// Milliseconds since the epoch.
    pub updated_at: i64,
}

impl Task {
    fn view(&self) -> TaskView<'_> {
        TaskView {
            creator: &self.creator,
            assignee: self.assignee.as_deref(),
        }
    }
}

/// One recorded state change of a task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    /// The previous state (None for creation).
    pub from: Option<String>,
    /// The new state.
    pub to: String,
    /// Who changed it.
    pub by: String,
    /// Why.
    pub reason: Option<String>,
    /// Milliseconds since the epoch.
    pub at: i64,
}

/// A task artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Artifact {
    /// Who attached it.
    pub by: String,
    /// Its name.
    pub name: String,
    /// Its content.
    pub content: String,
    /// Milliseconds since the epoch.
    pub at: i64,
}

/// Requests per minute at each level; `None` is unlimited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateLimits {
    /// All agents together.
    pub global_per_min: Option<u32>,
    /// One agent.
    pub agent_per_min: Option<u32>,
    /// One tool (across agents).
    pub tool_per_min: Option<u32>,
}

impl RateLimits {
    /// Reads `LEAN_CTX_RATE_LIMIT_{GLOBAL,AGENT,TOOL}_PER_MIN` (or the `LCTX_RATE_LIMIT_...`
    /// aliases; the LEAN_CTX_ name wins when both are set) from `env`. A value that is not a
    /// whole number is an error naming the variable.
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Result<RateLimits, Error> {
        let read = |level: &str| -> Result<Option<u32>, Error> {
            for prefix in ["LEAN_CTX", "LCTX"] {
                let name = format!("{prefix}_RATE_LIMIT_{level}_PER_MIN");
                if let Some(value) = env(&name) {
                    return match value.trim().parse::<u32>() {
                        Ok(n) if n >= 1 => Ok(Some(n)),
                        _ => Err(Error::new(
                            ErrorCode::InvalidArgument,
                            format!(
                                "{name} must be a whole number of requests per minute, at least 1 \
                                 (unset it for no limit)"
                            ),
                        )),
                    };
                }
            }
            Ok(None)
        };
        Ok(RateLimits {
            global_per_min: read("GLOBAL")?,
            agent_per_min: read("AGENT")?,
            tool_per_min: read("TOOL")?,
        })
    }
}

/// The answer of [`Store::take_rate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RateDecision {
    /// One token was taken at every limited level.
    Allowed,
    /// Refused; nothing was consumed at any level.
    Refused {
        /// When to retry (rounded up, never 0).
        retry_after_ms: i64,
        /// The levels that refused ("global", "agent", "tool").
        levels: Vec<&'static str>,
    },
}

/// Token usage of one call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cached input tokens.
    pub cached_tokens: u64,
}

/// Prices per million tokens, in micro-dollars (integers: no rounding drift across processes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pricing {
    /// Per million input tokens.
    pub input_per_million_micros: u64,
    /// Per million output tokens.
    pub output_per_million_micros: u64,
    /// Per million cached tokens.
    pub cached_per_million_micros: u64,
}

impl Pricing {
    /// Cost of a usage, in micro-dollars (rounded up per call).
    pub fn cost_micros(&self, u: &Usage) -> u64 {
        let total = u.input_tokens as u128 * self.input_per_million_micros as u128
            + u.output_tokens as u128 * self.output_per_million_micros as u128
            + u.cached_tokens as u128 * self.cached_per_million_micros as u128;
        total.div_ceil(1_000_000).min(u64::MAX as u128) as u64
    }
}

/// Accumulated cost of one agent with one tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CostRow {
    /// Agent.
    pub agent: String,
    /// Tool.
    pub tool: String,
    /// Totals.
    pub usage: Usage,
    /// Calls recorded.
    pub calls: u64,
    /// Micro-dollars.
    pub cost_micros: u64,
}

fn state_of(value: i64) -> TaskState {
    TaskState::ALL
        .get(value as usize)
        .copied()
        .unwrap_or(TaskState::Failed)
}

impl Store {
    /// Creates a task in `submitted`, with its first history entry.
    pub fn create_task(
        &mut self,
        creator: &str,
        assignee: Option<&str>,
        title: &str,
        project_root: Option<&str>,
    ) -> Result<Task, Error> {
        if creator.is_empty() || title.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "creator and title must be non-empty",
            ));
        }
        let now = self.clock.now_ms();
        let id = uuid::Uuid::now_v7().to_string();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(io)?;
        tx.execute(
            "INSERT INTO tasks (id, creator, assignee, title, state, project_root, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
            params![id, creator, assignee, title, TaskState::Submitted as i64, root_key(project_root), now],
        )
        .map_err(io)?;
        tx.execute(
            "INSERT INTO task_history (task_id, seq, from_state, to_state, by_agent, reason, at) VALUES (?1, 1, NULL, ?2, ?3, 'created', ?4)",
            params![id, TaskState::Submitted as i64, creator, now],
        )
        .map_err(io)?;
        emit(
            &tx,
            "task.created",
            creator,
            assignee,
            root_key(project_root),
            &id,
            now,
        )?;
        tx.commit().map_err(io)?;
        self.task_row(&id)
    }

    /// A task by id, for `agent`: only its participants may read it (`FORBIDDEN`; see
    /// `agent_intercom_core::scratchpad::check_task_read`); `NOT_FOUND` when there is none.
    pub fn task(&mut self, id: &str, agent: &str) -> Result<Task, Error> {
        let task = self.task_row(id)?;
        scratchpad::check_task_read(&task.view(), agent)?;
        Ok(task)
    }

    fn task_row(&self, id: &str) -> Result<Task, Error> {
        self.conn
            .query_row(
                "SELECT id, creator, assignee, title, state, project_root, created_at, updated_at FROM tasks WHERE id = ?1",
                [id],
                |r| {
                    Ok(Task {
                        id: r.get(0)?,
                        creator: r.get(1)?,
                        assignee: r.get(2)?,
                        title: r.get(3)?,
                        state: state_of(r.get(4)?).as_str().to_string(),
                        project_root: root_value(r.get(5)?),
                        created_at: r.get(6)?,
                        updated_at: r.get(7)?,
                    })
                },
            )
            .optional()
            .map_err(io)?
            .ok_or_else(|| Error::new(ErrorCode::NotFound, "no such task"))
    }

    /// Moves a task to `to` ("working", "completed" ...). Only its creator and assignee may; only
    /// the creator may cancel; the transition table decides the rest (terminal states are never
    /// left). The change and its reason are recorded in the history, atomically.
    pub fn transition_task(
        &mut self,
        id: &str,
        by: &str,
        to: &str,
        reason: Option<&str>,
    ) -> Result<Task, Error> {
        let to = TaskState::parse(to, "state")?;
        let now = self.clock.now_ms();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(io)?;
        let row: Option<(String, Option<String>, i64)> = tx
            .query_row(
                "SELECT creator, assignee, state FROM tasks WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(io)?;
        let Some((creator, assignee, state)) = row else {
            return Err(Error::new(ErrorCode::NotFound, "no such task"));
        };
        let task = TaskView {
            creator: &creator,
            assignee: assignee.as_deref(),
        };
        if !scratchpad::is_participant(&task, by) {
            return Err(Error::new(
                ErrorCode::Forbidden,
                "only the task's creator and assignee may update it",
            ));
        }
        if to == TaskState::Canceled && by != creator {
            return Err(Error::new(
                ErrorCode::Forbidden,
                "only the task's creator may cancel it",
            ));
        }
        let from = state_of(state);
        scratchpad::check_transition(from, to)?;
        let seq: i64 = tx
            .query_row(
                "SELECT coalesce(max(seq), 0) + 1 FROM task_history WHERE task_id = ?1",
                [id],
                |r| r.get(0),
            )
            .map_err(io)?;
        tx.execute(
            "UPDATE tasks SET state = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, to as i64, now],
        )
        .map_err(io)?;
        tx.execute(
            "INSERT INTO task_history (task_id, seq, from_state, to_state, by_agent, reason, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![id, seq, from as i64, to as i64, by, reason, now],
        )
        .map_err(io)?;
        let other = if by == creator {
            assignee.as_deref()
        } else {
            Some(creator.as_str())
        };
        let root: String = tx
            .query_row("SELECT project_root FROM tasks WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .map_err(io)?;
        emit(&tx, "task.transition", by, other, &root, id, now)?;
        tx.commit().map_err(io)?;
        self.task_row(id)
    }

    /// The task's transitions, oldest first (creation included), for `agent`: participants only,
    /// as [`Store::task`].
    pub fn task_history(&mut self, id: &str, agent: &str) -> Result<Vec<Transition>, Error> {
        self.task(id, agent)?;
        let mut stmt = self
            .conn
            .prepare("SELECT from_state, to_state, by_agent, reason, at FROM task_history WHERE task_id = ?1 ORDER BY seq")
            .map_err(io)?;
        let rows = stmt
            .query_map([id], |r| {
                Ok(Transition {
                    from: r
                        .get::<_, Option<i64>>(0)?
                        .map(|s| state_of(s).as_str().to_string()),
                    to: state_of(r.get(1)?).as_str().to_string(),
                    by: r.get(2)?,
                    reason: r.get(3)?,
                    at: r.get(4)?,
                })
            })
            .map_err(io)?;
        rows.collect::<Result<_, _>>().map_err(io)
    }

    /// Attaches an artifact to a task (participants only).
    pub fn add_artifact(
        &mut self,
        id: &str,
        by: &str,
        name: &str,
        content: &str,
    ) -> Result<(), Error> {
        let task = self.task_row(id)?;
        if !scratchpad::is_participant(&task.view(), by) {
            return Err(Error::new(
                ErrorCode::Forbidden,
                "only the task's creator and assignee may attach artifacts",
            ));
        }
        if content.len() > self.config.max_content_bytes {
            return Err(Error::new(
                ErrorCode::ContentTooLarge,
                format!(
                    "artifact is larger than {} bytes",
                    self.config.max_content_bytes
                ),
            ));
        }
        let now = self.clock.now_ms();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(io)?;
        let seq: i64 = tx
            .query_row(
                "SELECT coalesce(max(seq), 0) + 1 FROM task_artifacts WHERE task_id = ?1",
                [id],
                |r| r.get(0),
            )
            .map_err(io)?;
        tx.execute(
            "INSERT INTO task_artifacts (task_id, seq, by_agent, name, content, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![id, seq, by, name, content, now],
        )
        .map_err(io)?;
        tx.commit().map_err(io)
    }

    /// The task's artifacts, oldest first, for `agent`: participants only, as [`Store::task`].
    pub fn artifacts(&mut self, id: &str, agent: &str) -> Result<Vec<Artifact>, Error> {
        self.task(id, agent)?;
        let mut stmt = self.conn.prepare("SELECT by_agent, name, content, at FROM task_artifacts WHERE task_id = ?1 ORDER BY seq").map_err(io)?;
        let rows = stmt
            .query_map([id], |r| {
                Ok(Artifact {
                    by: r.get(0)?,
                    name: r.get(1)?,
                    content: r.get(2)?,
                    at: r.get(3)?,
                })
            })
            .map_err(io)?;
        rows.collect::<Result<_, _>>().map_err(io)
    }

    /// Takes one token at every limited level for `agent` calling `tool`, atomically across
    /// processes. When any level is empty, nothing is taken anywhere and the answer says when to
    /// retry (the longest wait among the refusing levels, rounded up, never 0).
    pub fn take_rate(
        &mut self,
        agent: &str,
        tool: &str,
        limits: &RateLimits,
    ) -> Result<RateDecision, Error> {
        for (name, limit) in [
            ("global", limits.global_per_min),
            ("agent", limits.agent_per_min),
            ("tool", limits.tool_per_min),
        ] {
            if limit == Some(0) {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!(
                        "the {name} rate limit must be at least 1 per minute (omit it for no limit)"
                    ),
                ));
            }
        }
        let now = self.clock.now_ms();
        let levels: Vec<(&'static str, String, u32)> = [
            ("global", "global".to_string(), limits.global_per_min),
            ("agent", format!("agent:{agent}"), limits.agent_per_min),
            ("tool", format!("tool:{tool}"), limits.tool_per_min),
        ]
        .into_iter()
        .filter_map(|(level, key, limit)| limit.map(|l| (level, key, l)))
        .collect();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(io)?;
        let mut buckets = Vec::new();
        for (level, key, per_min) in &levels {
            let stored: Option<(i64, i64)> = tx
                .query_row(
                    "SELECT milli_tokens, refilled_at FROM buckets WHERE key = ?1",
                    [key],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(io)?;
            let bucket = match stored {
                Some((milli_tokens, refilled_at)) => scratchpad::Bucket {
                    milli_tokens,
                    refilled_at,
                }
                .refilled(*per_min, now),
                None => scratchpad::Bucket::full(*per_min, now),
            };
            buckets.push((*level, key.clone(), *per_min, bucket));
        }
        let refusing: Vec<(&'static str, i64)> = buckets
            .iter()
            .filter(|(_, _, _, b)| b.milli_tokens < 1000)
            .map(|(level, _, per_min, b)| (*level, b.wait_ms(*per_min, now)))
            .collect();
        if !refusing.is_empty() {
            tx.rollback().map_err(io)?;
            let retry_after_ms = refusing.iter().map(|(_, w)| *w).max().unwrap_or(1).max(1);
            return Ok(RateDecision::Refused {
                retry_after_ms,
                levels: refusing.into_iter().map(|(l, _)| l).collect(),
            });
        }
        for (_, key, _, b) in &buckets {
            tx.execute(
                "INSERT INTO buckets (key, milli_tokens, refilled_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (key) DO UPDATE SET milli_tokens = excluded.milli_tokens, refilled_at = excluded.refilled_at",
                params![key, b.milli_tokens - 1000, b.refilled_at],
            )
            .map_err(io)?;
        }
        tx.commit().map_err(io)?;
        Ok(RateDecision::Allowed)
    }

    /// Adds one call's usage and cost to the totals of (agent, tool), atomically across processes,
    /// and returns the call's cost as recorded. Stored integers are SQLite's 64-bit ones: a
    /// value, and every total, saturates at `i64::MAX` (an overflowing sum would otherwise turn
    /// into an unreadable float).
    pub fn record_cost(
        &mut self,
        agent: &str,
        tool: &str,
        usage: &Usage,
        pricing: &Pricing,
    ) -> Result<u64, Error> {
        let clamp = |v: u64| v.min(i64::MAX as u64) as i64;
        let cost = clamp(pricing.cost_micros(usage));
        self.conn
            .execute(
                // An integer sum past i64::MAX is a float in SQLite; min() brings it back.
                "INSERT INTO costs (agent, tool, input_tokens, output_tokens, cached_tokens, calls, cost_micros) VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6)
                 ON CONFLICT (agent, tool) DO UPDATE SET
                   input_tokens = min(input_tokens + excluded.input_tokens, 9223372036854775807),
                   output_tokens = min(output_tokens + excluded.output_tokens, 9223372036854775807),
                   cached_tokens = min(cached_tokens + excluded.cached_tokens, 9223372036854775807),
                   calls = min(calls + 1, 9223372036854775807),
                   cost_micros = min(cost_micros + excluded.cost_micros, 9223372036854775807)",
                params![agent, tool, clamp(usage.input_tokens), clamp(usage.output_tokens), clamp(usage.cached_tokens), cost],
            )
            .map_err(io)?;
        Ok(cost as u64)
    }

    /// Totals per (agent, tool), ordered by agent then tool.
    pub fn costs(&mut self) -> Result<Vec<CostRow>, Error> {
        let mut stmt = self
            .conn
            // CAST: totals an older version let overflow into floats read back saturated.
            .prepare(
                "SELECT agent, tool, CAST(input_tokens AS INTEGER), CAST(output_tokens AS INTEGER),
                 CAST(cached_tokens AS INTEGER), CAST(calls AS INTEGER), CAST(cost_micros AS INTEGER)
                 FROM costs ORDER BY agent, tool",
            )
            .map_err(io)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(CostRow {
                    agent: r.get(0)?,
                    tool: r.get(1)?,
                    usage: Usage {
                        input_tokens: r.get::<_, i64>(2)? as u64,
                        output_tokens: r.get::<_, i64>(3)? as u64,
                        cached_tokens: r.get::<_, i64>(4)? as u64,
                    },
                    calls: r.get::<_, i64>(5)? as u64,
                    cost_micros: r.get::<_, i64>(6)? as u64,
                })
            })
            .map_err(io)?;
        rows.collect::<Result<_, _>>().map_err(io)
    }
}

/// The export format's name.
pub const SNAPSHOT_SCHEMA: &str = "a2a-snapshot-v1";
/// Most items of each kind an export holds.
pub const MAX_EXPORT_ITEMS: usize = 1000;

impl Store {
    /// An `a2a-snapshot-v1` export for `agent`: the newest `limit` (1..=1000) agents, visible
    /// messages and tasks it takes part in (or of its project), each list sorted newest first
    /// then by id, as canonical JSON. Redacted unless `full` is asked and the store's
    /// configuration allows it (`FORBIDDEN` otherwise).
    pub fn export(
        &mut self,
        agent: &str,
        project_root: Option<&str>,
        limit: usize,
        full: bool,
    ) -> Result<String, Error> {
        use agent_intercom_core::canonical::Value;
        if !(1..=MAX_EXPORT_ITEMS).contains(&limit) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("limit must be from 1 to {MAX_EXPORT_ITEMS}"),
            ));
        }
        if full && !self.config.allow_full_export {
            return Err(Error::new(
                ErrorCode::Forbidden,
                "full exports are not allowed by this store's configuration",
            ));
        }
        let now = self.clock.now_ms();
        let clean = |text: &str| {
            if full {
                text.to_string()
            } else {
                scratchpad::redact(text, project_root)
            }
        };
        let s = |v: &str| Value::String(v.to_string().into());
        let opt = |v: Option<&str>| v.map_or(Value::Null, |x| Value::String(x.to_string().into()));
        let obj = |pairs: Vec<(&str, Value<'static>)>| {
            Value::Object(
                pairs
                    .into_iter()
                    .map(|(k, v)| (k.to_string().into(), v))
                    .collect(),
            )
        };
        // Messages: everything visible, newest first.
        let mut messages = self
            .list(agent, project_root, None, None, MAX_EXPORT_ITEMS, None)?
            .messages;
        messages.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        messages.truncate(limit);
        let messages: Vec<Value<'static>> = messages
            .iter()
            .map(|m| {
                obj(vec![
                    ("id", s(&m.id)),
                    ("from", s(&m.from)),
                    ("to", opt(m.to.as_deref())),
                    ("category", s(&m.category)),
                    ("priority", s(&m.priority)),
                    ("privacy", s(&m.privacy)),
                    ("content", s(&clean(&m.content))),
                    (
                        "metadata",
                        m.metadata
                            .as_deref()
                            .map_or(Value::Null, |md| s(&clean(md))),
                    ),
                    ("task_id", opt(m.task_id.as_deref())),
                    ("created_at", Value::Int(m.created_at)),
                    ("expires_at", Value::Int(m.expires_at)),
                ])
            })
            .collect();
        let root = root_key(project_root).to_string();
        let agents: Vec<Value<'static>> = {
            let mut stmt = self
                .conn
                .prepare("SELECT agent_id, team_id, registered_at FROM agents WHERE (?1 = 0 OR project_root = ?2) ORDER BY registered_at DESC, agent_id DESC LIMIT ?3")
                .map_err(io)?;
            let rows = stmt
                .query_map(
                    params![project_root.is_some() as i64, root, limit as i64],
                    |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, Option<String>>(1)?,
                            r.get::<_, i64>(2)?,
                        ))
                    },
                )
                .map_err(io)?;
            rows.collect::<Result<Vec<_>, _>>()
                .map_err(io)?
                .into_iter()
                .map(|(id, team, at)| {
                    obj(vec![
                        ("agent_id", s(&id)),
                        ("team_id", opt(team.as_deref())),
                        ("registered_at", Value::Int(at)),
                    ])
                })
                .collect()
        };
        let tasks: Vec<Value<'static>> = {
            let mut stmt = self
                .conn
                .prepare(
                    "SELECT id, creator, assignee, title, state, created_at, updated_at FROM tasks
                     WHERE (creator = ?1 OR assignee = ?1) AND (?2 = 0 OR project_root = ?3)
                     ORDER BY created_at DESC, id DESC LIMIT ?4",
                )
                .map_err(io)?;
            let rows = stmt
                .query_map(
                    params![agent, project_root.is_some() as i64, root, limit as i64],
                    |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, Option<String>>(2)?,
                            r.get::<_, String>(3)?,
                            r.get::<_, i64>(4)?,
                            r.get::<_, i64>(5)?,
                            r.get::<_, i64>(6)?,
                        ))
                    },
                )
                .map_err(io)?;
            // The query selects the participants' tasks; the read rule is still the judge.
            rows.collect::<Result<Vec<_>, _>>()
                .map_err(io)?
                .into_iter()
                .filter(|(_, creator, assignee, ..)| {
                    let task = TaskView {
                        creator,
                        assignee: assignee.as_deref(),
                    };
                    scratchpad::check_task_read(&task, agent).is_ok()
                })
                .map(|(id, creator, assignee, title, state, created, updated)| {
                    obj(vec![
                        ("id", s(&id)),
                        ("creator", s(&creator)),
                        ("assignee", opt(assignee.as_deref())),
                        ("title", s(&clean(&title))),
                        ("state", s(state_of(state).as_str())),
                        ("created_at", Value::Int(created)),
                        ("updated_at", Value::Int(updated)),
                    ])
                })
                .collect()
        };
        let snapshot = obj(vec![
            ("schema", s(SNAPSHOT_SCHEMA)),
            ("schema_version", Value::Int(1)),
            ("generated_at", Value::Int(now)),
            ("agent", s(agent)),
            (
                "project_root",
                if full {
                    opt(project_root)
                } else {
                    opt(project_root.map(|_| "."))
                },
            ),
            ("redacted", Value::Bool(!full)),
            ("limit", Value::Int(limit as i64)),
            ("agents", Value::Array(agents)),
            ("messages", Value::Array(messages)),
            ("tasks", Value::Array(tasks)),
        ]);
        agent_intercom_core::canonical::canonical_json(&snapshot)
    }

    /// Writes [`Store::export`] to `path` atomically: a new temporary file in the same directory
    /// (a fresh name, opened with O_CREAT|O_EXCL, which never follows a symbolic link; mode
    /// 0600), synced, then renamed over `path` (a symbolic link at `path` is replaced, never
    /// written through).
    pub fn export_to_file(
        &mut self,
        path: &Path,
        agent: &str,
        project_root: Option<&str>,
        limit: usize,
        full: bool,
    ) -> Result<(), Error> {
        use std::io::Write;
        let Some(base) = path.file_name().and_then(|n| n.to_str()) else {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "path {:?} names no file to write the export to",
                    path.display().to_string()
                ),
            ));
        };
        let json = self.export(agent, project_root, limit, full)?;
        let fail = |e: std::io::Error| {
            Error::new(
                ErrorCode::StoreIo,
                format!("cannot write the export to {}: {e}", path.display()),
            )
        };
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut attempt = 0;
        let (tmp, mut file) = loop {
            let tmp = dir.join(format!(
                ".{base}.tmp-{}-{}",
                std::process::id(),
                uuid::Uuid::now_v7().simple()
            ));
            let mut create = std::fs::OpenOptions::new();
            create.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut create, 0o600);
            match create.open(&tmp) {
                Ok(file) => break (tmp, file),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 8 => {
                    attempt += 1;
                }
                Err(e) => return Err(fail(e)),
            }
        };
        let result = (|| {
            file.write_all(json.as_bytes())?;
            file.write_all(b"\n")?;
            file.sync_all()?;
            std::fs::rename(&tmp, path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result.map_err(fail)
    }
}

fn emit(
    tx: &rusqlite::Transaction<'_>,
    kind: &str,
    actor: &str,
    target: Option<&str>,
    root: &str,
    ref_id: &str,
    at: i64,
) -> Result<(), Error> {
    tx.execute(
        "INSERT INTO events (kind, actor, target, project_root, ref_id, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![kind, actor, target, root, ref_id, at],
    )
    .map_err(io)?;
    Ok(())
}

/// One event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Cursor position (increasing).
    pub seq: i64,
    /// "message.posted", "task.created", "task.transition".
    pub kind: String,
    /// Who caused it.
    pub actor: String,
    /// Whom it is for, when directed (only that agent sees it).
    pub target: Option<String>,
    /// The message or task id.
    pub ref_id: String,
    /// Milliseconds since the epoch.
    pub at: i64,
}

/// The event kinds, for [`EventFilter::kinds`].
pub const EVENT_KINDS: &[&str] = &["message.posted", "task.created", "task.transition"];

/// Which events [`Store::poll_events`] returns: empty lists mean "any".
#[derive(Clone, Debug, Default)]
pub struct EventFilter {
    /// Event kinds.
    pub kinds: Vec<String>,
    /// Actors.
    pub actors: Vec<String>,
    /// Targets.
    pub targets: Vec<String>,
}

impl Store {
    /// Events after cursor `after` (0 for the start) that `agent` may see and the filter keeps,
    /// oldest first, at most `limit` (1..=1000). A directed event is visible only to its target;
    /// a message event only while the message itself is visible to the agent. Returns the events
    /// and the cursor to pass next time. A negative cursor, one beyond the newest event (it
    /// cannot come from this store) and an unknown kind in the filter are `INVALID_ARGUMENT`.
    pub fn poll_events(
        &mut self,
        agent: &str,
        project_root: Option<&str>,
        after: i64,
        filter: &EventFilter,
        limit: usize,
    ) -> Result<(Vec<Event>, i64), Error> {
        if !(1..=1000).contains(&limit) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "limit must be from 1 to 1000",
            ));
        }
        if let Some(kind) = filter
            .kinds
            .iter()
            .find(|k| !EVENT_KINDS.contains(&k.as_str()))
        {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "kinds holds {kind:?}, which is no event kind; kinds: {}",
                    EVENT_KINDS.join(", ")
                ),
            ));
        }
        if after < 0 {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "after must be 0 (the start) or a cursor a previous poll returned",
            ));
        }
        let now = self.clock.now_ms();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(io)?;
        // Events are never deleted, so the newest is the largest cursor this store can return.
        let newest: i64 = tx
            .query_row("SELECT coalesce(max(seq), 0) FROM events", [], |r| r.get(0))
            .map_err(io)?;
        if after > newest {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "after ({after}) is beyond the newest event ({newest}); pass 0 or a cursor this \
                     store returned"
                ),
            ));
        }
        tx.execute("DELETE FROM messages WHERE expires_at <= ?1", [now])
            .map_err(io)?;
        let reader = Store::reader(&tx, agent, project_root)?;
        let rows: Vec<Event> = {
            let mut stmt = tx
                .prepare("SELECT seq, kind, actor, target, ref_id, at, project_root FROM events WHERE seq > ?1 AND (?2 = 0 OR project_root = ?3) ORDER BY seq")
                .map_err(io)?;
            let mapped = stmt
                .query_map(
                    params![after, project_root.is_some() as i64, root_key(project_root)],
                    |r| {
                        Ok(Event {
                            seq: r.get(0)?,
                            kind: r.get(1)?,
                            actor: r.get(2)?,
                            target: r.get(3)?,
                            ref_id: r.get(4)?,
                            at: r.get(5)?,
                        })
                    },
                )
                .map_err(io)?;
            mapped.collect::<Result<_, _>>().map_err(io)?
        };
        let mut out = Vec::new();
        let mut cursor = after;
        for e in rows {
            cursor = e.seq;
            let directed_ok = e.target.as_deref().is_none_or(|t| t == agent);
            let message_ok = e.kind != "message.posted" || {
                let row = tx
                    .query_row(
                        &format!("SELECT {COLUMNS}, seq FROM messages WHERE id = ?1"),
                        [&e.ref_id],
                        row_to_message,
                    )
                    .optional()
                    .map_err(io)?;
                row.is_some_and(|m| is_visible(&m, &reader, now))
            };
            let keep = |list: &Vec<String>, v: Option<&str>| {
                list.is_empty() || v.is_some_and(|v| list.iter().any(|x| x == v))
            };
            if directed_ok
                && message_ok
                && keep(&filter.kinds, Some(&e.kind))
                && keep(&filter.actors, Some(&e.actor))
                && keep(&filter.targets, e.target.as_deref())
            {
                out.push(e);
                if out.len() == limit {
                    break;
                }
            }
        }
        tx.commit().map_err(io)?;
        Ok((out, cursor))
    }
}

/// The one visibility rule (unread, list, events and export come here), with the reader's team
/// as it stood when the message was posted.
fn is_visible(stored: &Stored, reader: &Reader<'_>, now: i64) -> bool {
    let m = &stored.message;
    let Ok(privacy) = Privacy::parse(&m.privacy, "privacy") else {
        return false;
    };
    let view = MessageView {
        from: &m.from,
        to: m.to.as_deref(),
        privacy,
        sender_team: stored.sender_team.as_deref(),
        project_root: m.project_root.as_deref(),
        expires_at: m.expires_at,
    };
    let reader = ReaderView {
        agent: reader.agent,
        team: scratchpad::team_when_posted(reader.team.as_deref(), reader.team_seq, stored.seq),
        project_root: reader.project_root,
    };
    scratchpad::visible(&view, &reader, now)
}

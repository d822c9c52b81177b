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

// `impl Store` is split by concern: messages (post, unread, list), tasks, limits (rate limits and
// costs), export, events, nonces, and a2a (what A2A adds to tasks). This file keeps opening, the
// schema and migrations, and what they all share (row decoding, the visibility rule, the reader,
// the write transaction). Modules import only `events::emit` and, for a2a, the in-transaction
// inserts of messages and tasks (no cycle).
mod a2a;
pub mod api;
pub mod checkpoint;
mod events;
mod export;
pub mod file;
mod gateway;
mod limits;
mod messages;
mod nonces;
pub mod paths;
mod tasks;

pub use a2a::{
    A2A_CATEGORY, A2aChanges, A2aInbound, A2aPage, A2aQuery, A2aTask, A2aView, Canceled,
    GatewayTarget, MAX_A2A_ID_BYTES, MAX_A2A_PAGE, Receipt,
};
pub use events::{EVENT_KINDS, Event, EventFilter};
pub use export::{MAX_EXPORT_ITEMS, SNAPSHOT_SCHEMA};
pub use gateway::{ASK_ID_PREFIX, AskState, GatewayAsk, GatewayReply};
pub use limits::{CostRow, Pricing, RateDecision, RateLimits, Usage};
pub use messages::{NewMessage, Page, Posted};
pub use nonces::MAX_NONCE_BYTES;
pub use paths::default_path;
pub use tasks::{Artifact, Task, Transition};

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_intercom_core::scratchpad::{
    self, MessageView, Priority, Privacy, ReaderView, TaskState,
};
use agent_intercom_core::{Error, ErrorCode};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

/// The store's schema version. A newer store is refused and left untouched.
pub const SCHEMA_VERSION: i64 = 8;

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

/// The open store.
pub struct Store {
    conn: Connection,
    clock: Arc<dyn Clock>,
    config: Config,
    /// Copies the write-ahead log back off the posting thread (dropped after `conn`).
    checkpoints: checkpoint::Checkpointer,
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
     CREATE TABLE buckets (key TEXT PRIMARY KEY, milli_tokens INTEGER NOT NULL, \
     refilled_at INTEGER NOT NULL);
     CREATE TABLE costs (
     agent TEXT NOT NULL, tool TEXT NOT NULL, input_tokens INTEGER NOT NULL, \
     output_tokens INTEGER NOT NULL,
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
     INSERT INTO message_counts SELECT 0, project_root, count(*) FROM messages \
     GROUP BY project_root;
     INSERT INTO message_counts SELECT 1, to_agent, count(*) FROM messages
     WHERE to_agent IS NOT NULL GROUP BY to_agent;
     CREATE TRIGGER messages_counted AFTER INSERT ON messages BEGIN
     INSERT INTO message_counts (kind, key, n) VALUES (0, NEW.project_root, 1)
     ON CONFLICT (kind, key) DO UPDATE SET n = n + 1;
     INSERT INTO message_counts (kind, key, n) SELECT 1, NEW.to_agent, 1 \
     WHERE NEW.to_agent IS NOT NULL
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
    // Nonces seen in signed transport envelopes and signed HTTP requests, per scope ("envelope",
    // "http") and key id, kept until the signature they came with expires: a replay within
    // validity is refused (`Store::remember_nonce`).
    "CREATE TABLE seen_nonces (
     scope TEXT NOT NULL, key_id TEXT NOT NULL, nonce TEXT NOT NULL, expires_at INTEGER NOT NULL,
     PRIMARY KEY (scope, key_id, nonce));
     CREATE INDEX seen_nonces_expiry ON seen_nonces (expires_at);",
    // What A2A adds to the tasks A2A clients create over `agent-intercom serve` (a2a.rs): the
    // sender (the task's creator), the context, the id a 0.1 client chose and the version the
    // task was created with; the client's messages in the task's history, one per sender and
    // messageId (idempotent sends), with a digest of each.
    "CREATE TABLE a2a_tasks (
     task_id TEXT PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE, sender TEXT NOT NULL,
     context_id TEXT NOT NULL, legacy_id TEXT, dialect TEXT NOT NULL, created_at INTEGER NOT NULL);
     CREATE INDEX a2a_tasks_context ON a2a_tasks (sender, context_id);
     CREATE UNIQUE INDEX a2a_tasks_legacy ON a2a_tasks (sender, legacy_id)
     WHERE legacy_id IS NOT NULL;
     CREATE TABLE a2a_messages (
     task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE, seq INTEGER NOT NULL,
     sender TEXT NOT NULL, message_id TEXT NOT NULL, digest TEXT NOT NULL, message TEXT NOT NULL,
     at INTEGER NOT NULL, PRIMARY KEY (task_id, seq));
     CREATE UNIQUE INDEX a2a_messages_id ON a2a_messages (sender, message_id);
     CREATE INDEX tasks_updated ON tasks (updated_at, id);",
    // The asks of `serve --broker` (gateway.rs): each A2A task it forwards, the ask it became
    // (its message id at the broker), the session asked, what was asked, and how far it got.
    "CREATE TABLE a2a_asks (
     task_id TEXT PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
     ask_id TEXT NOT NULL UNIQUE, target TEXT NOT NULL, content TEXT NOT NULL,
     state TEXT NOT NULL, updated_at INTEGER NOT NULL);
     CREATE INDEX a2a_asks_state ON a2a_asks (state);",
];

/// How long a write waits for the store's lock before failing with `STORE_IO`.
pub const BUSY_GIVE_UP: Duration = Duration::from_secs(30);

fn io(e: rusqlite::Error) -> Error {
    file::sqlite_error(STORE, e)
}

/// What the store's errors call it.
const STORE: &str = "the scratchpad store";

/// Project roots are stored as text; "no project" is the empty string so it can be compared.
fn root_key(root: Option<&str>) -> &str {
    root.unwrap_or("")
}

fn root_value(key: String) -> Option<String> {
    (!key.is_empty()).then_some(key)
}

const COLUMNS: &str = "id, from_agent, to_agent, category, priority, privacy, content, metadata, \
                       task_id, project_root, created_at, expires_at, sender_team";

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

/// A task state as stored (its number); a number this version does not know reads as failed.
fn state_of(value: i64) -> TaskState {
    TaskState::ALL
        .get(value as usize)
        .copied()
        .unwrap_or(TaskState::Failed)
}

/// The reading agent, with its team in the active project and where in the commit sequence it
/// joined that team.
struct Reader<'a> {
    agent: &'a str,
    team: Option<String>,
    team_seq: i64,
    project_root: Option<&'a str>,
}

/// What [`Store::observe`] hands a mutation: the open write transaction (commit it, or drop it
/// to roll back, purge included), the time it observes, and the reader.
struct Observed<'s, 'a> {
    tx: Transaction<'s>,
    now: i64,
    reader: Reader<'a>,
}

/// The largest page of [`Store::list`] and [`Store::poll_events`].
const MAX_PAGE: usize = 1000;

/// Refuses a page size outside `1..=max`.
fn check_limit(limit: usize, max: usize) -> Result<(), Error> {
    if !(1..=max).contains(&limit) {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("limit must be from 1 to {max}"),
        ));
    }
    Ok(())
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
        let mut conn = file::open_private(path, STORE)?;
        // No post pays for a checkpoint: a thread of this store copies the log back on its own
        // connection (see `checkpoint`).
        // The file as SQLite resolved it (a relative path would follow a later chdir).
        let own = conn
            .path()
            .map_or_else(|| path.to_path_buf(), std::path::PathBuf::from);
        let checkpoints = checkpoint::Checkpointer::install(
            &mut conn,
            checkpoint::Policy::default(),
            Arc::new(move || {
                file::open_private(&own, STORE)
                    .map_err(|_| rusqlite::Error::InvalidPath(own.clone()))
            }),
        )
        .map_err(io)?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(io)?;
        if version > SCHEMA_VERSION {
            return Err(Error::new(
                ErrorCode::StoreNewerSchema,
                format!(
                    "the scratchpad store has schema version {version}, newer than \
                     {SCHEMA_VERSION}; refusing to touch it"
                ),
            ));
        }
        let mut store = Store {
            conn,
            clock,
            config,
            checkpoints,
        };
        store.migrate(version)?;
        Ok(store)
    }

    /// How many PASSIVE, RESTART and TRUNCATE checkpoints this store's thread ran (see
    /// [`checkpoint`]).
    pub fn checkpoints(&self) -> [u64; 3] {
        self.checkpoints.counts()
    }

    /// Forward migrations from `from`, each step in its own transaction; a step another process
    /// applied meanwhile is skipped (the version is re-read under the write lock).
    fn migrate(&mut self, from: i64) -> Result<(), Error> {
        for (step, sql) in MIGRATIONS.iter().enumerate().skip(from.max(0) as usize) {
            let to = step as i64 + 1;
            let tx = self.write()?;
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

    /// Starts a write transaction with `BEGIN IMMEDIATE`: the store's write lock is taken up
    /// front, waited for by the busy handler [`Store::open`] installs (short jittered sleeps, up to
    /// [`BUSY_GIVE_UP`]), so a transaction never fails half-way upgrading a read lock. Every
    /// multi-statement write of the store starts here.
    fn write(&mut self) -> Result<Transaction<'_>, Error> {
        self.conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(io)
    }

    /// The prologue of every mutation that observes messages (post, unread, list, events): the
    /// time, a write transaction, expired messages purged in it (so time-to-live needs no
    /// background job), and `agent` as a reader with its team in `project_root`.
    fn observe<'a>(
        &mut self,
        agent: &'a str,
        project_root: Option<&'a str>,
    ) -> Result<Observed<'_, 'a>, Error> {
        let now = self.clock.now_ms();
        let tx = self.write()?;
        tx.execute("DELETE FROM messages WHERE expires_at <= ?1", [now])
            .map_err(io)?;
        let reader = Store::reader(&tx, agent, project_root)?;
        Ok(Observed { tx, now, reader })
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

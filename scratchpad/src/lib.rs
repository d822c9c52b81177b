//! # agent-intercom-scratchpad
//!
//! The agent scratchpad of the a2a-contract-v1 on one SQLite database (WAL; writes in
//! `BEGIN IMMEDIATE` transactions), safe for many processes at once. The rules (visibility, TTL,
//! addressing) are `agent_intercom_core::scratchpad`'s; this crate stores, orders and bounds.
//!
//! - **Visibility**: one function (`agent_intercom_core::scratchpad::visible`) decides for
//!   [`Store::read_unread`] and [`Store::list`]. Team membership: an agent belongs to the team id
//!   it registered with ([`Store::register_agent`]) in a project; a team message is for the team
//!   its sender had in that project when it posted.
//! - **Order**: priority (critical first), then creation time, then id: stable for pagination.
//! - **Read once**: `read_unread` returns each visible message to an agent once (a per-agent read
//!   mark is written in the same transaction).
//! - **Expiry**: expired rows are deleted by the mutation that observes them (every post and
//!   every read), so time-to-live needs no background job. Time comes from a [`Clock`].
//! - **Bounds**: at most `per_project_cap` live messages per project root and `per_recipient_cap`
//!   per recipient; a post over a bound evicts the lowest priority, then the oldest, and reports
//!   the evicted ids.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_intercom_core::scratchpad::{self, MessageView, Priority, Privacy, ReaderView};
use agent_intercom_core::{Error, ErrorCode};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// The store's schema version. A newer store is refused and left untouched.
pub const SCHEMA_VERSION: i64 = 1;

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
}

impl Default for Config {
    fn default() -> Config {
        Config {
            per_project_cap: 10_000,
            per_recipient_cap: 1_000,
            max_content_bytes: 64 * 1024,
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
        _ => Error::new(ErrorCode::StoreIo, format!("scratchpad store: {e}")),
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

fn row_to_message(r: &rusqlite::Row<'_>) -> rusqlite::Result<(Message, Option<String>)> {
    let priority: i64 = r.get(4)?;
    let privacy: i64 = r.get(5)?;
    Ok((
        Message {
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
        r.get(12)?,
    ))
}

impl Store {
    /// Opens (or creates) the store at `path`. A store of a newer schema is refused
    /// (`STORE_NEWER_SCHEMA`); an unreadable file is refused (`STORE_CORRUPT`). Neither is ever
    /// replaced or rewritten.
    pub fn open(path: &Path, config: Config, clock: Arc<dyn Clock>) -> Result<Store, Error> {
        let conn = Connection::open(path).map_err(io)?;
        conn.busy_timeout(Duration::from_secs(10)).map_err(io)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(io)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
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

    /// Forward migrations, each in one transaction.
    fn migrate(&mut self, from: i64) -> Result<(), Error> {
        if from < 1 {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(io)?;
            let current: i64 = tx
                .pragma_query_value(None, "user_version", |r| r.get(0))
                .map_err(io)?;
            if current < 1 {
                tx.execute_batch(
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
                       PRIMARY KEY (agent_id, message_id));
                     PRAGMA user_version = 1;",
                )
                .map_err(io)?;
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
                "INSERT INTO agents (agent_id, project_root, team_id, registered_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (agent_id, project_root) DO UPDATE SET team_id = excluded.team_id",
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
        // Room in the project, then for the recipient: lowest priority first, then oldest.
        let project_count: i64 = tx
            .query_row(
                "SELECT count(*) FROM messages WHERE project_root = ?1",
                [&root],
                |r| r.get(0),
            )
            .map_err(io)?;
        let over = (project_count + 1 - per_project as i64).max(0);
        if over > 0 {
            let mut stmt = tx
                .prepare("SELECT id FROM messages WHERE project_root = ?1 ORDER BY priority ASC, created_at ASC, id ASC LIMIT ?2")
                .map_err(io)?;
            evicted.extend(
                stmt.query_map(params![root, over], |r| r.get::<_, String>(0))
                    .map_err(io)?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(io)?,
            );
        }
        if let Some(to) = &m.to {
            let count: i64 = tx
                .query_row("SELECT count(*) FROM messages WHERE to_agent = ?1 AND id NOT IN (SELECT value FROM json_each(?2))", params![to, json_list(&evicted)], |r| r.get(0))
                .map_err(io)?;
            let over = (count + 1 - per_recipient as i64).max(0);
            if over > 0 {
                let mut stmt = tx
                    .prepare("SELECT id FROM messages WHERE to_agent = ?1 AND id NOT IN (SELECT value FROM json_each(?3)) ORDER BY priority ASC, created_at ASC, id ASC LIMIT ?2")
                    .map_err(io)?;
                let more = stmt
                    .query_map(params![to, over, json_list(&evicted)], |r| {
                        r.get::<_, String>(0)
                    })
                    .map_err(io)?;
                evicted.extend(more.collect::<Result<Vec<_>, _>>().map_err(io)?);
            }
        }
        for victim in &evicted {
            tx.execute("DELETE FROM messages WHERE id = ?1", [victim])
                .map_err(io)?;
        }
        tx.execute(
            &format!("INSERT INTO messages ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"),
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
                sender_team
            ],
        )
        .map_err(io)?;
        tx.commit().map_err(io)?;
        Ok(Posted {
            id,
            expires_at,
            evicted,
        })
    }

    fn reader_team(
        tx: &rusqlite::Transaction<'_>,
        agent: &str,
        root: &str,
    ) -> Result<Option<String>, Error> {
        Ok(tx
            .query_row(
                "SELECT team_id FROM agents WHERE agent_id = ?1 AND project_root = ?2",
                params![agent, root],
                |r| r.get(0),
            )
            .optional()
            .map_err(io)?
            .flatten())
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
        let team = Store::reader_team(&tx, agent, root_key(project_root))?;
        let filter = if project_root.is_some() {
            "AND m.project_root = ?2"
        } else {
            "AND ?2 = ?2"
        };
        let sql = format!(
            "SELECT {} FROM messages m WHERE NOT EXISTS (SELECT 1 FROM reads r WHERE r.agent_id = ?1 AND r.message_id = m.id) {filter}
             ORDER BY m.priority DESC, m.created_at ASC, m.id ASC",
            COLUMNS.split(", ").map(|c| format!("m.{c}")).collect::<Vec<_>>().join(", ")
        );
        let rows: Vec<(Message, Option<String>)> = {
            let mut stmt = tx.prepare(&sql).map_err(io)?;
            let mapped = stmt
                .query_map(params![agent, root_key(project_root)], row_to_message)
                .map_err(io)?;
            mapped.collect::<Result<_, _>>().map_err(io)?
        };
        let reader = ReaderView {
            agent,
            team: team.as_deref(),
            project_root,
        };
        let visible: Vec<Message> = rows
            .into_iter()
            .filter(|(m, t)| is_visible(m, t.as_deref(), &reader, now))
            .map(|(m, _)| m)
            .collect();
        for m in &visible {
            tx.execute(
                "INSERT OR IGNORE INTO reads (agent_id, message_id) VALUES (?1, ?2)",
                params![agent, m.id],
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
        let team = Store::reader_team(&tx, agent, root_key(project_root))?;
        let rows: Vec<(Message, Option<String>)> = {
            let mut stmt = tx
                .prepare(&format!(
                    "SELECT {COLUMNS} FROM messages WHERE (?1 = 0 OR project_root = ?2) AND (?3 IS NULL OR category = ?3)
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
        let reader = ReaderView {
            agent,
            team: team.as_deref(),
            project_root,
        };
        let visible: Vec<Message> = rows
            .into_iter()
            .filter(|(m, t)| is_visible(m, t.as_deref(), &reader, now))
            .map(|(m, _)| m)
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

fn json_list(ids: &[String]) -> String {
    let items: Vec<String> = ids
        .iter()
        .map(|i| format!("\"{}\"", i.replace('"', "")))
        .collect();
    format!("[{}]", items.join(","))
}

fn is_visible(m: &Message, sender_team: Option<&str>, reader: &ReaderView<'_>, now: i64) -> bool {
    let Ok(privacy) = Privacy::parse(&m.privacy, "privacy") else {
        return false;
    };
    let view = MessageView {
        from: &m.from,
        to: m.to.as_deref(),
        privacy,
        sender_team,
        project_root: m.project_root.as_deref(),
        expires_at: m.expires_at,
    };
    scratchpad::visible(&view, reader, now)
}

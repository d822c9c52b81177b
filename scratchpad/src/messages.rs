//! Messages: posting (with purge and eviction), reading once, and listing.

use agent_intercom_core::scratchpad::{self, Priority, Privacy};
use agent_intercom_core::{Error, ErrorCode};
use rusqlite::{OptionalExtension, Transaction, params};

use crate::events::emit;
use crate::{
    COLUMNS, MAX_PAGE, Message, Observed, Store, Stored, check_limit, io, is_visible, root_key,
    row_to_message,
};

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

impl Store {
    /// Posts a message, purging expired ones and evicting to stay within the bounds. Refused with
    /// a stable code (and nothing changed) for a bad TTL, a private message without recipient,
    /// an unknown priority or privacy, oversized content or invalid metadata.
    pub fn post(&mut self, m: &NewMessage) -> Result<Posted, Error> {
        let checked = self.check_new(m)?;
        let caps = (self.config.per_project_cap, self.config.per_recipient_cap);
        let Observed { tx, now, reader } = self.observe(&m.from, m.project_root.as_deref())?;
        // The team the sender has now is the one the message is for.
        let posted = insert_message(&tx, m, checked, caps, now, reader.team.as_deref())?;
        tx.commit().map_err(io)?;
        Ok(posted)
    }

    /// What [`Store::post`] refuses before touching the store, in this order; otherwise the
    /// message's priority, privacy and hours to live.
    pub(crate) fn check_new(&self, m: &NewMessage) -> Result<Checked, Error> {
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
        Ok((priority, privacy, ttl))
    }

    /// Messages visible to `agent` that it has not read yet, in order; each is returned once.
    /// `project_root` is the active project (only its messages are visible when set).
    pub fn read_unread(
        &mut self,
        agent: &str,
        project_root: Option<&str>,
    ) -> Result<Vec<Message>, Error> {
        let Observed { tx, now, reader } = self.observe(agent, project_root)?;
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
        check_limit(limit, MAX_PAGE)?;
        let Observed { tx, now, reader } = self.observe(agent, project_root)?;
        let rows: Vec<Stored> = {
            let mut stmt = tx
                .prepare(&format!(
                    "SELECT {COLUMNS}, seq FROM messages WHERE (?1 = 0 OR project_root = ?2) \
                     AND (?3 IS NULL OR category = ?3)
                     AND (?4 IS NULL OR from_agent = ?4) \
                     ORDER BY priority DESC, created_at ASC, id ASC"
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

/// What [`Store::check_new`] found: the message's priority, privacy and hours to live.
pub(crate) type Checked = (Priority, Privacy, u32);

/// Inserts a checked message in an open write transaction that observed the store at `now`
/// (expired messages purged, see [`Store::observe`]), making room within `caps`; the sender's
/// team is `sender_team`. The caller commits.
pub(crate) fn insert_message(
    tx: &Transaction<'_>,
    m: &NewMessage,
    (priority, privacy, ttl): Checked,
    caps: (usize, usize),
    now: i64,
    sender_team: Option<&str>,
) -> Result<Posted, Error> {
    let id = uuid::Uuid::now_v7().to_string();
    let root = root_key(m.project_root.as_deref()).to_string();
    let expires_at = now + ttl as i64 * 3_600_000;
    let evicted = make_room(tx, &root, m.to.as_deref(), caps)?;
    let seq: i64 = tx
        .query_row(
            "UPDATE counters SET value = value + 1 WHERE name = 'message_seq' RETURNING value",
            [],
            |r| r.get(0),
        )
        .map_err(io)?;
    tx.execute(
        &format!(
            "INSERT INTO messages ({COLUMNS}, seq) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
        ),
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
        tx,
        "message.posted",
        &m.from,
        m.to.as_deref(),
        &root,
        &id,
        now,
    )?;
    Ok(Posted {
        id,
        expires_at,
        evicted,
    })
}

/// One of the bounds a post keeps: its key's kind in `message_counts` (kept by triggers, so a
/// post does not count rows), and the messages it evicts first for a key.
struct Bound {
    kind: i64,
    victims: &'static str,
}

/// At most `per_project_cap` live messages per project root.
const PROJECT: Bound = Bound {
    kind: 0,
    victims: "SELECT id FROM messages WHERE project_root = ?1 \
              ORDER BY priority ASC, created_at ASC, id ASC LIMIT ?2",
};

/// At most `per_recipient_cap` live messages per recipient.
const RECIPIENT: Bound = Bound {
    kind: 1,
    victims: "SELECT id FROM messages WHERE to_agent = ?1 \
              ORDER BY priority ASC, created_at ASC, id ASC LIMIT ?2",
};

/// Makes room for one more message in the project `root`, then for its recipient `to`, within
/// `(per_project, per_recipient)`: the lowest priority goes first, then the oldest. Returns the
/// evicted ids.
fn make_room(
    tx: &Transaction<'_>,
    root: &str,
    to: Option<&str>,
    (per_project, per_recipient): (usize, usize),
) -> Result<Vec<String>, Error> {
    let mut evicted = Vec::new();
    evict(tx, &PROJECT, root, per_project, &mut evicted)?;
    if let Some(to) = to {
        evict(tx, &RECIPIENT, to, per_recipient, &mut evicted)?;
    }
    Ok(evicted)
}

/// Deletes what `bound` selects first for `key` until one more message fits within `cap`,
/// adding the ids to `evicted`.
fn evict(
    tx: &Transaction<'_>,
    bound: &Bound,
    key: &str,
    cap: usize,
    evicted: &mut Vec<String>,
) -> Result<(), Error> {
    let live: i64 = tx
        .query_row(
            "SELECT n FROM message_counts WHERE kind = ?1 AND key = ?2",
            params![bound.kind, key],
            |r| r.get(0),
        )
        .optional()
        .map_err(io)?
        .unwrap_or(0);
    let over = live + 1 - cap as i64;
    if over <= 0 {
        return Ok(());
    }
    let ids: Vec<String> = {
        let mut stmt = tx.prepare(bound.victims).map_err(io)?;
        stmt.query_map(params![key, over], |r| r.get::<_, String>(0))
            .map_err(io)?
            .collect::<Result<_, _>>()
            .map_err(io)?
    };
    for id in &ids {
        tx.execute("DELETE FROM messages WHERE id = ?1", [id])
            .map_err(io)?;
    }
    evicted.extend(ids);
    Ok(())
}

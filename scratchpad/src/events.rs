//! The event log: what happened (posts, task changes), polled by cursor.

use agent_intercom_core::{Error, ErrorCode};
use rusqlite::{OptionalExtension, Transaction, params};

use crate::{
    COLUMNS, MAX_PAGE, Observed, Store, check_limit, io, is_visible, root_key, row_to_message,
};

/// Appends an event to the log, in the transaction of the change it records.
pub(crate) fn emit(
    tx: &Transaction<'_>,
    kind: &str,
    actor: &str,
    target: Option<&str>,
    root: &str,
    ref_id: &str,
    at: i64,
) -> Result<(), Error> {
    tx.execute(
        "INSERT INTO events (kind, actor, target, project_root, ref_id, at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
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
        check_limit(limit, MAX_PAGE)?;
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
        // A refusal below drops the transaction: the purge is rolled back with it.
        let Observed { tx, now, reader } = self.observe(agent, project_root)?;
        // Events are never deleted, so the newest is the largest cursor this store can return.
        let newest: i64 = tx
            .query_row("SELECT coalesce(max(seq), 0) FROM events", [], |r| r.get(0))
            .map_err(io)?;
        if after > newest {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "after ({after}) is beyond the newest event ({newest}); pass 0 or a cursor \
                     this store returned"
                ),
            ));
        }
        let rows = events_after(&tx, after, project_root)?;
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

/// Every event after cursor `after`, of the project `project_root` (of every project when
/// `None`), oldest first.
fn events_after(
    tx: &Transaction<'_>,
    after: i64,
    project_root: Option<&str>,
) -> Result<Vec<Event>, Error> {
    let mut stmt = tx
        .prepare(
            "SELECT seq, kind, actor, target, ref_id, at, project_root FROM events \
             WHERE seq > ?1 AND (?2 = 0 OR project_root = ?3) ORDER BY seq",
        )
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
    mapped.collect::<Result<_, _>>().map_err(io)
}

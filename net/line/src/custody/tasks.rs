//! `line_task` (each task's immutable request and its status, foreign id and adoption) and
//! `line_observation` (what each authenticated answer said).

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use sha2::{Digest as _, Sha256};

use crate::LineError;
use crate::policy::Selectors;
use crate::schema::io;
use crate::secrets::hex;
use crate::transitions::{Found, Observation};

/// A task row: what every target command checks and uses.
#[derive(Clone, Debug)]
pub(crate) struct TaskRow {
    pub task_id: String,
    pub selectors: Selectors,
    pub endpoint: String,
    pub body_sha256: String,
    pub source_assertion_json: String,
    pub expires_at_ms: i64,
    pub foreign_task_id: Option<String>,
    pub status: String,
    pub adoption_open: bool,
    pub local_disposition: String,
    pub owner_kind: String,
}

/// The task `task_id`, if it exists.
pub(crate) fn row(conn: &Connection, task_id: &str) -> Result<Option<TaskRow>, LineError> {
    conn.query_row(
        "SELECT task_id, peer_id, purpose, task_schema, category, endpoint, \
         body_sha256, source_assertion_json, expires_at_ms, foreign_task_id, status, \
         adoption_open, local_disposition, owner_kind FROM line_task WHERE task_id = ?1",
        [task_id],
        |r| {
            Ok(TaskRow {
                task_id: r.get(0)?,
                selectors: Selectors {
                    peer_id: r.get(1)?,
                    purpose: r.get(2)?,
                    task_schema: r.get(3)?,
                    category: r.get(4)?,
                },
                endpoint: r.get(5)?,
                body_sha256: r.get(6)?,
                source_assertion_json: r.get(7)?,
                expires_at_ms: r.get(8)?,
                foreign_task_id: r.get(9)?,
                status: r.get(10)?,
                adoption_open: r.get::<_, i64>(11)? == 1,
                local_disposition: r.get(12)?,
                owner_kind: r.get(13)?,
            })
        },
    )
    .optional()
    .map_err(|e| io("cannot read the task", e))
}

/// The stored request body of a task (its one `SendMessage`).
pub(crate) fn body(conn: &Connection, task_id: &str) -> Result<Vec<u8>, LineError> {
    conn.query_row(
        "SELECT body FROM line_task WHERE task_id = ?1",
        [task_id],
        |r| r.get(0),
    )
    .map_err(|e| io("cannot read the task's body", e))
}

/// The startup that recorded a task.
pub(crate) fn startup_of(conn: &Connection, task_id: &str) -> Result<String, LineError> {
    conn.query_row(
        "SELECT startup_id FROM line_task WHERE task_id = ?1",
        [task_id],
        |r| r.get(0),
    )
    .map_err(|e| io("cannot read the task", e))
}

/// A task's immutable request, as its intent records it (`prepared`, adoption open).
pub(crate) struct NewTask<'a> {
    pub task_id: &'a str,
    pub owner_kind: &'a str,
    pub startup_id: &'a str,
    pub enrollment_id: &'a str,
    pub selectors: &'a Selectors,
    pub endpoint: &'a str,
    pub message_id: &'a str,
    pub body: &'a [u8],
    pub source_assertion_json: &'a str,
    pub generation: u64,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
}

/// Inserts the `line_task` row of `t` (the body's SHA-256 computed here).
pub(crate) fn insert(tx: &Transaction<'_>, t: &NewTask<'_>) -> rusqlite::Result<()> {
    let s = t.selectors;
    tx.execute(
        "INSERT INTO line_task (task_id, owner_kind, startup_id, enrollment_id, peer_id, \
         purpose, task_schema, category, endpoint, message_id, body, body_sha256, \
         source_assertion_json, generation, created_at_ms, expires_at_ms, foreign_task_id, \
         status, adoption_open, local_disposition) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, \
         ?10, ?11, ?12, ?13, ?14, ?15, ?16, NULL, 'prepared', 1, 'open')",
        params![
            t.task_id,
            t.owner_kind,
            t.startup_id,
            t.enrollment_id,
            s.peer_id,
            s.purpose,
            s.task_schema,
            s.category,
            t.endpoint,
            t.message_id,
            t.body,
            hex(&Sha256::digest(t.body)),
            t.source_assertion_json,
            t.generation as i64,
            t.created_at_ms,
            t.expires_at_ms
        ],
    )?;
    Ok(())
}

/// Moves a task's status from `from` to `to` (nothing when it is no longer `from`).
pub(crate) fn move_status(
    conn: &Connection,
    task_id: &str,
    from: &str,
    to: &str,
) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE line_task SET status = ?3 WHERE task_id = ?1 AND status = ?2",
        params![task_id, from, to],
    )
}

/// Sets a task's status to `to`.
pub(crate) fn set_status(conn: &Connection, task_id: &str, to: &str) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE line_task SET status = ?2 WHERE task_id = ?1",
        params![task_id, to],
    )
}

/// Closes a task's adoption (once: nothing when it is closed).
pub(crate) fn close_adoption(conn: &Connection, task_id: &str) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE line_task SET adoption_open = 0, local_disposition = 'adoption_closed' \
         WHERE task_id = ?1 AND adoption_open = 1",
        [task_id],
    )
}

/// Settles every task an earlier process left in flight as `unknown`: a claim, and an
/// operator's intent (a native task still `prepared` was admitted, never claimed: it stays,
/// for its run's reauthorization).
pub(crate) fn settle_all_in_flight(conn: &Connection) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE line_task SET status = 'unknown' WHERE status = 'claimed' \
         OR (status = 'prepared' AND owner_kind = 'operator')",
        [],
    )
}

/// A task as the outcome commit finds it.
pub(crate) fn found(tx: &Transaction<'_>, task_id: &str) -> rusqlite::Result<Found> {
    tx.query_row(
        "SELECT foreign_task_id, status, adoption_open, expires_at_ms FROM line_task \
         WHERE task_id = ?1",
        [task_id],
        |r| {
            Ok(Found {
                foreign_task_id: r.get(0)?,
                status: r.get(1)?,
                adoption_open: r.get::<_, i64>(2)? == 1,
                expires_at_ms: r.get(3)?,
            })
        },
    )
}

/// Writes what an authenticated task answer made of a task: its foreign id, status and
/// adoption.
pub(crate) fn observed(
    tx: &Transaction<'_>,
    task_id: &str,
    foreign_task_id: &str,
    status: &str,
    adoption_open: bool,
    local_disposition: &str,
) -> rusqlite::Result<usize> {
    tx.execute(
        "UPDATE line_task SET foreign_task_id = ?2, status = ?3, adoption_open = ?4, \
         local_disposition = ?5 WHERE task_id = ?1",
        params![
            task_id,
            foreign_task_id,
            status,
            i64::from(adoption_open),
            local_disposition
        ],
    )
}

/// Records an observation of `task_id` made by the exchange `exchange_id`, its answer signed by
/// the peer's key `key_version`.
pub(crate) fn insert_observation(
    tx: &Transaction<'_>,
    task_id: &str,
    exchange_id: &str,
    o: &Observation,
    key_version: i64,
    response_sha256: &str,
    observed_at_ms: i64,
) -> rusqlite::Result<usize> {
    let observation_id = uuid::Uuid::new_v4().hyphenated().to_string();
    tx.execute(
        "INSERT INTO line_observation (observation_id, task_id, exchange_id, \
         foreign_task_id, foreign_state, key_version, response_sha256, adopted, \
         result_json, omitted_parts_json, observed_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, \
         ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            observation_id,
            task_id,
            exchange_id,
            o.foreign_task_id,
            o.foreign_state,
            key_version,
            response_sha256,
            i64::from(o.adopted),
            o.result_json,
            o.omitted_parts_json,
            observed_at_ms
        ],
    )
}

/// The adopted result of a task (`{"parts": [...]}` as stored), if one was adopted.
pub(crate) fn adopted_result(
    conn: &Connection,
    task_id: &str,
) -> Result<Option<String>, LineError> {
    let text: Option<Option<String>> = conn
        .query_row(
            "SELECT result_json FROM line_observation WHERE task_id = ?1 AND adopted = 1",
            [task_id],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| io("cannot read observations", e))?;
    Ok(text.flatten())
}

/// The latest observation of a task, as stored.
#[derive(Clone, Debug)]
pub(crate) struct StoredObservation {
    pub foreign_task_id: String,
    pub state: String,
    pub observed_at_ms: i64,
    pub adopted: bool,
    pub result_json: Option<String>,
    pub omitted_parts_json: Option<String>,
    /// The id of the peer key version that signed it.
    pub key_id: Option<String>,
}

/// The latest observation of `task_id`, a task of `peer_id`.
pub(crate) fn latest_observation(
    conn: &Connection,
    task_id: &str,
    peer_id: &str,
) -> Result<Option<StoredObservation>, LineError> {
    conn.query_row(
        "SELECT o.foreign_task_id, o.foreign_state, o.observed_at_ms, o.adopted, \
         o.result_json, o.omitted_parts_json, k.key_id FROM line_observation o \
         LEFT JOIN line_peer_key k ON k.peer_id = ?2 AND k.version = o.key_version \
         WHERE o.task_id = ?1 ORDER BY o.observed_at_ms DESC, o.rowid DESC LIMIT 1",
        params![task_id, peer_id],
        |r| {
            Ok(StoredObservation {
                foreign_task_id: r.get(0)?,
                state: r.get(1)?,
                observed_at_ms: r.get(2)?,
                adopted: r.get::<_, i64>(3)? == 1,
                result_json: r.get(4)?,
                omitted_parts_json: r.get(5)?,
                key_id: r.get(6)?,
            })
        },
    )
    .optional()
    .map_err(|e| io("cannot read observations", e))
}

//! The native run lab's tables: `run_session`, `run_record`, `run_peer_task` (each run's one
//! peer task and its binding digest), `run_checkpoint`, `run_closure` and
//! `run_reauthorization`.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::LineError;
use crate::schema::io;

/// A run and its binding.
#[derive(Clone, Debug)]
pub(crate) struct Run {
    pub run_id: String,
    pub session_id: String,
    pub request_id: String,
    pub status: String,
    pub task_id: String,
    pub binding_digest: String,
}

/// The run `run_id`, if it exists.
pub(crate) fn run(conn: &Connection, run_id: &str) -> Result<Option<Run>, LineError> {
    conn.query_row(
        "SELECT r.run_id, r.session_id, r.request_id, r.status, b.task_id, b.binding_digest \
         FROM run_record r JOIN run_peer_task b ON b.run_id = r.run_id WHERE r.run_id = ?1",
        [run_id],
        |r| {
            Ok(Run {
                run_id: r.get(0)?,
                session_id: r.get(1)?,
                request_id: r.get(2)?,
                status: r.get(3)?,
                task_id: r.get(4)?,
                binding_digest: r.get(5)?,
            })
        },
    )
    .optional()
    .map_err(|e| io("cannot read the run", e))
}

/// The run admitted under `request_id` and its request digest, if any.
pub(crate) fn by_request(
    conn: &Connection,
    request_id: &str,
) -> Result<Option<(String, String)>, LineError> {
    conn.query_row(
        "SELECT run_id, request_digest FROM run_record WHERE request_id = ?1",
        [request_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()
    .map_err(|e| io("cannot read runs", e))
}

/// Whether the run session `session_id` exists.
pub(crate) fn session_exists(conn: &Connection, session_id: &str) -> Result<bool, LineError> {
    conn.query_row(
        "SELECT count(*) FROM run_session WHERE session_id = ?1",
        [session_id],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
    .map_err(|e| io("cannot read sessions", e))
}

/// Records a run session of this startup.
pub(crate) fn insert_session(
    tx: &Transaction<'_>,
    session_id: &str,
    startup_id: &str,
    now_ms: i64,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO run_session (session_id, startup_id, created_at_ms) VALUES (?1, ?2, ?3)",
        params![session_id, startup_id, now_ms],
    )?;
    Ok(())
}

/// A run as its admission records it (`awaiting_peer`), with its one peer task.
pub(crate) struct NewRun<'a> {
    pub run_id: &'a str,
    pub session_id: &'a str,
    pub request_id: &'a str,
    pub request_digest: &'a str,
    pub station: &'a str,
    pub workflow_id: &'a str,
    pub workflow_digest: &'a str,
    pub task_id: &'a str,
    pub step_id: &'a str,
    pub binding_digest: &'a str,
    pub now_ms: i64,
}

/// Records a run and binds its peer task (which must be recorded first).
pub(crate) fn insert_run(tx: &Transaction<'_>, run: &NewRun<'_>) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO run_record (run_id, session_id, request_id, request_digest, station, \
         workflow_id, workflow_digest, status, created_at_ms, updated_at_ms) VALUES (?1, \
         ?2, ?3, ?4, ?5, ?6, ?7, 'awaiting_peer', ?8, ?8)",
        params![
            run.run_id,
            run.session_id,
            run.request_id,
            run.request_digest,
            run.station,
            run.workflow_id,
            run.workflow_digest,
            run.now_ms
        ],
    )?;
    Ok(())
}

/// Binds a run's one peer task.
pub(crate) fn bind_task(tx: &Transaction<'_>, run: &NewRun<'_>) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO run_peer_task (run_id, task_id, step_id, occurrence, binding_digest) \
         VALUES (?1, ?2, ?3, 1, ?4)",
        params![run.run_id, run.task_id, run.step_id, run.binding_digest],
    )?;
    Ok(())
}

/// Appends a checkpoint; `Ok(false)` when that step occurrence already has this kind.
pub(crate) fn checkpoint(
    tx: &Transaction<'_>,
    run_id: &str,
    step: &str,
    kind: &str,
    state: &serde_json::Value,
    now_ms: i64,
) -> rusqlite::Result<bool> {
    let seq: i64 = tx.query_row(
        "SELECT coalesce(max(seq), 0) + 1 FROM run_checkpoint WHERE run_id = ?1",
        [run_id],
        |r| r.get(0),
    )?;
    let n = tx.execute(
        "INSERT OR IGNORE INTO run_checkpoint (run_id, seq, step_id, occurrence, kind, \
         state_json, created_at_ms) VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6)",
        params![run_id, seq, step, kind, state.to_string(), now_ms],
    )?;
    Ok(n == 1)
}

/// The step and kind of every checkpoint of a run, in order.
pub(crate) fn checkpoints(
    conn: &Connection,
    run_id: &str,
) -> Result<Vec<(String, String)>, LineError> {
    let read = |e| io("cannot read checkpoints", e);
    let mut stmt = conn
        .prepare("SELECT step_id, kind FROM run_checkpoint WHERE run_id = ?1 ORDER BY seq")
        .map_err(read)?;
    let rows = stmt
        .query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(read)?;
    rows.collect::<Result<_, _>>().map_err(read)
}

/// A run's workflow digest and request digest.
pub(crate) fn digests(conn: &Connection, run_id: &str) -> Result<(String, String), LineError> {
    conn.query_row(
        "SELECT workflow_digest, request_digest FROM run_record WHERE run_id = ?1",
        [run_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .map_err(|e| io("cannot read the run", e))
}

/// Settles a run still `awaiting_peer` in `status`.
pub(crate) fn settle(
    conn: &Connection,
    run_id: &str,
    status: &str,
    now_ms: i64,
) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE run_record SET status = ?2, updated_at_ms = ?3 WHERE run_id = ?1 \
         AND status = 'awaiting_peer'",
        params![run_id, status, now_ms],
    )
}

/// Closes a run as cancelled (`remote_uncertain` when the peer may hold its task).
pub(crate) fn cancel(
    tx: &Transaction<'_>,
    run_id: &str,
    remote_uncertain: bool,
    now_ms: i64,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO run_closure (run_id, reason, remote_uncertain, closed_at_ms) VALUES \
         (?1, 'cancelled', ?2, ?3)",
        params![run_id, i64::from(remote_uncertain), now_ms],
    )?;
    tx.execute(
        "UPDATE run_record SET status = 'cancelled', updated_at_ms = ?2 WHERE run_id = ?1",
        params![run_id, now_ms],
    )?;
    Ok(())
}

/// The actions (JSON arrays of names) reauthorized for `task_id` in `startup_id`.
pub(crate) fn reauthorized(
    conn: &Connection,
    task_id: &str,
    startup_id: &str,
) -> Result<Vec<String>, LineError> {
    let read = |e| io("cannot read reauthorizations", e);
    let mut stmt = conn
        .prepare(
            "SELECT actions_json FROM run_reauthorization WHERE task_id = ?1 \
             AND startup_id = ?2",
        )
        .map_err(read)?;
    let rows = stmt
        .query_map(params![task_id, startup_id], |r| r.get(0))
        .map_err(read)?;
    rows.collect::<Result<_, _>>().map_err(read)
}

/// A reauthorization of a run's task and binding in one startup.
pub(crate) struct Reauthorization<'a> {
    pub run_id: &'a str,
    pub startup_id: &'a str,
    pub task_id: &'a str,
    pub binding_digest: &'a str,
    pub actions_json: &'a str,
    pub generation: u64,
    pub reaffirmed_public_source: bool,
    pub now_ms: i64,
}

/// Records a reauthorization.
pub(crate) fn insert_reauthorization(
    tx: &Transaction<'_>,
    r: &Reauthorization<'_>,
) -> Result<(), LineError> {
    tx.execute(
        "INSERT INTO run_reauthorization (run_id, startup_id, task_id, binding_digest, \
         actions_json, generation, reaffirmed_public_source, created_at_ms) VALUES (?1, ?2, \
         ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            r.run_id,
            r.startup_id,
            r.task_id,
            r.binding_digest,
            r.actions_json,
            r.generation as i64,
            i64::from(r.reaffirmed_public_source),
            r.now_ms
        ],
    )
    .map_err(|e| io("cannot record the reauthorization", e))?;
    Ok(())
}

/// Completes a run still `awaiting_peer`.
pub(crate) fn complete(tx: &Transaction<'_>, run_id: &str, now_ms: i64) -> Result<(), LineError> {
    tx.execute(
        "UPDATE run_record SET status = 'completed', updated_at_ms = ?2 WHERE run_id = ?1 \
         AND status = 'awaiting_peer'",
        params![run_id, now_ms],
    )
    .map_err(|e| io("cannot complete the run", e))?;
    Ok(())
}

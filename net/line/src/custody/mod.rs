//! The custody store: every statement the line runs on its SQLite custody tables, and nothing
//! else. The rules that decide what to write live in the modules that call it
//! ([`crate::transitions`] for tasks and runs, [`crate::ledger`], [`crate::authority`],
//! [`crate::host`]); those modules also open each transaction ([`begin`]) and make its commit,
//! under its fault point ([`crate::fault::Faults::commit`]). The schema and its migrations are
//! [`crate::schema`]'s.
//!
//! - [`host`]: `line_host` and `line_policy`;
//! - [`peers`]: `line_peer` and `line_peer_key`;
//! - [`ledger`]: `line_capacity` and `line_exchange`;
//! - [`tasks`]: `line_task` and `line_observation`;
//! - [`runs`]: the native run lab's `run_*` tables.

pub(crate) mod host;
pub(crate) mod ledger;
pub(crate) mod peers;
pub(crate) mod runs;
pub(crate) mod tasks;

use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::LineError;
use crate::schema::io;

/// Begins an immediate transaction (the write lock taken at once); `what` names it in a
/// `store_io` refusal.
pub(crate) fn begin<'c>(
    conn: &'c mut Connection,
    what: &str,
) -> Result<Transaction<'c>, LineError> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| io(what, e))
}

/// What an earlier process left in flight is settled, never resumed: every exchange without an
/// outcome is `unknown` (its request may have reached the peer), and so is every task whose
/// intent or claim committed without an answer. Nothing is sent; the operator reconciles with
/// an explicit `poll` under fresh authority.
pub(crate) fn settle_interrupted(conn: &Connection, now_ms: i64) -> Result<(), LineError> {
    conn.execute_batch("BEGIN IMMEDIATE")
        .map_err(|e| io("cannot begin settling", e))?;
    let settled = ledger::settle_all_open(conn, now_ms)
        .and_then(|_| tasks::settle_all_in_flight(conn))
        .and_then(|_| conn.execute_batch("COMMIT"));
    if let Err(e) = settled {
        let _ = conn.execute_batch("ROLLBACK");
        return Err(io("cannot settle interrupted exchanges", e));
    }
    Ok(())
}

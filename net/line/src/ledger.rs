//! The capacity ledger. Every physical exchange (submit, poll, cancel) is charged before its
//! first byte leaves: one use, its exact application request bytes and the 512 KiB network
//! allowance, to all four stable scopes (the installation, the exact purpose, the peer identity,
//! the peer-plus-schema task family), in the one transaction that also records the exchange.
//! Charging is all or nothing and nothing is ever refunded; network bytes actually accepted are
//! recorded beside the reservation.
//!
//! A commit that may or may not have happened is reported as `unknown` with the task id, never
//! as a definite refusal and never retried.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::fault::Faults;
use crate::policy::{Limits, ScopeKind, task_scope_key};
use crate::schema::io;
use crate::startup::check_live;
use crate::{Code, LineError, NETWORK_ALLOWANCE};

/// The fault point just before the charge commits.
pub const COMMIT_POINT: &str = "ledger-commit";
/// The fault point just after the charge commits, before any send.
pub const AFTER_COMMIT_POINT: &str = "after-claim-before-send";

/// A physical exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// `SendMessage`.
    Submit,
    /// `GetTask`.
    Poll,
    /// `CancelTask`.
    Cancel,
}

impl Operation {
    /// The name stored.
    pub const fn as_str(self) -> &'static str {
        match self {
            Operation::Submit => "submit",
            Operation::Poll => "poll",
            Operation::Cancel => "cancel",
        }
    }
}

/// The authority a charge is made under: the live generation and its ceilings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authority {
    /// The generation this startup activated.
    pub generation: u64,
    /// Its ceilings.
    pub limits: Limits,
    /// The installation id (the host scope's key).
    pub host_key: String,
}

/// One exchange to charge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Charge<'a> {
    /// The local task.
    pub task_id: &'a str,
    /// What is sent.
    pub operation: Operation,
    /// The exact length of the request body.
    pub application_bytes: u64,
    /// The peer UUID.
    pub peer_id: &'a str,
    /// The exact purpose.
    pub purpose: &'a str,
    /// The task schema.
    pub task_schema: &'a str,
    /// The signed request's nonce and the SHA-256 of its `Signature` field, recorded with the
    /// charge (none for a charge made without a request, as in the ledger's own tests).
    pub request: Option<(&'a str, &'a str)>,
}

/// A charged exchange.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// Its id.
    pub exchange_id: String,
    /// Its sequence number within the task (1 first).
    pub seq: i64,
}

/// The counters of one scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeRow {
    /// The kind.
    pub kind: String,
    /// The key.
    pub key: String,
    /// Ceilings: uses, application bytes, network bytes.
    pub ceilings: (i64, i64, i64),
    /// Used uses, used application bytes, reserved network bytes, accepted network bytes.
    pub used: (i64, i64, i64, i64),
}

/// The four scope keys of a charge, in [`ScopeKind::ALL`] order.
fn scope_keys(authority: &Authority, charge: &Charge<'_>) -> [(ScopeKind, String); 4] {
    [
        (ScopeKind::Host, authority.host_key.clone()),
        (ScopeKind::Purpose, charge.purpose.to_string()),
        (ScopeKind::Peer, charge.peer_id.to_string()),
        (
            ScopeKind::Task,
            task_scope_key(charge.peer_id, charge.task_schema),
        ),
    ]
}

/// Charges one exchange, or refuses with nothing charged: `stale_generation` (a newer policy is
/// durable), `ceiling_changed`, `capacity_exhausted` with the `scope` and the `exhausted`
/// counter, `store_io`. An uncertain commit is `unknown` with the task id.
pub fn charge(
    conn: &mut Connection,
    authority: &Authority,
    charge: &Charge<'_>,
    faults: &Faults,
) -> Result<Exchange, LineError> {
    let now_ms = faults.now_ms();
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| io("cannot begin the charge", e))?;
    check_live(&tx, authority.generation)?;
    let keys = scope_keys(authority, charge);
    let app = charge.application_bytes as i64;
    let net = NETWORK_ALLOWANCE as i64;
    for (kind, key) in &keys {
        let row: Option<(i64, i64, i64, i64, i64, i64)> = tx
            .query_row(
                "SELECT ceil_uses, ceil_app, ceil_net, used_uses, used_app, reserved_net \
                 FROM line_capacity WHERE scope_kind = ?1 AND scope_key = ?2",
                params![kind.as_str(), key],
                |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| io("cannot read capacity", e))?;
        let scope = serde_json::json!({"kind": kind.as_str(), "key": key});
        let Some((c_uses, c_app, c_net, uses, used_app, reserved)) = row else {
            return Err(LineError::new(
                Code::PolicyNotEstablished,
                "no capacity row for this scope: the live policy does not name it",
            )
            .with("scope", scope));
        };
        let limit = kind.limit(&authority.limits);
        if (c_uses, c_app, c_net)
            != (
                limit.uses as i64,
                limit.application_bytes as i64,
                limit.network_bytes as i64,
            )
        {
            return Err(LineError::new(
                Code::CeilingChanged,
                "the durable ceiling of this scope differs from the live policy's",
            )
            .with("scope", scope));
        }
        let exhausted = if uses + 1 > c_uses {
            Some("uses")
        } else if app > c_app - used_app {
            Some("application_bytes")
        } else if net > c_net - reserved {
            Some("network_bytes")
        } else {
            None
        };
        if let Some(counter) = exhausted {
            return Err(LineError::new(
                Code::CapacityExhausted,
                format!(
                    "the {} scope has no {counter} left for this exchange",
                    kind.as_str()
                ),
            )
            .with("scope", scope)
            .with("exhausted", counter));
        }
        tx.execute(
            "UPDATE line_capacity SET used_uses = used_uses + 1, used_app = used_app + ?3, \
             reserved_net = reserved_net + ?4 WHERE scope_kind = ?1 AND scope_key = ?2",
            params![kind.as_str(), key, app, net],
        )
        .map_err(|e| io("cannot charge capacity", e))?;
    }
    let seq: i64 = tx
        .query_row(
            "SELECT coalesce(max(seq), 0) + 1 FROM line_exchange WHERE task_id = ?1",
            [charge.task_id],
            |r| r.get(0),
        )
        .map_err(|e| io("cannot number the exchange", e))?;
    let exchange_id = uuid::Uuid::new_v4().hyphenated().to_string();
    tx.execute(
        "INSERT INTO line_exchange (exchange_id, task_id, seq, operation, generation, host_key, \
         purpose_key, peer_key, task_key, charged_uses, charged_app, charged_net, charged_at_ms, \
         request_nonce, request_sig_sha256) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10, ?11, ?12, ?13, ?14)",
        params![
            exchange_id,
            charge.task_id,
            seq,
            charge.operation.as_str(),
            authority.generation as i64,
            keys[0].1,
            keys[1].1,
            keys[2].1,
            keys[3].1,
            app,
            net,
            now_ms,
            charge.request.map(|r| r.0),
            charge.request.map(|r| r.1)
        ],
    )
    .map_err(|e| io("cannot record the exchange", e))?;
    // A submit's charge is its claim: the task is claimed in the same transaction.
    if charge.operation == Operation::Submit {
        tx.execute(
            "UPDATE line_task SET status = 'claimed' WHERE task_id = ?1 AND status = 'prepared'",
            [charge.task_id],
        )
        .map_err(|e| io("cannot claim the task", e))?;
    }
    // A failed COMMIT may still have reached the disk: only `unknown` is honest.
    faults.commit(tx, COMMIT_POINT, || LineError::unknown(charge.task_id))?;
    faults.crash_at(AFTER_COMMIT_POINT);
    Ok(Exchange { exchange_id, seq })
}

/// Records the network bytes an exchange actually used (once; at most its allowance). The
/// reservation stands: nothing is refunded.
pub fn record_accepted(
    conn: &mut Connection,
    exchange_id: &str,
    bytes: u64,
) -> Result<(), LineError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| io("cannot begin recording", e))?;
    accept_in(&tx, exchange_id, bytes)?;
    tx.commit()
        .map_err(|e| io("cannot commit accepted bytes", e))
}

/// [`record_accepted`] inside the caller's transaction (the outcome commit).
pub(crate) fn accept_in(
    tx: &rusqlite::Transaction<'_>,
    exchange_id: &str,
    bytes: u64,
) -> Result<(), LineError> {
    let row: Option<(Option<i64>, i64, [String; 4])> = tx
        .query_row(
            "SELECT accepted_net, charged_net, host_key, purpose_key, peer_key, task_key \
             FROM line_exchange WHERE exchange_id = ?1",
            [exchange_id],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    [r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?],
                ))
            },
        )
        .optional()
        .map_err(|e| io("cannot read the exchange", e))?;
    let Some((accepted, charged, keys)) = row else {
        return Err(LineError::new(Code::TaskNotFound, "no such exchange"));
    };
    if accepted.is_some() {
        return Err(LineError::new(
            Code::Usage,
            "this exchange's accepted bytes are recorded",
        ));
    }
    if bytes as i64 > charged {
        return Err(LineError::new(
            Code::CapacityExhausted,
            "more bytes than the exchange's network allowance: the excess is never accepted",
        ));
    }
    tx.execute(
        "UPDATE line_exchange SET accepted_net = ?2 WHERE exchange_id = ?1",
        params![exchange_id, bytes as i64],
    )
    .map_err(|e| io("cannot record accepted bytes", e))?;
    for (kind, key) in ScopeKind::ALL.iter().zip(keys) {
        tx.execute(
            "UPDATE line_capacity SET accepted_net = accepted_net + ?3 \
             WHERE scope_kind = ?1 AND scope_key = ?2",
            params![kind.as_str(), key, bytes as i64],
        )
        .map_err(|e| io("cannot record accepted bytes", e))?;
    }
    Ok(())
}

/// Every capacity row, ordered by kind and key.
pub fn scopes(conn: &Connection) -> Result<Vec<ScopeRow>, LineError> {
    let mut stmt = conn
        .prepare(
            "SELECT scope_kind, scope_key, ceil_uses, ceil_app, ceil_net, used_uses, used_app, \
             reserved_net, accepted_net FROM line_capacity ORDER BY scope_kind, scope_key",
        )
        .map_err(|e| io("cannot read capacity", e))?;
    let rows = stmt
        .query_map([], |r| {
            Ok(ScopeRow {
                kind: r.get(0)?,
                key: r.get(1)?,
                ceilings: (r.get(2)?, r.get(3)?, r.get(4)?),
                used: (r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?),
            })
        })
        .map_err(|e| io("cannot read capacity", e))?;
    rows.collect::<Result<_, _>>()
        .map_err(|e| io("cannot read capacity", e))
}

/// Whether every scope's counters equal the sum of the exchanges charged to it (the ledger
/// invariant): the scopes that differ, empty when it holds.
pub fn mismatches(conn: &Connection) -> Result<Vec<ScopeRow>, LineError> {
    let mut out = Vec::new();
    for row in scopes(conn)? {
        let column = match row.kind.as_str() {
            "host" => "host_key",
            "purpose" => "purpose_key",
            "peer" => "peer_key",
            _ => "task_key",
        };
        let sums: (i64, i64, i64, i64) = conn
            .query_row(
                &format!(
                    "SELECT count(*), coalesce(sum(charged_app), 0), \
                     coalesce(sum(charged_net), 0), coalesce(sum(accepted_net), 0) \
                     FROM line_exchange WHERE {column} = ?1"
                ),
                [&row.key],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .map_err(|e| io("cannot sum exchanges", e))?;
        if sums != row.used {
            out.push(row);
        }
    }
    Ok(out)
}

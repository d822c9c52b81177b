//! The capacity ledger. Every physical exchange (submit, poll, cancel) is charged before its
//! first byte leaves: one use, its exact application request bytes and the 512 KiB network
//! allowance, to all four stable scopes (the installation, the exact purpose, the peer identity,
//! the peer-plus-schema task family), in the one transaction that also records the exchange.
//! Charging is all or nothing and nothing is ever refunded; network bytes actually accepted are
//! recorded beside the reservation.
//!
//! A commit that may or may not have happened is reported as `unknown` with the task id, never
//! as a definite refusal and never retried.

use rusqlite::{Connection, Transaction};

use crate::custody::ledger::{self as store, Counters, NewExchange};
use crate::custody::{self, tasks};
use crate::fault::Faults;
use crate::policy::{Limits, ScopeKind, task_scope_key};
use crate::schema::io;
use crate::startup::check_live;
use crate::{Code, LineError, NETWORK_ALLOWANCE};

pub use crate::custody::ledger::{ScopeRow, scopes};

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
    let tx = custody::begin(conn, "cannot begin the charge")?;
    check_live(&tx, authority.generation)?;
    let keys = scope_keys(authority, charge);
    let app = charge.application_bytes as i64;
    let net = NETWORK_ALLOWANCE as i64;
    for (kind, key) in &keys {
        let counters = store::counters(&tx, *kind, key)?;
        check_scope(*kind, key, &authority.limits, counters, app, net)?;
        store::add_charge(&tx, *kind, key, app, net)?;
    }
    let seq = store::next_seq(&tx, charge.task_id)?;
    let exchange_id = uuid::Uuid::new_v4().hyphenated().to_string();
    store::insert_exchange(
        &tx,
        &NewExchange {
            exchange_id: &exchange_id,
            task_id: charge.task_id,
            seq,
            operation: charge.operation.as_str(),
            generation: authority.generation,
            keys: keys.each_ref().map(|(_, key)| key.as_str()),
            charged_app: app,
            charged_net: net,
            charged_at_ms: now_ms,
            request: charge.request,
        },
    )?;
    // A submit's charge is its claim: the task is claimed in the same transaction.
    if charge.operation == Operation::Submit {
        tasks::move_status(&tx, charge.task_id, "prepared", "claimed")
            .map_err(|e| io("cannot claim the task", e))?;
    }
    // A failed COMMIT may still have reached the disk: only `unknown` is honest.
    faults.commit(tx, COMMIT_POINT, || LineError::unknown(charge.task_id))?;
    faults.crash_at(AFTER_COMMIT_POINT);
    Ok(Exchange { exchange_id, seq })
}

/// Whether the scope `kind` `key`, with `counters` (none without a row), can take one more use,
/// `app` application bytes and `net` network bytes under the live `limits`.
fn check_scope(
    kind: ScopeKind,
    key: &str,
    limits: &Limits,
    counters: Option<Counters>,
    app: i64,
    net: i64,
) -> Result<(), LineError> {
    let scope = serde_json::json!({"kind": kind.as_str(), "key": key});
    let Some(((c_uses, c_app, c_net), (uses, used_app, reserved))) = counters else {
        return Err(LineError::new(
            Code::PolicyNotEstablished,
            "no capacity row for this scope: the live policy does not name it",
        )
        .with("scope", scope));
    };
    let limit = kind.limit(limits);
    let live = (
        limit.uses as i64,
        limit.application_bytes as i64,
        limit.network_bytes as i64,
    );
    if (c_uses, c_app, c_net) != live {
        return Err(LineError::new(
            Code::CeilingChanged,
            "the durable ceiling of this scope differs from the live policy's",
        )
        .with("scope", scope));
    }
    let exhausted = if uses + 1 > c_uses {
        "uses"
    } else if app > c_app - used_app {
        "application_bytes"
    } else if net > c_net - reserved {
        "network_bytes"
    } else {
        return Ok(());
    };
    Err(LineError::new(
        Code::CapacityExhausted,
        format!(
            "the {} scope has no {exhausted} left for this exchange",
            kind.as_str()
        ),
    )
    .with("scope", scope)
    .with("exhausted", exhausted))
}

/// Records the network bytes an exchange actually used (once; at most its allowance). The
/// reservation stands: nothing is refunded.
pub fn record_accepted(
    conn: &mut Connection,
    exchange_id: &str,
    bytes: u64,
) -> Result<(), LineError> {
    let tx = custody::begin(conn, "cannot begin recording")?;
    accept_in(&tx, exchange_id, bytes)?;
    tx.commit()
        .map_err(|e| io("cannot commit accepted bytes", e))
}

/// [`record_accepted`] inside the caller's transaction (the outcome commit).
pub(crate) fn accept_in(
    tx: &Transaction<'_>,
    exchange_id: &str,
    bytes: u64,
) -> Result<(), LineError> {
    let Some((accepted, charged, keys)) = store::charged(tx, exchange_id)? else {
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
    store::accept(tx, exchange_id, &keys, bytes as i64)
}

/// Whether every scope's counters equal the sum of the exchanges charged to it (the ledger
/// invariant): the scopes that differ, empty when it holds.
pub fn mismatches(conn: &Connection) -> Result<Vec<ScopeRow>, LineError> {
    let mut out = Vec::new();
    for row in scopes(conn)? {
        if store::charged_sums(conn, &row)? != row.used {
            out.push(row);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Limit;

    const LIMIT: Limit = Limit {
        uses: 2,
        application_bytes: 100,
        network_bytes: 2 * NETWORK_ALLOWANCE,
    };
    const LIMITS: Limits = Limits {
        host: LIMIT,
        purpose: LIMIT,
        peer: LIMIT,
        task: LIMIT,
    };
    const NET: i64 = NETWORK_ALLOWANCE as i64;

    fn check(counters: Option<Counters>, app: i64) -> Result<(), Code> {
        check_scope(ScopeKind::Peer, "p", &LIMITS, counters, app, NET).map_err(|e| e.code)
    }

    fn exhausted(counters: Counters, app: i64) -> serde_json::Value {
        let e = check_scope(ScopeKind::Peer, "p", &LIMITS, Some(counters), app, NET).unwrap_err();
        assert_eq!(e.code, Code::CapacityExhausted);
        e.to_json()["exhausted"].clone()
    }

    #[test]
    fn a_scope_takes_a_charge_only_under_the_live_ceilings_with_room_left() {
        let ceilings = (2, 100, 2 * NET);
        assert_eq!(check(Some((ceilings, (0, 0, 0))), 100), Ok(()));
        assert_eq!(check(Some((ceilings, (1, 40, NET))), 60), Ok(()));
        assert_eq!(check(None, 1), Err(Code::PolicyNotEstablished));
        assert_eq!(
            check(Some(((3, 100, 2 * NET), (0, 0, 0))), 1),
            Err(Code::CeilingChanged)
        );
        // The first counter that cannot take the charge is named.
        assert_eq!(exhausted((ceilings, (2, 100, 2 * NET)), 1), "uses");
        assert_eq!(exhausted((ceilings, (1, 40, NET)), 61), "application_bytes");
        assert_eq!(exhausted((ceilings, (1, 0, NET + 1)), 1), "network_bytes");
        let e = check_scope(ScopeKind::Task, "k", &LIMITS, None, 1, NET).unwrap_err();
        assert_eq!(
            e.to_json()["scope"],
            serde_json::json!({"kind": "task", "key": "k"})
        );
    }
}

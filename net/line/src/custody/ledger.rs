//! `line_capacity` (each scope's ceilings and counters) and `line_exchange` (every charged
//! exchange, its request, its outcome and the network bytes it used).

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::LineError;
use crate::policy::ScopeKind;
use crate::schema::io;

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

/// What a charge reads of a scope: ceilings (uses, application bytes, network bytes), then
/// used uses, used application bytes and reserved network bytes.
pub(crate) type Counters = ((i64, i64, i64), (i64, i64, i64));

/// The ceilings of a scope, if it has a row.
pub(crate) fn ceilings(
    conn: &Connection,
    kind: ScopeKind,
    key: &str,
) -> Result<Option<(i64, i64, i64)>, LineError> {
    conn.query_row(
        "SELECT ceil_uses, ceil_app, ceil_net FROM line_capacity \
         WHERE scope_kind = ?1 AND scope_key = ?2",
        params![kind.as_str(), key],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .optional()
    .map_err(|e| io("cannot read capacity", e))
}

/// Creates the zero-use row of a scope with `ceilings`, named first by `generation`.
pub(crate) fn create_scope(
    tx: &Transaction<'_>,
    kind: ScopeKind,
    key: &str,
    ceilings: (i64, i64, i64),
    generation: u64,
) -> Result<(), LineError> {
    tx.execute(
        "INSERT INTO line_capacity (scope_kind, scope_key, ceil_uses, ceil_app, ceil_net, \
         created_generation) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            kind.as_str(),
            key,
            ceilings.0,
            ceilings.1,
            ceilings.2,
            generation as i64
        ],
    )
    .map_err(|e| io("cannot create a capacity row", e))?;
    Ok(())
}

/// The ceilings and counters of a scope, if it has a row.
pub(crate) fn counters(
    conn: &Connection,
    kind: ScopeKind,
    key: &str,
) -> Result<Option<Counters>, LineError> {
    conn.query_row(
        "SELECT ceil_uses, ceil_app, ceil_net, used_uses, used_app, reserved_net \
         FROM line_capacity WHERE scope_kind = ?1 AND scope_key = ?2",
        params![kind.as_str(), key],
        |r| {
            Ok((
                (r.get(0)?, r.get(1)?, r.get(2)?),
                (r.get(3)?, r.get(4)?, r.get(5)?),
            ))
        },
    )
    .optional()
    .map_err(|e| io("cannot read capacity", e))
}

/// The application bytes a scope has left (`None` without a row).
pub(crate) fn app_bytes_left(
    conn: &Connection,
    kind: &str,
    key: &str,
) -> Result<Option<i64>, LineError> {
    conn.query_row(
        "SELECT ceil_app - used_app FROM line_capacity WHERE scope_kind = ?1 \
         AND scope_key = ?2",
        params![kind, key],
        |r| r.get(0),
    )
    .optional()
    .map_err(|e| io("cannot read capacity", e))
}

/// Charges one use, `app` application bytes and `net` reserved network bytes to a scope.
pub(crate) fn add_charge(
    tx: &Transaction<'_>,
    kind: ScopeKind,
    key: &str,
    app: i64,
    net: i64,
) -> Result<(), LineError> {
    tx.execute(
        "UPDATE line_capacity SET used_uses = used_uses + 1, used_app = used_app + ?3, \
         reserved_net = reserved_net + ?4 WHERE scope_kind = ?1 AND scope_key = ?2",
        params![kind.as_str(), key, app, net],
    )
    .map_err(|e| io("cannot charge capacity", e))?;
    Ok(())
}

/// An exchange as its charge records it.
pub(crate) struct NewExchange<'a> {
    pub exchange_id: &'a str,
    pub task_id: &'a str,
    pub seq: i64,
    pub operation: &'a str,
    pub generation: u64,
    /// The host, purpose, peer and task scope keys, in [`ScopeKind::ALL`] order.
    pub keys: [&'a str; 4],
    pub charged_app: i64,
    pub charged_net: i64,
    pub charged_at_ms: i64,
    /// The request's nonce and the SHA-256 of its `Signature` field.
    pub request: Option<(&'a str, &'a str)>,
}

/// The sequence number the next exchange of `task_id` takes (1 first).
pub(crate) fn next_seq(tx: &Transaction<'_>, task_id: &str) -> Result<i64, LineError> {
    tx.query_row(
        "SELECT coalesce(max(seq), 0) + 1 FROM line_exchange WHERE task_id = ?1",
        [task_id],
        |r| r.get(0),
    )
    .map_err(|e| io("cannot number the exchange", e))
}

/// Records a charged exchange.
pub(crate) fn insert_exchange(tx: &Transaction<'_>, e: &NewExchange<'_>) -> Result<(), LineError> {
    tx.execute(
        "INSERT INTO line_exchange (exchange_id, task_id, seq, operation, generation, host_key, \
         purpose_key, peer_key, task_key, charged_uses, charged_app, charged_net, charged_at_ms, \
         request_nonce, request_sig_sha256) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10, ?11, ?12, ?13, ?14)",
        params![
            e.exchange_id,
            e.task_id,
            e.seq,
            e.operation,
            e.generation as i64,
            e.keys[0],
            e.keys[1],
            e.keys[2],
            e.keys[3],
            e.charged_app,
            e.charged_net,
            e.charged_at_ms,
            e.request.map(|r| r.0),
            e.request.map(|r| r.1)
        ],
    )
    .map_err(|e| io("cannot record the exchange", e))?;
    Ok(())
}

/// What accepting bytes reads of an exchange: the accepted bytes (once recorded), the charged
/// network bytes, and its four scope keys in [`ScopeKind::ALL`] order.
pub(crate) type Charged = (Option<i64>, i64, [String; 4]);

/// The charge of an exchange, if it exists.
pub(crate) fn charged(
    tx: &Transaction<'_>,
    exchange_id: &str,
) -> Result<Option<Charged>, LineError> {
    tx.query_row(
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
    .map_err(|e| io("cannot read the exchange", e))
}

/// Records `bytes` accepted by an exchange and adds them to its four scopes (`keys`).
pub(crate) fn accept(
    tx: &Transaction<'_>,
    exchange_id: &str,
    keys: &[String; 4],
    bytes: i64,
) -> Result<(), LineError> {
    tx.execute(
        "UPDATE line_exchange SET accepted_net = ?2 WHERE exchange_id = ?1",
        params![exchange_id, bytes],
    )
    .map_err(|e| io("cannot record accepted bytes", e))?;
    for (kind, key) in ScopeKind::ALL.iter().zip(keys) {
        tx.execute(
            "UPDATE line_capacity SET accepted_net = accepted_net + ?3 \
             WHERE scope_kind = ?1 AND scope_key = ?2",
            params![kind.as_str(), key, bytes],
        )
        .map_err(|e| io("cannot record accepted bytes", e))?;
    }
    Ok(())
}

/// Settles an exchange still without an outcome as `outcome` (`unknown`, `undelivered`).
pub(crate) fn settle(
    conn: &Connection,
    exchange_id: &str,
    outcome: &str,
    now_ms: i64,
) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE line_exchange SET outcome = ?2, settled_at_ms = ?3 \
         WHERE exchange_id = ?1 AND outcome IS NULL",
        params![exchange_id, outcome, now_ms],
    )
}

/// Settles an exchange still without an outcome with an authenticated answer's `outcome`
/// (`authenticated`, `peer_refused`), the key version that signed it and its nonce.
pub(crate) fn settle_answered(
    tx: &Transaction<'_>,
    exchange_id: &str,
    outcome: &str,
    key_version: i64,
    nonce: &str,
    now_ms: i64,
) -> rusqlite::Result<usize> {
    tx.execute(
        "UPDATE line_exchange SET outcome = ?2, response_key_version = ?3, response_nonce = ?4, \
         settled_at_ms = ?5 WHERE exchange_id = ?1 AND outcome IS NULL",
        params![exchange_id, outcome, key_version, nonce, now_ms],
    )
}

/// Settles every exchange an earlier process left without an outcome as `unknown`.
pub(crate) fn settle_all_open(conn: &Connection, now_ms: i64) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE line_exchange SET outcome = 'unknown', settled_at_ms = ?1 \
         WHERE outcome IS NULL",
        [now_ms],
    )
}

/// Whether an exchange already recorded the response nonce `nonce`.
pub(crate) fn response_nonce_seen(conn: &Connection, nonce: &str) -> Result<bool, LineError> {
    conn.query_row(
        "SELECT count(*) FROM line_exchange WHERE response_nonce = ?1",
        [nonce],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
    .map_err(|e| io("cannot read response nonces", e))
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

/// The sums over the exchanges charged to a scope: exchanges, application bytes, reserved and
/// accepted network bytes (what its counters must equal).
pub(crate) fn charged_sums(
    conn: &Connection,
    row: &ScopeRow,
) -> Result<(i64, i64, i64, i64), LineError> {
    let column = match row.kind.as_str() {
        "host" => "host_key",
        "purpose" => "purpose_key",
        "peer" => "peer_key",
        _ => "task_key",
    };
    conn.query_row(
        &format!(
            "SELECT count(*), coalesce(sum(charged_app), 0), \
             coalesce(sum(charged_net), 0), coalesce(sum(accepted_net), 0) \
             FROM line_exchange WHERE {column} = ?1"
        ),
        [&row.key],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )
    .map_err(|e| io("cannot sum exchanges", e))
}

//! `line_peer` (each enrollment: its selectors, endpoint, pinned workload key, state and durable
//! fence) and `line_peer_key` (each peer's key versions).

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::LineError;
use crate::keyrec::{EndpointRecord, KEY_ASSURANCE, KEY_PROTOCOL, KeyRecord};
use crate::policy::Selectors;
use crate::schema::io;

/// An enrollment row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enrollment {
    /// Its id.
    pub enrollment_id: String,
    /// `active` or `revoked`.
    pub state: String,
    /// `enroll`, `rotate`, `revoke` or none.
    pub pending_mutation: Option<String>,
    /// The pinned workload key fingerprint.
    pub workload_key_sha256: String,
}

/// A usable verification key of a peer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerificationKey {
    /// Its version.
    pub version: i64,
    /// The raw Ed25519 public key.
    pub public_key_raw: Vec<u8>,
}

/// The active key of a peer: (version, key_id, raw, valid_from, expires_at).
pub(crate) type ActiveKey = (i64, String, Vec<u8>, String, String);

/// An enrolled endpoint as stored: address, hostname, port, path, CA file and its pinned
/// SHA-256.
pub(crate) type StoredEndpoint = (String, String, i64, String, String, String);

/// The enrollment with exactly these selectors and endpoint.
pub fn find_enrollment(
    conn: &Connection,
    s: &Selectors,
    endpoint: &str,
) -> Result<Option<Enrollment>, LineError> {
    conn.query_row(
        "SELECT enrollment_id, state, pending_mutation, workload_key_sha256 FROM line_peer \
         WHERE peer_id = ?1 AND purpose = ?2 AND task_schema = ?3 AND category = ?4 \
         AND endpoint = ?5",
        params![s.peer_id, s.purpose, s.task_schema, s.category, endpoint],
        |r| {
            Ok(Enrollment {
                enrollment_id: r.get(0)?,
                state: r.get(1)?,
                pending_mutation: r.get(2)?,
                workload_key_sha256: r.get(3)?,
            })
        },
    )
    .optional()
    .map_err(|e| io("cannot read enrollments", e))
}

/// Whether any enrollment of `peer_id` is revoked, and the durable fence of any of them.
pub(crate) fn peer_state(
    conn: &Connection,
    peer_id: &str,
) -> Result<(bool, Option<String>), LineError> {
    conn.query_row(
        "SELECT coalesce(max(state = 'revoked'), 0), max(pending_mutation) FROM line_peer \
         WHERE peer_id = ?1",
        [peer_id],
        |r| Ok((r.get::<_, i64>(0)? == 1, r.get(1)?)),
    )
    .map_err(|e| io("cannot read the peer", e))
}

/// The enrolled endpoint of an enrollment.
pub(crate) fn endpoint(
    conn: &Connection,
    enrollment_id: &str,
) -> Result<StoredEndpoint, LineError> {
    conn.query_row(
        "SELECT address, hostname, port, path, ca_file, ca_sha256 FROM line_peer \
         WHERE enrollment_id = ?1",
        [enrollment_id],
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
    .map_err(|e| io("cannot read the enrollment", e))
}

/// The active version of the key `key_id` of `peer_id`, valid at `now_ms`.
pub(crate) fn valid_key(
    conn: &Connection,
    peer_id: &str,
    key_id: &str,
    now_ms: i64,
) -> Result<Option<VerificationKey>, LineError> {
    conn.query_row(
        "SELECT version, public_key_raw FROM line_peer_key WHERE peer_id = ?1 AND key_id = ?2 \
         AND state = 'active' AND valid_from_ms <= ?3 AND ?3 < expires_at_ms",
        params![peer_id, key_id, now_ms],
        |r| {
            Ok(VerificationKey {
                version: r.get(0)?,
                public_key_raw: r.get(1)?,
            })
        },
    )
    .optional()
    .map_err(|e| io("cannot read peer keys", e))
}

/// The active key of a peer.
pub(crate) fn active_key(conn: &Connection, peer_id: &str) -> Result<Option<ActiveKey>, LineError> {
    conn.query_row(
        "SELECT version, key_id, public_key_raw, valid_from, expires_at FROM line_peer_key \
         WHERE peer_id = ?1 AND state = 'active'",
        [peer_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
    )
    .optional()
    .map_err(|e| io("cannot read peer keys", e))
}

/// The key id of a peer's key `version`, if it has one.
pub(crate) fn key_id_of(
    conn: &Connection,
    peer_id: &str,
    version: i64,
) -> Result<Option<String>, LineError> {
    conn.query_row(
        "SELECT key_id FROM line_peer_key WHERE peer_id = ?1 AND version = ?2",
        params![peer_id, version],
        |r| r.get(0),
    )
    .optional()
    .map_err(|e| io("cannot read peer keys", e))
}

/// The key id of a key version of `peer_id` that already has `key_id` or `raw`, if any.
pub(crate) fn reused_key(
    conn: &Connection,
    peer_id: &str,
    key_id: &str,
    raw: &[u8],
) -> Result<Option<String>, LineError> {
    conn.query_row(
        "SELECT key_id, public_key_raw FROM line_peer_key WHERE peer_id = ?1 \
         AND (key_id = ?2 OR public_key_raw = ?3)",
        params![peer_id, key_id, raw],
        |r| r.get(0),
    )
    .optional()
    .map_err(|e| io("cannot read peer keys", e))
}

/// An enrollment as it is first recorded: active, fenced by its own `enroll`.
pub(crate) struct NewEnrollment<'a> {
    pub enrollment_id: &'a str,
    pub selectors: &'a Selectors,
    pub endpoint: &'a EndpointRecord,
    pub workload_id: &'a str,
    pub workload_key_sha256: &'a str,
    pub generation: u64,
    pub now_ms: i64,
}

/// Records a new enrollment, fenced by its `enroll` until [`complete_enrollment`].
pub(crate) fn insert_enrollment(
    tx: &Transaction<'_>,
    n: &NewEnrollment<'_>,
) -> Result<(), LineError> {
    let (s, e) = (n.selectors, n.endpoint);
    tx.execute(
        "INSERT INTO line_peer (enrollment_id, peer_id, purpose, task_schema, category, \
         endpoint, address, hostname, port, path, ca_file, ca_sha256, workload_id, \
         workload_key_sha256, generation, state, pending_mutation, created_at_ms, \
         updated_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, \
         ?14, ?15, 'active', 'enroll', ?16, ?16)",
        params![
            n.enrollment_id,
            s.peer_id,
            s.purpose,
            s.task_schema,
            s.category,
            e.uri,
            e.address,
            e.hostname,
            e.port,
            e.path,
            e.ca_file,
            e.ca_sha256,
            n.workload_id,
            n.workload_key_sha256,
            n.generation as i64,
            n.now_ms
        ],
    )
    .map_err(|e| io("cannot record the enrollment", e))?;
    Ok(())
}

/// Lifts the fence of one enrollment.
pub(crate) fn complete_enrollment(
    tx: &Transaction<'_>,
    enrollment_id: &str,
    now_ms: i64,
) -> Result<(), LineError> {
    tx.execute(
        "UPDATE line_peer SET pending_mutation = NULL, updated_at_ms = ?2 \
         WHERE enrollment_id = ?1",
        params![enrollment_id, now_ms],
    )
    .map_err(|e| io("cannot complete the enrollment", e))?;
    Ok(())
}

/// Fences every enrollment of `peer_id` durably with `mutation`.
pub(crate) fn fence(
    tx: &Transaction<'_>,
    peer_id: &str,
    mutation: &str,
    now_ms: i64,
) -> Result<(), LineError> {
    tx.execute(
        "UPDATE line_peer SET pending_mutation = ?2, updated_at_ms = ?3 WHERE peer_id = ?1",
        params![peer_id, mutation, now_ms],
    )
    .map_err(|e| io("cannot fence the peer", e))?;
    Ok(())
}

/// Lifts the durable fence of every enrollment of `peer_id`.
pub(crate) fn clear_fence(
    tx: &Transaction<'_>,
    peer_id: &str,
    now_ms: i64,
) -> Result<(), LineError> {
    tx.execute(
        "UPDATE line_peer SET pending_mutation = NULL, updated_at_ms = ?2 WHERE peer_id = ?1",
        params![peer_id, now_ms],
    )
    .map_err(|e| io("cannot lift the fence", e))?;
    Ok(())
}

/// Records `key` as the active key `version` of `peer_id`.
pub(crate) fn insert_key(
    tx: &Transaction<'_>,
    peer_id: &str,
    version: i64,
    key: &KeyRecord,
) -> Result<(), LineError> {
    tx.execute(
        "INSERT INTO line_peer_key (peer_id, version, key_id, public_key_raw, issuer, audience, \
         protocol, assurance, valid_from, expires_at, valid_from_ms, expires_at_ms, state) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'active')",
        params![
            peer_id,
            version,
            key.key_id,
            key.public_key_raw.to_vec(),
            key.issuer,
            key.audience,
            KEY_PROTOCOL,
            KEY_ASSURANCE,
            key.valid_from,
            key.expires_at,
            key.valid_from_ms,
            key.expires_at_ms
        ],
    )
    .map_err(|e| io("cannot record the key", e))?;
    Ok(())
}

/// Retires the key `version` of `peer_id`.
pub(crate) fn retire_key(
    tx: &Transaction<'_>,
    peer_id: &str,
    version: i64,
) -> Result<(), LineError> {
    tx.execute(
        "UPDATE line_peer_key SET state = 'retired' WHERE peer_id = ?1 AND version = ?2",
        params![peer_id, version],
    )
    .map_err(|e| io("cannot retire the key", e))?;
    Ok(())
}

/// Revokes `peer_id`: every enrollment (its fence lifted) and every key version.
pub(crate) fn revoke(tx: &Transaction<'_>, peer_id: &str, now_ms: i64) -> Result<(), LineError> {
    tx.execute(
        "UPDATE line_peer SET state = 'revoked', pending_mutation = NULL, updated_at_ms = ?2 \
         WHERE peer_id = ?1",
        params![peer_id, now_ms],
    )
    .map_err(|e| io("cannot revoke the peer", e))?;
    tx.execute(
        "UPDATE line_peer_key SET state = 'revoked' WHERE peer_id = ?1",
        [peer_id],
    )
    .map_err(|e| io("cannot revoke the keys", e))?;
    Ok(())
}

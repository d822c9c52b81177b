//! Host-only commands (`agent-intercom line host ...`), never reachable from a session: the
//! operator credential's digest and the durable policy generations with their capacity rows.
//!
//! They are single transactions and may run while a session is live (that is how a newer
//! generation reaches a running session: its next operation is `stale_generation`); only a
//! migration needs the database to itself.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use crate::policy::PeerPolicy;
use crate::schema::{self, io};
use crate::secrets::OperatorCredential;
use crate::{Code, LineError};

/// The installation row: its id, created on first use.
fn installation(tx: &Transaction<'_>, now_ms: i64) -> Result<String, LineError> {
    let existing: Option<String> = tx
        .query_row(
            "SELECT installation_id FROM line_host WHERE singleton = 1",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| io("cannot read the installation", e))?;
    if let Some(id) = existing {
        return Ok(id);
    }
    let id = uuid::Uuid::new_v4().hyphenated().to_string();
    tx.execute(
        "INSERT INTO line_host (singleton, installation_id, created_at_ms) VALUES (1, ?1, ?2)",
        params![id, now_ms],
    )
    .map_err(|e| io("cannot record the installation", e))?;
    Ok(id)
}

/// The installation id, if the host has one.
pub fn installation_id(conn: &Connection) -> Result<Option<String>, LineError> {
    conn.query_row(
        "SELECT installation_id FROM line_host WHERE singleton = 1",
        [],
        |r| r.get(0),
    )
    .optional()
    .map_err(|e| io("cannot read the installation", e))
}

/// The stored credential digest (`None` when the host has set none).
pub fn credential_digest(conn: &Connection) -> Result<Option<Vec<u8>>, LineError> {
    let row: Option<Option<Vec<u8>>> = conn
        .query_row(
            "SELECT operator_credential_sha256 FROM line_host WHERE singleton = 1",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| io("cannot read the credential digest", e))?;
    Ok(row.flatten())
}

/// The newest durable generation and its digest.
pub fn newest_policy(conn: &Connection) -> Result<Option<(u64, String)>, LineError> {
    conn.query_row(
        "SELECT generation, digest FROM line_policy ORDER BY generation DESC LIMIT 1",
        [],
        |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)),
    )
    .optional()
    .map_err(|e| io("cannot read the policy generations", e))
}

/// The digest of a durable generation.
pub fn policy_digest(conn: &Connection, generation: u64) -> Result<Option<String>, LineError> {
    conn.query_row(
        "SELECT digest FROM line_policy WHERE generation = ?1",
        [generation as i64],
        |r| r.get(0),
    )
    .optional()
    .map_err(|e| io("cannot read the policy generation", e))
}

fn begin<'c>(conn: &'c mut Connection) -> Result<Transaction<'c>, LineError> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| io("cannot begin a transaction", e))
}

/// Stores the digest of the operator credential (replacing an earlier one: capacity is not
/// keyed by it). Returns the installation id.
pub fn set_operator_credential(
    db: &Path,
    credential: &OperatorCredential,
    now_ms: i64,
) -> Result<String, LineError> {
    let mut conn = schema::open_at_revision(db)?;
    let tx = begin(&mut conn)?;
    let id = installation(&tx, now_ms)?;
    tx.execute(
        "UPDATE line_host SET operator_credential_sha256 = ?1, credential_set_at_ms = ?2 \
         WHERE singleton = 1",
        params![credential.digest().to_vec(), now_ms],
    )
    .map_err(|e| io("cannot store the credential digest", e))?;
    tx.commit()
        .map_err(|e| io("cannot commit the credential digest", e))?;
    Ok(id)
}

/// What establishing a policy did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Established {
    /// The generation.
    pub generation: u64,
    /// Its digest.
    pub digest: String,
    /// False when the same generation with the same digest was already durable.
    pub new: bool,
    /// Capacity rows created (scopes first named by this generation).
    pub scopes_created: usize,
}

/// Makes `policy` durable as its generation, with a zero-use capacity row for each scope it
/// names, in one transaction. Refused: a generation not newer than the newest durable one
/// (unless it is that one, identical), and any scope whose existing ceiling differs
/// (`ceiling_changed`: a ceiling never changes, so capacity is never reset).
pub fn establish_policy(
    db: &Path,
    policy: &PeerPolicy,
    now_ms: i64,
) -> Result<Established, LineError> {
    let mut conn = schema::open_at_revision(db)?;
    let tx = begin(&mut conn)?;
    if let Some((newest, digest)) = newest_policy(&tx)? {
        if newest == policy.generation && digest == policy.digest {
            return Ok(Established {
                generation: newest,
                digest,
                new: false,
                scopes_created: 0,
            });
        }
        if policy.generation <= newest {
            return Err(LineError::new(
                Code::GenerationNotNewer,
                format!(
                    "generation {} is not newer than the durable generation {newest}",
                    policy.generation
                ),
            )
            .with("generation", newest));
        }
    }
    let host = installation(&tx, now_ms)?;
    tx.execute(
        "INSERT INTO line_policy (generation, digest, record_json, established_at_ms) \
         VALUES (?1, ?2, ?3, ?4)",
        params![
            policy.generation as i64,
            policy.digest,
            policy.canonical,
            now_ms
        ],
    )
    .map_err(|e| io("cannot store the policy", e))?;
    let mut created = 0;
    for (kind, key, limit) in policy.scopes(&host) {
        let existing: Option<(i64, i64, i64)> = tx
            .query_row(
                "SELECT ceil_uses, ceil_app, ceil_net FROM line_capacity \
                 WHERE scope_kind = ?1 AND scope_key = ?2",
                params![kind.as_str(), key],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(|e| io("cannot read capacity", e))?;
        let wanted = (
            limit.uses as i64,
            limit.application_bytes as i64,
            limit.network_bytes as i64,
        );
        match existing {
            Some(ceilings) if ceilings == wanted => {}
            Some(_) => {
                return Err(LineError::new(
                    Code::CeilingChanged,
                    "this policy changes the ceiling of an existing capacity scope: a ceiling \
                     never changes, and capacity is never reset",
                )
                .with(
                    "scope",
                    serde_json::json!({"kind": kind.as_str(), "key": key}),
                ));
            }
            None => {
                tx.execute(
                    "INSERT INTO line_capacity (scope_kind, scope_key, ceil_uses, ceil_app, \
                     ceil_net, created_generation) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        kind.as_str(),
                        key,
                        wanted.0,
                        wanted.1,
                        wanted.2,
                        policy.generation as i64
                    ],
                )
                .map_err(|e| io("cannot create a capacity row", e))?;
                created += 1;
            }
        }
    }
    tx.commit().map_err(|e| io("cannot commit the policy", e))?;
    Ok(Established {
        generation: policy.generation,
        digest: policy.digest.clone(),
        new: true,
        scopes_created: created,
    })
}

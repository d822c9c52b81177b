//! Host-only commands (`agent-intercom line host ...`), never reachable from a session: the
//! operator credential's digest and the durable policy generations with their capacity rows.
//!
//! They are single transactions and may run while a session is live (that is how a newer
//! generation reaches a running session: its next operation is `stale_generation`); only a
//! migration needs the database to itself.

use std::path::Path;

use rusqlite::Transaction;

use crate::custody::{self, host as store, ledger};
use crate::policy::PeerPolicy;
use crate::schema;
use crate::secrets::OperatorCredential;
use crate::{Code, LineError};

pub use crate::custody::host::{credential_digest, installation_id, newest_policy, policy_digest};

/// Stores the digest of the operator credential (replacing an earlier one: capacity is not
/// keyed by it). Returns the installation id.
pub fn set_operator_credential(
    db: &Path,
    credential: &OperatorCredential,
    now_ms: i64,
) -> Result<String, LineError> {
    let mut conn = schema::open_at_revision(db)?;
    let tx = custody::begin(&mut conn, "cannot begin a transaction")?;
    let id = store::installation(&tx, now_ms)?;
    store::set_credential_digest(&tx, &credential.digest(), now_ms)?;
    tx.commit()
        .map_err(|e| schema::io("cannot commit the credential digest", e))?;
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
    let tx = custody::begin(&mut conn, "cannot begin a transaction")?;
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
    let host = store::installation(&tx, now_ms)?;
    store::insert_policy(&tx, policy, now_ms)?;
    let created = create_scopes(&tx, policy, &host)?;
    tx.commit()
        .map_err(|e| schema::io("cannot commit the policy", e))?;
    Ok(Established {
        generation: policy.generation,
        digest: policy.digest.clone(),
        new: true,
        scopes_created: created,
    })
}

/// A zero-use capacity row for each scope `policy` names that has none; `ceiling_changed` for
/// one whose ceilings differ. How many were created.
fn create_scopes(
    tx: &Transaction<'_>,
    policy: &PeerPolicy,
    host: &str,
) -> Result<usize, LineError> {
    let mut created = 0;
    for (kind, key, limit) in policy.scopes(host) {
        let wanted = (
            limit.uses as i64,
            limit.application_bytes as i64,
            limit.network_bytes as i64,
        );
        match ledger::ceilings(tx, kind, &key)? {
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
                ledger::create_scope(tx, kind, &key, wanted, policy.generation)?;
                created += 1;
            }
        }
    }
    Ok(created)
}

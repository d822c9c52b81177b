//! Shared pieces of the line's tests: temporary directories, private files, keys, policies and
//! the rows a charge needs (an enrollment and a task, written as the session will write them).

#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use agent_intercom_line::config::PublicConfig;
use agent_intercom_line::ledger::Authority;
use agent_intercom_line::policy::PeerPolicy;
use agent_intercom_line::{host, schema, secrets};
use base64::Engine;
use rusqlite::{Connection, params};
use serde_json::{Value, json};

pub const PEER: &str = "00000000-0000-4000-8000-000000000002";
pub const PEER_B: &str = "00000000-0000-4000-8000-000000000003";
pub const WORKLOAD: &str = "00000000-0000-4000-8000-000000000001";
pub const ENDPOINT: &str = "https://peer.example:443/a2a/jsonrpc";
pub const CREDENTIAL: &str = "operator-credential-0123456789abcdefghijklmnopqrstuv";

pub struct Tmp(pub PathBuf);

impl Tmp {
    pub fn new(name: &str) -> Tmp {
        let dir = std::env::temp_dir().join(format!("aic-line-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Tmp(dir)
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    /// A file with `mode`.
    pub fn file(&self, name: &str, bytes: &[u8], mode: u32) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, bytes).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The PKCS#8 v1 DER of an Ed25519 seed (RFC 8410).
pub fn pkcs8(seed: &[u8; 32]) -> Vec<u8> {
    let mut der = vec![
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
        0x20,
    ];
    der.extend_from_slice(seed);
    der
}

/// PEM text of one block.
pub fn pem(label: &str, der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out += std::str::from_utf8(chunk).unwrap();
        out.push('\n');
    }
    out + &format!("-----END {label}-----\n")
}

/// A workload key's PEM.
pub fn key_pem(seed: &[u8; 32]) -> String {
    pem("PRIVATE KEY", &pkcs8(seed))
}

/// A policy record with everything admitted once; `edit` changes it.
pub fn policy(generation: u64, edit: impl FnOnce(&mut Value)) -> Value {
    let mut p = json!({
        "generation": generation,
        "actions": ["enroll", "classify_public", "submit", "poll", "cancel", "read", "rotate",
                    "revoke"],
        "purposes": ["public-summary"],
        "categories": ["public-task"],
        "task_schemas": ["public-text@1"],
        "peers": [PEER],
        "endpoints": [ENDPOINT],
        "limits": {
            "host": {"uses": 100, "application_bytes": 1_000_000, "network_bytes": 100 * 524_288},
            "purpose": {"uses": 50, "application_bytes": 500_000, "network_bytes": 50 * 524_288},
            "peer": {"uses": 20, "application_bytes": 200_000, "network_bytes": 20 * 524_288},
            "task": {"uses": 10, "application_bytes": 100_000, "network_bytes": 10 * 524_288},
        },
        "declaration_seconds": 600,
        "task_seconds": 3600,
        "network_seconds": 30,
    });
    edit(&mut p);
    p
}

pub fn config(policy: Value) -> Value {
    json!({"workload_id": WORKLOAD, "signing_key_id": "workload-key-1", "policy": policy})
}

pub fn parsed(policy: &Value) -> PeerPolicy {
    PeerPolicy::from_json(&policy.to_string()).unwrap()
}

/// A migrated database with `policy` established.
pub fn established(tmp: &Tmp, policy: &Value) -> (PathBuf, PeerPolicy) {
    let db = tmp.path("line.sqlite");
    schema::migrate(&db, schema::CUSTODY_REVISION).unwrap();
    let policy = parsed(policy);
    host::establish_policy(&db, &policy, 1_000).unwrap();
    (db, policy)
}

pub fn authority(db: &Path, policy: &PeerPolicy) -> Authority {
    let conn = Connection::open(db).unwrap();
    Authority {
        generation: policy.generation,
        limits: policy.limits,
        host_key: host::installation_id(&conn).unwrap().unwrap(),
    }
}

/// An enrollment and a task row (as the session will write them) for `peer`.
pub fn task(db: &Path, task_id: &str, peer: &str, generation: u64) {
    let conn = Connection::open(db).unwrap();
    conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
    let enrollment = format!("enr-{task_id}");
    conn.execute(
        "INSERT INTO line_peer (enrollment_id, peer_id, purpose, task_schema, category, \
         endpoint, address, hostname, port, path, ca_file, ca_sha256, workload_id, \
         workload_key_sha256, generation, state, created_at_ms, updated_at_ms) VALUES \
         (?1, ?2, 'public-summary', 'public-text@1', ?3, ?4, '127.0.0.1', 'peer.example', 443, \
         '/a2a/jsonrpc', '/ca.pem', 'ca', ?5, 'fp', ?6, 'active', 0, 0)",
        params![
            enrollment,
            peer,
            task_id,
            ENDPOINT,
            WORKLOAD,
            generation as i64
        ],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO line_task (task_id, owner_kind, startup_id, enrollment_id, peer_id, purpose, \
         task_schema, category, endpoint, message_id, body, body_sha256, source_assertion_json, \
         generation, created_at_ms, expires_at_ms, status, adoption_open, local_disposition) \
         VALUES (?1, 'operator', 's', ?2, ?3, 'public-summary', 'public-text@1', 'public-task', \
         ?4, ?5, X'7B7D', 'h', '{}', ?6, 0, 1, 'prepared', 1, 'open')",
        params![
            task_id,
            enrollment,
            peer,
            ENDPOINT,
            format!("msg-{task_id}"),
            generation as i64
        ],
    )
    .unwrap();
}

/// The counters (uses, app, reserved, accepted) of one scope.
pub fn used(db: &Path, kind: &str, key: &str) -> (i64, i64, i64, i64) {
    let conn = Connection::open(db).unwrap();
    conn.query_row(
        "SELECT used_uses, used_app, reserved_net, accepted_net FROM line_capacity \
         WHERE scope_kind = ?1 AND scope_key = ?2",
        params![kind, key],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )
    .unwrap()
}

pub fn count(db: &Path, table: &str) -> i64 {
    let conn = Connection::open(db).unwrap();
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

pub fn parse_config(value: &Value) -> Result<PublicConfig, agent_intercom_line::LineError> {
    PublicConfig::from_json(&value.to_string())
}

pub fn credential() -> secrets::OperatorCredential {
    secrets::credential_of(CREDENTIAL.as_bytes()).unwrap()
}

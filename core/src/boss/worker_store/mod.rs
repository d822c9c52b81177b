//! The full worker-store migration (`./boss`): a legacy WorkerStore worker with its
//! compatibility fields becomes an `orc.worker-store-record.v2` record, and that record is read
//! back strictly; the two store validators; and the migration's vector corpus.
//!
//! The migration never derives Boss authority: the legacy `runId` becomes the worker
//! incarnation byte for byte, `AGENT_INTERCOM_RUN_ID` survives only as an alias of it, and a
//! migrated worker has no `bossRunId`. Every compatibility group but the environment is bound
//! to the migrated worker's incarnation and generation.
//!
//! The corpus (`vectors/worker-store-migration-v2.json`, embedded from `core/data/`) fixes the
//! semantics: `FULL_WORKER_STORE_MIGRATION_VECTORS_HASH` ([`vectors_hash`]) is computed from
//! it, and the Boss feature-semantics corpus takes it from here.

mod fields;
mod record;

use std::sync::LazyLock;

use super::{JsonObject, string_array_json};
use crate::boss::store::{self, StoreVersion};
use crate::canonical::{self, Value};
use crate::contract::read::Read;
use crate::contract::{Args, Failure, Js, Op, Out};

pub use fields::{
    Adapter, CompatibilityFields, Controller, Environment, Health, Notice, OwningManagerRecipient,
    Runtime, Systemd,
};
pub use record::{
    FullWorkerStoreMigrationInput, PRESERVED_FIELD_GROUPS, WorkerStoreRecord,
    migrate_full_worker_store, parse_full_worker_store_migration_input, parse_worker_store_record,
};

/// `FULL_WORKER_STORE_MIGRATION_VERSION`: the `version` of a migration input.
pub const FULL_WORKER_STORE_MIGRATION_VERSION: i64 = 1;
/// `FULL_WORKER_STORE_V2_RECORD_VERSION`: the `version` of a migrated record.
pub const FULL_WORKER_STORE_V2_RECORD_VERSION: &str = "orc.worker-store-record.v2";
/// `WORKER_STORE_MANAGER_RECIPIENT_CONTEXTS`: where an owning Manager runs.
pub const WORKER_STORE_MANAGER_RECIPIENT_CONTEXTS: &[&str] = &["pi", "opencode", "headless_cli"];

/// The corpus file exactly as shipped in `vectors/worker-store-migration-v2.json`, embedded
/// from the crate's own copy (`core/data/`, written by `cargo xtask gen`).
pub const VECTORS_JSON: &str = include_str!("../../../data/worker-store-migration-v2.json");
/// `FULL_WORKER_STORE_MIGRATION_VECTOR_HASH_DOMAIN`.
pub const VECTOR_HASH_DOMAIN: &str = "agent-intercom-core/worker-store-v1-v2-full-v2";

/// The corpus's version and its hash, read from the embedded file once.
static CORPUS: LazyLock<(i64, String)> = LazyLock::new(|| corpus_version_and_hash(VECTORS_JSON));

/// `{version, hash}` of a corpus file: `canonicalHash(VECTOR_HASH_DOMAIN, {version, vectors,
/// strictRejectionVectors})`; the file's other members are not hashed.
pub fn corpus_version_and_hash(file: &str) -> (i64, String) {
    let doc = canonical::parse(file).expect("the corpus is canonical JSON data");
    let member = |key: &str| {
        doc.get(key)
            .unwrap_or_else(|| panic!("the corpus has no {key}"))
            .clone()
    };
    let version = member("version");
    let Value::Int(number) = version else {
        panic!("the corpus version is an integer")
    };
    let hashed = Value::Object(vec![
        ("version".into(), version),
        ("vectors".into(), member("vectors")),
        (
            "strictRejectionVectors".into(),
            member("strictRejectionVectors"),
        ),
    ]);
    let hash = canonical::canonical_hash(VECTOR_HASH_DOMAIN, &hashed).expect("the corpus hashes");
    (number, hash)
}

/// `FULL_WORKER_STORE_MIGRATION_VECTOR_VERSION`, from the corpus file.
pub fn vector_version() -> i64 {
    CORPUS.0
}

/// `FULL_WORKER_STORE_MIGRATION_VECTORS_HASH`, computed from the corpus file.
pub fn vectors_hash() -> &'static str {
    &CORPUS.1
}

impl JsonObject {
    /// A string member, or `null`.
    pub(crate) fn nullable_str(self, key: &str, value: Option<&str>) -> JsonObject {
        match value {
            Some(v) => self.str(key, v),
            None => self.raw(key, "null"),
        }
    }
}

/// `validateVersionedStoreRecord(value, expected, parse)` with the whole result as JSON
/// ([`store::validate`]); a refusal's `observedVersion` is the record's `version` as JSON
/// (`null` when JSON cannot hold it: the Node module reads the caller's own value instead).
fn validate(value: &Js, expected: StoreVersion, parse: fn(&Js) -> Read<String>) -> String {
    store::validate(value, expected, |v| parse(v).map(Out::Json))
}

fn parse_input_json(v: &Js) -> Read<String> {
    parse_full_worker_store_migration_input(v).map(|i| i.to_json())
}

fn migrate_json(v: &Js) -> Read<String> {
    migrate_full_worker_store(v).map(|r| r.to_json())
}

fn parse_record_json(v: &Js) -> Read<String> {
    parse_worker_store_record(v).map(|r| r.to_json())
}

/// `validateFullWorkerStoreMigrationInputV1(value)` as JSON.
pub fn validate_full_worker_store_migration_input(value: &Js) -> String {
    let expected = StoreVersion::Number(FULL_WORKER_STORE_MIGRATION_VERSION);
    validate(value, expected, parse_input_json)
}

/// `validateWorkerStoreRecordV2(value)` as JSON.
pub fn validate_worker_store_record(value: &Js) -> String {
    validate(
        value,
        StoreVersion::Text(FULL_WORKER_STORE_V2_RECORD_VERSION),
        parse_record_json,
    )
}

/// The corpus as the Node module reads it: `{semanticsHash, hashDomain, corpus}` with the file
/// as shipped.
fn vectors_json() -> String {
    JsonObject::new()
        .str("semanticsHash", vectors_hash())
        .str("hashDomain", VECTOR_HASH_DOMAIN)
        .raw("corpus", VECTORS_JSON)
        .finish()
}

/// This module's constants, added to `./boss`'s constant object.
pub(crate) fn add_constants(o: JsonObject) -> JsonObject {
    o.int(
        "FULL_WORKER_STORE_MIGRATION_VERSION",
        FULL_WORKER_STORE_MIGRATION_VERSION,
    )
    .str(
        "FULL_WORKER_STORE_V2_RECORD_VERSION",
        FULL_WORKER_STORE_V2_RECORD_VERSION,
    )
    .raw(
        "WORKER_STORE_MANAGER_RECIPIENT_CONTEXTS",
        &string_array_json(WORKER_STORE_MANAGER_RECIPIENT_CONTEXTS),
    )
}

fn json_op(a: Args<'_>, run: fn(&Js) -> Read<String>) -> Result<Out, Failure> {
    run(a.get(0)).map(Out::Json)
}

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "boss.parseFullWorkerStoreMigrationInputV1",
        run: |a| json_op(a, parse_input_json),
    },
    Op {
        name: "boss.migrateFullWorkerStoreV1",
        run: |a| json_op(a, migrate_json),
    },
    Op {
        name: "boss.parseWorkerStoreRecordV2",
        run: |a| json_op(a, parse_record_json),
    },
    Op {
        name: "boss.validateFullWorkerStoreMigrationInputV1",
        run: |a| {
            Ok(Out::Json(validate_full_worker_store_migration_input(
                a.get(0),
            )))
        },
    },
    Op {
        name: "boss.validateWorkerStoreRecordV2",
        run: |a| Ok(Out::Json(validate_worker_store_record(a.get(0)))),
    },
    Op {
        name: "boss.workerStoreMigrationVectors",
        run: |_| Ok(Out::Json(vectors_json())),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Js {
        Js::parse_json(text).unwrap()
    }

    #[test]
    fn a_refusal_reports_the_observed_version_as_json() {
        let answer = validate_worker_store_record(&json(r#"{"version":["orc",2]}"#));
        assert!(
            answer.starts_with(
                r#"{"ok":false,"status":"foreign_version","observedVersion":["orc",2],"#
            ),
            "{answer}"
        );
        let answer = validate_full_worker_store_migration_input(&json(r#"{"version":1}"#));
        assert!(
            answer.contains(r#""observedVersion":1,"path":"$.worker""#),
            "{answer}"
        );
        assert!(
            answer.contains(r#""message":"$.worker: is required""#),
            "{answer}"
        );
        let answer = validate_worker_store_record(&json("[]"));
        assert!(!answer.contains("observedVersion"), "{answer}");
    }
}

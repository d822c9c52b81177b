//! The supervision vector corpus (`vectors/orc-supervision-v1.json`, embedded from the crate's
//! copy in `core/data/`) and `SUPERVISION_VECTORS_HASH`, computed from it:
//! `canonicalHash(SUPERVISION_VECTOR_HASH_DOMAIN, semantics)`, where `semantics` is the
//! TypeScript core's `SUPERVISION_VECTOR_CORPUS` exactly. The feature-semantics corpus and the
//! capability binding (`crate::boss::feature::semantics`) take the hash from here.

use std::sync::LazyLock;

use crate::canonical;
use crate::contract::Js;

/// The corpus file exactly as shipped in `vectors/orc-supervision-v1.json`.
pub const VECTORS_JSON: &str = include_str!("../../../data/orc-supervision-v1.json");
/// `SUPERVISION_VECTOR_HASH_DOMAIN` (the file's `corpus`).
pub const HASH_DOMAIN: &str = "agent-intercom-core/orc-supervision-v1";
/// `SUPERVISION_VECTOR_SCHEMA_VERSION`.
pub const SCHEMA_VERSION: i64 = 1;

static DOCUMENT: LazyLock<Js> =
    LazyLock::new(|| Js::parse_json(VECTORS_JSON).expect("the supervision corpus is JSON"));

static HASH: LazyLock<String> = LazyLock::new(|| {
    let doc = canonical::parse(VECTORS_JSON).expect("the supervision corpus is canonical data");
    let semantics = doc.get("semantics").expect("the corpus has its semantics");
    canonical::canonical_hash(HASH_DOMAIN, semantics).expect("the corpus hashes")
});

/// `SUPERVISION_VECTORS_HASH`.
pub fn vectors_hash() -> &'static str {
    &HASH
}

fn part(key: &str) -> &'static Js {
    DOCUMENT
        .get(key)
        .unwrap_or_else(|| panic!("the supervision corpus has no {key}"))
}

fn json(value: &Js) -> String {
    value.to_json().expect("the corpus is plain JSON")
}

static EXPORTS: LazyLock<String> = LazyLock::new(|| {
    super::JsonObject::new()
        .str("hashDomain", HASH_DOMAIN)
        .int("schemaVersion", SCHEMA_VERSION)
        .str("semanticsHash", vectors_hash())
        .raw("corpus", &json(part("semantics")))
        .raw(
            "rebindMigrationNegativeVectors",
            &json(part("rebindMigrationNegativeVectors")),
        )
        .finish()
});

/// What `./boss/vectors` takes from the corpus: the domain, schema version and computed hash,
/// `SUPERVISION_VECTOR_CORPUS` (`corpus`) and `REBIND_MIGRATION_NEGATIVE_VECTORS`.
pub fn exports_json() -> String {
    EXPORTS.clone()
}

/// `stateForSupervisorAclVector()`: a fresh copy of the corpus's ACL state.
pub fn acl_state_json() -> String {
    json(
        part("semantics")
            .get("aclState")
            .expect("the corpus has its ACL state"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corpus_hashes_to_the_published_value() {
        assert_eq!(
            vectors_hash(),
            "6795156a761aa7fa404c06657e7ca3438a99b1a7e4d2919308379a5448e14b33"
        );
        assert_eq!(
            part("semanticsHash").as_str(),
            Some(vectors_hash()),
            "the file's known answer"
        );
        assert_eq!(part("corpus").as_str(), Some(HASH_DOMAIN));
        assert_eq!(part("version").safe_integer(), Some(SCHEMA_VERSION));
    }
}

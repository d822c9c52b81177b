//! The participant-state corpora (`vectors/boss-participant-state-v1.json`,
//! `vectors/boss-participant-state-transition-v1.json`, embedded from `core/data/`) and their
//! hashes, computed from the files as the TypeScript core computes them from its corpus objects:
//! `canonicalHash(domain, {version, ...the corpus members})`. The files' header members
//! (`corpus`, `description`, `count`, `semanticsHash`) are not hashed.

use std::sync::LazyLock;

use crate::boss::JsonObject;
use crate::canonical::{self, Value};
use crate::contract::{Args, Failure, Out};

/// `vectors/boss-participant-state-v1.json` as shipped.
pub const STATE_VECTORS_JSON: &str = include_str!("../../../data/boss-participant-state-v1.json");
/// `vectors/boss-participant-state-transition-v1.json` as shipped.
pub const TRANSITION_VECTORS_JSON: &str =
    include_str!("../../../data/boss-participant-state-transition-v1.json");

/// `PARTICIPANT_STATE_VECTOR_HASH_DOMAIN`.
pub const PARTICIPANT_STATE_VECTOR_HASH_DOMAIN: &str =
    "agent-intercom-core/boss-participant-state-v1";
/// `PARTICIPANT_STATE_TRANSITION_VECTOR_HASH_DOMAIN`.
pub const PARTICIPANT_STATE_TRANSITION_VECTOR_HASH_DOMAIN: &str =
    "agent-intercom-core/boss-participant-state-transition-v1";
/// `PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION` (the state corpus's `version`).
pub const PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION: i64 = 1;
/// `PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION` (the transition corpus's `version`).
pub const PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION: i64 = 1;

/// The hashed members of the state corpus, in the TypeScript corpus's order.
pub const STATE_CORPUS_MEMBERS: &[&str] = &[
    "version",
    "migrationVectors",
    "stoppingReconciliationVectors",
    "healthEvent",
];
/// The hashed members of the transition corpus.
pub const TRANSITION_CORPUS_MEMBERS: &[&str] = &[
    "version",
    "sameGenerationTransitionTable",
    "newGenerationTransitionTable",
    "transitionVectors",
];

/// `canonicalHash(domain, {members...})` over these members of a corpus file.
pub fn corpus_hash(domain: &str, file: &str, members: &[&str]) -> String {
    let doc = canonical::parse(file).expect("an embedded corpus is canonical JSON data");
    let hashed = Value::Object(
        members
            .iter()
            .map(|key| {
                let value = doc
                    .get(key)
                    .unwrap_or_else(|| panic!("the corpus has no {key}"));
                ((*key).into(), value.clone())
            })
            .collect(),
    );
    canonical::canonical_hash(domain, &hashed).expect("the corpus hashes")
}

static STATE_HASH: LazyLock<String> = LazyLock::new(|| {
    corpus_hash(
        PARTICIPANT_STATE_VECTOR_HASH_DOMAIN,
        STATE_VECTORS_JSON,
        STATE_CORPUS_MEMBERS,
    )
});
static TRANSITION_HASH: LazyLock<String> = LazyLock::new(|| {
    corpus_hash(
        PARTICIPANT_STATE_TRANSITION_VECTOR_HASH_DOMAIN,
        TRANSITION_VECTORS_JSON,
        TRANSITION_CORPUS_MEMBERS,
    )
});

/// `PARTICIPANT_STATE_VECTORS_HASH`, computed from the embedded state corpus.
pub fn participant_state_vectors_hash() -> &'static str {
    &STATE_HASH
}

/// `PARTICIPANT_STATE_TRANSITION_VECTORS_HASH`, computed from the embedded transition corpus.
pub fn participant_state_transition_vectors_hash() -> &'static str {
    &TRANSITION_HASH
}

/// `{semanticsHash, corpus}`: the hash and the file as shipped (what the Node module reads).
fn with_hash(hash: &str, file: &str) -> String {
    format!("{{\"semanticsHash\":\"{hash}\",\"corpus\":{file}}}")
}

pub(super) fn state_vectors_op(_: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(with_hash(
        participant_state_vectors_hash(),
        STATE_VECTORS_JSON,
    )))
}

pub(super) fn transition_vectors_op(_: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(with_hash(
        participant_state_transition_vectors_hash(),
        TRANSITION_VECTORS_JSON,
    )))
}

/// The domains, versions and hashes, added to `./boss`'s constant object.
pub(crate) fn add_constants(o: JsonObject) -> JsonObject {
    o.str(
        "PARTICIPANT_STATE_VECTOR_HASH_DOMAIN",
        PARTICIPANT_STATE_VECTOR_HASH_DOMAIN,
    )
    .str(
        "PARTICIPANT_STATE_TRANSITION_VECTOR_HASH_DOMAIN",
        PARTICIPANT_STATE_TRANSITION_VECTOR_HASH_DOMAIN,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boss::participant::transition::{new_generation_table_json, transition_table_json};

    #[test]
    fn the_hashes_come_from_the_files_and_match_their_known_answers() {
        assert_eq!(
            participant_state_vectors_hash(),
            "0da19269f0c2befd9b22b8d146d6bd30450f3f0d64598148fd9317f36a5fc920"
        );
        assert_eq!(
            participant_state_transition_vectors_hash(),
            "143fb362364d0742df565e8a02f778a493007e799c429cec8468f38e6520c86a"
        );
        for (file, domain, hash, version) in [
            (
                STATE_VECTORS_JSON,
                PARTICIPANT_STATE_VECTOR_HASH_DOMAIN,
                participant_state_vectors_hash(),
                PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION,
            ),
            (
                TRANSITION_VECTORS_JSON,
                PARTICIPANT_STATE_TRANSITION_VECTOR_HASH_DOMAIN,
                participant_state_transition_vectors_hash(),
                PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION,
            ),
        ] {
            let doc = canonical::parse(file).unwrap();
            assert_eq!(doc.get("corpus").and_then(Value::as_str), Some(domain));
            assert_eq!(doc.get("semanticsHash").and_then(Value::as_str), Some(hash));
            assert_eq!(doc.get("version").and_then(Value::as_i64), Some(version));
        }
    }

    #[test]
    fn the_transition_corpus_holds_the_cores_tables() {
        let doc = canonical::parse(TRANSITION_VECTORS_JSON).unwrap();
        let table = |key: &str| canonical::canonical_json(doc.get(key).unwrap()).unwrap();
        let ours =
            |json: String| canonical::canonical_json(&canonical::parse(&json).unwrap()).unwrap();
        assert_eq!(
            table("sameGenerationTransitionTable"),
            ours(transition_table_json())
        );
        assert_eq!(
            table("newGenerationTransitionTable"),
            ours(new_generation_table_json())
        );
    }
}

//! The feature-routing corpus (`vectors/feature-routing-v1.json`) and
//! `FEATURE_ROUTING_SEMANTICS_HASH`, computed from it. The feature-semantics corpus
//! ([`super::semantics`]) embeds the hash; the scenarios each vector names are built by
//! [`super::case_for_vector`].

use std::sync::LazyLock;

use crate::boss::policy;

/// The corpus file exactly as shipped in `vectors/feature-routing-v1.json` (embedded from
/// `core/data/`, written by `cargo xtask gen`).
pub const VECTORS_JSON: &str = include_str!("../../../data/feature-routing-v1.json");
/// The domain of [`routing_semantics_hash`].
pub const VECTORS_HASH_DOMAIN: &str = "agent-intercom-core/boss-run-v1/feature-routing-vectors";

static ROUTING_HASH: LazyLock<String> =
    LazyLock::new(|| policy::corpus_hash(VECTORS_HASH_DOMAIN, VECTORS_JSON));

/// `FEATURE_ROUTING_SEMANTICS_HASH`: `canonicalHash(VECTORS_HASH_DOMAIN, {version, vectors})`
/// of the embedded corpus.
pub fn routing_semantics_hash() -> &'static str {
    &ROUTING_HASH
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_routing_hash_is_computed_from_the_corpus() {
        assert_eq!(
            routing_semantics_hash(),
            "e8ddde569a188a122b6ba0e257e23ba203bbf0897dcb3c84994be3390e26e63f"
        );
    }
}

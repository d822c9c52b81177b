//! The golden vectors (`./vectors`): `vectors/policy-v2.json`, embedded, whose SHA-256 is
//! `POLICY_SEMANTICS_HASH`.
//!
//! The file is exactly the text TypeScript hashes, `JSON.stringify({version: 2, vectors})`
//! (keys in insertion order, no whitespace, no final newline), so [`semantics_hash`] is the
//! SHA-256 of its bytes, computed here, never copied.

use super::*;

/// `POLICY_VECTOR_SCHEMA_VERSION`.
pub const POLICY_VECTOR_SCHEMA_VERSION: u32 = 2;

/// The corpus file, embedded from the crate's copy (`core/data/`, written by
/// `cargo xtask gen` from `vectors/policy-v2.json`) so the crate can be packaged.
pub const VECTORS_JSON: &str = include_str!("../../data/policy-v2.json");

/// `PolicyVector`: one golden case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyVector {
    /// `name`: its stable id.
    pub name: String,
    /// `principals`: the state, as a list.
    pub principals: Vec<Principal>,
    /// `actorId`.
    pub actor_id: String,
    /// `action`.
    pub action: PolicyAction,
    /// `targetId`.
    pub target_id: String,
    /// `context`, when the vector has one.
    pub context: Option<AuthorizationContext>,
    /// `expectedAllowed`.
    pub expected_allowed: bool,
    /// `expectedReasonOrCode`.
    pub expected_reason_or_code: String,
}

impl PolicyVector {
    /// `stateForVector`: a fresh state of the vector's principals, keyed by id.
    pub fn state(&self) -> PolicyState {
        PolicyState::from_principals(self.principals.iter().cloned())
    }

    /// The decision [`authorize`] gives for this vector.
    pub fn decide(&self) -> Decision {
        let context = self.context.unwrap_or_default();
        authorize(
            &self.state(),
            &self.actor_id,
            self.action,
            &self.target_id,
            &context,
        )
    }

    /// Whether [`Self::decide`] gives what the vector expects.
    pub fn passes(&self) -> bool {
        let decision = self.decide();
        decision.is_allowed() == self.expected_allowed
            && decision.label() == self.expected_reason_or_code
    }

    /// Reads a `PolicyVector` at `path` (exactly its keys; `context` optional).
    pub fn from_js(value: &Js, path: &str) -> Read<PolicyVector> {
        object(value, path)?;
        read::exact_keys(
            value,
            &[
                "name",
                "principals",
                "actorId",
                "action",
                "targetId",
                "expectedAllowed",
                "expectedReasonOrCode",
            ],
            &["context"],
            path,
        )?;
        let at = |key: &str| member(path, key);
        let field = |key: &str| read::field(value, key);
        Ok(PolicyVector {
            name: read::string(field("name"), &at("name"))?.to_string(),
            principals: principal_list(field("principals"), &at("principals"))?,
            actor_id: id_arg(field("actorId"), &at("actorId"))?.to_string(),
            action: PolicyAction::from_js(field("action"), &at("action"))?,
            target_id: id_arg(field("targetId"), &at("targetId"))?.to_string(),
            context: read::optional(field("context"), |v| {
                AuthorizationContext::from_js(v, &at("context"))
            })?,
            expected_allowed: read::boolean(field("expectedAllowed"), &at("expectedAllowed"))?,
            expected_reason_or_code: read::string(
                field("expectedReasonOrCode"),
                &at("expectedReasonOrCode"),
            )?
            .to_string(),
        })
    }
}

pub(super) fn principal_list(value: &Js, path: &str) -> Read<Vec<Principal>> {
    read::dense_array(value, path)?
        .into_iter()
        .enumerate()
        .map(|(i, p)| Principal::from_js(p, &element(path, i)))
        .collect()
}

/// Reads a corpus text: `{"version": 2, "vectors": [...]}`.
pub fn parse(text: &str) -> Read<Vec<PolicyVector>> {
    let doc = Js::parse_json(text).map_err(|e| Failure::contract("$", e.to_string()))?;
    object(&doc, "$")?;
    read::exact_keys(&doc, &["version", "vectors"], &[], "$")?;
    let version = read::integer(read::field(&doc, "version"), "$.version", 0)?;
    if version != i64::from(POLICY_VECTOR_SCHEMA_VERSION) {
        return fail(
            "$.version",
            format!("must be {POLICY_VECTOR_SCHEMA_VERSION}"),
        );
    }
    read::dense_array(read::field(&doc, "vectors"), "$.vectors")?
        .into_iter()
        .enumerate()
        .map(|(i, v)| PolicyVector::from_js(v, &element("$.vectors", i)))
        .collect()
}

/// `POLICY_VECTORS`: the embedded corpus, parsed once. (The file is fixed at build time;
/// the tests prove it parses, so this never fails.)
pub fn vectors() -> &'static [PolicyVector] {
    static VECTORS: OnceLock<Vec<PolicyVector>> = OnceLock::new();
    VECTORS.get_or_init(|| parse(VECTORS_JSON).expect("the embedded policy corpus parses"))
}

/// SHA-256 of a corpus text, in lowercase hex.
pub fn hash_of(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// `POLICY_SEMANTICS_HASH`: SHA-256 of [`VECTORS_JSON`], computed once.
pub fn semantics_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| hash_of(VECTORS_JSON))
}

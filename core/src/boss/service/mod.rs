//! `boss-service.ts` of the TypeScript core: broker feature attestations, capability
//! advertisements and compatibility (here and [`compatibility`]), protected broker identities and
//! provider attestations with their Ed25519 verification ([`identity`], [`keys`]), the legacy
//! admin migration and journal recovery records and the four store validators ([`recovery`]),
//! and the restricted Boss client requests, results and their authorization ([`restricted`]).

use super::JsonObject;
use super::feature::semantics::{
    capability_feature_digest, feature_semantics_hash, protocol_feature_contract_hash,
};
use super::wire::{
    BOSS_CONTROL_ENVELOPE_VERSION, BOSS_RUN_FEATURE, BOSS_RUN_FEATURE_VERSION,
    INTERCOM_BASE_PROTOCOL_VERSION, is_string,
};
use crate::canonical::{canonical_hash_of_text, compare_utf16};
use crate::contract::read::{
    self, dense_array, element, exact_record, fail, field, hex_digest, integer, member, record,
    string,
};
use crate::contract::{Args, Failure, Js, Op, Out};

/// `intercom.broker-feature.v1`.
pub const BROKER_FEATURE_ATTESTATION_VERSION: &str = "intercom.broker-feature.v1";
/// `intercom.broker-identity.v1`.
pub const BROKER_IDENTITY_RECORD_VERSION: &str = "intercom.broker-identity.v1";
/// `intercom.broker-provider-attestation.v1`.
pub const BROKER_PROVIDER_ATTESTATION_VERSION: &str = "intercom.broker-provider-attestation.v1";
/// `intercom.broker-peer-expectation.v1`.
pub const BROKER_PEER_EXPECTATION_VERSION: &str = "intercom.broker-peer-expectation.v1";
/// `intercom.legacy-admin-migration.v1`.
pub const LEGACY_ADMIN_MIGRATION_VERSION: &str = "intercom.legacy-admin-migration.v1";
/// `intercom.broker-journal-recovery.v1`.
pub const BROKER_JOURNAL_RECOVERY_VERSION: &str = "intercom.broker-journal-recovery.v1";
/// `boss.restricted-client-request.v1`.
pub const BOSS_RESTRICTED_CLIENT_REQUEST_VERSION: &str = "boss.restricted-client-request.v1";
/// `boss.restricted-client-result.v1`.
pub const BOSS_RESTRICTED_CLIENT_RESULT_VERSION: &str = "boss.restricted-client-result.v1";
/// The domain of `brokerFeatureSetHash`.
pub const BROKER_FEATURE_SET_HASH_DOMAIN: &str = "agent-intercom-core/broker-feature-set/v1";
/// The domain of broker identity signatures.
pub const BROKER_IDENTITY_SIGNATURE_DOMAIN: &str = "agent-intercom-core/broker-identity/v1";
/// The domain of provider attestation signatures.
pub const BROKER_PROVIDER_ATTESTATION_SIGNATURE_DOMAIN: &str =
    "agent-intercom-core/broker-provider-attestation/v1";
/// Where protected provider artifacts live.
pub const BROKER_PROTECTED_PROVIDER_ROOT: &str = "/usr/lib/agent-intercom/providers/";

const ADVERTISEMENT_ERROR: &str = "BrokerCapabilityAdvertisementError";
const DIVERGENCE: &str = "FEATURE_DIVERGENCE";

/// A `BrokerCapabilityAdvertisementError` (a `ContractValidationError` with a `.code`).
fn advertisement_error(path: &str, detail: impl Into<String>, code: &str) -> Failure {
    Failure {
        class: ADVERTISEMENT_ERROR,
        path: Some(path.to_string()),
        detail: detail.into(),
        code: Some(code.to_string()),
    }
}

/// Re-throws a failure as an advertisement error at `path` whose detail is the whole original
/// message (the TypeScript core wraps `error.message`, path included).
fn rewrap(path: &str) -> impl Fn(Failure) -> Failure + '_ {
    move |f| advertisement_error(path, f.message(), DIVERGENCE)
}

/// A parsed feature attestation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Feature {
    /// `feature`.
    pub feature: String,
    /// `featureVersion`.
    pub feature_version: i64,
    /// `semanticsHash`.
    pub semantics_hash: String,
    /// `controlEnvelopeVersion`.
    pub control_envelope_version: Option<i64>,
    /// `capabilityDigest`.
    pub capability_digest: Option<String>,
    /// `optional: true`.
    pub optional: bool,
}

impl Feature {
    /// The fresh object `parseBrokerFeatureAttestation` returns.
    pub fn to_json(&self) -> String {
        let mut o = JsonObject::new()
            .str("version", BROKER_FEATURE_ATTESTATION_VERSION)
            .str("feature", &self.feature)
            .int("featureVersion", self.feature_version)
            .str("semanticsHash", &self.semantics_hash)
            .opt_int("controlEnvelopeVersion", self.control_envelope_version)
            .opt_str("capabilityDigest", self.capability_digest.as_deref());
        if self.optional {
            o = o.bool("optional", true);
        }
        o.finish()
    }
}

/// `parseBrokerFeatureAttestation`.
pub fn parse_feature_attestation(v: &Js) -> read::Read<Feature> {
    exact_record(
        v,
        &["version", "feature", "featureVersion", "semanticsHash"],
        &["controlEnvelopeVersion", "capabilityDigest", "optional"],
        "$",
    )?;
    let version = field(v, "version");
    if !is_string(version, BROKER_FEATURE_ATTESTATION_VERSION) {
        return fail(
            "$.version",
            format!("unsupported version: {}", version.js_string()),
        );
    }
    let feature = string(field(v, "feature"), "$.feature")?;
    let feature_version = integer(field(v, "featureVersion"), "$.featureVersion", 1)?;
    let semantics_hash = hex_digest(field(v, "semanticsHash"), "$.semanticsHash")?;
    let control_envelope_version = match field(v, "controlEnvelopeVersion") {
        Js::Undefined => None,
        e => Some(integer(e, "$.controlEnvelopeVersion", 1)?),
    };
    let capability_digest = match field(v, "capabilityDigest") {
        Js::Undefined => None,
        d => Some(hex_digest(d, "$.capabilityDigest")?.to_string()),
    };
    let optional = match field(v, "optional") {
        Js::Undefined => false,
        Js::Bool(true) => true,
        _ => return fail("$.optional", "must be true when present"),
    };
    if feature == BOSS_RUN_FEATURE {
        if optional {
            return fail("$.optional", "the required Boss feature cannot be optional");
        }
        if feature_version != BOSS_RUN_FEATURE_VERSION
            || semantics_hash != feature_semantics_hash()
            || control_envelope_version != Some(BOSS_CONTROL_ENVELOPE_VERSION)
            || capability_digest.as_deref() != Some(capability_feature_digest())
        {
            return fail("$.feature", "invalid boss-run-v1 feature attestation");
        }
    }
    Ok(Feature {
        feature: feature.to_string(),
        feature_version,
        semantics_hash: semantics_hash.to_string(),
        control_envelope_version,
        capability_digest,
        optional,
    })
}

/// The advertised feature list: each entry a record naming a distinct, known (or optional)
/// feature, and a valid attestation. Every failure is an advertisement error.
fn parse_feature_set(value: &Js, path: &str) -> Result<Vec<Feature>, Failure> {
    let entries = dense_array(value, path).map_err(rewrap(path))?;
    let mut parsed: Vec<Feature> = Vec::with_capacity(entries.len());
    for (index, entry) in entries.into_iter().enumerate() {
        let entry_path = element(path, index);
        record(entry, &entry_path).map_err(rewrap(&entry_path))?;
        let feature_path = member(&entry_path, "feature");
        let name = match field(entry, "feature") {
            Js::Str(s) if !s.text.is_empty() => &s.text,
            _ => {
                return Err(advertisement_error(
                    &feature_path,
                    "must be a non-empty string",
                    DIVERGENCE,
                ));
            }
        };
        if parsed.iter().any(|f| &f.feature == name) {
            return Err(advertisement_error(
                &feature_path,
                format!("duplicate feature {name}"),
                "DUPLICATE_FEATURE",
            ));
        }
        if name != BOSS_RUN_FEATURE && !matches!(field(entry, "optional"), Js::Bool(true)) {
            return Err(advertisement_error(
                &feature_path,
                format!("unsupported feature {name}"),
                "UNKNOWN_FEATURE",
            ));
        }
        parsed.push(parse_feature_attestation(entry).map_err(rewrap(&entry_path))?);
    }
    Ok(parsed)
}

/// The features sorted by name in UTF-16 code-unit order (JavaScript's `<`), as JSON.
fn sorted_features_json(features: &[Feature]) -> String {
    let mut sorted: Vec<&Feature> = features.iter().collect();
    sorted.sort_by(|a, b| compare_utf16(&a.feature, &b.feature));
    let items: Vec<String> = sorted.iter().map(|f| f.to_json()).collect();
    format!("[{}]", items.join(","))
}

/// `brokerFeatureSetHash` of parsed features.
pub fn feature_set_hash(features: &[Feature]) -> String {
    canonical_hash_of_text(
        BROKER_FEATURE_SET_HASH_DOMAIN,
        &sorted_features_json(features),
    )
    .expect("parsed features are canonical JSON")
}

/// `brokerFeatureSetHash(features)`.
pub fn broker_feature_set_hash(value: &Js) -> Result<String, Failure> {
    if !matches!(value, Js::Array(_)) {
        return fail("$.features", "must be an array");
    }
    Ok(feature_set_hash(&parse_feature_set(value, "$.features")?))
}

/// A parsed capability advertisement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Advertisement {
    /// `baseProtocolVersion`.
    pub base_protocol_version: i64,
    /// `features`.
    pub features: Vec<Feature>,
    /// `protocolFeatureContractHash`.
    pub protocol_feature_contract_hash: Option<String>,
    /// `featureSetHash`.
    pub feature_set_hash: Option<String>,
    /// `controlEnvelopeVersion`.
    pub control_envelope_version: Option<i64>,
    /// `capabilityDigest`.
    pub capability_digest: Option<String>,
}

impl Advertisement {
    /// Whether `boss-run-v1` is advertised.
    pub fn has_boss_feature(&self) -> bool {
        has_boss(&self.features)
    }

    /// The fresh object `parseBrokerCapabilityAdvertisement` returns.
    pub fn to_json(&self) -> String {
        let features: Vec<String> = self.features.iter().map(Feature::to_json).collect();
        JsonObject::new()
            .int("baseProtocolVersion", self.base_protocol_version)
            .raw("features", &format!("[{}]", features.join(",")))
            .opt_str(
                "protocolFeatureContractHash",
                self.protocol_feature_contract_hash.as_deref(),
            )
            .opt_str("featureSetHash", self.feature_set_hash.as_deref())
            .opt_int("controlEnvelopeVersion", self.control_envelope_version)
            .opt_str("capabilityDigest", self.capability_digest.as_deref())
            .finish()
    }
}

fn has_boss(features: &[Feature]) -> bool {
    features.iter().any(|f| f.feature == BOSS_RUN_FEATURE)
}

fn optional_digest(value: &Js, path: &str) -> read::Read<Option<String>> {
    read::optional(value, |d| hex_digest(d, path).map(str::to_string))
}

fn optional_version(value: &Js, path: &str) -> read::Read<Option<i64>> {
    read::optional(value, |e| integer(e, path, 1))
}

/// `parseBrokerCapabilityAdvertisement`.
pub fn parse_advertisement(v: &Js) -> Result<Advertisement, Failure> {
    exact_record(
        v,
        &["baseProtocolVersion", "features"],
        &[
            "protocolFeatureContractHash",
            "featureSetHash",
            "controlEnvelopeVersion",
            "capabilityDigest",
        ],
        "$",
    )
    .map_err(rewrap("$"))?;
    let features_value = field(v, "features");
    if !matches!(features_value, Js::Array(_)) {
        return Err(advertisement_error(
            "$.features",
            "must be an array",
            DIVERGENCE,
        ));
    }
    let base = integer(field(v, "baseProtocolVersion"), "$.baseProtocolVersion", 1)?;
    let features = parse_feature_set(features_value, "$.features")?;
    let boss = has_boss(&features);
    if boss && base != INTERCOM_BASE_PROTOCOL_VERSION {
        return Err(advertisement_error(
            "$.baseProtocolVersion",
            format!(
                "Boss advertisements require base protocol version {INTERCOM_BASE_PROTOCOL_VERSION}"
            ),
            DIVERGENCE,
        ));
    }
    let metadata = [
        "protocolFeatureContractHash",
        "featureSetHash",
        "controlEnvelopeVersion",
        "capabilityDigest",
    ];
    if boss
        && metadata
            .iter()
            .any(|k| matches!(field(v, k), Js::Undefined))
    {
        return Err(advertisement_error(
            "$",
            "Boss advertisements require the complete protocol/feature/envelope/capability \
             binding",
            DIVERGENCE,
        ));
    }
    if !features.is_empty() && matches!(field(v, "featureSetHash"), Js::Undefined) {
        return Err(advertisement_error(
            "$.featureSetHash",
            "is required whenever features are advertised",
            DIVERGENCE,
        ));
    }
    let contract_hash = optional_digest(
        field(v, "protocolFeatureContractHash"),
        "$.protocolFeatureContractHash",
    )?;
    let set_hash = optional_digest(field(v, "featureSetHash"), "$.featureSetHash")?;
    let envelope = optional_version(
        field(v, "controlEnvelopeVersion"),
        "$.controlEnvelopeVersion",
    )?;
    let digest = optional_digest(field(v, "capabilityDigest"), "$.capabilityDigest")?;
    if let Some(h) = &set_hash
        && *h != feature_set_hash(&features)
    {
        return Err(advertisement_error(
            "$.featureSetHash",
            "does not hash the complete advertised feature set",
            DIVERGENCE,
        ));
    }
    if boss
        && (contract_hash.as_deref() != Some(protocol_feature_contract_hash())
            || envelope != Some(BOSS_CONTROL_ENVELOPE_VERSION)
            || digest.as_deref() != Some(capability_feature_digest()))
    {
        return Err(advertisement_error(
            "$",
            "advertised Boss binding metadata diverges from the canonical contract",
            DIVERGENCE,
        ));
    }
    Ok(Advertisement {
        base_protocol_version: base,
        features,
        protocol_feature_contract_hash: contract_hash,
        feature_set_hash: set_hash,
        control_envelope_version: envelope,
        capability_digest: digest,
    })
}

mod compatibility;
pub mod identity;
pub mod keys;
pub mod recovery;
pub mod restricted;

pub use compatibility::{Compatibility, evaluate_broker_compatibility};

fn parse_attestation_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(parse_feature_attestation(a.get(0))?.to_json()))
}

fn feature_set_hash_op(a: Args<'_>) -> Result<Out, Failure> {
    let digest = broker_feature_set_hash(a.get(0))?;
    Ok(Out::Json(format!("\"{digest}\"")))
}

fn parse_advertisement_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(parse_advertisement(a.get(0))?.to_json()))
}

fn evaluate_op(a: Args<'_>) -> Result<Out, Failure> {
    let table = keys::key_objects(a.get(3));
    let decision = evaluate_broker_compatibility(a.get(0), a.get(1), a.get(2), &table);
    Ok(Out::Json(decision.to_json()))
}

fn parse_identity_record_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(identity::identity_record(a.get(0))?.json))
}

fn parse_provider_attestation_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(identity::provider_attestation(a.get(0))?.json))
}

fn parse_peer_expectation_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(compatibility::peer_expectation(a.get(0))?.json))
}

fn parse_observed_peer_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(compatibility::observed_peer(a.get(0))?.json))
}

fn authorize_peer_op(a: Args<'_>) -> Result<Out, Failure> {
    let decision = match compatibility::authorize_peer(a.get(0), a.get(1))? {
        None => JsonObject::new().bool("allowed", true),
        Some(code) => JsonObject::new().bool("allowed", false).str("code", code),
    };
    Ok(Out::Json(decision.finish()))
}

fn parse_request_op(a: Args<'_>) -> Result<Out, Failure> {
    let table = keys::key_objects(a.get(1));
    Ok(Out::Json(
        compatibility::parse_request(a.get(0), &table)?.to_json(),
    ))
}

/// This module's constants, added to `./boss`'s constant object.
pub(crate) fn add_constants(o: JsonObject) -> JsonObject {
    o.str(
        "BROKER_FEATURE_ATTESTATION_VERSION",
        BROKER_FEATURE_ATTESTATION_VERSION,
    )
    .str(
        "BROKER_IDENTITY_RECORD_VERSION",
        BROKER_IDENTITY_RECORD_VERSION,
    )
    .str(
        "BROKER_PROVIDER_ATTESTATION_VERSION",
        BROKER_PROVIDER_ATTESTATION_VERSION,
    )
    .str(
        "BROKER_PEER_EXPECTATION_VERSION",
        BROKER_PEER_EXPECTATION_VERSION,
    )
    .str(
        "LEGACY_ADMIN_MIGRATION_VERSION",
        LEGACY_ADMIN_MIGRATION_VERSION,
    )
    .str(
        "BROKER_JOURNAL_RECOVERY_VERSION",
        BROKER_JOURNAL_RECOVERY_VERSION,
    )
    .str(
        "BOSS_RESTRICTED_CLIENT_REQUEST_VERSION",
        BOSS_RESTRICTED_CLIENT_REQUEST_VERSION,
    )
    .str(
        "BOSS_RESTRICTED_CLIENT_RESULT_VERSION",
        BOSS_RESTRICTED_CLIENT_RESULT_VERSION,
    )
    .str(
        "BROKER_FEATURE_SET_HASH_DOMAIN",
        BROKER_FEATURE_SET_HASH_DOMAIN,
    )
    .str(
        "BROKER_IDENTITY_SIGNATURE_DOMAIN",
        BROKER_IDENTITY_SIGNATURE_DOMAIN,
    )
    .str(
        "BROKER_PROVIDER_ATTESTATION_SIGNATURE_DOMAIN",
        BROKER_PROVIDER_ATTESTATION_SIGNATURE_DOMAIN,
    )
    .str(
        "BROKER_PROTECTED_PROVIDER_ROOT",
        BROKER_PROTECTED_PROVIDER_ROOT,
    )
    .then(restricted::add_constants)
}

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "boss.parseBrokerFeatureAttestation",
        run: parse_attestation_op,
    },
    Op {
        name: "boss.brokerFeatureSetHash",
        run: feature_set_hash_op,
    },
    Op {
        name: "boss.parseBrokerCapabilityAdvertisement",
        run: parse_advertisement_op,
    },
    Op {
        name: "boss.parseBrokerCompatibilityRequest",
        run: parse_request_op,
    },
    Op {
        name: "boss.evaluateBrokerCompatibility",
        run: evaluate_op,
    },
    Op {
        name: "boss.parseBrokerIdentityRecord",
        run: parse_identity_record_op,
    },
    Op {
        name: "boss.parseBrokerProviderAttestation",
        run: parse_provider_attestation_op,
    },
    Op {
        name: "boss.parseBrokerPeerExpectation",
        run: parse_peer_expectation_op,
    },
    Op {
        name: "boss.parseObservedBrokerPeer",
        run: parse_observed_peer_op,
    },
    Op {
        name: "boss.authorizeBrokerPeer",
        run: authorize_peer_op,
    },
];

//! `parseBrokerCompatibilityRequest` and `evaluateBrokerCompatibility`, with the peer
//! expectation and observation a Boss request carries and `authorizeBrokerPeer`. The identity
//! record, provider attestation and their verification are [`super::identity`].

use super::identity::{
    Identity, IdentityContext, identity_context, identity_record, missing_signature_fields,
    verify_parsed_identity,
};
use super::keys::KeyObjectEntry;
use super::sorted_features_json;
use super::{Advertisement, BROKER_PEER_EXPECTATION_VERSION, parse_advertisement};
use crate::boss::JsonObject;
use crate::boss::wire::{BOSS_RUN_FEATURE, INTERCOM_BASE_PROTOCOL_VERSION, is_string};
use crate::contract::read::{
    self, dense_array, element, exact_keys, exact_record, fail, field, integer, one_of, record,
};
use crate::contract::{Failure, Js};

const ENDPOINT_CLASSES: &[&str] = &["public", "authority"];

/// A parsed `BrokerCompatibilityRequest`.
#[derive(Debug)]
pub(super) enum Request<'v> {
    Ordinary(Vec<i64>),
    Boss(Box<BossRequest<'v>>),
}

/// The Boss form of a request.
#[derive(Debug)]
pub(super) struct BossRequest<'v> {
    versions: Vec<i64>,
    owner_uid: i64,
    verification: IdentityContext<'v>,
    peer: PeerExpectation,
    observed: ObservedPeer,
}

#[derive(Debug)]
pub(super) struct PeerExpectation {
    endpoint_class: &'static str,
    owner_uid: i64,
    expected_broker_service_uid: i64,
    expected_broker_process_id: i64,
    expected_client_uid: i64,
    requires_service_capability: bool,
    pub(super) json: String,
}

#[derive(Debug)]
pub(super) struct ObservedPeer {
    kernel_peer_credentials_present: bool,
    endpoint_class: &'static str,
    broker_service_uid: i64,
    broker_process_id: i64,
    client_uid: i64,
    service_capability_presented: bool,
    pub(super) json: String,
}

impl Request<'_> {
    fn versions(&self) -> &[i64] {
        match self {
            Request::Ordinary(v) => v,
            Request::Boss(b) => &b.versions,
        }
    }

    /// The fresh object `parseBrokerCompatibilityRequest` returns (a trust-store `KeyObject` is
    /// `null` there: the Node module puts the caller's own object back).
    pub(super) fn to_json(&self) -> String {
        let versions = |v: &[i64]| {
            let items: Vec<String> = v.iter().map(i64::to_string).collect();
            format!("[{}]", items.join(","))
        };
        match self {
            Request::Ordinary(v) => JsonObject::new()
                .str("clientKind", "ordinary")
                .raw("supportedBaseProtocolVersions", &versions(v))
                .finish(),
            Request::Boss(b) => JsonObject::new()
                .str("clientKind", "boss")
                .raw("supportedBaseProtocolVersions", &versions(&b.versions))
                .str("requiredFeature", BOSS_RUN_FEATURE)
                .int("expectedProtectedOwnerUid", b.owner_uid)
                .raw("identityVerification", &b.verification.json)
                .raw("peerExpectation", &b.peer.json)
                .raw("observedPeer", &b.observed.json)
                .finish(),
        }
    }
}

fn supported_versions(value: &Js, path: &str) -> read::Read<Vec<i64>> {
    let entries = dense_array(value, path)?;
    if entries.is_empty() {
        return fail(path, "must be a non-empty array");
    }
    let mut versions = Vec::with_capacity(entries.len());
    for (index, entry) in entries.into_iter().enumerate() {
        versions.push(integer(entry, &element(path, index), 1)?);
    }
    let mut seen = versions.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != versions.len() {
        return fail(path, "must not contain duplicates");
    }
    Ok(versions)
}

/// `parseBrokerPeerExpectation`.
pub(super) fn peer_expectation(v: &Js) -> read::Read<PeerExpectation> {
    exact_record(
        v,
        &[
            "version",
            "endpointClass",
            "ownerUid",
            "expectedBrokerServiceUid",
            "expectedBrokerProcessId",
            "expectedClientUid",
            "requiresKernelPeerCredentials",
            "requiresServiceCapability",
        ],
        &["expectedControllerUid"],
        "$",
    )?;
    let version = field(v, "version");
    if !is_string(version, BROKER_PEER_EXPECTATION_VERSION) {
        return fail(
            "$.version",
            format!("unsupported version: {}", version.js_string()),
        );
    }
    let class = one_of(
        field(v, "endpointClass"),
        ENDPOINT_CLASSES,
        "$.endpointClass",
    )?;
    if !matches!(field(v, "requiresKernelPeerCredentials"), Js::Bool(true)) {
        return fail("$.requiresKernelPeerCredentials", "must be true");
    }
    let Js::Bool(capability) = *field(v, "requiresServiceCapability") else {
        return fail("$.requiresServiceCapability", "must be boolean");
    };
    if (class == "authority") != capability {
        return fail(
            "$.requiresServiceCapability",
            "is required exactly for the authority endpoint",
        );
    }
    let owner = integer(field(v, "ownerUid"), "$.ownerUid", 0)?;
    let service = integer(
        field(v, "expectedBrokerServiceUid"),
        "$.expectedBrokerServiceUid",
        0,
    )?;
    let process = integer(
        field(v, "expectedBrokerProcessId"),
        "$.expectedBrokerProcessId",
        1,
    )?;
    let client = integer(field(v, "expectedClientUid"), "$.expectedClientUid", 0)?;
    let controller = read::optional(field(v, "expectedControllerUid"), |c| {
        integer(c, "$.expectedControllerUid", 0)
    })?;
    if service == owner {
        return fail(
            "$.expectedBrokerServiceUid",
            "protected broker service uid must be distinct from owner uid",
        );
    }
    if class == "public" && (client != owner || controller.is_some()) {
        return fail(
            "$.expectedClientUid",
            "public endpoint requires the owner uid and forbids Controller identity",
        );
    }
    if class == "authority" && controller.is_none_or(|c| client != c || c == owner || c == service)
    {
        return fail(
            "$.expectedControllerUid",
            "authority endpoint requires a distinct Controller uid",
        );
    }
    let json = JsonObject::new()
        .str("version", BROKER_PEER_EXPECTATION_VERSION)
        .str("endpointClass", class)
        .int("ownerUid", owner)
        .int("expectedBrokerServiceUid", service)
        .int("expectedBrokerProcessId", process)
        .int("expectedClientUid", client)
        .opt_int("expectedControllerUid", controller)
        .bool("requiresKernelPeerCredentials", true)
        .bool("requiresServiceCapability", capability)
        .finish();
    Ok(PeerExpectation {
        endpoint_class: class,
        owner_uid: owner,
        expected_broker_service_uid: service,
        expected_broker_process_id: process,
        expected_client_uid: client,
        requires_service_capability: capability,
        json,
    })
}

/// `parseObservedBrokerPeer`.
pub(super) fn observed_peer(v: &Js) -> read::Read<ObservedPeer> {
    exact_record(
        v,
        &[
            "kernelPeerCredentialsPresent",
            "endpointClass",
            "brokerServiceUid",
            "brokerProcessId",
            "clientUid",
            "serviceCapabilityPresented",
        ],
        &[],
        "$",
    )?;
    let Js::Bool(kernel) = *field(v, "kernelPeerCredentialsPresent") else {
        return fail("$.kernelPeerCredentialsPresent", "must be boolean");
    };
    let Js::Bool(capability) = *field(v, "serviceCapabilityPresented") else {
        return fail("$.serviceCapabilityPresented", "must be boolean");
    };
    let class = one_of(
        field(v, "endpointClass"),
        ENDPOINT_CLASSES,
        "$.endpointClass",
    )?;
    let service = integer(field(v, "brokerServiceUid"), "$.brokerServiceUid", 0)?;
    let process = integer(field(v, "brokerProcessId"), "$.brokerProcessId", 1)?;
    let client = integer(field(v, "clientUid"), "$.clientUid", 0)?;
    let json = JsonObject::new()
        .bool("kernelPeerCredentialsPresent", kernel)
        .str("endpointClass", class)
        .int("brokerServiceUid", service)
        .int("brokerProcessId", process)
        .int("clientUid", client)
        .bool("serviceCapabilityPresented", capability)
        .finish();
    Ok(ObservedPeer {
        kernel_peer_credentials_present: kernel,
        endpoint_class: class,
        broker_service_uid: service,
        broker_process_id: process,
        client_uid: client,
        service_capability_presented: capability,
        json,
    })
}

/// `authorizeBrokerPeer(expectation, observed)`: fails only for a malformed expectation; a
/// malformed observation is `KERNEL_PEER_CREDENTIALS_REQUIRED`. `None` is `{allowed: true}`.
pub(super) fn authorize_peer(expectation: &Js, observed: &Js) -> read::Read<Option<&'static str>> {
    let expected = peer_expectation(expectation)?;
    let Ok(observed) = observed_peer(observed) else {
        return Ok(Some("KERNEL_PEER_CREDENTIALS_REQUIRED"));
    };
    Ok(peer_refusal(&expected, &observed))
}

fn peer_refusal(expected: &PeerExpectation, observed: &ObservedPeer) -> Option<&'static str> {
    if !observed.kernel_peer_credentials_present {
        return Some("KERNEL_PEER_CREDENTIALS_REQUIRED");
    }
    if observed.endpoint_class != expected.endpoint_class {
        return Some("ENDPOINT_CLASS_MISMATCH");
    }
    if observed.broker_service_uid != expected.expected_broker_service_uid {
        return Some("BROKER_UID_MISMATCH");
    }
    if observed.broker_process_id != expected.expected_broker_process_id {
        return Some("BROKER_PID_MISMATCH");
    }
    if observed.client_uid != expected.expected_client_uid {
        return Some("CLIENT_UID_MISMATCH");
    }
    if expected.requires_service_capability && !observed.service_capability_presented {
        return Some("SERVICE_CAPABILITY_REQUIRED");
    }
    if !expected.requires_service_capability && observed.service_capability_presented {
        return Some("UNEXPECTED_SERVICE_CAPABILITY");
    }
    None
}

/// `parseBrokerCompatibilityRequest`.
pub(super) fn parse_request<'v>(
    v: &'v Js,
    table: &[KeyObjectEntry<'_>],
) -> read::Read<Request<'v>> {
    record(v, "$")?;
    let kind = one_of(
        field(v, "clientKind"),
        &["ordinary", "boss"],
        "$.clientKind",
    )?;
    let versions_path = "$.supportedBaseProtocolVersions";
    if kind == "ordinary" {
        exact_keys(
            v,
            &["clientKind", "supportedBaseProtocolVersions"],
            &[],
            "$",
        )?;
        let versions =
            supported_versions(field(v, "supportedBaseProtocolVersions"), versions_path)?;
        return Ok(Request::Ordinary(versions));
    }
    exact_keys(
        v,
        &[
            "clientKind",
            "supportedBaseProtocolVersions",
            "requiredFeature",
            "expectedProtectedOwnerUid",
            "identityVerification",
            "peerExpectation",
            "observedPeer",
        ],
        &[],
        "$",
    )?;
    let versions = supported_versions(field(v, "supportedBaseProtocolVersions"), versions_path)?;
    if !versions.contains(&INTERCOM_BASE_PROTOCOL_VERSION) {
        return fail(
            versions_path,
            format!(
                "Boss clients must support base protocol version {INTERCOM_BASE_PROTOCOL_VERSION}"
            ),
        );
    }
    if !is_string(field(v, "requiredFeature"), BOSS_RUN_FEATURE) {
        return fail(
            "$.requiredFeature",
            format!("must be exactly {BOSS_RUN_FEATURE}"),
        );
    }
    let owner_uid = integer(
        field(v, "expectedProtectedOwnerUid"),
        "$.expectedProtectedOwnerUid",
        0,
    )?;
    let verification = identity_context(field(v, "identityVerification"), true, true, table)?;
    let peer = peer_expectation(field(v, "peerExpectation"))?;
    let observed = observed_peer(field(v, "observedPeer"))?;
    if verification.expected_owner_uid != owner_uid || peer.owner_uid != owner_uid {
        return fail(
            "$.expectedProtectedOwnerUid",
            "must match the nested identity and peer owner bindings",
        );
    }
    if peer.expected_broker_service_uid != verification.expected_broker_service_uid {
        return fail(
            "$.peerExpectation.expectedBrokerServiceUid",
            "must match the protected identity verification context",
        );
    }
    Ok(Request::Boss(Box::new(BossRequest {
        versions,
        owner_uid,
        verification,
        peer,
        observed,
    })))
}

/// JavaScript truthiness, for `if (!identity)`.
fn truthy(value: &Js) -> bool {
    match value {
        Js::Undefined | Js::Null => false,
        Js::Bool(b) => *b,
        Js::Num(n) => *n != 0.0 && !n.is_nan(),
        Js::Str(s) => !s.text.is_empty(),
        Js::BigInt(digits) => digits.trim_start_matches('-') != "0",
        _ => true,
    }
}

/// The answer of `evaluateBrokerCompatibility`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compatibility {
    /// `{compatible: true, mode}`.
    Compatible(&'static str),
    /// `{compatible: false, code}`.
    Refused(&'static str),
}

impl Compatibility {
    /// The decision object as JSON.
    pub fn to_json(&self) -> String {
        match self {
            Compatibility::Compatible(mode) => JsonObject::new()
                .bool("compatible", true)
                .str("mode", mode)
                .finish(),
            Compatibility::Refused(code) => JsonObject::new()
                .bool("compatible", false)
                .str("code", code)
                .finish(),
        }
    }
}

fn advertisement_code(failure: &Failure) -> &'static str {
    match failure.code.as_deref() {
        Some("UNKNOWN_FEATURE") => "UNKNOWN_FEATURE",
        Some("DUPLICATE_FEATURE") => "DUPLICATE_FEATURE",
        _ => "FEATURE_DIVERGENCE",
    }
}

fn identity_refusal(identity: &Js, failure: &Failure) -> &'static str {
    if failure.class == "BrokerCapabilityAdvertisementError" {
        return advertisement_code(failure);
    }
    if missing_signature_fields(identity, "identityKeyId") {
        return "IDENTITY_UNSIGNED";
    }
    let path = failure.path.as_deref().unwrap_or("");
    if failure.class == "ContractValidationError"
        && (path.contains("Endpoint") || path.contains("endpoint"))
    {
        if failure.message().contains("enumerable data property") {
            return "IDENTITY_RECORD_INVALID";
        }
        return "ENDPOINT_MISMATCH";
    }
    "IDENTITY_RECORD_INVALID"
}

fn diverges(identity: &Identity, advertisement: &Advertisement) -> bool {
    identity.base_protocol_version != advertisement.base_protocol_version
        || Some(&identity.protocol_feature_contract_hash)
            != advertisement.protocol_feature_contract_hash.as_ref()
        || Some(&identity.feature_set_hash) != advertisement.feature_set_hash.as_ref()
        || Some(identity.control_envelope_version) != advertisement.control_envelope_version
        || Some(&identity.capability_digest) != advertisement.capability_digest.as_ref()
        || sorted_features_json(&identity.features) != sorted_features_json(&advertisement.features)
}

/// `evaluateBrokerCompatibility(request, advertisement, identity?)`: never fails. `table` holds
/// the trust stores' `KeyObject`s (see [`super::keys`]).
pub fn evaluate_broker_compatibility(
    request: &Js,
    advertisement: &Js,
    identity: &Js,
    table: &[KeyObjectEntry<'_>],
) -> Compatibility {
    let Ok(request) = parse_request(request, table) else {
        return Compatibility::Refused("INVALID_COMPATIBILITY_REQUEST");
    };
    let advertisement = match parse_advertisement(advertisement) {
        Ok(a) => a,
        Err(failure) => return Compatibility::Refused(advertisement_code(&failure)),
    };
    if !request
        .versions()
        .contains(&advertisement.base_protocol_version)
    {
        return Compatibility::Refused("BASE_PROTOCOL_UNSUPPORTED");
    }
    let boss = match request {
        Request::Ordinary(_) => return Compatibility::Compatible("ordinary"),
        Request::Boss(boss) => boss,
    };
    if !advertisement.has_boss_feature() {
        return Compatibility::Refused("BOSS_FEATURE_REQUIRED");
    }
    if !truthy(identity) {
        return Compatibility::Refused("PROTECTED_IDENTITY_REQUIRED");
    }
    let parsed = match identity_record(identity) {
        Ok(p) => p,
        Err(failure) => return Compatibility::Refused(identity_refusal(identity, &failure)),
    };
    if parsed.owner_uid != boss.owner_uid {
        return Compatibility::Refused("OWNER_UID_MISMATCH");
    }
    if diverges(&parsed, &advertisement) {
        return Compatibility::Refused("FEATURE_DIVERGENCE");
    }
    if boss.verification.expected_owner_uid != boss.owner_uid {
        return Compatibility::Refused("OWNER_UID_MISMATCH");
    }
    if let Err(code) = verify_parsed_identity(&parsed, &boss.verification) {
        return Compatibility::Refused(code);
    }
    // The peer expectation was parsed with the request.
    let peer = &boss.peer;
    if !boss.observed.kernel_peer_credentials_present {
        return Compatibility::Refused("PEER_CREDENTIALS_MISSING");
    }
    let refusal = peer_refusal(peer, &boss.observed);
    if peer.owner_uid != boss.owner_uid
        || peer.expected_broker_service_uid != parsed.protected_service_uid
        || peer.expected_broker_process_id != parsed.process_id
        || refusal.is_some()
    {
        return Compatibility::Refused(match refusal {
            Some("KERNEL_PEER_CREDENTIALS_REQUIRED") => "PEER_CREDENTIALS_MISSING",
            _ => "PEER_MISMATCH",
        });
    }
    Compatibility::Compatible("boss")
}

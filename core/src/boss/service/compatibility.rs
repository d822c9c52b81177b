//! `parseBrokerCompatibilityRequest` and `evaluateBrokerCompatibility`, with the records a
//! Boss request carries (identity verification context, provider attestation, peer
//! expectation and observation) and the broker identity record.

use super::{Advertisement, BROKER_IDENTITY_RECORD_VERSION, BROKER_PEER_EXPECTATION_VERSION};
use super::{
    BROKER_PROTECTED_PROVIDER_ROOT, BROKER_PROVIDER_ATTESTATION_VERSION, Feature, feature_set_hash,
    has_boss, parse_advertisement, parse_feature_set, sorted_features_json,
};
use crate::boss::JsonObject;
use crate::boss::wire::{
    BOSS_CONTROL_ENVELOPE_VERSION, BOSS_RUN_FEATURE, INTERCOM_BASE_PROTOCOL_VERSION,
    capability_feature_digest, is_string, protocol_feature_contract_hash,
};
use crate::contract::read::{
    self, dense_array, element, exact_keys, exact_record, fail, field, hex_digest, integer, member,
    one_of, record, string, timestamp, well_formed,
};
use crate::contract::{Failure, Js, Proto};

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
    verification: Verification<'v>,
    peer: PeerExpectation,
    observed: ObservedPeer,
}

/// `BrokerIdentityVerificationContext`, as far as the checks here read it, plus its fresh
/// projection's members as JSON.
#[derive(Debug)]
struct Verification<'v> {
    expected_owner_uid: i64,
    expected_broker_service_uid: i64,
    trusted_identity_keys: &'v Js,
    members: Vec<(&'static str, Member<'v>)>,
}

#[derive(Debug)]
enum Member<'v> {
    Json(String),
    Keys(&'v Js),
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

    /// The fresh object `parseBrokerCompatibilityRequest` returns. A trust store holding a
    /// `KeyObject` cannot be rebuilt from the core (the key never reaches it), so that one case
    /// is refused with a plain `Error`.
    pub(super) fn to_json(&self) -> Result<String, Failure> {
        let versions = |v: &[i64]| {
            let items: Vec<String> = v.iter().map(i64::to_string).collect();
            format!("[{}]", items.join(","))
        };
        match self {
            Request::Ordinary(v) => Ok(JsonObject::new()
                .str("clientKind", "ordinary")
                .raw("supportedBaseProtocolVersions", &versions(v))
                .finish()),
            Request::Boss(b) => {
                let mut context = JsonObject::new();
                for (key, item) in &b.verification.members {
                    context = match item {
                        Member::Json(json) => context.raw(key, json),
                        Member::Keys(store) => context.raw(key, &trust_store_json(store, key)?),
                    };
                }
                Ok(JsonObject::new()
                    .str("clientKind", "boss")
                    .raw("supportedBaseProtocolVersions", &versions(&b.versions))
                    .str("requiredFeature", BOSS_RUN_FEATURE)
                    .int("expectedProtectedOwnerUid", b.owner_uid)
                    .raw("identityVerification", &context.finish())
                    .raw("peerExpectation", &b.peer.json)
                    .raw("observedPeer", &b.observed.json)
                    .finish())
            }
        }
    }
}

fn trust_store_json(store: &Js, key: &str) -> Result<String, Failure> {
    let Js::Object(object) = store else {
        return Ok("{}".to_string());
    };
    let mut out = JsonObject::new();
    for (id, item) in &object.members {
        match item.as_str() {
            Some(text) => out = out.str(&id.text, text),
            None => {
                return Err(Failure::error(format!(
                    "{key}.{}: a KeyObject trust-store entry cannot be returned by this port; \
                     pass the public key as PEM text",
                    id.text
                )));
            }
        }
    }
    Ok(out.finish())
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

/// `parseBrokerPublicKeyTrustStore`: a record of key ids to PEM text or public `KeyObject`s.
///
/// Differences (see `docs/boss.md`): a string is accepted when it is PEM-armoured (the core
/// does not decode keys), and any class instance stands for a `KeyObject` (the snapshot
/// does not enter instances).
fn trust_store(value: &Js, path: &str) -> read::Read<()> {
    record(value, path)?;
    let Js::Object(object) = value else {
        return Ok(());
    };
    for (id, item) in &object.members {
        let id_path = format!("{path}.[keyId]");
        if id.text.is_empty() {
            return fail(&id_path, "must be a non-empty string");
        }
        well_formed(id, &id_path)?;
        let key_path = member(path, &id.text);
        match item {
            Js::Str(_) => {
                let pem = string(item, &key_path)?;
                if !(pem.contains("-----BEGIN ") && pem.contains("-----END ")) {
                    return fail(&key_path, "must resolve to a public key");
                }
            }
            Js::Object(o) if o.proto == Proto::Other => {}
            _ => {
                return fail(
                    &key_path,
                    "must be a public KeyObject or encoded public key",
                );
            }
        }
    }
    Ok(())
}

/// `parseBrokerProviderAttestation` (paths from `$`), as the fresh object's JSON.
pub(super) fn provider_attestation(v: &Js) -> read::Read<String> {
    exact_record(
        v,
        &[
            "version",
            "providerPackage",
            "providerVersion",
            "providerDigest",
            "artifactPath",
            "artifactOwnerUid",
            "artifactOwnerGid",
            "artifactMode",
            "userWritable",
            "attestedAt",
            "attestationKeyId",
            "signature",
        ],
        &[],
        "$",
    )?;
    let version = field(v, "version");
    if !is_string(version, BROKER_PROVIDER_ATTESTATION_VERSION) {
        return fail(
            "$.version",
            format!("unsupported version: {}", version.js_string()),
        );
    }
    if !matches!(field(v, "userWritable"), Js::Bool(false)) {
        return fail(
            "$.userWritable",
            "must be false for a protected provider artifact",
        );
    }
    let path = string(field(v, "artifactPath"), "$.artifactPath")?;
    let beneath = path
        .strip_prefix(BROKER_PROTECTED_PROVIDER_ROOT)
        .is_some_and(|rest| !rest.is_empty() && !rest.split('/').any(|part| part == ".."));
    if !beneath {
        return fail(
            "$.artifactPath",
            format!("must be beneath {BROKER_PROTECTED_PROVIDER_ROOT}"),
        );
    }
    let uid = integer(field(v, "artifactOwnerUid"), "$.artifactOwnerUid", 0)?;
    let gid = integer(field(v, "artifactOwnerGid"), "$.artifactOwnerGid", 0)?;
    if uid != 0 || gid != 0 {
        return fail(
            "$.artifactOwnerUid",
            "protected provider artifacts must be owned by root:root",
        );
    }
    let mode = string(field(v, "artifactMode"), "$.artifactMode")?;
    if !protected_mode(mode) {
        return fail(
            "$.artifactMode",
            "must be a canonical four-digit mode with no group/other write permission",
        );
    }
    let package = string(field(v, "providerPackage"), "$.providerPackage")?;
    let provider_version = string(field(v, "providerVersion"), "$.providerVersion")?;
    let digest = hex_digest(field(v, "providerDigest"), "$.providerDigest")?;
    let attested = timestamp(field(v, "attestedAt"), "$.attestedAt")?;
    let key_id = string(field(v, "attestationKeyId"), "$.attestationKeyId")?;
    let signature = string(field(v, "signature"), "$.signature")?;
    Ok(JsonObject::new()
        .str("version", BROKER_PROVIDER_ATTESTATION_VERSION)
        .str("providerPackage", package)
        .str("providerVersion", provider_version)
        .str("providerDigest", digest)
        .str("artifactPath", path)
        .int("artifactOwnerUid", uid)
        .int("artifactOwnerGid", gid)
        .str("artifactMode", mode)
        .bool("userWritable", false)
        .str("attestedAt", attested)
        .str("attestationKeyId", key_id)
        .str("signature", signature)
        .finish())
}

/// `^0[0-7]{3}$` with no group or other write bit.
fn protected_mode(mode: &str) -> bool {
    let b = mode.as_bytes();
    b.len() == 4
        && b[0] == b'0'
        && b[1..].iter().all(|c| (b'0'..=b'7').contains(c))
        && (b[2] - b'0') & 0o2 == 0
        && (b[3] - b'0') & 0o2 == 0
}

const VERIFICATION_KEYS: &[&str] = &[
    "expectedProviderPackage",
    "expectedProviderVersion",
    "expectedProviderDigest",
    "expectedProviderArtifactRoot",
    "expectedProviderArtifactOwnerUid",
    "expectedProviderArtifactOwnerGid",
    "expectedProviderArtifactMode",
    "expectedOwnerUid",
    "expectedBrokerServiceUid",
    "expectedBootInstance",
    "minimumBrokerGeneration",
    "expectedPublicEndpoint",
    "expectedAuthorityEndpoint",
    "trustedIdentityKeys",
    "trustedProviderKeys",
];

/// `parseBrokerIdentityVerificationContext` with the provider attestation required and parsed.
fn verification(value: &Js) -> read::Read<Verification<'_>> {
    let path = "$.identityVerification";
    exact_record(value, VERIFICATION_KEYS, &["providerAttestation"], path)?;
    let attestation = match field(value, "providerAttestation") {
        Js::Undefined => return fail(&member(path, "providerAttestation"), "is required"),
        a => provider_attestation(a)?,
    };
    let mut members = Vec::with_capacity(16);
    let mut owner = 0;
    let mut service = 0;
    let mut identity_keys = &Js::Undefined;
    for &key in VERIFICATION_KEYS {
        let item = field(value, key);
        let at = member(path, key);
        let json = match key {
            "expectedProviderDigest" => Member::Json(quoted(hex_digest(item, &at)?)),
            "expectedProviderArtifactOwnerUid"
            | "expectedProviderArtifactOwnerGid"
            | "expectedOwnerUid"
            | "expectedBrokerServiceUid" => {
                let n = integer(item, &at, 0)?;
                match key {
                    "expectedOwnerUid" => owner = n,
                    "expectedBrokerServiceUid" => service = n,
                    _ => {}
                }
                Member::Json(n.to_string())
            }
            "minimumBrokerGeneration" => Member::Json(integer(item, &at, 1)?.to_string()),
            "trustedIdentityKeys" | "trustedProviderKeys" => {
                trust_store(item, &at)?;
                if key == "trustedIdentityKeys" {
                    identity_keys = item;
                }
                Member::Keys(item)
            }
            _ => Member::Json(quoted(string(item, &at)?)),
        };
        members.push((key, json));
    }
    members.push(("providerAttestation", Member::Json(attestation)));
    Ok(Verification {
        expected_owner_uid: owner,
        expected_broker_service_uid: service,
        trusted_identity_keys: identity_keys,
        members,
    })
}

fn quoted(text: &str) -> String {
    let mut out = String::new();
    crate::contract::value::write_json_string(&mut out, text);
    out
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
pub(super) fn parse_request(v: &Js) -> read::Read<Request<'_>> {
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
    let verification = verification(field(v, "identityVerification"))?;
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

/// The parts of a parsed `BrokerIdentityRecord` the compatibility checks compare.
#[derive(Debug)]
pub(super) struct Identity {
    base_protocol_version: i64,
    features: Vec<Feature>,
    protocol_feature_contract_hash: String,
    feature_set_hash: String,
    control_envelope_version: i64,
    capability_digest: String,
    owner_uid: i64,
    identity_key_id: String,
    signature: String,
    /// The fresh record's JSON.
    pub(super) json: String,
}

/// `parseBrokerIdentityRecord`, in the TypeScript core's order of checks.
pub(super) fn identity_record(v: &Js) -> Result<Identity, Failure> {
    exact_record(
        v,
        &[
            "version",
            "owningProviderPackage",
            "providerDigest",
            "providerVersion",
            "baseProtocolVersion",
            "features",
            "protocolFeatureContractHash",
            "featureSetHash",
            "controlEnvelopeVersion",
            "capabilityDigest",
            "protectedServiceUid",
            "ownerUid",
            "bootInstance",
            "processId",
            "brokerGeneration",
            "publicEndpoint",
            "authorityEndpoint",
            "identityKeyId",
            "signature",
        ],
        &[],
        "$",
    )?;
    let version = field(v, "version");
    if !is_string(version, BROKER_IDENTITY_RECORD_VERSION) {
        return fail(
            "$.version",
            format!("unsupported version: {}", version.js_string()),
        );
    }
    let features_value = field(v, "features");
    if !matches!(features_value, Js::Array(_)) {
        return fail("$.features", "must be an array");
    }
    let features = parse_feature_set(features_value, "$.features")?;
    let owner_uid = integer(field(v, "ownerUid"), "$.ownerUid", 0)?;
    let base = integer(field(v, "baseProtocolVersion"), "$.baseProtocolVersion", 1)?;
    if base != INTERCOM_BASE_PROTOCOL_VERSION {
        return fail(
            "$.baseProtocolVersion",
            format!(
                "protected Boss broker identities require base protocol version \
                 {INTERCOM_BASE_PROTOCOL_VERSION}"
            ),
        );
    }
    let public = string(field(v, "publicEndpoint"), "$.publicEndpoint")?;
    let authority = string(field(v, "authorityEndpoint"), "$.authorityEndpoint")?;
    if !public.starts_with('/') || !authority.starts_with('/') {
        return fail("$.publicEndpoint", "broker endpoints must be absolute");
    }
    if public == authority {
        return fail(
            "$.authorityEndpoint",
            "must be distinct from publicEndpoint",
        );
    }
    let contract_hash = hex_digest(
        field(v, "protocolFeatureContractHash"),
        "$.protocolFeatureContractHash",
    )?;
    let set_hash = hex_digest(field(v, "featureSetHash"), "$.featureSetHash")?;
    let envelope = integer(
        field(v, "controlEnvelopeVersion"),
        "$.controlEnvelopeVersion",
        1,
    )?;
    let digest = hex_digest(field(v, "capabilityDigest"), "$.capabilityDigest")?;
    if set_hash != feature_set_hash(&features) {
        return fail(
            "$.featureSetHash",
            "does not hash the complete identity feature set",
        );
    }
    if !has_boss(&features) {
        return fail(
            "$.features",
            format!("protected broker identity must carry {BOSS_RUN_FEATURE}"),
        );
    }
    if contract_hash != protocol_feature_contract_hash() {
        return fail(
            "$.protocolFeatureContractHash",
            "diverges from the canonical Boss protocol feature contract",
        );
    }
    if envelope != BOSS_CONTROL_ENVELOPE_VERSION {
        return fail(
            "$.controlEnvelopeVersion",
            "diverges from the canonical Boss control envelope version",
        );
    }
    if digest != capability_feature_digest() {
        return fail(
            "$.capabilityDigest",
            "diverges from the canonical Boss capability contract",
        );
    }
    let package = string(field(v, "owningProviderPackage"), "$.owningProviderPackage")?;
    let provider_digest = hex_digest(field(v, "providerDigest"), "$.providerDigest")?;
    let provider_version = string(field(v, "providerVersion"), "$.providerVersion")?;
    let service = integer(field(v, "protectedServiceUid"), "$.protectedServiceUid", 0)?;
    let boot = string(field(v, "bootInstance"), "$.bootInstance")?;
    let process = integer(field(v, "processId"), "$.processId", 1)?;
    let generation = integer(field(v, "brokerGeneration"), "$.brokerGeneration", 1)?;
    let key_id = string(field(v, "identityKeyId"), "$.identityKeyId")?;
    let signature = string(field(v, "signature"), "$.signature")?;
    let features_json: Vec<String> = features.iter().map(Feature::to_json).collect();
    let json = JsonObject::new()
        .str("version", BROKER_IDENTITY_RECORD_VERSION)
        .str("owningProviderPackage", package)
        .str("providerDigest", provider_digest)
        .str("providerVersion", provider_version)
        .int("baseProtocolVersion", base)
        .raw("features", &format!("[{}]", features_json.join(",")))
        .str("protocolFeatureContractHash", contract_hash)
        .str("featureSetHash", set_hash)
        .int("controlEnvelopeVersion", envelope)
        .str("capabilityDigest", digest)
        .int("protectedServiceUid", service)
        .int("ownerUid", owner_uid)
        .str("bootInstance", boot)
        .int("processId", process)
        .int("brokerGeneration", generation)
        .str("publicEndpoint", public)
        .str("authorityEndpoint", authority)
        .str("identityKeyId", key_id)
        .str("signature", signature)
        .finish();
    Ok(Identity {
        base_protocol_version: base,
        features,
        protocol_feature_contract_hash: contract_hash.to_string(),
        feature_set_hash: set_hash.to_string(),
        control_envelope_version: envelope,
        capability_digest: digest.to_string(),
        owner_uid,
        identity_key_id: key_id.to_string(),
        signature: signature.to_string(),
        json,
    })
}

/// Whether a record lacks its key id or signature (so a refusal reads "unsigned").
fn missing_signature_fields(value: &Js, key_field: &str) -> bool {
    match value {
        Js::Object(_) => {
            if record(value, "$").is_err() {
                return false;
            }
            let present = |key: &str| matches!(field(value, key), Js::Str(s) if !s.text.is_empty());
            !(present(key_field) && present("signature"))
        }
        // A proxy is an object to `typeof`; it is not entered, and counts as not unsigned.
        Js::Proxy => false,
        _ => true,
    }
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

/// Whether `signature` is the canonical padded base64 of exactly 64 bytes (what a
/// `Buffer.from(s, "base64")` round trip accepts).
fn canonical_ed25519_signature(signature: &str) -> bool {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b = signature.as_bytes();
    let index = |c: u8| ALPHABET.iter().position(|&a| a == c);
    b.len() == 88
        && &b[86..] == b"=="
        && b[..85].iter().all(|&c| index(c).is_some())
        && index(b[85]).is_some_and(|i| i & 0xf == 0)
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

/// `evaluateBrokerCompatibility(request, advertisement, identity?)`: never fails.
///
/// A Boss request that passes every check up to the identity signature is refused with
/// `IDENTITY_SIGNATURE_INVALID`: the Ed25519 verification is not in this crate yet, and the
/// port fails closed rather than report an unverified broker compatible.
pub fn evaluate_broker_compatibility(
    request: &Js,
    advertisement: &Js,
    identity: &Js,
) -> Compatibility {
    let Ok(request) = parse_request(request) else {
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
    // verifyProtectedBrokerIdentity: the identity and context were parsed above; the trusted
    // key is looked up by id, then the signature must be canonical base64 of 64 bytes.
    let key = boss
        .verification
        .trusted_identity_keys
        .get(&parsed.identity_key_id);
    if key.is_none() {
        return Compatibility::Refused("IDENTITY_KEY_UNKNOWN");
    }
    if !canonical_ed25519_signature(&parsed.signature) {
        return Compatibility::Refused("IDENTITY_SIGNATURE_INVALID");
    }
    // Not implemented: the Ed25519 verification of the identity, then the provider attestation
    // (its signature and PROVIDER_* codes), provider/owner/service/boot/generation/endpoint
    // checks and the peer checks. Refused, never reported compatible.
    Compatibility::Refused("IDENTITY_SIGNATURE_INVALID")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_encoding() {
        let zeros = format!("{}==", "A".repeat(86));
        assert!(canonical_ed25519_signature(&zeros));
        let mut loose = "A".repeat(85);
        loose.push('B');
        loose.push_str("==");
        assert!(!canonical_ed25519_signature(&loose));
        assert!(!canonical_ed25519_signature(&"A".repeat(88)));
        assert!(protected_mode("0755") && !protected_mode("0775") && !protected_mode("755"));
        assert!(!truthy(&Js::Num(-0.0)) && truthy(&Js::object(vec![])));
    }
}

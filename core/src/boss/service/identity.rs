//! Protected broker identities and provider attestations: the records, their verification
//! contexts, their signing bytes and `verifyBrokerProviderAttestation` /
//! `verifyProtectedBrokerIdentity` (Ed25519 over the canonical frame of the record without its
//! signature, see [`super::keys`]).

use super::keys::{self, KeyObjectEntry, TrustStore, key_objects, trust_store, verifies};
use super::{
    BROKER_IDENTITY_RECORD_VERSION, BROKER_IDENTITY_SIGNATURE_DOMAIN,
    BROKER_PROTECTED_PROVIDER_ROOT, BROKER_PROVIDER_ATTESTATION_SIGNATURE_DOMAIN,
    BROKER_PROVIDER_ATTESTATION_VERSION, Feature, feature_set_hash, has_boss, parse_feature_set,
};
use crate::boss::JsonObject;
use crate::boss::feature::semantics::{capability_feature_digest, protocol_feature_contract_hash};
use crate::boss::wire::{
    BOSS_CONTROL_ENVELOPE_VERSION, BOSS_RUN_FEATURE, INTERCOM_BASE_PROTOCOL_VERSION, is_string,
};
use crate::contract::read::{
    self, exact_record, fail, field, hex_digest, integer, member, record, string, timestamp,
};
use crate::contract::value::write_json_string;
use crate::contract::{Args, Failure, Js, Op, Out};

/// A parsed `BrokerProviderAttestation`.
#[derive(Debug)]
pub(crate) struct Attestation<'v> {
    package: &'v str,
    version: &'v str,
    digest: &'v str,
    artifact_path: &'v str,
    uid: i64,
    gid: i64,
    mode: &'v str,
    key_id: &'v str,
    /// The fresh record's JSON.
    pub(crate) json: String,
}

/// `parseBrokerProviderAttestation` (paths from `$`).
pub(crate) fn provider_attestation(v: &Js) -> read::Read<Attestation<'_>> {
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
    let json = JsonObject::new()
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
        .finish();
    Ok(Attestation {
        package,
        version: provider_version,
        digest,
        artifact_path: path,
        uid,
        gid,
        mode,
        key_id,
        json,
    })
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

/// A parsed `BrokerIdentityRecord`.
#[derive(Debug)]
pub(crate) struct Identity {
    pub(crate) provider_package: String,
    pub(crate) provider_digest: String,
    pub(crate) provider_version: String,
    pub(crate) base_protocol_version: i64,
    pub(crate) features: Vec<Feature>,
    pub(crate) protocol_feature_contract_hash: String,
    pub(crate) feature_set_hash: String,
    pub(crate) control_envelope_version: i64,
    pub(crate) capability_digest: String,
    pub(crate) protected_service_uid: i64,
    pub(crate) owner_uid: i64,
    pub(crate) boot_instance: String,
    pub(crate) process_id: i64,
    pub(crate) broker_generation: i64,
    pub(crate) public_endpoint: String,
    pub(crate) authority_endpoint: String,
    pub(crate) identity_key_id: String,
    /// The fresh record's JSON.
    pub(crate) json: String,
}

const IDENTITY_KEYS: &[&str] = &[
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
];

/// `parseBrokerIdentityRecord`, in the TypeScript core's order of checks.
pub(crate) fn identity_record(v: &Js) -> Result<Identity, Failure> {
    exact_record(v, IDENTITY_KEYS, &[], "$")?;
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
        provider_package: package.to_string(),
        provider_digest: provider_digest.to_string(),
        provider_version: provider_version.to_string(),
        base_protocol_version: base,
        features,
        protocol_feature_contract_hash: contract_hash.to_string(),
        feature_set_hash: set_hash.to_string(),
        control_envelope_version: envelope,
        capability_digest: digest.to_string(),
        protected_service_uid: service,
        owner_uid,
        boot_instance: boot.to_string(),
        process_id: process,
        broker_generation: generation,
        public_endpoint: public.to_string(),
        authority_endpoint: authority.to_string(),
        identity_key_id: key_id.to_string(),
        json,
    })
}

/// What a provider attestation must match (`BrokerProviderVerificationContext`, or the provider
/// half of a `BrokerIdentityVerificationContext`).
#[derive(Debug)]
pub(crate) struct ProviderExpectation<'v> {
    package: &'v str,
    version: &'v str,
    digest: &'v str,
    root: &'v str,
    uid: i64,
    gid: i64,
    mode: &'v str,
    keys: TrustStore,
}

/// `parseBrokerProviderVerificationContext`.
fn provider_context<'v>(
    value: &'v Js,
    table: &[KeyObjectEntry<'_>],
) -> read::Read<ProviderExpectation<'v>> {
    let path = "$.verificationContext";
    exact_record(
        value,
        &[
            "expectedProviderPackage",
            "expectedProviderVersion",
            "expectedProviderDigest",
            "expectedArtifactRoot",
            "expectedArtifactOwnerUid",
            "expectedArtifactOwnerGid",
            "expectedArtifactMode",
            "trustedProviderKeys",
        ],
        &[],
        path,
    )?;
    let at = |key: &str| member(path, key);
    let get = |key: &str| field(value, key);
    Ok(ProviderExpectation {
        package: string(
            get("expectedProviderPackage"),
            &at("expectedProviderPackage"),
        )?,
        version: string(
            get("expectedProviderVersion"),
            &at("expectedProviderVersion"),
        )?,
        digest: hex_digest(get("expectedProviderDigest"), &at("expectedProviderDigest"))?,
        root: string(get("expectedArtifactRoot"), &at("expectedArtifactRoot"))?,
        uid: integer(
            get("expectedArtifactOwnerUid"),
            &at("expectedArtifactOwnerUid"),
            0,
        )?,
        gid: integer(
            get("expectedArtifactOwnerGid"),
            &at("expectedArtifactOwnerGid"),
            0,
        )?,
        mode: string(get("expectedArtifactMode"), &at("expectedArtifactMode"))?,
        keys: trust_store(
            get("trustedProviderKeys"),
            &at("trustedProviderKeys"),
            "trustedProviderKeys",
            table,
        )?,
    })
}

/// A parsed `BrokerIdentityVerificationContext`.
#[derive(Debug)]
pub(crate) struct IdentityContext<'v> {
    provider: ProviderExpectation<'v>,
    pub(crate) expected_owner_uid: i64,
    pub(crate) expected_broker_service_uid: i64,
    boot: &'v str,
    minimum_generation: i64,
    public_endpoint: &'v str,
    authority_endpoint: &'v str,
    identity_keys: TrustStore,
    /// `providerAttestation` as given.
    attestation: Option<&'v Js>,
    /// The fresh projection's members as JSON (trust-store `KeyObject`s as `null`).
    pub(crate) json: String,
}

/// `parseBrokerIdentityVerificationContext(value, requireProviderAttestation,
/// parseProviderAttestation)`.
pub(crate) fn identity_context<'v>(
    value: &'v Js,
    require_attestation: bool,
    parse_attestation: bool,
    table: &[KeyObjectEntry<'_>],
) -> read::Read<IdentityContext<'v>> {
    let path = "$.identityVerification";
    exact_record(
        value,
        &[
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
        ],
        &["providerAttestation"],
        path,
    )?;
    let at = |key: &str| member(path, key);
    let get = |key: &str| field(value, key);
    let attestation = match get("providerAttestation") {
        Js::Undefined if require_attestation => {
            return fail(&at("providerAttestation"), "is required");
        }
        Js::Undefined => None,
        a => Some(a),
    };
    let attestation_json = match attestation {
        Some(a) if parse_attestation => Some(provider_attestation(a)?.json),
        _ => None,
    };
    let package = string(
        get("expectedProviderPackage"),
        &at("expectedProviderPackage"),
    )?;
    let version = string(
        get("expectedProviderVersion"),
        &at("expectedProviderVersion"),
    )?;
    let digest = hex_digest(get("expectedProviderDigest"), &at("expectedProviderDigest"))?;
    let root = string(
        get("expectedProviderArtifactRoot"),
        &at("expectedProviderArtifactRoot"),
    )?;
    let uid_key = "expectedProviderArtifactOwnerUid";
    let uid = integer(get(uid_key), &at(uid_key), 0)?;
    let gid_key = "expectedProviderArtifactOwnerGid";
    let gid = integer(get(gid_key), &at(gid_key), 0)?;
    let mode = string(
        get("expectedProviderArtifactMode"),
        &at("expectedProviderArtifactMode"),
    )?;
    let owner = integer(get("expectedOwnerUid"), &at("expectedOwnerUid"), 0)?;
    let service_key = "expectedBrokerServiceUid";
    let service = integer(get(service_key), &at(service_key), 0)?;
    let boot = string(get("expectedBootInstance"), &at("expectedBootInstance"))?;
    let generation_key = "minimumBrokerGeneration";
    let generation = integer(get(generation_key), &at(generation_key), 1)?;
    let public = string(get("expectedPublicEndpoint"), &at("expectedPublicEndpoint"))?;
    let authority_key = "expectedAuthorityEndpoint";
    let authority = string(get(authority_key), &at(authority_key))?;
    let identity_keys = trust_store(
        get("trustedIdentityKeys"),
        &at("trustedIdentityKeys"),
        "trustedIdentityKeys",
        table,
    )?;
    let provider_keys = trust_store(
        get("trustedProviderKeys"),
        &at("trustedProviderKeys"),
        "trustedProviderKeys",
        table,
    )?;
    let json = JsonObject::new()
        .str("expectedProviderPackage", package)
        .str("expectedProviderVersion", version)
        .str("expectedProviderDigest", digest)
        .str("expectedProviderArtifactRoot", root)
        .int(uid_key, uid)
        .int(gid_key, gid)
        .str("expectedProviderArtifactMode", mode)
        .int("expectedOwnerUid", owner)
        .int(service_key, service)
        .str("expectedBootInstance", boot)
        .int(generation_key, generation)
        .str("expectedPublicEndpoint", public)
        .str(authority_key, authority)
        .raw(
            "trustedIdentityKeys",
            &store_json(get("trustedIdentityKeys")),
        )
        .raw(
            "trustedProviderKeys",
            &store_json(get("trustedProviderKeys")),
        );
    let json = match (&attestation_json, attestation) {
        (Some(parsed), _) => json.raw("providerAttestation", parsed),
        (None, Some(raw)) => json.raw(
            "providerAttestation",
            &raw.to_json().unwrap_or_else(|| "null".into()),
        ),
        (None, None) => json,
    };
    Ok(IdentityContext {
        provider: ProviderExpectation {
            package,
            version,
            digest,
            root,
            uid,
            gid,
            mode,
            keys: provider_keys,
        },
        expected_owner_uid: owner,
        expected_broker_service_uid: service,
        boot,
        minimum_generation: generation,
        public_endpoint: public,
        authority_endpoint: authority,
        identity_keys,
        attestation,
        json: json.finish(),
    })
}

/// A validated trust store's projection as JSON: PEM text as given, a `KeyObject` as `null`
/// (the Node module puts the caller's own object there).
fn store_json(store: &Js) -> String {
    let Js::Object(object) = store else {
        return "{}".to_string();
    };
    let mut out = String::from("{");
    for (i, (id, item)) in object.members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_json_string(&mut out, &id.text);
        out.push(':');
        match item.as_str() {
            Some(text) => write_json_string(&mut out, text),
            None => out.push_str("null"),
        }
    }
    out.push('}');
    out
}

/// Whether a record lacks its key id or signature (so a refusal reads "unsigned").
pub(crate) fn missing_signature_fields(value: &Js, key_field: &str) -> bool {
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

/// The refusal of an attestation that does not parse.
fn attestation_refusal(value: &Js) -> &'static str {
    if missing_signature_fields(value, "attestationKeyId") {
        "PROVIDER_ATTESTATION_UNSIGNED"
    } else {
        "PROVIDER_SIGNATURE_INVALID"
    }
}

/// `verifyBrokerProviderAttestation` once the context is parsed: `Err(code)` refuses.
fn verify_provider(value: &Js, expected: &ProviderExpectation<'_>) -> Result<(), &'static str> {
    let attestation = provider_attestation(value).map_err(|_| attestation_refusal(value))?;
    let key = expected
        .keys
        .resolve(attestation.key_id)
        .ok_or("PROVIDER_KEY_UNKNOWN")?;
    let fresh = Js::parse_json(&attestation.json).map_err(|_| "PROVIDER_SIGNATURE_INVALID")?;
    if !verifies(BROKER_PROVIDER_ATTESTATION_SIGNATURE_DOMAIN, &fresh, key) {
        return Err("PROVIDER_SIGNATURE_INVALID");
    }
    if attestation.package != expected.package
        || attestation.version != expected.version
        || attestation.digest != expected.digest
    {
        return Err("PROVIDER_MISMATCH");
    }
    if expected.root != BROKER_PROTECTED_PROVIDER_ROOT
        || expected.uid != 0
        || expected.gid != 0
        || !protected_mode(expected.mode)
        || !attestation.artifact_path.starts_with(expected.root)
        || attestation.uid != expected.uid
        || attestation.gid != expected.gid
        || attestation.mode != expected.mode
    {
        return Err("PROVIDER_ARTIFACT_MISMATCH");
    }
    Ok(())
}

/// `verifyBrokerProviderAttestation(attestation, context)`: never fails.
pub(crate) fn verify_provider_attestation(
    attestation: &Js,
    context: &Js,
    table: &[KeyObjectEntry<'_>],
) -> Result<(), &'static str> {
    // The attestation is parsed first: its refusal comes before any of the context's.
    if provider_attestation(attestation).is_err() {
        return Err(attestation_refusal(attestation));
    }
    let expected = provider_context(context, table).map_err(|f| {
        if keys::names(&f, "trustedProviderKeys") {
            "PROVIDER_KEY_UNKNOWN"
        } else {
            "PROVIDER_SIGNATURE_INVALID"
        }
    })?;
    verify_provider(attestation, &expected)
}

/// `verifyProtectedBrokerIdentity` once the identity is parsed.
pub(crate) fn verify_parsed_identity(
    identity: &Identity,
    context: &IdentityContext<'_>,
) -> Result<(), &'static str> {
    let key = context
        .identity_keys
        .resolve(&identity.identity_key_id)
        .ok_or("IDENTITY_KEY_UNKNOWN")?;
    let fresh = Js::parse_json(&identity.json).map_err(|_| "IDENTITY_SIGNATURE_INVALID")?;
    if !verifies(BROKER_IDENTITY_SIGNATURE_DOMAIN, &fresh, key) {
        return Err("IDENTITY_SIGNATURE_INVALID");
    }
    let attestation = context.attestation.ok_or("PROVIDER_ATTESTATION_REQUIRED")?;
    verify_provider(attestation, &context.provider)?;
    if identity.provider_package != context.provider.package
        || identity.provider_version != context.provider.version
        || identity.provider_digest != context.provider.digest
    {
        return Err("PROVIDER_MISMATCH");
    }
    if identity.owner_uid != context.expected_owner_uid {
        return Err("OWNER_UID_MISMATCH");
    }
    if identity.protected_service_uid == identity.owner_uid
        || identity.protected_service_uid != context.expected_broker_service_uid
    {
        return Err("PROTECTED_SERVICE_MISMATCH");
    }
    if identity.boot_instance != context.boot {
        return Err("STALE_BOOT_INSTANCE");
    }
    if identity.broker_generation < context.minimum_generation {
        return Err("REGRESSED_BROKER_GENERATION");
    }
    let root = format!("/run/agent-intercom/{}", context.expected_owner_uid);
    if context.public_endpoint != format!("{root}/public.sock")
        || context.authority_endpoint != format!("{root}/authority.sock")
        || identity.public_endpoint != context.public_endpoint
        || identity.authority_endpoint != context.authority_endpoint
    {
        return Err("ENDPOINT_MISMATCH");
    }
    Ok(())
}

/// `verifyProtectedBrokerIdentity(identity, context)`: never fails.
pub(crate) fn verify_identity(
    identity: &Js,
    context: &Js,
    table: &[KeyObjectEntry<'_>],
) -> Result<(), &'static str> {
    let Ok(parsed) = identity_record(identity) else {
        return Err(if missing_signature_fields(identity, "identityKeyId") {
            "IDENTITY_UNSIGNED"
        } else {
            "IDENTITY_RECORD_INVALID"
        });
    };
    let context = identity_context(context, false, false, table).map_err(|f| {
        if keys::names(&f, "trustedIdentityKeys") {
            "IDENTITY_KEY_UNKNOWN"
        } else if keys::names(&f, "trustedProviderKeys") {
            "PROVIDER_KEY_UNKNOWN"
        } else {
            "IDENTITY_RECORD_INVALID"
        }
    })?;
    verify_parsed_identity(&parsed, &context)
}

/// `{accepted: true}` or `{accepted: false, code}`.
fn accepted_json(decision: Result<(), &'static str>) -> String {
    match decision {
        Ok(()) => JsonObject::new().bool("accepted", true).finish(),
        Err(code) => JsonObject::new()
            .bool("accepted", false)
            .str("code", code)
            .finish(),
    }
}

fn json_string(text: &str) -> String {
    let mut out = String::new();
    write_json_string(&mut out, text);
    out
}

/// The operations of this module. The `KeyObject` table (see [`super::keys`]) is the argument
/// after the documented ones.
pub const OPS: &[Op] = &[
    Op {
        name: "boss.brokerProviderAttestationSigningBytes",
        run: |a: Args<'_>| {
            let frame =
                keys::signing_frame(BROKER_PROVIDER_ATTESTATION_SIGNATURE_DOMAIN, a.get(0))?;
            Ok(Out::Json(json_string(&frame)))
        },
    },
    Op {
        name: "boss.brokerIdentitySigningBytes",
        run: |a: Args<'_>| {
            let frame = keys::signing_frame(BROKER_IDENTITY_SIGNATURE_DOMAIN, a.get(0))?;
            Ok(Out::Json(json_string(&frame)))
        },
    },
    Op {
        name: "boss.verifyBrokerProviderAttestation",
        run: |a: Args<'_>| {
            let table = key_objects(a.get(2));
            let decision = verify_provider_attestation(a.get(0), a.get(1), &table);
            Ok(Out::Json(accepted_json(decision)))
        },
    },
    Op {
        name: "boss.verifyProtectedBrokerIdentity",
        run: |a: Args<'_>| {
            let table = key_objects(a.get(2));
            Ok(Out::Json(accepted_json(verify_identity(
                a.get(0),
                a.get(1),
                &table,
            ))))
        },
    },
];

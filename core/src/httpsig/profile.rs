//! A signature profile (RFC 9421 §1.4: the components, parameters, algorithm and key rules an
//! application requires) and the signing and verification of requests and responses under it.

use std::ops::RangeInclusive;

use super::component::Component;
use super::digest::{DigestAlgorithm, check_content_digest, content_digest};
use super::keys::{PublicKey, SigningKey};
use super::message::{Headers, Message, Request, Response};
use super::params::{self, Param, SignatureParams};
use super::{
    ALGORITHM, LABEL, LINE_TAG, MAX_KEYID_BYTES, REQUEST_TAG, RESPONSE_TAG, SIGNATURE_BYTES,
    invalid, malformed, missing,
};
use crate::error::{Error, ErrorCode};

/// The signature parameters in the order [`sign_request`] writes them.
pub const PARAM_ORDER: [&str; 6] = ["created", "expires", "nonce", "keyid", "alg", "tag"];

/// What a signature must be to be accepted (and what [`sign_request`] makes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// The one label a message carries (`Signature-Input: <label>=...`); any other label, or a
    /// second signature, is refused.
    pub label: String,
    /// Components every signature covers (in this order when signing; in any order, among
    /// others, when verifying).
    pub components: Vec<Component>,
    /// Field components covered whenever the message (or, for `;req`, its request) has the
    /// field: a header that is sent is signed, so none can be added or stripped on the way.
    pub components_if_present: Vec<Component>,
    /// Parameters a signature must carry (names of [`PARAM_ORDER`]; `created` and `keyid` at
    /// least). `alg`, when present, must be `ed25519`; no other parameter is read.
    pub required_params: Vec<&'static str>,
    /// The `tag` a signature carries.
    pub tag: String,
    /// The `Content-Digest` algorithm [`sign_request`] writes.
    pub sign_digest: DigestAlgorithm,
    /// The `Content-Digest` algorithms a verifier accepts (any other member is refused).
    pub accepted_digests: Vec<DigestAlgorithm>,
    /// How far in the future `created` may be (the peers' clock difference), in seconds.
    pub max_skew_secs: i64,
    /// How long after `created` a signature is accepted, in seconds.
    pub max_age_secs: i64,
    /// The longest `expires - created`, in seconds.
    pub max_lifetime_secs: i64,
    /// The length of `nonce`, in characters.
    pub nonce_len: RangeInclusive<usize>,
}

impl Profile {
    /// The A2A request profile: covers `("@method" "@target-uri" "content-type"
    /// "content-digest")`, and `a2a-version`, `a2a-extensions`, `x-a2a-extensions` when sent;
    /// requires all six parameters with `alg="ed25519"` and `tag="agent-intercom-a2a@1"`;
    /// `created` at most 30 s ahead and 30 s old, a lifetime of at most 300 s, a nonce of 16 to
    /// 128 characters; `Content-Digest` in `sha-256` (`sha-512` also accepted).
    pub fn a2a_request() -> Profile {
        Profile {
            label: LABEL.to_string(),
            components: ["@method", "@target-uri", "content-type", "content-digest"]
                .into_iter()
                .map(Component::new)
                .collect(),
            components_if_present: a2a_headers(),
            required_params: PARAM_ORDER.to_vec(),
            tag: REQUEST_TAG.to_string(),
            sign_digest: DigestAlgorithm::Sha256,
            accepted_digests: DigestAlgorithm::all().to_vec(),
            max_skew_secs: 30,
            max_age_secs: 30,
            max_lifetime_secs: 300,
            nonce_len: 16..=128,
        }
    }

    /// The A2A response profile, binding a response to the request it answers: covers
    /// `("@status" "content-type" "content-digest" "@method";req "@target-uri";req
    /// "signature";req;key="a2a")` and the A2A headers the response carries; the request
    /// profile's rules with `tag="agent-intercom-a2a-response@1"`.
    pub fn a2a_response() -> Profile {
        let mut components: Vec<Component> = ["@status", "content-type", "content-digest"]
            .into_iter()
            .map(Component::new)
            .collect();
        components.push(Component::new("@method").req());
        components.push(Component::new("@target-uri").req());
        components.push(Component::new("signature").req().key(LABEL));
        Profile {
            components,
            tag: RESPONSE_TAG.to_string(),
            ..Profile::a2a_request()
        }
    }

    /// The outbound line's request profile (`rfc9421-ed25519@1`, docs/line.md): covers
    /// `("@method" "@authority" "@path" "@query" "content-type" "content-digest" "a2a-version"
    /// "a2a-extensions" "intercom-issuer" "intercom-audience")`, so the signature names the
    /// endpoint by its normalised authority (port 443 dropped) and an empty query as `?`, and
    /// binds the workload (issuer) to the peer (audience); the six parameters with
    /// `tag="rfc9421-ed25519@1"`; the windows of [`Profile::a2a_request`].
    pub fn line_request() -> Profile {
        Profile {
            components: [
                "@method",
                "@authority",
                "@path",
                "@query",
                "content-type",
                "content-digest",
                "a2a-version",
                "a2a-extensions",
                "intercom-issuer",
                "intercom-audience",
            ]
            .into_iter()
            .map(Component::new)
            .collect(),
            components_if_present: Vec::new(),
            tag: LINE_TAG.to_string(),
            ..Profile::a2a_request()
        }
    }

    /// The outbound line's response profile: covers `("@status" "content-type"
    /// "content-digest" "intercom-issuer" "intercom-audience" "@method";req "@authority";req
    /// "@path";req "signature";req;key="a2a")`. The last binds a response to the one signature
    /// (and so the one nonce) of the request it answers: a replayed or cross-request response
    /// does not verify. Same tag and windows as [`Profile::line_request`].
    pub fn line_response() -> Profile {
        let mut components: Vec<Component> = [
            "@status",
            "content-type",
            "content-digest",
            "intercom-issuer",
            "intercom-audience",
        ]
        .into_iter()
        .map(Component::new)
        .collect();
        for name in ["@method", "@authority", "@path"] {
            components.push(Component::new(name).req());
        }
        components.push(Component::new("signature").req().key(LABEL));
        Profile {
            components,
            ..Profile::line_request()
        }
    }

    /// Whether the profile itself is usable (`INVALID_ARGUMENT` when not).
    pub fn check(&self) -> Result<(), Error> {
        if super::sf::key(&self.label).is_none() {
            return Err(invalid("the profile's label is not a structured-field key"));
        }
        for name in &self.required_params {
            if !PARAM_ORDER.contains(name) {
                return Err(invalid(format!(
                    "the profile requires unknown parameter {name}"
                )));
            }
        }
        if !self.required_params.contains(&"created") || !self.required_params.contains(&"keyid") {
            return Err(invalid("a profile requires created and keyid"));
        }
        for c in self.components.iter().chain(&self.components_if_present) {
            c.check().map_err(invalid)?;
        }
        if self.components_if_present.iter().any(Component::is_derived) {
            return Err(invalid("only fields can be covered when present"));
        }
        let times = [
            self.max_skew_secs,
            self.max_age_secs,
            self.max_lifetime_secs,
        ];
        if times.iter().any(|t| !(0..=86_400 * 366).contains(t)) || self.accepted_digests.is_empty()
        {
            return Err(invalid("the profile's windows or digests are out of range"));
        }
        Ok(())
    }

    /// The profile's rules on one signature's parameters and coverage of `message` (why not).
    fn check_params(&self, params: &SignatureParams, message: Message<'_>) -> Result<(), String> {
        for name in &self.required_params {
            if !params.has(name) {
                return Err(format!("the signature has no {name} parameter"));
            }
        }
        for name in PARAM_ORDER {
            if params.params.iter().filter(|p| p.name() == name).count() > 1 {
                return Err(format!("the {name} parameter is repeated"));
            }
        }
        if let Some(alg) = params.alg().filter(|a| *a != ALGORITHM) {
            return Err(format!("alg {alg:?} is not {ALGORITHM:?}"));
        }
        if params.tag().is_some_and(|t| *t != self.tag) {
            return Err(format!("the tag is not {:?}", self.tag));
        }
        if params
            .keyid()
            .is_some_and(|k| k.is_empty() || k.len() > MAX_KEYID_BYTES)
        {
            return Err(format!("keyid must be 1 to {MAX_KEYID_BYTES} characters"));
        }
        if params
            .nonce()
            .is_some_and(|n| !self.nonce_len.contains(&n.len()))
        {
            return Err(format!(
                "the nonce must be {} to {} characters",
                self.nonce_len.start(),
                self.nonce_len.end()
            ));
        }
        if let (Some(created), Some(expires)) = (params.created(), params.expires()) {
            if expires <= created {
                return Err("expires is not after created".to_string());
            }
            if expires - created > self.max_lifetime_secs {
                return Err(format!(
                    "expires is more than {} s after created",
                    self.max_lifetime_secs
                ));
            }
        }
        let covered = |c: &Component| params.components.iter().any(|p| p.same_as(c));
        if let Some(absent) = self.components.iter().find(|c| !covered(c)) {
            return Err(format!("the signature does not cover {absent}"));
        }
        for c in &self.components_if_present {
            let headers = match (message, c.params().contains(&super::ComponentParam::Req)) {
                (
                    Message::Response {
                        request: Some(r), ..
                    },
                    true,
                ) => &r.headers,
                (_, true) => continue,
                (m, false) => m.headers(),
            };
            if headers.contains(c.name()) && !covered(c) {
                return Err(format!(
                    "the message has {} but the signature does not cover it",
                    c
                ));
            }
        }
        Ok(())
    }
}

/// The A2A headers covered whenever they are sent.
fn a2a_headers() -> Vec<Component> {
    ["a2a-version", "a2a-extensions", "x-a2a-extensions"]
        .into_iter()
        .map(Component::new)
        .collect()
}

/// What a signer gives: the key, its id, the validity and the nonce (16 random bytes in
/// base64url is what the A2A profiles expect; the caller draws them).
#[derive(Clone, Copy, Debug)]
pub struct SignInput<'a> {
    /// The private key.
    pub key: &'a SigningKey,
    /// Its key id, as the verifier has it enrolled.
    pub keyid: &'a str,
    /// UNIX seconds.
    pub created: i64,
    /// UNIX seconds, after `created`.
    pub expires: i64,
    /// Never reused.
    pub nonce: &'a str,
}

/// The three header lines a signer adds, and the base that was signed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignedHeaders {
    /// The `Content-Digest` value.
    pub content_digest: String,
    /// The `Signature-Input` value.
    pub signature_input: String,
    /// The `Signature` value.
    pub signature: String,
    /// The signature base (not sent; for logs and tests).
    pub base: String,
}

impl SignedHeaders {
    /// Appends `Content-Digest`, `Signature-Input` and `Signature` to `headers`.
    pub fn apply(&self, headers: &mut Headers) {
        headers.push("Content-Digest", self.content_digest.as_bytes());
        headers.push("Signature-Input", self.signature_input.as_bytes());
        headers.push("Signature", self.signature.as_bytes());
    }
}

/// An accepted signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// Its label.
    pub label: String,
    /// The key id it was verified with.
    pub keyid: String,
    /// Its nonce: the caller refuses a replay with
    /// `Store::remember_nonce("http", &keyid, &nonce, replay_until_ms)`.
    pub nonce: Option<String>,
    /// `created`.
    pub created: i64,
    /// `expires`.
    pub expires: Option<i64>,
    /// Until when (UNIX ms, exclusive) the same signature could still be accepted: how long its
    /// nonce must be remembered.
    pub replay_until_ms: i64,
    /// The parameters as received.
    pub params: SignatureParams,
    /// The signature base that verified.
    pub base: String,
}

/// Signs `request` with `body` under `profile`: computes `Content-Digest`, covers the profile's
/// components (and its if-present ones the request has) and writes the parameters in
/// [`PARAM_ORDER`]. The request must not already carry `Content-Digest`, `Signature-Input` or
/// `Signature`; a key id, nonce or validity the profile would refuse is refused here too (all
/// `INVALID_ARGUMENT`).
pub fn sign_request(
    profile: &Profile,
    request: &Request,
    body: &[u8],
    input: &SignInput<'_>,
) -> Result<SignedHeaders, Error> {
    let mut request = request.clone();
    let digest = prepare(profile, &mut request.headers, body)?;
    sign_message(profile, Message::Request(&request), digest, input)
}

/// Signs `response` (answering `request`, which carries its own signature for the `;req`
/// components) under `profile`, as [`sign_request`] does.
pub fn sign_response(
    profile: &Profile,
    response: &Response,
    request: &Request,
    body: &[u8],
    input: &SignInput<'_>,
) -> Result<SignedHeaders, Error> {
    let mut response = response.clone();
    let digest = prepare(profile, &mut response.headers, body)?;
    let message = Message::Response {
        response: &response,
        request: Some(request),
    };
    sign_message(profile, message, digest, input)
}

fn prepare(profile: &Profile, headers: &mut Headers, body: &[u8]) -> Result<String, Error> {
    profile.check()?;
    for name in ["content-digest", "signature-input", "signature"] {
        if headers.contains(name) {
            return Err(invalid(format!("the message to sign already has {name}")));
        }
    }
    let digest = content_digest(profile.sign_digest, body);
    headers.push("content-digest", digest.as_bytes());
    Ok(digest)
}

fn sign_message(
    profile: &Profile,
    message: Message<'_>,
    content_digest: String,
    input: &SignInput<'_>,
) -> Result<SignedHeaders, Error> {
    let mut components = profile.components.clone();
    for c in &profile.components_if_present {
        let headers = match (message, c.params().contains(&super::ComponentParam::Req)) {
            (
                Message::Response {
                    request: Some(r), ..
                },
                true,
            ) => &r.headers,
            (_, true) => continue,
            (m, false) => m.headers(),
        };
        if headers.contains(c.name()) {
            components.push(c.clone());
        }
    }
    let params = PARAM_ORDER
        .iter()
        .filter(|name| profile.required_params.contains(name))
        .map(|name| match *name {
            "created" => Param::Created(input.created),
            "expires" => Param::Expires(input.expires),
            "nonce" => Param::Nonce(input.nonce.to_string()),
            "keyid" => Param::KeyId(input.keyid.to_string()),
            "alg" => Param::Alg(ALGORITHM.to_string()),
            _ => Param::Tag(profile.tag.clone()),
        })
        .collect();
    let params = SignatureParams { components, params };
    profile.check_params(&params, message).map_err(invalid)?;
    let base = params::base(message, &params).map_err(invalid)?;
    let signature = input.key.sign(base.as_bytes());
    Ok(SignedHeaders {
        content_digest,
        signature_input: params.to_field(&profile.label)?,
        signature: params::signature_field(&profile.label, &signature)?,
        base,
    })
}

/// Verifies the signature of `request` with `body` under `profile` at `now_ms` (UNIX ms),
/// resolving its key id through `keys`. The checks, in order, and their codes:
///
/// 1. `Signature-Input` and `Signature` both present: `SIGNATURE_MISSING`;
/// 2. both parse, with the same labels, exactly one signature, labelled as the profile says,
///    of 64 bytes, with the profile's parameters, `alg`, `tag`, nonce length, lifetime and
///    coverage (required components, every A2A header sent): `SIGNATURE_MALFORMED`;
/// 3. `Content-Digest` present, of accepted algorithms only, each the body's digest:
///    `CONTENT_DIGEST_MISMATCH`;
/// 4. the key id resolves: `UNKNOWN_SIGNING_KEY`;
/// 5. every covered component is in the message and the signature verifies over the base:
///    `SIGNATURE_INVALID`;
/// 6. `created` at most `max_skew_secs` ahead (`SIGNATURE_NOT_YET_VALID`), at most
///    `max_age_secs` old and `now < expires` (`SIGNATURE_EXPIRED`).
///
/// Time comes last so that only an authentic signature learns that its clock is off. The
/// nonce is the caller's to remember ([`Verified::nonce`]).
pub fn verify_request(
    profile: &Profile,
    request: &Request,
    body: &[u8],
    now_ms: i64,
    keys: impl Fn(&str) -> Option<PublicKey>,
) -> Result<Verified, Error> {
    verify_message(profile, Message::Request(request), body, now_ms, &keys)
}

/// Verifies the signature of `response` (answering `request`) as [`verify_request`] does; the
/// `;req` components are read from `request`, so a response made for another request (another
/// signature, another nonce) does not verify.
pub fn verify_response(
    profile: &Profile,
    response: &Response,
    request: &Request,
    body: &[u8],
    now_ms: i64,
    keys: impl Fn(&str) -> Option<PublicKey>,
) -> Result<Verified, Error> {
    let message = Message::Response {
        response,
        request: Some(request),
    };
    verify_message(profile, message, body, now_ms, &keys)
}

fn verify_message(
    profile: &Profile,
    message: Message<'_>,
    body: &[u8],
    now_ms: i64,
    keys: &dyn Fn(&str) -> Option<PublicKey>,
) -> Result<Verified, Error> {
    profile.check()?;
    let headers = message.headers();
    for name in ["signature-input", "signature"] {
        if !headers.contains(name) {
            return Err(missing(format!("the message has no {name} field")));
        }
    }
    let mut inputs = params::parse_signature_input(headers)?;
    let mut signatures = params::parse_signature(headers)?;
    for (label, _) in &signatures {
        if !inputs.iter().any(|(l, _)| l == label) {
            return Err(malformed(format!(
                "Signature {label} has no Signature-Input"
            )));
        }
    }
    for (label, _) in &inputs {
        if !signatures.iter().any(|(l, _)| l == label) {
            return Err(malformed(format!(
                "Signature-Input {label} has no Signature"
            )));
        }
    }
    if inputs.len() != 1 || inputs[0].0 != profile.label {
        return Err(malformed(format!(
            "the message must carry exactly one signature, labelled {}",
            profile.label
        )));
    }
    let (label, params) = inputs.remove(0);
    let (_, signature) = signatures.remove(0);
    if signature.len() != SIGNATURE_BYTES {
        return Err(malformed(format!(
            "the signature is {} bytes; an Ed25519 signature is {SIGNATURE_BYTES}",
            signature.len()
        )));
    }
    profile.check_params(&params, message).map_err(malformed)?;
    check_content_digest(headers, body, &profile.accepted_digests)?;
    let keyid = params.keyid().unwrap_or_default().to_string();
    let key = keys(&keyid).ok_or_else(|| {
        Error::new(
            ErrorCode::UnknownSigningKey,
            format!("no key {keyid:?} is enrolled"),
        )
    })?;
    let base =
        params::base(message, &params).map_err(|e| Error::new(ErrorCode::SignatureInvalid, e))?;
    if !key.verify(base.as_bytes(), &signature) {
        return Err(Error::new(
            ErrorCode::SignatureInvalid,
            format!("the signature does not verify with key {keyid:?}"),
        ));
    }
    let created = params.created().unwrap_or_default();
    let created_ms = created.saturating_mul(1000);
    if created_ms > now_ms.saturating_add(profile.max_skew_secs * 1000) {
        return Err(Error::new(
            ErrorCode::SignatureNotYetValid,
            format!(
                "created is more than {} s in the future",
                profile.max_skew_secs
            ),
        ));
    }
    let age_end_ms = created_ms.saturating_add(profile.max_age_secs * 1000);
    if now_ms > age_end_ms {
        return Err(Error::new(
            ErrorCode::SignatureExpired,
            format!("created is more than {} s ago", profile.max_age_secs),
        ));
    }
    let expires = params.expires();
    let expires_ms = expires.map(|e| e.saturating_mul(1000));
    if expires_ms.is_some_and(|e| now_ms >= e) {
        return Err(Error::new(
            ErrorCode::SignatureExpired,
            "the signature has expired",
        ));
    }
    let replay_until_ms = match expires_ms {
        Some(e) => e.min(age_end_ms.saturating_add(1)),
        None => age_end_ms.saturating_add(1),
    };
    Ok(Verified {
        label,
        keyid,
        nonce: params.nonce().map(str::to_string),
        created,
        expires,
        replay_until_ms,
        params,
        base,
    })
}

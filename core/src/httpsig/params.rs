//! Signature parameters (§2.3), the `Signature-Input` and `Signature` fields (§4) and the
//! signature base (§2.5).

use sfv::BareItem;

use super::component::Component;
use super::message::{Headers, Message};
use super::sf::{self, Member};
use super::{MAX_COMPONENTS, MAX_SIGNATURE_FIELD_BYTES, malformed, missing};
use crate::error::Error;

/// One signature parameter (§2.3; the six registered ones, nothing else).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Param {
    /// `created`: UNIX seconds.
    Created(i64),
    /// `expires`: UNIX seconds.
    Expires(i64),
    /// `nonce`.
    Nonce(String),
    /// `alg`.
    Alg(String),
    /// `keyid`.
    KeyId(String),
    /// `tag`.
    Tag(String),
}

impl Param {
    /// The parameter's name.
    pub fn name(&self) -> &'static str {
        match self {
            Param::Created(_) => "created",
            Param::Expires(_) => "expires",
            Param::Nonce(_) => "nonce",
            Param::Alg(_) => "alg",
            Param::KeyId(_) => "keyid",
            Param::Tag(_) => "tag",
        }
    }
}

/// The covered components and the parameters of one signature, each in the order written:
/// the `@signature-params` value and the `Signature-Input` member.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SignatureParams {
    /// The covered components.
    pub components: Vec<Component>,
    /// The parameters.
    pub params: Vec<Param>,
}

impl SignatureParams {
    fn find<'a, T>(&'a self, pick: impl Fn(&'a Param) -> Option<T>) -> Option<T> {
        self.params.iter().find_map(pick)
    }

    /// `created`.
    pub fn created(&self) -> Option<i64> {
        self.find(|p| match p {
            Param::Created(v) => Some(*v),
            _ => None,
        })
    }

    /// `expires`.
    pub fn expires(&self) -> Option<i64> {
        self.find(|p| match p {
            Param::Expires(v) => Some(*v),
            _ => None,
        })
    }

    /// `nonce`.
    pub fn nonce(&self) -> Option<&str> {
        self.find(|p| match p {
            Param::Nonce(v) => Some(v.as_str()),
            _ => None,
        })
    }

    /// `alg`.
    pub fn alg(&self) -> Option<&str> {
        self.find(|p| match p {
            Param::Alg(v) => Some(v.as_str()),
            _ => None,
        })
    }

    /// `keyid`.
    pub fn keyid(&self) -> Option<&str> {
        self.find(|p| match p {
            Param::KeyId(v) => Some(v.as_str()),
            _ => None,
        })
    }

    /// `tag`.
    pub fn tag(&self) -> Option<&str> {
        self.find(|p| match p {
            Param::Tag(v) => Some(v.as_str()),
            _ => None,
        })
    }

    /// Whether the parameter named `name` is present.
    pub fn has(&self, name: &str) -> bool {
        self.params.iter().any(|p| p.name() == name)
    }

    /// The serialized Inner List with its parameters: the `@signature-params` value, and what
    /// follows `label=` in `Signature-Input`. `INVALID_ARGUMENT` when a string parameter is not
    /// printable ASCII or a component identifier breaks §2.1.
    pub fn serialize(&self) -> Result<String, Error> {
        let mut out = String::from("(");
        for (i, component) in self.components.iter().enumerate() {
            component.check().map_err(super::invalid)?;
            if i > 0 {
                out.push(' ');
            }
            component.write(&mut out);
        }
        out.push(')');
        for param in &self.params {
            out.push(';');
            out.push_str(param.name());
            out.push('=');
            let bare = match param {
                Param::Created(v) | Param::Expires(v) => sfv::Integer::try_from(*v)
                    .map(BareItem::Integer)
                    .map_err(|_| super::invalid("a time parameter is out of range"))?,
                Param::Nonce(s) | Param::Alg(s) | Param::KeyId(s) | Param::Tag(s) => sf::string(s)
                    .ok_or_else(|| {
                        super::invalid(format!("{} must be printable ASCII", param.name()))
                    })?,
            };
            sf::write_bare(&mut out, &bare);
        }
        Ok(out)
    }

    /// The `Signature-Input` field value for this signature under `label`.
    pub fn to_field(&self, label: &str) -> Result<String, Error> {
        if sf::key(label).is_none() {
            return Err(super::invalid("a label must be a structured-field key"));
        }
        Ok(format!("{label}={}", self.serialize()?))
    }

    fn from_member(label: &str, member: &Member) -> Result<SignatureParams, String> {
        let Member::Inner(items, params) = member else {
            return Err(format!(
                "the Signature-Input member {label} is not an Inner List"
            ));
        };
        if items.len() > MAX_COMPONENTS {
            return Err(format!("more than {MAX_COMPONENTS} covered components"));
        }
        let mut components = Vec::with_capacity(items.len());
        for item in items {
            let component = Component::from_item(item)?;
            if components.iter().any(|c: &Component| c.same_as(&component)) {
                return Err(format!("{component} is covered twice"));
            }
            components.push(component);
        }
        let mut out = Vec::with_capacity(params.len());
        for (key, value) in params {
            let int = |wrap: fn(i64) -> Param| match value {
                BareItem::Integer(v) if i64::from(*v) >= 0 => Ok(wrap(i64::from(*v))),
                _ => Err(format!("{} must be a non-negative Integer", key.as_str())),
            };
            let text = |wrap: fn(String) -> Param| match value {
                BareItem::String(s) => Ok(wrap(s.as_str().to_string())),
                _ => Err(format!("{} must be a String", key.as_str())),
            };
            out.push(match key.as_str() {
                "created" => int(Param::Created)?,
                "expires" => int(Param::Expires)?,
                "nonce" => text(Param::Nonce)?,
                "alg" => text(Param::Alg)?,
                "keyid" => text(Param::KeyId)?,
                "tag" => text(Param::Tag)?,
                other => return Err(format!("unknown signature parameter {other:?}")),
            });
        }
        Ok(SignatureParams {
            components,
            params: out,
        })
    }
}

/// The signature base of `message` for `params` (§2.5): one line per covered component, then
/// `"@signature-params": ` and the serialized parameters, with no final LF. Refused
/// (`INVALID_ARGUMENT`, naming it) when a component is repeated, absent from the message, or
/// holds a value the base cannot carry (not visible ASCII, a line break).
pub fn signature_base(message: Message<'_>, params: &SignatureParams) -> Result<String, Error> {
    base(message, params).map_err(super::invalid)
}

pub(crate) fn base(message: Message<'_>, params: &SignatureParams) -> Result<String, String> {
    let mut out = String::new();
    for (i, component) in params.components.iter().enumerate() {
        if params.components[..i].iter().any(|c| c.same_as(component)) {
            return Err(format!("{component} is covered twice"));
        }
        let value = component.value(message)?;
        component.write(&mut out);
        out.push_str(": ");
        out.push_str(&value);
        out.push('\n');
    }
    out.push_str("\"@signature-params\": ");
    out.push_str(&params.serialize().map_err(|e| e.message().to_string())?);
    Ok(out)
}

/// The lines of one signature field, combined; `None` when absent, refused when too long.
fn field(headers: &Headers, name: &str) -> Result<Option<Vec<u8>>, Error> {
    match headers.combined(name) {
        Some(value) if value.len() > MAX_SIGNATURE_FIELD_BYTES => Err(malformed(format!(
            "the {name} field is over {MAX_SIGNATURE_FIELD_BYTES} bytes"
        ))),
        other => Ok(other),
    }
}

/// Every signature of `Signature-Input` (label and parameters, in order). An absent field is
/// `SIGNATURE_MISSING`; bad syntax, a repeated label or parameter, an unknown or ill-typed
/// parameter, an identifier against §2.1 is `SIGNATURE_MALFORMED`.
pub fn parse_signature_input(headers: &Headers) -> Result<Vec<(String, SignatureParams)>, Error> {
    let value = field(headers, "signature-input")?
        .ok_or_else(|| missing("the message has no Signature-Input field"))?;
    let dict = sf::dictionary(&value).map_err(|e| malformed(format!("Signature-Input: {e}")))?;
    dict.iter()
        .map(|(label, member)| {
            SignatureParams::from_member(label.as_str(), member)
                .map(|params| (label.as_str().to_string(), params))
                .map_err(|e| malformed(format!("Signature-Input {}: {e}", label.as_str())))
        })
        .collect()
}

/// Every signature of `Signature` (label and bytes, in order). Absent: `SIGNATURE_MISSING`;
/// bad syntax, a repeated label, a member that is not a Byte Sequence without parameters:
/// `SIGNATURE_MALFORMED`. (The length is the algorithm's business: see [`super::verify`].)
pub fn parse_signature(headers: &Headers) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let value = field(headers, "signature")?
        .ok_or_else(|| missing("the message has no Signature field"))?;
    let dict = sf::dictionary(&value).map_err(|e| malformed(format!("Signature: {e}")))?;
    dict.into_iter()
        .map(|(label, member)| match member {
            Member::Item(sf::Item {
                bare: BareItem::ByteSequence(bytes),
                params,
            }) if params.is_empty() => Ok((label.as_str().to_string(), bytes)),
            _ => Err(malformed(format!(
                "Signature {}: not a Byte Sequence without parameters",
                label.as_str()
            ))),
        })
        .collect()
}

/// The `Signature` field value for one signature.
pub fn signature_field(label: &str, signature: &[u8]) -> Result<String, Error> {
    use base64::Engine as _;
    if sf::key(label).is_none() {
        return Err(super::invalid("a label must be a structured-field key"));
    }
    Ok(format!(
        "{label}=:{}:",
        base64::engine::general_purpose::STANDARD.encode(signature)
    ))
}

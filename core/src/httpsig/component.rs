//! Component identifiers (RFC 9421 §2) and their values in a message.

use std::fmt;

use sfv::BareItem;

use super::message::{Message, Request, is_tchar};
use super::sf::{self, Item};

/// The derived components (§2.2) this implementation resolves.
pub const DERIVED: &[&str] = &[
    "@method",
    "@target-uri",
    "@authority",
    "@scheme",
    "@request-target",
    "@path",
    "@query",
    "@query-param",
    "@status",
];

/// Fields whose structured type is known here, for the `sf` flag: all Dictionaries.
const DICTIONARY_FIELDS: &[&str] = &[
    "signature",
    "signature-input",
    "accept-signature",
    "content-digest",
    "repr-digest",
    "want-content-digest",
    "want-repr-digest",
];

/// One parameter of a component identifier (§2.1), in the order written.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ComponentParam {
    /// `sf`: the field re-serialized as a structured field.
    Sf,
    /// `key="k"`: one member of a Dictionary field.
    Key(String),
    /// `bs`: each field line as a Byte Sequence.
    Bs,
    /// `req`: the component of the request a response answers.
    Req,
    /// `name="n"`: the query parameter of `@query-param`.
    Name(String),
}

/// A component identifier: a name (`@method`, `content-digest`) and parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Component {
    name: String,
    params: Vec<ComponentParam>,
}

impl Component {
    /// The identifier `name` without parameters (not checked until used).
    pub fn new(name: &str) -> Component {
        Component {
            name: name.to_string(),
            params: Vec::new(),
        }
    }

    /// With `;req`.
    pub fn req(mut self) -> Component {
        self.params.push(ComponentParam::Req);
        self
    }

    /// With `;key="key"`.
    pub fn key(mut self, key: &str) -> Component {
        self.params.push(ComponentParam::Key(key.to_string()));
        self
    }

    /// With `;name="name"` (for `@query-param`, the name as it is percent-encoded in the base).
    pub fn query_name(mut self, name: &str) -> Component {
        self.params.push(ComponentParam::Name(name.to_string()));
        self
    }

    /// With `;sf`.
    pub fn sf(mut self) -> Component {
        self.params.push(ComponentParam::Sf);
        self
    }

    /// With `;bs`.
    pub fn bs(mut self) -> Component {
        self.params.push(ComponentParam::Bs);
        self
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The parameters, in order.
    pub fn params(&self) -> &[ComponentParam] {
        &self.params
    }

    /// Whether it is a derived component (`@...`).
    pub fn is_derived(&self) -> bool {
        self.name.starts_with('@')
    }

    /// Whether it names the same component as `other` (the same name and the same set of
    /// parameters, in any order: §2.5 forbids covering one twice).
    pub fn same_as(&self, other: &Component) -> bool {
        let mut a = self.params.clone();
        let mut b = other.params.clone();
        a.sort();
        b.sort();
        self.name == other.name && a == b
    }

    /// Reads one identifier as written in `Signature-Input` (`"@query-param";name="a"`).
    pub fn parse(text: &str) -> Result<Component, String> {
        Component::from_item(&sf::item(text.as_bytes())?)
    }

    pub(crate) fn from_item(item: &Item) -> Result<Component, String> {
        let BareItem::String(name) = &item.bare else {
            return Err("a component identifier must be a String".to_string());
        };
        let mut params = Vec::with_capacity(item.params.len());
        for (key, value) in &item.params {
            let flag = |param: ComponentParam| match value {
                BareItem::Boolean(true) => Ok(param),
                _ => Err(format!(
                    "the component parameter {} must be ?1",
                    key.as_str()
                )),
            };
            let text = |wrap: fn(String) -> ComponentParam| match value {
                BareItem::String(s) => Ok(wrap(s.as_str().to_string())),
                _ => Err(format!(
                    "the component parameter {} must be a String",
                    key.as_str()
                )),
            };
            params.push(match key.as_str() {
                "sf" => flag(ComponentParam::Sf)?,
                "bs" => flag(ComponentParam::Bs)?,
                "req" => flag(ComponentParam::Req)?,
                "key" => text(ComponentParam::Key)?,
                "name" => text(ComponentParam::Name)?,
                "tr" => return Err("trailer components (tr) are not supported".to_string()),
                other => return Err(format!("unknown component parameter {other:?}")),
            });
        }
        let component = Component {
            name: name.as_str().to_string(),
            params,
        };
        component.check()?;
        Ok(component)
    }

    /// The rules of §2.1 and §2.2 on names and parameters.
    pub(crate) fn check(&self) -> Result<(), String> {
        let has = |p: fn(&ComponentParam) -> bool| self.params.iter().filter(|x| p(x)).count();
        let names = has(|p| matches!(p, ComponentParam::Name(_)));
        let keys = has(|p| matches!(p, ComponentParam::Key(_)));
        let sfs = has(|p| matches!(p, ComponentParam::Sf));
        let bss = has(|p| matches!(p, ComponentParam::Bs));
        let reqs = has(|p| matches!(p, ComponentParam::Req));
        if names > 1 || keys > 1 || sfs > 1 || bss > 1 || reqs > 1 {
            return Err(format!("{self}: a parameter is repeated"));
        }
        if self.is_derived() {
            if !DERIVED.contains(&self.name.as_str()) {
                return Err(format!("unknown derived component {:?}", self.name));
            }
            if keys + sfs + bss > 0 {
                return Err(format!("{self}: sf, key and bs apply to fields only"));
            }
            if (self.name == "@query-param") != (names == 1) {
                return Err(format!(
                    "{self}: name goes with @query-param, and only there"
                ));
            }
            if self.name == "@status" && reqs > 0 {
                return Err("@status has no request form".to_string());
            }
        } else {
            let lowercase_token = !self.name.is_empty()
                && self
                    .name
                    .bytes()
                    .all(|b| is_tchar(b) && !b.is_ascii_uppercase());
            if !lowercase_token {
                return Err(format!("{:?} is not a lowercase field name", self.name));
            }
            if names > 0 {
                return Err(format!("{self}: name goes with @query-param only"));
            }
            if bss > 0 && (sfs + keys) > 0 {
                return Err(format!("{self}: bs excludes sf and key"));
            }
            if sfs > 0 && !DICTIONARY_FIELDS.contains(&self.name.as_str()) {
                return Err(format!(
                    "{self}: the structured type of this field is not known"
                ));
            }
        }
        Ok(())
    }

    /// The serialized identifier, as it appears in the base and in `Signature-Input`.
    pub fn serialize(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    pub(crate) fn write(&self, out: &mut String) {
        write_quoted(out, &self.name);
        for param in &self.params {
            match param {
                ComponentParam::Sf => out.push_str(";sf"),
                ComponentParam::Bs => out.push_str(";bs"),
                ComponentParam::Req => out.push_str(";req"),
                ComponentParam::Key(key) => {
                    out.push_str(";key=");
                    write_quoted(out, key);
                }
                ComponentParam::Name(name) => {
                    out.push_str(";name=");
                    write_quoted(out, name);
                }
            }
        }
    }

    /// The component's value in `message` (§2.1, §2.2), or why it has none.
    pub(crate) fn value(&self, message: Message<'_>) -> Result<String, String> {
        self.check()?;
        let req = self.params.contains(&ComponentParam::Req);
        let (headers, request) = match (message, req) {
            (Message::Request(_), true) => {
                return Err(format!("{self}: req is for a response's signature"));
            }
            (Message::Request(request), false) => (&request.headers, Some(request)),
            (Message::Response { request: None, .. }, true) => {
                return Err(format!("{self}: the request is not known"));
            }
            (
                Message::Response {
                    request: Some(r), ..
                },
                true,
            ) => (&r.headers, Some(r)),
            (Message::Response { response, .. }, false) => (&response.headers, None),
        };
        if !self.is_derived() {
            return self.field_value(headers);
        }
        if self.name == "@status" {
            return match message {
                Message::Response { response, .. } => Ok(response.status().to_string()),
                Message::Request(_) => Err("@status is a response component".to_string()),
            };
        }
        let Some(request) = request else {
            return Err(format!(
                "{self} is a request component (a response needs ;req)"
            ));
        };
        derived(self, request)
    }

    fn field_value(&self, headers: &super::message::Headers) -> Result<String, String> {
        let lines: Vec<&[u8]> = headers.values(&self.name).collect();
        if lines.is_empty() {
            return Err(format!("the message has no {} field", self.name));
        }
        if self.params.contains(&ComponentParam::Bs) {
            use base64::Engine as _;
            let parts: Vec<String> = lines
                .iter()
                .map(|line| {
                    let trimmed = trim(line);
                    format!(
                        ":{}:",
                        base64::engine::general_purpose::STANDARD.encode(trimmed)
                    )
                })
                .collect();
            return Ok(parts.join(", "));
        }
        let mut joined = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            if i > 0 {
                joined.extend_from_slice(b", ");
            }
            joined.extend_from_slice(trim(line));
        }
        if let Some(bad) = joined
            .iter()
            .find(|&&b| !(b == b'\t' || (0x20..0x7f).contains(&b)))
        {
            return Err(format!(
                "the {} field holds byte 0x{bad:02x} (not visible ASCII)",
                self.name
            ));
        }
        let text = String::from_utf8(joined).map_err(|_| "not ASCII".to_string())?;
        let key = self.params.iter().find_map(|p| match p {
            ComponentParam::Key(key) => Some(key.as_str()),
            _ => None,
        });
        if key.is_none() && !self.params.contains(&ComponentParam::Sf) {
            return Ok(text);
        }
        let dict = sf::dictionary(text.as_bytes()).map_err(|e| format!("{}: {e}", self.name))?;
        let mut out = String::new();
        match key {
            Some(key) => {
                let (_, member) = dict
                    .iter()
                    .find(|(k, _)| k.as_str() == key)
                    .ok_or_else(|| format!("the {} field has no member {key:?}", self.name))?;
                sf::write_member(&mut out, member);
            }
            None => sf::write_dictionary(&mut out, &dict),
        }
        Ok(out)
    }
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.serialize())
    }
}

fn derived(component: &Component, request: &Request) -> Result<String, String> {
    let target = request.target();
    Ok(match component.name.as_str() {
        "@method" => request.method().to_string(),
        "@target-uri" => target.uri(),
        "@authority" => target.authority(),
        "@scheme" => target.scheme().to_string(),
        "@request-target" => target.request_target(),
        "@path" => target.path().to_string(),
        "@query" => target.query(),
        "@query-param" => {
            let wanted = component
                .params
                .iter()
                .find_map(|p| match p {
                    ComponentParam::Name(name) => Some(name.as_str()),
                    _ => None,
                })
                .unwrap_or_default();
            query_param(target.raw_query().unwrap_or(""), wanted)?
        }
        other => return Err(format!("unknown derived component {other:?}")),
    })
}

/// `@query-param;name=wanted` (§2.2.8): the query parsed as `application/x-www-form-urlencoded`,
/// names and values re-encoded with that percent-encode set (space as `%20`); a name present
/// twice, or absent, has no value.
fn query_param(query: &str, wanted: &str) -> Result<String, String> {
    let mut found = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        if reencode(name) != wanted {
            continue;
        }
        if found.is_some() {
            return Err(format!(
                "the query parameter {wanted:?} appears more than once"
            ));
        }
        found = Some(reencode(value));
    }
    found.ok_or_else(|| format!("the query has no parameter {wanted:?}"))
}

fn reencode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match bytes[i] {
            b'+' => decoded.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    decoded.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => decoded.push(b'%'),
            },
            b => decoded.push(b),
        }
        i += 1;
    }
    // WHATWG decodes the bytes as UTF-8 (invalid sequences become U+FFFD) before re-encoding.
    let text = String::from_utf8_lossy(&decoded);
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"*-._".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Strips leading and trailing spaces and tabs.
fn trim(line: &[u8]) -> &[u8] {
    let start = line.iter().position(|b| !matches!(b, b' ' | b'\t'));
    let end = line.iter().rposition(|b| !matches!(b, b' ' | b'\t'));
    match (start, end) {
        (Some(s), Some(e)) => &line[s..=e],
        _ => &[],
    }
}

/// Appends `text` as an sf-string (`"` and `\` escaped). Names and keys reach here only after
/// [`Component::check`] or from an sf-string, so they are printable ASCII.
fn write_quoted(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::httpsig::message::Response;

    fn req(uri: &str) -> Request {
        Request::new("POST", uri).unwrap()
    }

    fn value(c: &str, r: &Request) -> Result<String, String> {
        Component::parse(c).unwrap().value(Message::Request(r))
    }

    #[test]
    fn query_params_as_the_rfc_reencodes_them() {
        let r = req(
            "https://h/parameters?var=this%20is%20a%20big%0Amultiline%20value&\
             bar=with+plus+whitespace&fa%C3%A7ade%22%3A%20=something",
        );
        assert_eq!(
            value(r#""@query-param";name="var""#, &r).unwrap(),
            "this%20is%20a%20big%0Amultiline%20value"
        );
        assert_eq!(
            value(r#""@query-param";name="bar""#, &r).unwrap(),
            "with%20plus%20whitespace"
        );
        assert_eq!(
            value(r#""@query-param";name="fa%C3%A7ade%22%3A%20""#, &r).unwrap(),
            "something"
        );
        let r = req("https://h/path?param=value&foo=bar&baz=batman&qux=");
        assert_eq!(value(r#""@query-param";name="qux""#, &r).unwrap(), "");
        assert_eq!(value(r#""@query-param";name="baz""#, &r).unwrap(), "batman");
        assert!(value(r#""@query-param";name="nope""#, &r).is_err());
        let r = req("https://h/p?a=1&a=2");
        assert!(value(r#""@query-param";name="a""#, &r).is_err());
        assert_eq!(reencode("%zz%4"), "%25zz%254");
    }

    #[test]
    fn fields_are_trimmed_joined_and_must_be_ascii() {
        let r = req("https://h/")
            .with_header("X-List", "  a ")
            .with_header("x-list", "b\t")
            .with_header("x-bad", b"caf\xc3\xa9".to_vec())
            .with_header("x-nl", "a\nb")
            .with_header("x-dict", "a=1, b=(\"x\" \"y\");p")
            .with_header("signature", "sig=:AAE=:, x=:AA==:");
        assert_eq!(value(r#""x-list""#, &r).unwrap(), "a, b");
        assert_eq!(value(r#""x-list";bs"#, &r).unwrap(), ":YQ==:, :Yg==:");
        assert!(value(r#""x-bad""#, &r).unwrap_err().contains("0xc3"));
        assert!(value(r#""x-nl""#, &r).is_err());
        assert_eq!(value(r#""x-bad";bs"#, &r).unwrap(), ":Y2Fmw6k=:");
        assert_eq!(value(r#""x-dict";key="b""#, &r).unwrap(), "(\"x\" \"y\");p");
        assert!(value(r#""x-dict";key="c""#, &r).is_err());
        assert_eq!(
            value(r#""signature";sf"#, &r).unwrap(),
            "sig=:AAE=:, x=:AA==:"
        );
        assert!(Component::parse(r#""x-dict";sf"#).is_err());
        assert!(value(r#""x-missing""#, &r).is_err());
    }

    #[test]
    fn identifiers_follow_the_rules() {
        for bad in [
            r#""Content-Type""#,
            r#""@foo""#,
            r#""@query-param""#,
            r#""@method";name="x""#,
            r#""x";bs;sf"#,
            r#""x";tr"#,
            r#""x";req=?0"#,
            r#""x";zz"#,
            r#""@status";req"#,
            r#"token"#,
            r#""@signature-params""#,
            r#""""#,
        ] {
            assert!(Component::parse(bad).is_err(), "{bad}");
        }
        let c = Component::parse(r#""signature";req;key="a2a""#).unwrap();
        assert_eq!(c, Component::new("signature").req().key("a2a"));
        assert_eq!(c.serialize(), r#""signature";req;key="a2a""#);
        assert!(c.same_as(&Component::new("signature").key("a2a").req()));
    }

    #[test]
    fn request_and_response_components() {
        let r = req("https://h/p");
        let resp = Response::new(200).unwrap();
        let msg = Message::Response {
            response: &resp,
            request: Some(&r),
        };
        let c = |s: &str| Component::parse(s).unwrap();
        assert_eq!(c(r#""@status""#).value(msg).unwrap(), "200");
        assert_eq!(c(r#""@method";req"#).value(msg).unwrap(), "POST");
        assert!(c(r#""@method""#).value(msg).is_err());
        assert!(c(r#""@status""#).value(Message::Request(&r)).is_err());
        assert!(c(r#""@path";req"#).value(Message::Request(&r)).is_err());
        let alone = Message::Response {
            response: &resp,
            request: None,
        };
        assert!(c(r#""@method";req"#).value(alone).is_err());
    }
}

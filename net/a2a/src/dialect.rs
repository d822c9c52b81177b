//! The A2A protocol versions the service speaks, and which one a request's `A2A-Version` header
//! asks for. A leaf: the wire shapes (`wire.rs`), the errors (`errors.rs`) and the dispatch
//! (`rpc.rs`) all depend on the version, and it on none of them.

/// An A2A protocol version: the shapes and method names of a request and its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// A2A 1.0 (`SendMessage`, `TASK_STATE_*`, `ROLE_USER`, parts without `kind`).
    V1,
    /// A2A 0.3 (`message/send`, `kind` members, `role: "user"`, kebab-case states).
    V03,
    /// A2A 0.1 (`tasks/send`, the client's task id, `sessionId`, parts with `type`).
    V01,
}

impl Dialect {
    /// The version's name ("1.0", "0.3", "0.1").
    pub const fn as_str(self) -> &'static str {
        match self {
            Dialect::V1 => "1.0",
            Dialect::V03 => "0.3",
            Dialect::V01 => "0.1",
        }
    }
}

/// The versions the `A2A-Version` header may name (`Major.Minor`; a patch is ignored).
pub const SUPPORTED_VERSIONS: &[&str] = &["1.0", "0.3"];

/// The version an `A2A-Version` header asks for: empty or absent is 0.3 (A2A 1.0 §3.6.2),
/// `1.0` and `0.3` with or without a patch number; anything else is unsupported (`None`).
pub fn header_version(value: Option<&str>) -> Option<Dialect> {
    let value = value.unwrap_or("").trim();
    if value.is_empty() {
        return Some(Dialect::V03);
    }
    let mut parts = value.split('.');
    let (major, minor) = (parts.next()?, parts.next()?);
    let patch_ok = match parts.next() {
        None => true,
        Some(p) => !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()),
    };
    if !patch_ok || parts.next().is_some() {
        return None;
    }
    match (major, minor) {
        ("1", "0") => Some(Dialect::V1),
        ("0", "3") => Some(Dialect::V03),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_header_names_1_0_or_0_3_and_empty_is_0_3() {
        assert_eq!(header_version(None), Some(Dialect::V03));
        assert_eq!(header_version(Some(" ")), Some(Dialect::V03));
        assert_eq!(header_version(Some("1.0")), Some(Dialect::V1));
        assert_eq!(header_version(Some("1.0.1")), Some(Dialect::V1));
        assert_eq!(header_version(Some("0.3")), Some(Dialect::V03));
        assert_eq!(header_version(Some("0.3.0")), Some(Dialect::V03));
        for bad in [
            "2.0", "1.1", "0.2", "1", "1.0.", "1.0.x", "1.0.0.0", "v1.0", "0.3-rc",
        ] {
            assert_eq!(header_version(Some(bad)), None, "{bad}");
        }
    }
}

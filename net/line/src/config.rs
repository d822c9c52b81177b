//! The public configuration file (`--config ABS`): exactly `workload_id`, `signing_key_id` and
//! `policy`. It holds nothing secret: a database URL, a key or a credential in it is an unknown
//! member and refused.

use std::path::Path;

use agent_intercom_core::canonical;

use crate::policy::{self, PeerPolicy};
use crate::{Code, LineError, absolute_path};

/// The members of the configuration.
pub const MEMBERS: &[&str] = &["workload_id", "signing_key_id", "policy"];
/// The largest configuration file read, in bytes.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
/// The longest signing key id, in bytes.
pub const MAX_KEY_ID_BYTES: usize = 128;

/// A checked public configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicConfig {
    /// The local workload's UUID (the audience peers sign for).
    pub workload_id: String,
    /// The `keyid` requests are signed with (a label: nothing is keyed by it).
    pub signing_key_id: String,
    /// The policy.
    pub policy: PeerPolicy,
}

fn invalid(field: &str, why: &str) -> LineError {
    LineError::new(Code::ConfigInvalid, format!("{field}: {why}")).with("field", field)
}

/// A signing key id: 1 to 128 bytes of printable ASCII without spaces, quotes or backslashes
/// (it is written inside a structured-field string).
pub fn check_key_id(text: &str) -> Result<(), &'static str> {
    if text.is_empty()
        || text.len() > MAX_KEY_ID_BYTES
        || !text
            .bytes()
            .all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\')
    {
        return Err(
            "must be 1 to 128 bytes of printable ASCII without spaces, quotes or backslashes",
        );
    }
    Ok(())
}

impl PublicConfig {
    /// Checks configuration text. Duplicate members, fractions and unsafe integers are refused
    /// by the canonical JSON parser.
    pub fn from_json(text: &str) -> Result<PublicConfig, LineError> {
        let value = canonical::parse(text).map_err(|e| invalid("$", e.message()))?;
        // Encoding finds what parsing lets through: a member given twice.
        canonical::canonical_json(&value).map_err(|e| invalid("$", e.message()))?;
        let v = policy::exact_members(&value, MEMBERS, "$", invalid)?;
        let workload_id = v[0]
            .as_str()
            .filter(|s| policy::check_uuid(s).is_ok())
            .ok_or_else(|| invalid("$.workload_id", "must be a UUID, lowercase and hyphenated"))?;
        let signing_key_id = v[1]
            .as_str()
            .ok_or_else(|| invalid("$.signing_key_id", "must be a string"))?;
        check_key_id(signing_key_id).map_err(|why| invalid("$.signing_key_id", why))?;
        let policy = PeerPolicy::from_value(v[2], "policy")?;
        Ok(PublicConfig {
            workload_id: workload_id.to_string(),
            signing_key_id: signing_key_id.to_string(),
            policy,
        })
    }

    /// Reads and checks the configuration at an absolute path.
    pub fn load(path_text: &str) -> Result<PublicConfig, LineError> {
        let path = absolute_path("--config", path_text)?;
        PublicConfig::from_json(&read_text(&path)?)
    }
}

fn read_text(path: &Path) -> Result<String, LineError> {
    use std::io::Read;
    let file = std::fs::File::open(path)
        .map_err(|e| invalid("--config", &format!("cannot open the configuration: {e}")))?;
    let mut text = String::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|_| invalid("--config", "the configuration is not UTF-8 text"))?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(invalid(
            "--config",
            "the configuration is larger than 1 MiB",
        ));
    }
    Ok(text)
}

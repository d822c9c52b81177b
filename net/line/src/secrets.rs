//! The two identities: the operator's local-access credential and the workload's Ed25519
//! signing key, each from its own private file named by an absolute path in the environment.
//!
//! Both files are read the same careful way (no symbolic link followed, a regular file of this
//! user that group and others cannot read or write, at most [`MAX_SECRET_FILE_BYTES`]) and then
//! compared: the same file or the same bytes for both is `identity_conflation`. Only then is each
//! checked for its kind. Nothing here prints, logs or returns a secret: the credential is kept
//! as a domain-separated SHA-256 digest, the key as the signing key itself, and `Debug` shows
//! neither.

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use agent_intercom_core::httpsig::SigningKey;
use sha2::{Digest, Sha256};

use crate::{Code, LineError, OPERATOR_CREDENTIAL_ENV, SIGNING_KEY_ENV, absolute_path};

/// The largest secret file read, in bytes.
pub const MAX_SECRET_FILE_BYTES: u64 = 16 * 1024;
/// The shortest operator credential, in bytes (after one trailing newline is removed).
pub const MIN_CREDENTIAL_BYTES: usize = 32;
/// The longest operator credential, in bytes.
pub const MAX_CREDENTIAL_BYTES: usize = 4096;
/// The prefix hashed before the credential: its digest is of no use elsewhere.
const CREDENTIAL_DOMAIN: &[u8] = b"agent-intercom-line operator-credential v1\n";

/// The operator credential, kept only as its digest.
#[derive(Clone, PartialEq, Eq)]
pub struct OperatorCredential {
    digest: [u8; 32],
}

impl std::fmt::Debug for OperatorCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OperatorCredential(..)")
    }
}

impl OperatorCredential {
    /// The digest the host stores and a session compares.
    pub fn digest(&self) -> [u8; 32] {
        self.digest
    }

    /// Whether `stored` is this credential's digest (compared in constant time).
    pub fn matches(&self, stored: &[u8]) -> bool {
        stored.len() == 32
            && stored
                .iter()
                .zip(self.digest)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

/// The workload's signing key and the fingerprint of its public half.
#[derive(Clone)]
pub struct WorkloadKey {
    key: SigningKey,
    public: [u8; 32],
}

impl std::fmt::Debug for WorkloadKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WorkloadKey(public {})", hex(&self.public))
    }
}

impl WorkloadKey {
    /// The key that signs requests.
    pub fn signing_key(&self) -> &SigningKey {
        &self.key
    }

    /// The raw Ed25519 public key.
    pub fn public_key(&self) -> [u8; 32] {
        self.public
    }

    /// SHA-256 of the raw public key, hex: what an enrollment pins (never the key id).
    pub fn fingerprint(&self) -> String {
        hex(&Sha256::digest(self.public))
    }
}

/// Both identities, read and checked.
#[derive(Debug)]
pub struct Identities {
    /// The operator's credential.
    pub operator: OperatorCredential,
    /// The workload's key.
    pub workload: WorkloadKey,
}

/// A secret file's bytes and identity on disk.
struct SecretFile {
    bytes: Vec<u8>,
    dev: u64,
    ino: u64,
}

/// Reads both identities from the environment (`env` looks a variable up): the credential and
/// the key must each be named, absolute, private files, distinct in identity and content, and
/// each of its kind.
pub fn load(env: &dyn Fn(&str) -> Option<OsString>) -> Result<Identities, LineError> {
    let credential = secret_file(
        env,
        OPERATOR_CREDENTIAL_ENV,
        Code::CredentialMissing,
        Code::CredentialInvalid,
    )?;
    let key = secret_file(
        env,
        SIGNING_KEY_ENV,
        Code::SigningKeyMissing,
        Code::SigningKeyInvalid,
    )?;
    if (credential.dev, credential.ino) == (key.dev, key.ino) || credential.bytes == key.bytes {
        return Err(LineError::new(
            Code::IdentityConflation,
            "the operator credential and the workload signing key must be separate files with \
             different contents",
        ));
    }
    Ok(Identities {
        operator: credential_of(&credential.bytes)?,
        workload: workload_key_of(&key.bytes)?,
    })
}

/// Reads only the operator credential (the host's `set-operator-credential`).
pub fn load_credential(
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Result<OperatorCredential, LineError> {
    let file = secret_file(
        env,
        OPERATOR_CREDENTIAL_ENV,
        Code::CredentialMissing,
        Code::CredentialInvalid,
    )?;
    credential_of(&file.bytes)
}

/// The credential of a file's bytes: one trailing newline removed, 32 to 4096 bytes, and not a
/// key (a PEM block is the wrong kind of secret).
pub fn credential_of(bytes: &[u8]) -> Result<OperatorCredential, LineError> {
    let body = bytes
        .strip_suffix(b"\r\n")
        .or_else(|| bytes.strip_suffix(b"\n"))
        .unwrap_or(bytes);
    let refuse = |why: &str| Err(LineError::new(Code::CredentialInvalid, why.to_string()));
    if body.len() < MIN_CREDENTIAL_BYTES || body.len() > MAX_CREDENTIAL_BYTES {
        return refuse(
            "the operator credential must be 32 to 4096 bytes (e.g. `openssl rand -base64 32`)",
        );
    }
    if body.windows(10).any(|w| w == b"-----BEGIN") {
        return refuse("the operator credential file holds a PEM block: a key is not a credential");
    }
    let mut hasher = Sha256::new();
    hasher.update(CREDENTIAL_DOMAIN);
    hasher.update(body);
    Ok(OperatorCredential {
        digest: hasher.finalize().into(),
    })
}

/// The workload key of a file's bytes: PEM text with one Ed25519 PKCS#8 `PRIVATE KEY` block.
pub fn workload_key_of(bytes: &[u8]) -> Result<WorkloadKey, LineError> {
    let invalid = || {
        LineError::new(
            Code::SigningKeyInvalid,
            "the workload signing key must be an Ed25519 PKCS#8 PEM private key",
        )
    };
    let text = std::str::from_utf8(bytes).map_err(|_| invalid())?;
    let key = SigningKey::from_pem(text).map_err(|_| invalid())?;
    let public = key.public_key().to_bytes();
    Ok(WorkloadKey { key, public })
}

/// Opens and reads one secret file named by `var`.
fn secret_file(
    env: &dyn Fn(&str) -> Option<OsString>,
    var: &str,
    missing: Code,
    invalid: Code,
) -> Result<SecretFile, LineError> {
    let value = env(var).filter(|v| !v.is_empty()).ok_or_else(|| {
        LineError::new(
            missing,
            format!("{var} must name the file (an absolute path)"),
        )
    })?;
    let text = value
        .to_str()
        .ok_or_else(|| LineError::new(invalid, format!("{var} must be valid UTF-8")))?;
    let path = absolute_path(var, text)?;
    read_private(&path, var, missing, invalid)
}

fn read_private(
    path: &Path,
    var: &str,
    missing: Code,
    invalid: Code,
) -> Result<SecretFile, LineError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => LineError::new(
                invalid,
                format!("{var} names a symbolic link (never followed)"),
            ),
            _ => LineError::new(missing, format!("cannot open the file {var} names: {e}")),
        })?;
    let meta = file.metadata().map_err(|e| {
        LineError::new(missing, format!("cannot inspect the file {var} names: {e}"))
    })?;
    let refuse = |why: String| {
        Err(LineError::new(
            invalid,
            format!("the file {var} names {why}"),
        ))
    };
    if !meta.is_file() {
        return refuse("is not a regular file".into());
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    if meta.uid() != unsafe { libc::geteuid() } {
        return refuse("is owned by another user".into());
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o077 != 0 {
        return refuse(format!(
            "has mode {mode:04o}: a secret must not be readable or writable by group or others \
             (chmod 600 it)"
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_SECRET_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| LineError::new(missing, format!("cannot read the file {var} names: {e}")))?;
    if bytes.len() as u64 > MAX_SECRET_FILE_BYTES {
        return refuse(format!("is larger than {MAX_SECRET_FILE_BYTES} bytes"));
    }
    Ok(SecretFile {
        bytes,
        dev: meta.dev(),
        ino: meta.ino(),
    })
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

//! The keys directory: this machine's own signing keys and HMAC secrets and its peers' public
//! keys, by key id, as the [`Keyring`] envelope verification looks keys up in.
//!
//! Where it is: `--keys DIR`, else `$AGENT_INTERCOM_KEYS_DIR`, else `agent-intercom-keys` beside
//! the scratchpad's default store ([`default_dir`]). The directory is 0700 and owned by this
//! user; a directory that is a symbolic link, owned by another user or open to group or others
//! is refused, never used. One file per key, named by its id:
//!
//! | file | holds | mode |
//! | --- | --- | --- |
//! | `<id>.ed25519.key` | an own Ed25519 private key, PKCS#8 PEM | 0600 |
//! | `<id>.hmac.key` | an HMAC secret, base64 of at least 32 bytes and a newline | 0600 |
//! | `<id>.ed25519.pub` | a peer's Ed25519 public key, SPKI PEM | 0644 |
//!
//! A key id is 1 to 128 characters of `A-Z a-z 0-9 . _ -`, starting with a letter or digit, and
//! names one key (one file). Every file is opened without following a symbolic link
//! (`O_NOFOLLOW`) and checked on the open descriptor: a regular file owned by this user, at most
//! 16 KiB; a secret file readable or writable by group or others, and a public key file writable
//! by them, are refused, never read. An own key verifies too (its public half), so envelopes
//! sent from this directory are accepted by a service using it.
//!
//! Every refusal to use the directory or a file is `STORE_IO`, naming it; a key id that does not
//! fit is `INVALID_ARGUMENT`; a key that is not there is `NOT_FOUND`.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use agent_intercom_core::envelope::{Keyring, SignatureKind, Signer, keys};
use agent_intercom_core::{Error, ErrorCode};

/// The variable naming the keys directory.
pub const KEYS_DIR_ENV: &str = "AGENT_INTERCOM_KEYS_DIR";
/// The keys directory's name beside the scratchpad's default store.
pub const DEFAULT_DIR_NAME: &str = "agent-intercom-keys";
/// The mode of the keys directory.
pub const DIR_MODE: u32 = 0o700;
/// The mode of a secret file (an own private key, an HMAC secret).
pub const SECRET_FILE_MODE: u32 = 0o600;
/// The mode of a public key file.
pub const PUBLIC_FILE_MODE: u32 = 0o644;
/// The largest key file read.
pub const MAX_KEY_FILE_BYTES: u64 = 16 * 1024;
/// The longest key id of the directory.
pub const MAX_KEY_ID_CHARS: usize = 128;

/// The default keys directory: `$AGENT_INTERCOM_KEYS_DIR` (blanks around it ignored, a blank
/// value counts as unset, a relative path is resolved against the current directory), else
/// [`DEFAULT_DIR_NAME`] in the directory of the scratchpad's default store
/// (`agent_intercom_scratchpad::default_path`, which `agent_dir` feeds).
pub fn default_dir(
    env: &dyn Fn(&str) -> Option<String>,
    agent_dir: impl FnOnce() -> PathBuf,
) -> PathBuf {
    agent_intercom_scratchpad::paths::path_from_env(env, KEYS_DIR_ENV).unwrap_or_else(|| {
        let store = agent_intercom_scratchpad::default_path(env, agent_dir);
        store
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
            .join(DEFAULT_DIR_NAME)
    })
}

/// The three kinds of key file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FileKind {
    OwnEd25519,
    Hmac,
    PeerEd25519,
}

impl FileKind {
    const ALL: [FileKind; 3] = [FileKind::OwnEd25519, FileKind::Hmac, FileKind::PeerEd25519];

    fn suffix(self) -> &'static str {
        match self {
            FileKind::OwnEd25519 => ".ed25519.key",
            FileKind::Hmac => ".hmac.key",
            FileKind::PeerEd25519 => ".ed25519.pub",
        }
    }

    fn secret(self) -> bool {
        self != FileKind::PeerEd25519
    }

    fn signature_kind(self) -> SignatureKind {
        match self {
            FileKind::Hmac => SignatureKind::HmacSha256,
            _ => SignatureKind::Ed25519,
        }
    }
}

/// One key of the directory, as `keys list` shows it (never a secret).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyInfo {
    /// The key id.
    pub id: String,
    /// Its kind.
    pub kind: SignatureKind,
    /// Whether it is this machine's own (a private key or a secret) rather than a peer's.
    pub own: bool,
    /// The Ed25519 public key's fingerprint (`sha256:<hex of the SPKI DER>`).
    pub fingerprint: Option<String>,
    /// Why the file cannot be used, when it cannot.
    pub problem: Option<String>,
}

/// An open keys directory.
#[derive(Clone, Debug)]
pub struct KeyDir {
    dir: PathBuf,
}

fn store_io(message: String) -> Error {
    Error::new(ErrorCode::StoreIo, message)
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Checks a key id of the directory.
pub fn check_key_id(id: &str) -> Result<(), Error> {
    let ok = id.len() <= MAX_KEY_ID_CHARS
        && id.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::InvalidArgument,
            format!(
                "a key id is 1 to {MAX_KEY_ID_CHARS} characters of A-Z a-z 0-9 . _ -, starting \
                 with a letter or digit"
            ),
        ))
    }
}

impl KeyDir {
    /// The directory at `dir`, checked when it exists (a missing one holds no keys).
    pub fn open(dir: &Path) -> Result<KeyDir, Error> {
        let keys = KeyDir {
            dir: dir.to_path_buf(),
        };
        match std::fs::symlink_metadata(dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(keys),
            Err(e) => Err(store_io(format!(
                "cannot inspect the keys directory {}: {e}",
                dir.display()
            ))),
            Ok(meta) => keys.check_dir(&meta).map(|()| keys),
        }
    }

    /// The directory at `dir`, created (0700) when missing. Its parent must exist: no directory
    /// the caller did not name is created.
    pub fn create(dir: &Path) -> Result<KeyDir, Error> {
        match std::fs::DirBuilder::new().mode(DIR_MODE).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(store_io(format!(
                    "cannot create the keys directory {}: {e}",
                    dir.display()
                )));
            }
        }
        KeyDir::open(dir)
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    fn check_dir(&self, meta: &std::fs::Metadata) -> Result<(), Error> {
        let refuse = |why: &str| {
            Err(store_io(format!(
                "refusing the keys directory {}: {why}",
                self.dir.display()
            )))
        };
        if meta.file_type().is_symlink() {
            return refuse("it is a symbolic link");
        }
        if !meta.is_dir() {
            return refuse("it is not a directory");
        }
        if meta.uid() != euid() {
            return refuse("it is owned by another user");
        }
        if meta.mode() & 0o077 != 0 {
            return refuse(&format!(
                "its mode is {:04o}; it must be 0700 (chmod 700 it)",
                meta.mode() & 0o7777
            ));
        }
        Ok(())
    }

    /// Checks the directory again (it may have changed since it was opened); `false` when it
    /// does not exist.
    fn recheck(&self) -> Result<bool, Error> {
        match std::fs::symlink_metadata(&self.dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(store_io(format!(
                "cannot inspect the keys directory {}: {e}",
                self.dir.display()
            ))),
            Ok(meta) => self.check_dir(&meta).map(|()| true),
        }
    }

    fn file(&self, id: &str, kind: FileKind) -> PathBuf {
        self.dir.join(format!("{id}{}", kind.suffix()))
    }

    /// The content of a key file, or `None` when there is none; refused when unsafe.
    fn read(&self, id: &str, kind: FileKind) -> Result<Option<String>, Error> {
        if !self.recheck()? {
            return Ok(None);
        }
        let path = self.file(id, kind);
        let opened = OpenOptions::new()
            .read(true)
            // O_NONBLOCK: a planted FIFO cannot block the open; it is refused just below.
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
            .open(&path);
        let file = match opened {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(store_io(format!(
                    "refusing the key file {}: it is a symbolic link (never followed)",
                    path.display()
                )));
            }
            Err(e) => {
                return Err(store_io(format!("cannot open {}: {e}", path.display())));
            }
        };
        let meta = file
            .metadata()
            .map_err(|e| store_io(format!("cannot inspect {}: {e}", path.display())))?;
        check_file(&path, &meta, kind)?;
        let mut text = String::new();
        let read = file
            .take(MAX_KEY_FILE_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| store_io(format!("cannot read {}: {e}", path.display())))?;
        if read as u64 > MAX_KEY_FILE_BYTES {
            return Err(store_io(format!(
                "refusing the key file {}: larger than {MAX_KEY_FILE_BYTES} bytes",
                path.display()
            )));
        }
        Ok(Some(text))
    }

    /// Writes a new key file (refused if any key has this id).
    fn write(&self, id: &str, kind: FileKind, content: &str) -> Result<(), Error> {
        check_key_id(id)?;
        if !self.recheck()? {
            return Err(store_io(format!(
                "the keys directory {} does not exist",
                self.dir.display()
            )));
        }
        if let Some(other) = FileKind::ALL
            .into_iter()
            .find(|k| std::fs::symlink_metadata(self.file(id, *k)).is_ok())
        {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "a key named {id} already exists ({}); remove it first to replace it",
                    self.file(id, other).display()
                ),
            ));
        }
        let path = self.file(id, kind);
        let mode = if kind.secret() {
            SECRET_FILE_MODE
        } else {
            PUBLIC_FILE_MODE
        };
        // O_EXCL never follows or replaces anything already there.
        let mut file: File = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| store_io(format!("cannot create {}: {e}", path.display())))?;
        file.write_all(content.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(|e| store_io(format!("cannot write {}: {e}", path.display())))
    }

    /// Generates a new own key: an Ed25519 key pair or a 32-byte HMAC secret, from the
    /// operating system's random source.
    pub fn generate(&self, kind: SignatureKind, id: &str) -> Result<KeyInfo, Error> {
        check_key_id(id)?;
        let mut seed = [0u8; 32];
        random_bytes(&mut seed)?;
        let (file_kind, content) = match kind {
            SignatureKind::Ed25519 => (FileKind::OwnEd25519, keys::private_key_pem(&seed)),
            SignatureKind::HmacSha256 => (FileKind::Hmac, format!("{}\n", keys::base64(&seed))),
        };
        self.write(id, file_kind, &content)?;
        self.info(id, file_kind)
    }

    /// Enrolls a peer's Ed25519 public key (SPKI, PEM text or DER).
    pub fn import_public(&self, id: &str, encoded: &[u8]) -> Result<KeyInfo, Error> {
        check_key_id(id)?;
        let public = keys::public_key_of(encoded)?;
        self.write(id, FileKind::PeerEd25519, &keys::public_key_pem(&public))?;
        self.info(id, FileKind::PeerEd25519)
    }

    /// Stores an HMAC secret shared with a peer (the text of a secret file: base64 of at least
    /// 32 bytes).
    pub fn import_hmac_secret(&self, id: &str, text: &str) -> Result<KeyInfo, Error> {
        check_key_id(id)?;
        let secret =
            hmac_secret_of(text).map_err(|why| Error::new(ErrorCode::InvalidArgument, why))?;
        self.write(id, FileKind::Hmac, &format!("{}\n", keys::base64(&secret)))?;
        self.info(id, FileKind::Hmac)
    }

    /// The SPKI PEM of an Ed25519 key of the directory (own or a peer's).
    pub fn export_public(&self, id: &str) -> Result<String, Error> {
        check_key_id(id)?;
        match self.ed25519_public_key(id)? {
            Some(public) => Ok(keys::public_key_pem(&public)),
            None if self.read(id, FileKind::Hmac)?.is_some() => Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("{id} is an HMAC secret, which has no public half; never share it so"),
            )),
            None => Err(not_found(id)),
        }
    }

    /// The signer of an own key.
    pub fn signer(&self, id: &str) -> Result<Signer, Error> {
        check_key_id(id)?;
        if let Some(pem) = self.read(id, FileKind::OwnEd25519)? {
            let seed = keys::private_key_seed(pem.as_bytes())
                .map_err(|e| corrupt(&self.file(id, FileKind::OwnEd25519), e.message()))?;
            return Ok(Signer::ed25519(id, &seed));
        }
        if let Some(secret) = self.hmac_secret(id)? {
            return Signer::hmac_sha256(id, &secret);
        }
        if self.read(id, FileKind::PeerEd25519)?.is_some() {
            return Err(Error::new(
                ErrorCode::NotFound,
                format!("{id} is a peer's public key; sign with one of your own keys"),
            ));
        }
        Err(not_found(id))
    }

    fn info(&self, id: &str, kind: FileKind) -> Result<KeyInfo, Error> {
        let fingerprint = match kind {
            FileKind::Hmac => {
                self.hmac_secret(id)?;
                None
            }
            _ => self.ed25519_public_key(id)?.map(|k| keys::fingerprint(&k)),
        };
        Ok(KeyInfo {
            id: id.to_string(),
            kind: kind.signature_kind(),
            own: kind.secret(),
            fingerprint,
            problem: None,
        })
    }

    /// Every key of the directory, sorted by id (files of other names are not keys and are
    /// left out); a key whose file cannot be used says why.
    pub fn list(&self) -> Result<Vec<KeyInfo>, Error> {
        if !self.recheck()? {
            return Ok(Vec::new());
        }
        let entries = std::fs::read_dir(&self.dir)
            .map_err(|e| store_io(format!("cannot list {}: {e}", self.dir.display())))?;
        let mut out = Vec::new();
        for entry in entries {
            let entry =
                entry.map_err(|e| store_io(format!("cannot list {}: {e}", self.dir.display())))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            for kind in FileKind::ALL {
                let Some(id) = name.strip_suffix(kind.suffix()) else {
                    continue;
                };
                if check_key_id(id).is_err() {
                    continue;
                }
                out.push(self.info(id, kind).unwrap_or_else(|e| KeyInfo {
                    id: id.to_string(),
                    kind: kind.signature_kind(),
                    own: kind.secret(),
                    fingerprint: None,
                    problem: Some(e.message().to_string()),
                }));
            }
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }
}

/// Reads a secret file given by the user (an HMAC secret to import, a bearer token): not
/// followed if it is a symbolic link, a regular file of this user, not readable or writable by
/// group or others, at most [`MAX_KEY_FILE_BYTES`]. Its content is never echoed.
pub fn read_secret_file(path: &Path) -> Result<String, Error> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => store_io(format!(
                "refusing the secret file {}: it is a symbolic link (never followed)",
                path.display()
            )),
            _ => store_io(format!("cannot open {}: {e}", path.display())),
        })?;
    let meta = file
        .metadata()
        .map_err(|e| store_io(format!("cannot inspect {}: {e}", path.display())))?;
    check_file(path, &meta, FileKind::Hmac)?;
    let mut text = String::new();
    let read = file
        .take(MAX_KEY_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|_| store_io(format!("cannot read {} as UTF-8 text", path.display())))?;
    if read as u64 > MAX_KEY_FILE_BYTES {
        return Err(store_io(format!(
            "refusing the secret file {}: larger than {MAX_KEY_FILE_BYTES} bytes",
            path.display()
        )));
    }
    Ok(text)
}

/// Fills `bytes` from the operating system's random source (keys, secrets, nonces).
pub fn random_bytes(bytes: &mut [u8]) -> Result<(), Error> {
    getrandom::fill(bytes).map_err(|e| {
        Error::new(
            ErrorCode::Internal,
            format!("no random bytes from the operating system: {e}"),
        )
    })
}

fn not_found(id: &str) -> Error {
    Error::new(
        ErrorCode::NotFound,
        format!("no key named {id} in the keys directory"),
    )
}

fn corrupt(path: &Path, why: &str) -> Error {
    store_io(format!(
        "the key file {} cannot be used: {why}",
        path.display()
    ))
}

/// The secret of a secret file's text: base64 of at least 32 bytes, blanks around it ignored.
fn hmac_secret_of(text: &str) -> Result<Vec<u8>, String> {
    let secret = keys::base64_decode(text.trim()).ok_or(
        "an HMAC secret file holds the base64 of the secret (e.g. `openssl rand -base64 32`)",
    )?;
    keys::check_secret(&secret).map_err(|e| e.message().to_string())?;
    Ok(secret)
}

fn check_file(path: &Path, meta: &std::fs::Metadata, kind: FileKind) -> Result<(), Error> {
    let refuse = |why: String| Err(store_io(format!("refusing {}: {why}", path.display())));
    if !meta.is_file() {
        return refuse("it is not a regular file".into());
    }
    if meta.uid() != euid() {
        return refuse("it is owned by another user".into());
    }
    let mode = meta.mode() & 0o7777;
    if kind.secret() && mode & 0o077 != 0 {
        return refuse(format!(
            "its mode is {mode:04o}: a secret must not be readable or writable by group or \
             others (chmod 600 it)"
        ));
    }
    if !kind.secret() && mode & 0o022 != 0 {
        return refuse(format!(
            "its mode is {mode:04o}: a public key must not be writable by group or others"
        ));
    }
    Ok(())
}

impl Keyring for KeyDir {
    fn ed25519_public_key(&self, key_id: &str) -> Result<Option<[u8; 32]>, Error> {
        if check_key_id(key_id).is_err() {
            return Ok(None);
        }
        if let Some(pem) = self.read(key_id, FileKind::PeerEd25519)? {
            let public = keys::public_key_of(pem.as_bytes())
                .map_err(|e| corrupt(&self.file(key_id, FileKind::PeerEd25519), e.message()))?;
            return Ok(Some(public));
        }
        match self.read(key_id, FileKind::OwnEd25519)? {
            Some(pem) => {
                let seed = keys::private_key_seed(pem.as_bytes())
                    .map_err(|e| corrupt(&self.file(key_id, FileKind::OwnEd25519), e.message()))?;
                Ok(Signer::ed25519(key_id, &seed).public_key())
            }
            None => Ok(None),
        }
    }

    fn hmac_secret(&self, key_id: &str) -> Result<Option<Vec<u8>>, Error> {
        if check_key_id(key_id).is_err() {
            return Ok(None);
        }
        match self.read(key_id, FileKind::Hmac)? {
            Some(text) => hmac_secret_of(&text)
                .map(Some)
                .map_err(|why| corrupt(&self.file(key_id, FileKind::Hmac), &why)),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{PermissionsExt, symlink};

    use super::*;

    /// A fresh, existing folder.
    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("aic-keys-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn create_makes_the_directory_it_is_given_and_never_its_parents() {
        let root = temp("parents");
        let nested = root.join("missing/keys");
        let refused = KeyDir::create(&nested).unwrap_err();
        assert_eq!(refused.code(), ErrorCode::StoreIo);
        assert!(
            refused.message().contains(&nested.display().to_string()),
            "{refused}"
        );
        assert!(!root.join("missing").exists());
        KeyDir::create(&root.join("keys")).unwrap();
        assert!(root.join("keys").is_dir());
        std::fs::remove_dir_all(&root).unwrap();
    }

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn generates_lists_and_looks_up_keys() {
        let root = temp("gen");
        let dir = root.join("keys");
        let keys = KeyDir::create(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, DIR_MODE);
        let ed = keys.generate(SignatureKind::Ed25519, "ed-1").unwrap();
        assert!(ed.own && ed.fingerprint.as_deref().unwrap().starts_with("sha256:"));
        let mac = keys.generate(SignatureKind::HmacSha256, "mac-1").unwrap();
        assert_eq!(mac.fingerprint, None);
        for file in ["ed-1.ed25519.key", "mac-1.hmac.key"] {
            let mode = std::fs::metadata(dir.join(file)).unwrap().mode() & 0o777;
            assert_eq!(mode, SECRET_FILE_MODE, "{file}");
        }
        let again = keys
            .generate(SignatureKind::HmacSha256, "ed-1")
            .unwrap_err();
        assert_eq!(again.code(), ErrorCode::InvalidArgument);
        let bad = keys.generate(SignatureKind::Ed25519, "../x").unwrap_err();
        assert_eq!(bad.code(), ErrorCode::InvalidArgument);
        // A peer's key, imported from what the other directory exports.
        let pem = keys.export_public("ed-1").unwrap();
        let peer = KeyDir::create(&root.join("peer")).unwrap();
        let imported = peer.import_public("alpha", pem.as_bytes()).unwrap();
        assert_eq!(imported.fingerprint, ed.fingerprint);
        assert!(!imported.own);
        assert_eq!(
            peer.signer("alpha").unwrap_err().code(),
            ErrorCode::NotFound
        );
        assert_eq!(
            peer.ed25519_public_key("alpha").unwrap(),
            keys.signer("ed-1").unwrap().public_key()
        );
        assert_eq!(
            keys.export_public("mac-1").unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            keys.export_public("none").unwrap_err().code(),
            ErrorCode::NotFound
        );
        let list: Vec<_> = keys.list().unwrap().into_iter().map(|k| k.id).collect();
        assert_eq!(list, ["ed-1", "mac-1"]);
        assert_eq!(keys.hmac_secret("mac-1").unwrap().unwrap().len(), 32);
        assert_eq!(keys.hmac_secret("../mac-1").unwrap(), None);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn unsafe_files_and_directories_are_refused() {
        let root = temp("unsafe");
        let dir = root.join("keys");
        let keys = KeyDir::create(&dir).unwrap();
        keys.generate(SignatureKind::HmacSha256, "mac-1").unwrap();
        chmod(&dir.join("mac-1.hmac.key"), 0o640);
        let open = keys.hmac_secret("mac-1").unwrap_err();
        assert_eq!(open.code(), ErrorCode::StoreIo);
        assert!(open.message().contains("chmod 600"), "{open}");
        assert!(keys.list().unwrap()[0].problem.is_some());
        chmod(&dir.join("mac-1.hmac.key"), 0o600);
        // A planted symlink is never followed.
        std::fs::write(root.join("elsewhere"), "x").unwrap();
        symlink(root.join("elsewhere"), dir.join("evil.hmac.key")).unwrap();
        let planted = keys.hmac_secret("evil").unwrap_err();
        assert!(planted.message().contains("symbolic link"), "{planted}");
        // A FIFO does not block and is refused.
        let fifo = dir.join("fifo.ed25519.pub");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert_eq!(
            keys.ed25519_public_key("fifo").unwrap_err().code(),
            ErrorCode::StoreIo
        );
        chmod(&dir, 0o755);
        assert_eq!(KeyDir::open(&dir).unwrap_err().code(), ErrorCode::StoreIo);
        assert_eq!(
            keys.hmac_secret("mac-1").unwrap_err().code(),
            ErrorCode::StoreIo
        );
        chmod(&dir, 0o700);
        let link = root.join("link");
        symlink(&dir, &link).unwrap();
        assert_eq!(KeyDir::open(&link).unwrap_err().code(), ErrorCode::StoreIo);
        // A missing directory holds no keys.
        let none = KeyDir::open(&root.join("missing")).unwrap();
        assert_eq!(none.hmac_secret("mac-1").unwrap(), None);
        assert!(none.list().unwrap().is_empty());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_default_is_beside_the_scratchpad() {
        let agent = || PathBuf::from("/agent");
        assert_eq!(
            default_dir(&|_| None, agent),
            Path::new("/agent/agent-intercom-keys")
        );
        let pad = |k: &str| (k == "AGENT_INTERCOM_SCRATCHPAD").then(|| "/data/pad.db".to_string());
        assert_eq!(
            default_dir(&pad, agent),
            Path::new("/data/agent-intercom-keys")
        );
        let set = |k: &str| (k == KEYS_DIR_ENV).then(|| " /k \n".to_string());
        assert_eq!(default_dir(&set, agent), Path::new("/k"));
    }
}

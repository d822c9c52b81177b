//! The two identities (docs/line.md §1.1): separate private files, each of its kind, never
//! shown. Named by requirement (L-NN).

mod common;

use std::ffi::OsString;
use std::os::unix::fs::symlink;
use std::path::Path;

use agent_intercom_line::secrets::{self, Identities};
use agent_intercom_line::{Code, LineError, OPERATOR_CREDENTIAL_ENV, SIGNING_KEY_ENV};
use common::*;

fn load(credential: Option<&Path>, key: Option<&Path>) -> Result<Identities, LineError> {
    let env = |name: &str| -> Option<OsString> {
        match name {
            OPERATOR_CREDENTIAL_ENV => credential.map(|p| p.as_os_str().to_owned()),
            SIGNING_KEY_ENV => key.map(|p| p.as_os_str().to_owned()),
            _ => None,
        }
    };
    secrets::load(&env)
}

fn code(r: Result<Identities, LineError>) -> Code {
    r.unwrap_err().code
}

#[test]
fn r01_both_identities_load_and_are_distinct() {
    let tmp = Tmp::new("r01-ok");
    let cred = tmp.file("cred", format!("{CREDENTIAL}\n").as_bytes(), 0o600);
    let key = tmp.file("key.pem", key_pem(&[7; 32]).as_bytes(), 0o600);
    let ids = load(Some(&cred), Some(&key)).unwrap();
    assert_eq!(
        ids.operator,
        credential(),
        "one trailing newline is not part of the credential"
    );
    assert_eq!(ids.workload.fingerprint().len(), 64);
    // Debug shows neither secret.
    let shown = format!("{ids:?}");
    assert!(
        !shown.contains(CREDENTIAL) && !shown.contains("07070707"),
        "{shown}"
    );
}

#[test]
fn r01_missing_or_equal_identities_refuse() {
    let tmp = Tmp::new("r01-refuse");
    let cred = tmp.file("cred", CREDENTIAL.as_bytes(), 0o600);
    let key = tmp.file("key.pem", key_pem(&[7; 32]).as_bytes(), 0o600);
    assert_eq!(code(load(None, Some(&key))), Code::CredentialMissing);
    assert_eq!(code(load(Some(&cred), None)), Code::SigningKeyMissing);
    assert_eq!(
        code(load(Some(&tmp.path("absent")), Some(&key))),
        Code::CredentialMissing
    );
    assert_eq!(
        code(load(Some(&cred), Some(&tmp.path("absent")))),
        Code::SigningKeyMissing
    );
    // The same file for both, a hard link to it, or a copy of its bytes.
    assert_eq!(code(load(Some(&key), Some(&key))), Code::IdentityConflation);
    let link = tmp.path("key-link.pem");
    std::fs::hard_link(&key, &link).unwrap();
    assert_eq!(
        code(load(Some(&link), Some(&key))),
        Code::IdentityConflation
    );
    let copy = tmp.file("copy.pem", key_pem(&[7; 32]).as_bytes(), 0o600);
    assert_eq!(
        code(load(Some(&copy), Some(&key))),
        Code::IdentityConflation
    );
    assert_eq!(
        code(load(Some(&cred), Some(&cred))),
        Code::IdentityConflation
    );
}

#[test]
fn r01_credential_of_the_wrong_kind_refuses() {
    let tmp = Tmp::new("r01-kind");
    let key = tmp.file("key.pem", key_pem(&[7; 32]).as_bytes(), 0o600);
    // A key as the credential (another key, so not conflation): the wrong kind.
    let other_key = tmp.file("other.pem", key_pem(&[9; 32]).as_bytes(), 0o600);
    assert_eq!(
        code(load(Some(&other_key), Some(&key))),
        Code::CredentialInvalid
    );
    let short = tmp.file("short", b"0123456789", 0o600);
    assert_eq!(
        code(load(Some(&short), Some(&key))),
        Code::CredentialInvalid
    );
    let long = tmp.file("long", &[b'a'; 4097], 0o600);
    assert_eq!(code(load(Some(&long), Some(&key))), Code::CredentialInvalid);
    let shared = tmp.file("shared", CREDENTIAL.as_bytes(), 0o640);
    assert_eq!(
        code(load(Some(&shared), Some(&key))),
        Code::CredentialInvalid
    );
    let dir = tmp.path("dir");
    std::fs::create_dir(&dir).unwrap();
    assert_eq!(code(load(Some(&dir), Some(&key))), Code::CredentialInvalid);
    let cred = tmp.file("cred", CREDENTIAL.as_bytes(), 0o600);
    let sym = tmp.path("cred-link");
    symlink(&cred, &sym).unwrap();
    assert_eq!(code(load(Some(&sym), Some(&key))), Code::CredentialInvalid);
}

#[test]
fn r03_workload_key_is_ed25519_pkcs8_pem_at_an_absolute_path() {
    let tmp = Tmp::new("r03");
    let cred = tmp.file("cred", CREDENTIAL.as_bytes(), 0o600);
    // An X25519 key (OID 1.3.101.110): PKCS#8, but not a signing key.
    let mut x25519 = pkcs8(&[1; 32]);
    x25519[11] = 0x6e;
    for (name, bytes) in [
        ("x25519.pem", pem("PRIVATE KEY", &x25519).into_bytes()),
        (
            "rsa-classic.pem",
            pem("RSA PRIVATE KEY", &[0x30, 0x03, 0x02, 0x01, 0x00]).into_bytes(),
        ),
        ("public.pem", pem("PUBLIC KEY", &[0u8; 44]).into_bytes()),
        ("der.key", pkcs8(&[1; 32])),
        ("seed.key", vec![1; 32]),
        ("empty.key", Vec::new()),
    ] {
        let key = tmp.file(name, &bytes, 0o600);
        assert_eq!(
            code(load(Some(&cred), Some(&key))),
            Code::SigningKeyInvalid,
            "{name}"
        );
    }
    let readable = tmp.file("readable.pem", key_pem(&[2; 32]).as_bytes(), 0o644);
    assert_eq!(
        code(load(Some(&cred), Some(&readable))),
        Code::SigningKeyInvalid
    );
    // A relative path, even to a good key, refuses.
    let env = |name: &str| -> Option<OsString> {
        match name {
            OPERATOR_CREDENTIAL_ENV => Some(cred.as_os_str().to_owned()),
            SIGNING_KEY_ENV => Some("key.pem".into()),
            _ => None,
        }
    };
    assert_eq!(secrets::load(&env).unwrap_err().code, Code::NotAbsolute);
    let env = |name: &str| -> Option<OsString> {
        (name == OPERATOR_CREDENTIAL_ENV).then(|| OsString::from("cred"))
    };
    assert_eq!(secrets::load(&env).unwrap_err().code, Code::NotAbsolute);
}

#[test]
fn r05_refusals_never_carry_a_secret() {
    let tmp = Tmp::new("r05");
    let key_text = key_pem(&[7; 32]);
    let key = tmp.file("key.pem", key_text.as_bytes(), 0o600);
    let readable = tmp.file("cred", CREDENTIAL.as_bytes(), 0o644);
    let errors = [
        load(Some(&key), Some(&key)).unwrap_err(),
        load(Some(&readable), Some(&key)).unwrap_err(),
        load(
            Some(&tmp.file("k2", key_text.as_bytes(), 0o600)),
            Some(&key),
        )
        .unwrap_err(),
        secrets::credential_of(b"short-secret").unwrap_err(),
        secrets::workload_key_of(b"not a key but secret bytes").unwrap_err(),
    ];
    let body = key_text.lines().nth(1).unwrap();
    for e in errors {
        let text = format!("{} {:?}", e.to_json(), e);
        assert!(!text.contains(CREDENTIAL) && !text.contains(body), "{text}");
        assert!(
            !text.contains("short-secret") && !text.contains("secret bytes"),
            "{text}"
        );
    }
}

//! Who is asking: the bearer token that guards a service bound beyond loopback (read from a
//! 0600 file, compared in constant time), and the sender identities tasks are created under.

use std::path::Path;

/// The identity of requests that carry neither a signature nor a token (loopback only): every
/// such client is the same sender and sees the same tasks.
pub const ANONYMOUS: &str = "a2a:anonymous";
/// The identity of requests authenticated by the bearer token only.
pub const BEARER: &str = "a2a:bearer";
/// The prefix of the identity of a request signed by an enrolled key: `a2a:key:<key id>`.
pub const KEY_PREFIX: &str = "a2a:key:";

/// Shortest token accepted (bytes).
pub const MIN_TOKEN_BYTES: usize = 16;
/// Longest token accepted (bytes).
pub const MAX_TOKEN_BYTES: usize = 4096;

const TOKEN_DOMAIN: &str = "agent-intercom-serve-bearer-v1";

/// The bearer token, kept as a digest only.
#[derive(Clone)]
pub struct Token {
    digest: String,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

fn token_digest(token: &str) -> String {
    // The domain is a constant of printable ASCII, which is all `hash_of_payload` checks.
    agent_intercom_core::canonical::hash_of_payload(TOKEN_DOMAIN, token).unwrap_or_default()
}

impl Token {
    /// Reads the token from `path`: a regular file (not a symbolic link) that only its owner may
    /// read or write (mode 0600 or stricter), holding 16 to 4096 visible ASCII characters (one
    /// trailing newline allowed). The token itself never appears in an error.
    pub fn from_file(path: &Path) -> Result<Token, String> {
        let shown = path.display();
        let meta = std::fs::symlink_metadata(path)
            .map_err(|e| format!("cannot read the token file {shown}: {e}"))?;
        if !meta.file_type().is_file() {
            return Err(format!(
                "the token file {shown} must be a regular file (not a link or a directory)"
            ));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(format!(
                    "the token file {shown} is readable by others (mode {mode:o}); make it 0600 \
                     (chmod 600 {shown})"
                ));
            }
        }
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read the token file {shown}: {e}"))?;
        let text = bytes
            .strip_suffix(b"\n")
            .map(|b| b.strip_suffix(b"\r").unwrap_or(b))
            .unwrap_or(&bytes);
        if !(MIN_TOKEN_BYTES..=MAX_TOKEN_BYTES).contains(&text.len())
            || !text.iter().all(|b| (0x21..=0x7e).contains(b))
        {
            return Err(format!(
                "the token file {shown} must hold one token of {MIN_TOKEN_BYTES} to \
                 {MAX_TOKEN_BYTES} visible ASCII characters"
            ));
        }
        // Checked above: visible ASCII.
        let token = String::from_utf8_lossy(text);
        Ok(Token {
            digest: token_digest(&token),
        })
    }

    /// Whether an `Authorization` header value is `Bearer <this token>`. The comparison is of
    /// two digests of equal length, in constant time.
    pub fn accepts(&self, authorization: Option<&[u8]>) -> bool {
        let Some(value) = authorization.and_then(|v| std::str::from_utf8(v).ok()) else {
            return false;
        };
        let Some((scheme, presented)) = value.trim().split_once(' ') else {
            return false;
        };
        if !scheme.eq_ignore_ascii_case("bearer") {
            return false;
        }
        let presented = token_digest(presented.trim());
        let (a, b) = (presented.as_bytes(), self.digest.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, content: &[u8], mode: u32) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("aic-token-{}-{name}", std::process::id()));
        std::fs::write(&path, content).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        path
    }

    #[test]
    fn a_token_is_read_from_a_private_file_and_compared() {
        let path = file("ok", b"0123456789abcdef-token\n", 0o600);
        let token = Token::from_file(&path).unwrap();
        assert!(token.accepts(Some(b"Bearer 0123456789abcdef-token")));
        assert!(token.accepts(Some(b"bearer 0123456789abcdef-token")));
        for bad in [
            &b"Bearer 0123456789abcdef-tokeN"[..],
            b"Bearer",
            b"Basic 0123456789abcdef-token",
            b"0123456789abcdef-token",
            b"Bearer \xff",
        ] {
            assert!(!token.accepts(Some(bad)), "{bad:?}");
        }
        assert!(!token.accepts(None));
        assert_eq!(format!("{token:?}"), "Token(..)");
        std::fs::remove_file(path).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn an_open_short_or_missing_token_file_is_refused_without_showing_the_token() {
        let open = file("open", b"0123456789abcdef-secret", 0o644);
        let err = Token::from_file(&open).unwrap_err();
        assert!(err.contains("0600") && !err.contains("secret"), "{err}");
        let short = file("short", b"short", 0o600);
        assert!(Token::from_file(&short).unwrap_err().contains("16 to 4096"));
        let spaced = file("spaced", b"0123456789 abcdef-secret", 0o600);
        assert!(!Token::from_file(&spaced).unwrap_err().contains("secret"));
        let link = std::env::temp_dir().join(format!("aic-token-{}-link", std::process::id()));
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&open, &link).unwrap();
        assert!(
            Token::from_file(&link)
                .unwrap_err()
                .contains("regular file")
        );
        assert!(Token::from_file(Path::new("/nonexistent/token")).is_err());
        for p in [open, short, spaced, link] {
            std::fs::remove_file(p).unwrap();
        }
    }
}

//! The redaction of exported text: credentials, private keys, home paths and the project
//! root (docs/scratchpad.md).

/// The project root standing alone (not a prefix of a longer name) becomes `.`.
fn replace_root_itself(text: &str, root: &str) -> String {
    let mut result = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(root) {
        let after = &rest[at + root.len()..];
        let continues = after
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
        result.push_str(&rest[..at]);
        result.push_str(if continues { root } else { "." });
        rest = after;
    }
    result.push_str(rest);
    result
}

/// Redacts secrets from text for an export: bearer tokens, `key=value` / `key: value`
/// credentials (password, secret, token, api key, access key, auth, credential), PEM private key
/// blocks (any label containing `PRIVATE KEY`, through its `-----END` line or, unterminated, to
/// the end of the text), and long token-like strings (32+ characters of letters, digits and
/// `-_+/=.` with both letters and digits); absolute paths under `project_root` become
/// project-relative (`./...`) and home directories become `~`; the root itself becomes `.`.
pub fn redact(text: &str, project_root: Option<&str>) -> String {
    let mut out = redact_private_keys(text);
    if let Some(root) = project_root.filter(|r| r.starts_with('/') && r.len() > 1) {
        let root = root.trim_end_matches('/');
        out = out.replace(&format!("{root}/"), "./");
        out = replace_root_itself(&out, root);
    }
    out = redact_homes(&out);
    let mut result = String::with_capacity(out.len());
    let mut pending_key = false;
    let mut after_bearer = false;
    for piece in split_keep(&out) {
        if piece.chars().all(|c| !is_token_char(c) || c == '=') {
            result.push_str(piece);
            if !piece.chars().all(char::is_whitespace)
                && !piece.contains('=')
                && !piece.contains(':')
                && !piece.contains('"')
                && !piece.contains('\'')
            {
                pending_key = false;
            }
            continue;
        }
        let lower = piece.to_ascii_lowercase();
        if lower == "bearer" || lower == "basic" {
            after_bearer = true;
            pending_key = false;
            result.push_str(piece);
            continue;
        }
        if after_bearer || pending_key {
            result.push_str("[REDACTED]");
            after_bearer = false;
            pending_key = false;
            continue;
        }
        if is_credential_key(&lower) {
            pending_key = true;
            result.push_str(piece);
            continue;
        }
        if looks_like_token(piece) {
            result.push_str("[REDACTED]");
        } else {
            result.push_str(piece);
        }
    }
    result
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '/' | '=' | '.' | '~')
}

/// Splits into alternating runs of token characters and other characters. `=` ends a key, so a
/// `key=value` pair splits as key, "=", value.
fn split_keep(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut kind: Option<bool> = None;
    for (i, c) in text.char_indices() {
        let token = is_token_char(c) && c != '=';
        if kind.is_some_and(|k| k != token) {
            pieces.push(&text[start..i]);
            start = i;
        }
        kind = Some(token);
    }
    // The last run: what follows the last change of kind, never empty unless the text is.
    if !text.is_empty() {
        pieces.push(&text[start..]);
    }
    pieces
}

fn is_credential_key(lower: &str) -> bool {
    let key = lower.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    [
        "password",
        "passwd",
        "pwd",
        "secret",
        "token",
        "apikey",
        "api_key",
        "api-key",
        "access_key",
        "access-key",
        "accesskey",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "private_key",
        "client_secret",
    ]
    .iter()
    .any(|k| key == *k || key.ends_with(&format!("_{k}")) || key.ends_with(&format!("-{k}")))
}

fn looks_like_token(piece: &str) -> bool {
    piece.len() >= 32
        && !piece.starts_with("./")
        && !piece.starts_with('~')
        && piece.chars().any(|c| c.is_ascii_digit())
        && piece.chars().any(|c| c.is_ascii_alphabetic())
        && piece.matches('/').count() < 3
}

/// What opens a PEM header (RFC 7468): its label follows, then five dashes.
const PEM_BEGIN: &str = "-----BEGIN ";

/// Replaces every PEM private key block with `[REDACTED PRIVATE KEY]`. Each `-----BEGIN ` is
/// judged on its own, wherever it stands: its label is what follows it up to the next five dashes
/// or the end of its line, whichever comes first. A label containing `PRIVATE KEY` opens a block
/// that runs through `-----END <label>-----`, or to the end of the text when that never comes
/// (an unterminated key is never left in clear). Any other `-----BEGIN ` (a certificate, a public
/// key, a mention in prose, a header missing its dashes) is kept, and the scan resumes right
/// after it, so it can hide nothing that follows.
fn redact_private_keys(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(PEM_BEGIN) {
        let after = &rest[at + PEM_BEGIN.len()..];
        let label = pem_label(after);
        if label.contains("PRIVATE KEY") {
            out.push_str(&rest[..at]);
            out.push_str("[REDACTED PRIVATE KEY]");
            let end = format!("-----END {label}-----");
            rest = after.find(&end).map_or("", |i| &after[i + end.len()..]);
        } else {
            out.push_str(&rest[..at + PEM_BEGIN.len()]);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The label of a PEM header, given the text after its `-----BEGIN `: up to the five dashes that
/// close the header, or up to the end of the line when the line has none.
fn pem_label(after: &str) -> &str {
    let line = after.split(['\n', '\r']).next().unwrap_or_default();
    line.split("-----").next().unwrap_or_default()
}

fn redact_homes(text: &str) -> String {
    let mut out = text.to_string();
    for prefix in ["/home/", "/Users/"] {
        while let Some(at) = out.find(prefix) {
            let after = at + prefix.len();
            let end = out[after..]
                .find(|c: char| c == '/' || c.is_whitespace())
                .map_or(out.len(), |i| after + i);
            out.replace_range(at..end, "~");
        }
    }
    if out.starts_with("/root/") || out.contains(" /root/") {
        out = out.replace("/root/", "~/");
    }
    out
}

#[cfg(test)]
mod redaction_tests {
    use super::redact;

    /// A key body the word rules alone would let through: no digits, no credential word.
    const BODY: &str = "hunter two words";

    /// A PEM block with `label`, its lines ended by `eol`.
    fn block(label: &str, eol: &str) -> String {
        format!("-----BEGIN {label}-----{eol}{BODY}{eol}-----END {label}-----")
    }

    #[test]
    fn secrets_are_redacted_and_paths_reduced() {
        let cases = [
            (
                "Authorization: Bearer abc.def-123",
                "Authorization: Bearer [REDACTED]",
            ),
            ("password=hunter2 and more", "password=[REDACTED] and more"),
            ("API_KEY: sk12345", "API_KEY: [REDACTED]"),
            (
                "export DB_PASSWORD=\"s3cr3t\"",
                "export DB_PASSWORD=\"[REDACTED]\"",
            ),
            (
                "token ghp_0123456789abcdefghijABCDEFGHIJ0123 leaked",
                "token [REDACTED] leaked",
            ),
            ("see /work/proj/src/main.rs", "see ./src/main.rs"),
            ("config in /home/alice/.config/x", "config in ~/.config/x"),
            (
                "plain words stay as they are",
                "plain words stay as they are",
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\nafter",
                "[REDACTED PRIVATE KEY]\nafter",
            ),
            (
                "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----",
                "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(redact(input, Some("/work/proj")), expected, "{input}");
        }
    }

    #[test]
    fn a_begin_before_a_key_hides_nothing() {
        // The leak the mutation report found: a prose `-----BEGIN ` made the old scan copy
        // everything up to the end of the key's own header line, and the key came out in clear.
        let prose = concat!(
            "a PEM file starts with -----BEGIN and a label\n",
            "-----BEGIN OPENSSH PRIVATE KEY-----\n",
            "AAAA/BBBB/CCCC/DDDD1234567890abcdefghijklmnop\n",
            "hunter two secret\n",
            "-----END OPENSSH PRIVATE KEY-----\n",
        );
        assert_eq!(
            redact(prose, None),
            "a PEM file starts with -----BEGIN and a label\n[REDACTED PRIVATE KEY]\n"
        );
        let header = concat!(
            "-----BEGIN CERTIFICATE\nabc\n",
            "-----BEGIN RSA PRIVATE KEY-----\nhunter two words\n-----END RSA PRIVATE KEY-----\n",
        );
        assert_eq!(
            redact(header, None),
            "-----BEGIN CERTIFICATE\nabc\n[REDACTED PRIVATE KEY]\n"
        );
    }

    #[test]
    fn every_private_label_is_redacted_and_other_blocks_are_kept() {
        for label in [
            "PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "RSA PRIVATE KEY",
            "EC PRIVATE KEY",
            "DSA PRIVATE KEY",
        ] {
            let text = format!("before\n{}\nafter", block(label, "\n"));
            assert_eq!(
                redact(&text, None),
                "before\n[REDACTED PRIVATE KEY]\nafter",
                "{label}"
            );
        }
        for label in ["CERTIFICATE", "PUBLIC KEY", "RSA PUBLIC KEY", "X509 CRL"] {
            let text = block(label, "\n");
            assert_eq!(redact(&text, None), text);
        }
    }

    #[test]
    fn keys_beside_other_blocks_and_in_any_line_ending() {
        let cert = block("CERTIFICATE", "\n");
        let text = format!("{cert}\n{}\n", block("PRIVATE KEY", "\n"));
        assert_eq!(
            redact(&text, None),
            format!("{cert}\n[REDACTED PRIVATE KEY]\n")
        );
        let text = format!(
            "{} and {}.",
            block("EC PRIVATE KEY", "\n"),
            block("RSA PRIVATE KEY", "\n")
        );
        assert_eq!(
            redact(&text, None),
            "[REDACTED PRIVATE KEY] and [REDACTED PRIVATE KEY]."
        );
        let text = format!("a\r\n{}\r\nb", block("RSA PRIVATE KEY", "\r\n"));
        assert_eq!(redact(&text, None), "a\r\n[REDACTED PRIVATE KEY]\r\nb");
        // Exported metadata is JSON text, where a key's line breaks are `\n` escapes.
        let text = format!("{{\"pem\":\"{}\\n\",\"n\":1}}", block("PRIVATE KEY", "\\n"));
        assert_eq!(
            redact(&text, None),
            "{\"pem\":\"[REDACTED PRIVATE KEY]\\n\",\"n\":1}"
        );
        let text = format!("é{}ü", block("PRIVATE KEY", "\n"));
        assert_eq!(redact(&text, None), "é[REDACTED PRIVATE KEY]ü");
    }

    #[test]
    fn an_unterminated_key_is_redacted_to_the_end() {
        for text in [
            "x -----BEGIN RSA PRIVATE KEY-----\nhunter two words\n",
            "x -----BEGIN RSA PRIVATE KEY-----\nhunter\n-----END EC PRIVATE KEY-----\nwords",
            "x -----BEGIN RSA PRIVATE KEY\nhunter two words\n",
            "x -----BEGIN PRIVATE KEY-----",
        ] {
            assert_eq!(redact(text, None), "x [REDACTED PRIVATE KEY]", "{text:?}");
        }
        // A header missing its closing dashes still ends at its END line.
        assert_eq!(
            redact(
                "-----BEGIN RSA PRIVATE KEY\nhunter\n-----END RSA PRIVATE KEY-----\nafter",
                None
            ),
            "[REDACTED PRIVATE KEY]\nafter"
        );
        // A `-----BEGIN ` that opens no private key is kept as it is, terminated or not.
        for text in [
            "x -----BEGIN CERTIFICATE-----",
            "abcdefg -----BEGIN CERTIFICATE-----",
            "-----BEGIN X-----",
            "-----BEGIN ",
            "see -----BEGIN",
            "-----BEGIN -----BEGIN -----END X-----",
        ] {
            assert_eq!(redact(text, None), text);
        }
    }

    #[test]
    fn nothing_before_a_key_lets_it_through() {
        let before = [
            "",
            "-----BEGIN ",
            "-----BEGIN and prose",
            "-----BEGIN CERTIFICATE",
            "-----BEGIN CERTIFICATE-----",
            "-----END RSA PRIVATE KEY-----",
            "-----BEGIN X----- -----END X-----",
            "-----BEGIN PRIVATE KEY",
            "-----BEGIN -----END ",
            "----- -----BEGIN",
        ];
        let labels = ["PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY"];
        for prefix in before {
            for label in labels {
                for eol in ["\n", "\r\n", "\\n", " "] {
                    let closed = block(label, eol);
                    let open = format!("-----BEGIN {label}-----{eol}{BODY}{eol}");
                    for key in [closed, open] {
                        let text = format!("{prefix}{eol}{key}{eol}tail");
                        let out = redact(&text, None);
                        assert!(
                            !out.contains("hunter") && out.contains("[REDACTED PRIVATE KEY]"),
                            "{text:?} -> {out:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn word_rules_at_their_edges() {
        let cases = [
            ("", ""),
            // A credential word, a space, its value.
            ("password hunter2", "password [REDACTED]"),
            // Punctuation other than `=`, `:` and quotes ends a pending key.
            ("the token, then", "the token, then"),
            // Quotes keep it pending.
            ("token 'abc'", "token '[REDACTED]'"),
            ("token \"abc\"", "token \"[REDACTED]\""),
            // Short words with letters and digits are not tokens.
            ("file3 and v2", "file3 and v2"),
            // 32+ characters with three `/` are a path, with two a token.
            (
                "a/b/c/0123456789abcdefghijklmnopqrstuv",
                "a/b/c/0123456789abcdefghijklmnopqrstuv",
            ),
            ("a/b/0123456789abcdefghijklmnopqrstuvw", "[REDACTED]"),
            // The root's home, at the start or after a space.
            ("see /root/.ssh/id", "see ~/.ssh/id"),
            ("/root/.ssh/id", "~/.ssh/id"),
            ("x/root/y", "x/root/y"),
        ];
        for (input, expected) in cases {
            assert_eq!(redact(input, None), expected, "{input}");
        }
    }

    #[test]
    fn only_an_absolute_root_other_than_slash_is_reduced() {
        assert_eq!(
            redact("see proj/x and proj", Some("proj")),
            "see proj/x and proj"
        );
        // The root `/` is ignored (reducing it would never end).
        assert_eq!(redact("x /y /", Some("/")), "x /y /");
        assert_eq!(
            redact("in /work/proj/a and (/work/proj)", Some("/work/proj/")),
            "in ./a and (.)"
        );
    }
}

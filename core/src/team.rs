//! The tmuxdeck team manifest (`./team-manifest`): the parser and every decision about the
//! manifest file, as pure operations over values and `lstat`/`fstat` facts.
//!
//! The bindings do the I/O (`lstat` of the directory and the file, opening and reading it) and
//! ask this module at each step: [`resolve_path`] (which path, if any), [`check_directory`],
//! [`check_file`] (the stat rules, and that an opened descriptor is the file that was checked),
//! [`check_length`] (the bytes read) and [`parse`] (the text or the value). Every refusal is a
//! `TeamManifestError` whose message is its code; no path and no value is ever echoed.

use crate::contract::value::{Js, JsArray, Proto, number_to_string, write_json_string};
use crate::contract::{Args, Failure, Op, Out};

/// `TMUXDECK_TEAM_MANIFEST_VERSION`.
pub const VERSION: &str = "tmuxdeck.team.v1";
/// `TMUXDECK_TEAM_MANIFEST_BACKEND`.
pub const BACKEND: &str = "tmuxdeck";
/// `MAX_TEAM_MANIFEST_BYTES`: the largest manifest file, in bytes.
pub const MAX_BYTES: u64 = 64 * 1024;
/// `MAX_TEAM_MANIFEST_MEMBERS`.
pub const MAX_MEMBERS: usize = 64;
/// The mode bits (`mode & 0o777`) the manifest's directory must have.
pub const DIRECTORY_MODE: u64 = 0o700;
/// The mode bits the manifest file must have.
pub const FILE_MODE: u64 = 0o600;

/// The class every refusal of this module names.
pub const ERROR_CLASS: &str = "TeamManifestError";
/// The manifest (or the path given for it) is malformed.
pub const INVALID: &str = "ERR_TEAM_MANIFEST_INVALID";
/// The manifest file cannot be used: missing, unreadable, a symlink, too large, or with the
/// wrong owner or mode (or its directory is).
pub const UNAVAILABLE: &str = "ERR_TEAM_MANIFEST_UNAVAILABLE";

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "team.constants",
        run: |_| Ok(Out::Json(constants_json())),
    },
    Op {
        name: "team.parse",
        run: |a| parse(a.get(0)).map(|m| Out::Json(m.to_json())),
    },
    Op {
        name: "team.resolvePath",
        run: |a| {
            Ok(match resolve_path(a.get(0))? {
                None => Out::Undefined,
                Some(found) => Out::Json(found.to_json()),
            })
        },
    },
    Op {
        name: "team.checkDirectory",
        run: check_directory_op,
    },
    Op {
        name: "team.checkFile",
        run: check_file_op,
    },
    Op {
        name: "team.checkLength",
        run: |a| {
            let length = fact_number(a.get(0), "byteLength")?;
            check_length(length).map(|()| Out::Undefined)
        },
    },
];

/// A `TeamManifestError` with this code (its message is the code).
pub fn refusal(code: &'static str) -> Failure {
    Failure {
        class: ERROR_CLASS,
        path: None,
        detail: code.to_string(),
        code: Some(code.to_string()),
    }
}

fn invalid() -> Failure {
    refusal(INVALID)
}

fn unavailable() -> Failure {
    refusal(UNAVAILABLE)
}

fn constants_json() -> String {
    let mut out = String::from("{\"TMUXDECK_TEAM_MANIFEST_VERSION\":");
    write_json_string(&mut out, VERSION);
    out.push_str(",\"TMUXDECK_TEAM_MANIFEST_BACKEND\":");
    write_json_string(&mut out, BACKEND);
    out.push_str(&format!(
        ",\"MAX_TEAM_MANIFEST_BYTES\":{MAX_BYTES},\"MAX_TEAM_MANIFEST_MEMBERS\":{MAX_MEMBERS}"
    ));
    out.push_str(",\"codes\":{\"INVALID\":");
    write_json_string(&mut out, INVALID);
    out.push_str(",\"UNAVAILABLE\":");
    write_json_string(&mut out, UNAVAILABLE);
    out.push_str("}}");
    out
}

/// A member's role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The member whose session is the manifest's `leadId`.
    Lead,
    /// Every other member.
    Worker,
}

impl Role {
    /// The role's name in the manifest.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Lead => "lead",
            Role::Worker => "worker",
        }
    }
}

/// One member of the team.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// `tmuxdeck-<uuid v4>`.
    pub session_id: String,
    /// Its role.
    pub role: Role,
}

/// A valid manifest (version, backend and capabilities are fixed, so not stored).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// `team_<uuid v4>`.
    pub run_id: String,
    /// `tmuxdeck-<uuid v4>`: the one member whose role is `lead`.
    pub lead_id: String,
    /// 1 to [`MAX_MEMBERS`] members with distinct session ids.
    pub members: Vec<Member>,
    /// Milliseconds, a safe integer above 0.
    pub created_at: i64,
}

impl Manifest {
    /// The manifest as `parseTeamManifest` returns it, as JSON: the seven keys in their order,
    /// `capabilities` an empty array.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"version\":");
        write_json_string(&mut out, VERSION);
        out.push_str(",\"backend\":");
        write_json_string(&mut out, BACKEND);
        out.push_str(",\"runId\":");
        write_json_string(&mut out, &self.run_id);
        out.push_str(",\"leadId\":");
        write_json_string(&mut out, &self.lead_id);
        out.push_str(",\"members\":[");
        for (i, member) in self.members.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"sessionId\":");
            write_json_string(&mut out, &member.session_id);
            out.push_str(",\"role\":");
            write_json_string(&mut out, member.role.as_str());
            out.push('}');
        }
        out.push_str("],\"createdAt\":");
        out.push_str(&number_to_string(self.created_at as f64));
        out.push_str(",\"capabilities\":[]}");
        out
    }
}

const TOP_KEYS: &[&str] = &[
    "version",
    "backend",
    "runId",
    "leadId",
    "members",
    "createdAt",
    "capabilities",
];
const MEMBER_KEYS: &[&str] = &["sessionId", "role"];

/// `parseTeamManifest`: a JSON text (read as `JSON.parse` reads it) or a value. Every refusal
/// is `ERR_TEAM_MANIFEST_INVALID`.
pub fn parse(value: &Js) -> Result<Manifest, Failure> {
    let parsed;
    let value = match value {
        Js::Str(text) => {
            // A lone surrogate cannot be part of a valid manifest: outside a string it is a
            // syntax error, inside one it fails the pattern or the constant it is compared with.
            if text.lone.is_some() {
                return Err(invalid());
            }
            parsed = Js::parse_json(&text.text).map_err(|_| invalid())?;
            &parsed
        }
        other => other,
    };
    exact_object(value, TOP_KEYS)?;
    if text_of(value, "version")? != VERSION || text_of(value, "backend")? != BACKEND {
        return Err(invalid());
    }
    let run_id = text_of(value, "runId")?;
    if !is_run_id(run_id) {
        return Err(invalid());
    }
    let lead_id = text_of(value, "leadId")?;
    if !is_session_id(lead_id) {
        return Err(invalid());
    }
    let items = dense(value.get("members"))?;
    if items.is_empty() || items.len() > MAX_MEMBERS {
        return Err(invalid());
    }
    let mut members: Vec<Member> = Vec::with_capacity(items.len());
    let mut found_lead = false;
    for item in items {
        exact_object(item, MEMBER_KEYS)?;
        let session_id = text_of(item, "sessionId")?;
        if !is_session_id(session_id) || members.iter().any(|m| m.session_id == session_id) {
            return Err(invalid());
        }
        let role = match text_of(item, "role")? {
            "lead" => Role::Lead,
            "worker" => Role::Worker,
            _ => return Err(invalid()),
        };
        // The lead's session must say lead, and nobody else may.
        let is_lead = session_id == lead_id;
        if is_lead != (role == Role::Lead) {
            return Err(invalid());
        }
        found_lead |= is_lead;
        members.push(Member {
            session_id: session_id.to_string(),
            role,
        });
    }
    if !found_lead {
        return Err(invalid());
    }
    let created_at = match value.get("createdAt") {
        Some(Js::Num(n)) if crate::contract::value::is_safe_integer(*n) && *n > 0.0 => *n as i64,
        _ => return Err(invalid()),
    };
    if !dense(value.get("capabilities"))?.is_empty() {
        return Err(invalid());
    }
    Ok(Manifest {
        run_id: run_id.to_string(),
        lead_id: lead_id.to_string(),
        members,
        created_at,
    })
}

/// A plain or null-prototype object (not a proxy, not an array) whose own keys are all strings
/// among `allowed`, each an enumerable data property. Keys are read as own properties only.
fn exact_object(value: &Js, allowed: &[&str]) -> Result<(), Failure> {
    let Js::Object(object) = value else {
        return Err(invalid());
    };
    if object.proto == Proto::Other || object.symbols {
        return Err(invalid());
    }
    for (key, item) in &object.members {
        if key.lone.is_some() || !allowed.contains(&key.text.as_str()) || *item == Js::Hidden {
            return Err(invalid());
        }
    }
    Ok(())
}

/// An own string member without unpaired surrogates.
fn text_of<'v>(value: &'v Js, key: &str) -> Result<&'v str, Failure> {
    value.get(key).and_then(Js::as_str).ok_or_else(invalid)
}

/// The elements of an array with only index keys, no hole and no accessor.
fn dense(value: Option<&Js>) -> Result<Vec<&Js>, Failure> {
    let Some(Js::Array(JsArray { items, extra_keys })) = value else {
        return Err(invalid());
    };
    if *extra_keys {
        return Err(invalid());
    }
    items
        .iter()
        .map(|item| match item {
            Some(Js::Hidden) | None => Err(invalid()),
            Some(v) => Ok(v),
        })
        .collect()
}

/// `^team_` + a lowercase UUID v4.
pub fn is_run_id(text: &str) -> bool {
    text.strip_prefix("team_").is_some_and(is_uuid_v4)
}

/// `^tmuxdeck-` + a lowercase UUID v4.
pub fn is_session_id(text: &str) -> bool {
    text.strip_prefix("tmuxdeck-").is_some_and(is_uuid_v4)
}

/// `xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`, lowercase hex.
fn is_uuid_v4(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            14 => c == b'4',
            19 => matches!(c, b'8' | b'9' | b'a' | b'b'),
            _ => matches!(c, b'0'..=b'9' | b'a'..=b'f'),
        })
}

/// The manifest file's path and its directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestPath {
    /// The path as given, trimmed.
    pub path: String,
    /// `dirname(path)` as `node:path` (POSIX) computes it.
    pub parent: String,
}

impl ManifestPath {
    /// `{"path":..,"parent":..}`.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"path\":");
        write_json_string(&mut out, &self.path);
        out.push_str(",\"parent\":");
        write_json_string(&mut out, &self.parent);
        out.push('}');
        out
    }
}

/// `readTeamManifest`'s first step: no manifest (`None`) when the argument is not a string or
/// is blank after JavaScript's `trim`; `ERR_TEAM_MANIFEST_INVALID` when the trimmed path is not
/// absolute; otherwise the trimmed path and its directory.
///
/// An unpaired surrogate is carried as U+FFFD, which is what Node's `fs` makes of it when it
/// encodes a path as UTF-8.
pub fn resolve_path(value: &Js) -> Result<Option<ManifestPath>, Failure> {
    let Js::Str(text) = value else {
        return Ok(None);
    };
    let path = js_trim(&text.text);
    if path.is_empty() {
        return Ok(None);
    }
    if !path.starts_with('/') {
        return Err(invalid());
    }
    Ok(Some(ManifestPath {
        path: path.to_string(),
        parent: posix_dirname(path).to_string(),
    }))
}

/// Whether `c` is what `String.prototype.trim` strips: ECMAScript WhiteSpace (TAB, VT, FF,
/// ZWNBSP, the Zs category) and LineTerminator. Unlike `char::is_whitespace` it strips U+FEFF
/// and keeps U+0085 and the other non-Zs White_Space controls (U+001C..U+001F).
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{a}' | '\u{b}' | '\u{c}' | '\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// `String.prototype.trim`.
pub fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_whitespace)
}

/// `path.posix.dirname` of a path that starts with `/`.
pub fn posix_dirname(path: &str) -> &str {
    let bytes = path.as_bytes();
    // The last slash before the last name, skipping trailing slashes (index 0 is the root).
    let mut end = None;
    let mut in_trailing_slashes = true;
    for i in (1..bytes.len()).rev() {
        if bytes[i] == b'/' {
            if !in_trailing_slashes {
                end = Some(i);
                break;
            }
        } else {
            in_trailing_slashes = false;
        }
    }
    match end {
        None => "/",
        // Node keeps a leading `//` (POSIX leaves its meaning to the implementation).
        Some(1) => "//",
        Some(end) => &path[..end],
    }
}

/// What an `lstat` or `fstat` says, as far as the rules care.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    /// `isDirectory()`.
    pub directory: bool,
    /// `isFile()`.
    pub file: bool,
    /// `isSymbolicLink()`.
    pub symlink: bool,
    /// `st_mode`.
    pub mode: u64,
    /// `st_uid`.
    pub uid: u64,
    /// `st_size`.
    pub size: u64,
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
}

/// The directory rules: a directory, not a symlink, owned by `uid` (when the platform has
/// one), mode bits exactly 0700. When `before` is given (the same directory's earlier facts),
/// it must also be that same directory. Refusals are `ERR_TEAM_MANIFEST_UNAVAILABLE`.
pub fn check_directory(
    stat: &Stat,
    uid: Option<u64>,
    before: Option<&Stat>,
) -> Result<(), Failure> {
    let owned = uid.is_none_or(|uid| stat.uid == uid);
    if !stat.directory || stat.symlink || !owned || stat.mode & 0o777 != DIRECTORY_MODE {
        return Err(unavailable());
    }
    same_object(stat, before)
}

/// The file rules: a regular file, not a symlink, at most [`MAX_BYTES`], owned by `uid` (when
/// the platform has one), mode bits exactly 0600. When `before` is given (the `lstat` of the
/// path, this being the `fstat` of the opened descriptor), it must be the same file.
pub fn check_file(stat: &Stat, uid: Option<u64>, before: Option<&Stat>) -> Result<(), Failure> {
    let owned = uid.is_none_or(|uid| stat.uid == uid);
    if !stat.file
        || stat.symlink
        || stat.size > MAX_BYTES
        || !owned
        || stat.mode & 0o777 != FILE_MODE
    {
        return Err(unavailable());
    }
    same_object(stat, before)
}

fn same_object(stat: &Stat, before: Option<&Stat>) -> Result<(), Failure> {
    match before {
        Some(b) if (b.dev, b.ino) != (stat.dev, stat.ino) => Err(unavailable()),
        _ => Ok(()),
    }
}

/// The bytes read from the file (a reader asks for at most [`MAX_BYTES`] + 1): more than the
/// limit means the file grew after it was checked.
pub fn check_length(read: u64) -> Result<(), Failure> {
    if read > MAX_BYTES {
        return Err(unavailable());
    }
    Ok(())
}

/// A non-negative integer fact: a number (safe integer) or a BigInt (`lstat` with
/// `{bigint: true}`).
fn fact_number(value: &Js, name: &str) -> Result<u64, Failure> {
    let n = match value {
        Js::Num(_) => value.safe_integer().and_then(|n| u64::try_from(n).ok()),
        Js::BigInt(digits) => digits.parse::<u64>().ok(),
        _ => None,
    };
    n.ok_or_else(|| Failure::type_error(format!("{name} must be a non-negative integer")))
}

fn fact_bool(value: &Js, name: &str) -> Result<bool, Failure> {
    match value {
        Js::Bool(b) => Ok(*b),
        _ => Err(Failure::type_error(format!("{name} must be a boolean"))),
    }
}

/// Reads stat facts `{directory, file, symlink, mode, uid, size?, dev?, ino?}` (a caller's
/// mistake, not a fact about the file, so a `TypeError`).
fn stat_of(value: &Js, name: &str) -> Result<Stat, Failure> {
    if !matches!(value, Js::Object(o) if o.proto != Proto::Other) {
        return Err(Failure::type_error(format!("{name} must be an object")));
    }
    let field = |key: &str| value.get(key).unwrap_or(&Js::Undefined);
    let optional = |key: &str| match field(key) {
        Js::Undefined => Ok(0),
        v => fact_number(v, &format!("{name}.{key}")),
    };
    Ok(Stat {
        directory: fact_bool(field("directory"), &format!("{name}.directory"))?,
        file: fact_bool(field("file"), &format!("{name}.file"))?,
        symlink: fact_bool(field("symlink"), &format!("{name}.symlink"))?,
        mode: fact_number(field("mode"), &format!("{name}.mode"))?,
        uid: fact_number(field("uid"), &format!("{name}.uid"))?,
        size: optional("size")?,
        dev: optional("dev")?,
        ino: optional("ino")?,
    })
}

/// `(stat, uid?, before?)`: `uid` undefined where the platform has none (no ownership check);
/// `before` undefined for the first check.
fn check_args(a: Args<'_>) -> Result<(Stat, Option<u64>, Option<Stat>), Failure> {
    let stat = stat_of(a.get(0), "stat")?;
    let uid = match a.get(1) {
        Js::Undefined => None,
        v => Some(fact_number(v, "uid")?),
    };
    let before = match a.get(2) {
        Js::Undefined => None,
        v => Some(stat_of(v, "before")?),
    };
    Ok((stat, uid, before))
}

fn check_directory_op(a: Args<'_>) -> Result<Out, Failure> {
    let (stat, uid, before) = check_args(a)?;
    check_directory(&stat, uid, before.as_ref()).map(|()| Out::Undefined)
}

fn check_file_op(a: Args<'_>) -> Result<Out, Failure> {
    let (stat, uid, before) = check_args(a)?;
    check_file(&stat, uid, before.as_ref()).map(|()| Out::Undefined)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::call_json;

    const RUN: &str = "team_1a2b3c4d-5e6f-47a8-b9c0-d1e2f3a4b5c6";
    const LEAD: &str = "tmuxdeck-c8f1e03a-9b4d-4c7e-81f6-a8b0c3d5e7f9";
    const WORKER: &str = "tmuxdeck-9a1b3c5d-7e9f-4a2b-84cc-8f1e03a9b4d2";

    fn manifest_text(members: &str, extra: &str) -> String {
        format!(
            r#"{{"version":"{VERSION}","backend":"{BACKEND}","runId":"{RUN}","leadId":"{LEAD}",
            "members":{members},"createdAt":1723680000000,"capabilities":[]{extra}}}"#
        )
    }

    fn valid_members() -> String {
        format!(
            r#"[{{"sessionId":"{LEAD}","role":"lead"}},{{"sessionId":"{WORKER}","role":"worker"}}]"#
        )
    }

    fn parse_text(text: &str) -> Result<Manifest, Failure> {
        parse(&Js::str(text))
    }

    #[test]
    fn a_valid_manifest_parses_from_text_and_value() {
        let text = manifest_text(&valid_members(), "");
        let m = parse_text(&text).unwrap();
        assert_eq!(m.members.len(), 2);
        assert_eq!(m.members[0].role, Role::Lead);
        assert_eq!(parse(&Js::parse_json(&text).unwrap()).unwrap(), m);
        assert_eq!(
            m.to_json(),
            [
                &format!(r#"{{"version":"{VERSION}","backend":"{BACKEND}","runId":"{RUN}","#),
                &format!(r#""leadId":"{LEAD}","members":[{{"sessionId":"{LEAD}","role":"lead"}},"#),
                &format!(r#"{{"sessionId":"{WORKER}","role":"worker"}}],"#),
                r#""createdAt":1723680000000,"capabilities":[]}"#,
            ]
            .concat()
        );
        // JSON.parse: the last of a repeated key wins.
        let repeated = manifest_text(&valid_members(), r#","runId":"team_x","runId":"RUN""#)
            .replace("\"RUN\"", &format!("\"{RUN}\""));
        assert!(parse_text(&repeated).is_ok());
        // Null-prototype objects pass; others do not.
        let Js::Object(mut o) = Js::parse_json(&text).unwrap() else {
            panic!()
        };
        o.proto = Proto::Null;
        assert!(parse(&Js::Object(o.clone())).is_ok());
        o.proto = Proto::Other;
        assert_eq!(parse(&Js::Object(o)).unwrap_err(), invalid());
    }

    #[test]
    fn every_rule_refuses_with_the_invalid_code_only() {
        let lead = format!(r#"{{"sessionId":"{LEAD}","role":"lead"}}"#);
        let worker = format!(r#"{{"sessionId":"{WORKER}","role":"worker"}}"#);
        let cases = [
            manifest_text(&valid_members(), r#","scope":"secret""#),
            manifest_text(&valid_members(), "").replace(VERSION, "tmuxdeck.team.v2"),
            manifest_text(&valid_members(), "").replace(r#""tmuxdeck","#, r#""tmux","#),
            manifest_text(&valid_members(), "")
                .replace(RUN, "team_1A2B3C4D-5e6f-47a8-b9c0-d1e2f3a4b5c6"),
            manifest_text(&valid_members(), "").replace(RUN, &RUN.replace("-47a8", "-57a8")),
            manifest_text(&valid_members(), "")
                .replace(r#""leadId":"tmuxdeck"#, r#""leadId":"tmuxdek"#),
            manifest_text("[]", ""),
            manifest_text(&format!("[{worker}]"), ""),
            manifest_text(&format!("[{lead},{lead}]"), ""),
            manifest_text(
                &format!("[{},{worker}]", lead.replace("lead\"}", "worker\"}")),
                "",
            ),
            manifest_text(
                &format!("[{lead},{}]", worker.replace("worker\"}", "lead\"}")),
                "",
            ),
            manifest_text(
                &format!("[{lead},{}]", worker.replace("worker\"}", "boss\"}")),
                "",
            ),
            manifest_text(
                &format!(r#"[{lead},{{"sessionId":"{WORKER}","role":"worker","x":1}}]"#),
                "",
            ),
            manifest_text(&format!(r#"[{lead},{{"sessionId":"{WORKER}"}}]"#), ""),
            manifest_text(&format!("[{lead},[]]"), ""),
            manifest_text(&valid_members(), "").replace("1723680000000", "0"),
            manifest_text(&valid_members(), "").replace("1723680000000", "-0"),
            manifest_text(&valid_members(), "").replace("1723680000000", "1.5"),
            manifest_text(&valid_members(), "").replace("1723680000000", "9007199254740992"),
            manifest_text(&valid_members(), "").replace("1723680000000", "\"1\""),
            manifest_text(&valid_members(), "")
                .replace(r#""capabilities":[]"#, r#""capabilities":["x"]"#),
            manifest_text(&valid_members(), "")
                .replace(r#""capabilities":[]"#, r#""capabilities":{}"#),
            manifest_text(&valid_members(), "").replace(r#","capabilities":[]"#, ""),
            manifest_text(&valid_members(), "").replace(r#""runId""#, r#""__proto__""#),
            "\u{feff}".to_string() + &manifest_text(&valid_members(), ""),
            manifest_text(&valid_members(), "") + "x",
            "[]".into(),
            "null".into(),
            "\"text\"".into(),
            String::new(),
        ];
        for text in &cases {
            assert_eq!(parse_text(text).unwrap_err(), invalid(), "{text}");
        }
        let too_many: Vec<String> = std::iter::once(lead.clone())
            .chain((1..=MAX_MEMBERS).map(|i| {
                let id = format!("tmuxdeck-{i:08}-0000-4000-8000-000000000000");
                format!(r#"{{"sessionId":"{id}","role":"worker"}}"#)
            }))
            .collect();
        assert!(parse_text(&manifest_text(&format!("[{}]", too_many.join(",")), "")).is_err());
        assert!(
            parse_text(&manifest_text(
                &format!("[{}]", too_many[..64].join(",")),
                ""
            ))
            .is_ok()
        );
        for value in [
            Js::Undefined,
            Js::Null,
            Js::Num(1.0),
            Js::Proxy,
            Js::Function,
        ] {
            assert_eq!(parse(&value).unwrap_err(), invalid());
        }
    }

    #[test]
    fn snapshot_markers_are_refused() {
        let text = manifest_text(&valid_members(), "");
        for (from, to) in [
            (format!("\"{LEAD}\","), "h,".to_string()),
            (
                r#""capabilities":["#.to_string(),
                r#""capabilities":[!"#.to_string(),
            ),
            (r#""members":["#.to_string(), r#""members":[_,"#.to_string()),
            (
                r#""members":[{"#.to_string(),
                r#""members":[{!"#.to_string(),
            ),
            (
                r#""members":["#.to_string(),
                r#""members":p,"x":["#.to_string(),
            ),
            (
                r#""capabilities":[]"#.to_string(),
                r#""capabilities":[h]"#.to_string(),
            ),
            (
                "1723680000000".to_string(),
                "b\"1723680000000\"".to_string(),
            ),
        ] {
            let snapshot = text.replacen(&from, &to, 1);
            assert_ne!(snapshot, text);
            let value = Js::parse_snapshot(&snapshot).unwrap();
            assert_eq!(parse(&value).unwrap_err(), invalid(), "{snapshot}");
        }
        let proxied = Js::parse_snapshot(&format!("{{!{}", &text[1..])).unwrap();
        assert!(parse(&proxied).is_err());
    }

    #[test]
    fn paths_trim_as_javascript_and_take_nodes_dirname() {
        let resolve = |s: &str| resolve_path(&Js::str(s));
        assert_eq!(resolve("").unwrap(), None);
        assert_eq!(resolve(" \u{feff}\u{3000}\n").unwrap(), None);
        assert_eq!(resolve_path(&Js::Num(1.0)).unwrap(), None);
        assert_eq!(resolve_path(&Js::Null).unwrap(), None);
        assert_eq!(resolve("a/b").unwrap_err(), invalid());
        // U+0085 is White_Space for Rust but not for JavaScript's trim.
        assert_eq!(resolve("\u{85}/a").unwrap_err(), invalid());
        let p = resolve("\u{feff} /tmp/x/team.json\u{2028}")
            .unwrap()
            .unwrap();
        assert_eq!(
            (p.path.as_str(), p.parent.as_str()),
            ("/tmp/x/team.json", "/tmp/x")
        );
        for (path, parent) in [
            ("/", "/"),
            ("/a", "/"),
            ("/a/", "/"),
            ("/a/b//", "/a"),
            ("//a", "//"),
            ("///a", "//"),
            ("/a//b", "/a/"),
            ("//", "/"),
        ] {
            assert_eq!(posix_dirname(path), parent, "{path}");
        }
    }

    fn dir() -> Stat {
        Stat {
            directory: true,
            mode: 0o40700,
            uid: 1000,
            dev: 1,
            ino: 2,
            ..Stat::default()
        }
    }

    fn file() -> Stat {
        Stat {
            file: true,
            mode: 0o100600,
            uid: 1000,
            size: 10,
            dev: 1,
            ino: 3,
            ..Stat::default()
        }
    }

    #[test]
    fn stat_rules() {
        assert!(check_directory(&dir(), Some(1000), None).is_ok());
        assert!(check_directory(&dir(), None, Some(&dir())).is_ok());
        for bad in [
            Stat {
                directory: false,
                ..dir()
            },
            Stat {
                symlink: true,
                ..dir()
            },
            Stat {
                mode: 0o40755,
                ..dir()
            },
            Stat {
                mode: 0o40600,
                ..dir()
            },
            Stat { uid: 0, ..dir() },
        ] {
            assert_eq!(
                check_directory(&bad, Some(1000), None).unwrap_err(),
                unavailable()
            );
        }
        assert!(check_directory(&dir(), Some(1000), Some(&Stat { ino: 9, ..dir() })).is_err());
        assert!(check_file(&file(), Some(1000), None).is_ok());
        assert!(
            check_file(
                &Stat {
                    size: MAX_BYTES,
                    ..file()
                },
                Some(1000),
                Some(&file())
            )
            .is_ok()
        );
        for bad in [
            Stat {
                file: false,
                ..file()
            },
            Stat {
                symlink: true,
                ..file()
            },
            Stat {
                size: MAX_BYTES + 1,
                ..file()
            },
            Stat {
                mode: 0o100644,
                ..file()
            },
            Stat {
                mode: 0o100400,
                ..file()
            },
            Stat { uid: 0, ..file() },
        ] {
            assert_eq!(
                check_file(&bad, Some(1000), None).unwrap_err(),
                unavailable()
            );
        }
        assert!(check_file(&file(), Some(1000), Some(&Stat { dev: 7, ..file() })).is_err());
        assert!(check_length(MAX_BYTES).is_ok());
        assert_eq!(check_length(MAX_BYTES + 1).unwrap_err(), unavailable());
    }

    #[test]
    fn through_the_c_entry() {
        let r = call_json(
            "team.parse",
            &format!("[{}]", manifest_text(&valid_members(), "")),
        )
        .unwrap();
        assert!(
            r.starts_with(r#"{"ok":true,"value":{"version":"tmuxdeck.team.v1""#),
            "{r}"
        );
        let r = call_json("team.parse", r#"["{\"cwd\":\"/secret\"}"]"#).unwrap();
        assert_eq!(
            r,
            [
                r#"{"ok":false,"error":{"class":"TeamManifestError","#,
                r#""message":"ERR_TEAM_MANIFEST_INVALID","detail":"ERR_TEAM_MANIFEST_INVALID","#,
                r#""code":"ERR_TEAM_MANIFEST_INVALID"}}"#,
            ]
            .concat()
        );
        let r = call_json(
            "team.checkFile",
            r#"[{"directory":false,"file":true,"symlink":false,"mode":33188,"uid":5,"size":1},5]"#,
        )
        .unwrap();
        assert!(r.contains(UNAVAILABLE), "{r}");
        let r = call_json("team.checkDirectory", r#"[{"directory":true},5]"#).unwrap();
        assert!(r.contains(r#""class":"TypeError""#), "{r}");
        let r = call_json("team.resolvePath", r#"[" /a/b "]"#).unwrap();
        assert_eq!(r, r#"{"ok":true,"value":{"path":"/a/b","parent":"/a"}}"#);
        let r = call_json("team.constants", "[]").unwrap();
        assert!(r.contains(r#""MAX_TEAM_MANIFEST_BYTES":65536"#), "{r}");
    }
}

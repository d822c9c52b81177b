//! `agent-intercom pack send|receive`: signed transport envelopes (docs/envelope.md) to a file,
//! to stdout or over HTTP to `agent-intercom serve`, and from a file or stdin into the
//! scratchpad.

mod http;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use agent_intercom_a2a::handoff;
use agent_intercom_a2a::keys::{self as dir, KeyDir};
use agent_intercom_core::canonical::{self, Value};
use agent_intercom_core::envelope::{
    self, ContentType, Fields, MAX_ENVELOPE_BYTES, MAX_LIFETIME_MS, Sender, SignatureKind, keys,
};
use agent_intercom_core::{Error, ErrorCode};

use crate::keys::{Options, Problem, failed, keys_dir, usage};

/// The help of `agent-intercom pack`.
pub const HELP: &str =
    "  agent-intercom pack send --key KEY_ID --content-type TYPE --payload FILE [OPTIONS]
      sign a TransportEnvelopeV1 with an own key; print it, write it, or POST it
      TYPE: a2a_message, a2a_task, handoff_bundle, context_package (payloads: docs/envelope.md)
      --recipient AGENT  who it is for (default: none)
      --out FILE         write it to FILE (0600) instead of stdout
      --to URL           POST it to http://HOST:PORT[/PATH] (default path /v1/a2a/handoff)
      --token-file FILE  a bearer token for --to, read from a 0600 file
      --timeout SECS     for --to: connect, send and answer each within SECS (default 30)
      --agent-id ID      the sender (default $AGENT_INTERCOM_AGENT_ID, else KEY_ID)
      --agent-type TYPE  the sender's type (default agent-intercom)
      --capability CAP   a capability of the sender (repeatable)
      --fingerprint F    the sending daemon (default: the Ed25519 key's fingerprint,
                         hmac-sha256:KEY_ID for an HMAC key)
      --metadata FILE    a JSON object of transport metadata (default {})
      --expires-in SECS  valid for SECS after now (default 3600, at most 86400)
  agent-intercom pack receive [--in FILE] [--db PATH]
      verify an envelope (FILE, else stdin) against the keys directory, refuse a replay
      (nonces kept in the store), land it as the sender's message or task; print what landed
      --db PATH          store (default $AGENT_INTERCOM_SCRATCHPAD,
                         else <agent-dir>/scratchpad.sqlite)
  both take --keys DIR (default $AGENT_INTERCOM_KEYS_DIR, else agent-intercom-keys beside the
  scratchpad's default store)";

/// The variable naming the sending agent.
pub const AGENT_ID_ENV: &str = "AGENT_INTERCOM_AGENT_ID";
/// `--expires-in` by default, in seconds.
pub const DEFAULT_EXPIRES_IN_SECS: i64 = 3600;
/// `--timeout` by default, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

/// `agent-intercom pack ...`.
pub fn run(args: &[&str]) -> ExitCode {
    let usage = |message: &str| usage("pack", message, HELP);
    let Some((command, rest)) = args.split_first() else {
        return usage("pack needs send or receive");
    };
    let rest: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
    let parsed = match *command {
        "send" => Options::parse(
            &rest,
            &[
                "--key",
                "--content-type",
                "--payload",
                "--recipient",
                "--out",
                "--to",
                "--token-file",
                "--timeout",
                "--agent-id",
                "--agent-type",
                "--capability",
                "--fingerprint",
                "--metadata",
                "--expires-in",
                "--keys",
            ],
            &["--capability"],
            &[],
        ),
        "receive" => Options::parse(&rest, &["--in", "--db", "--keys"], &[], &[]),
        other => return usage(&format!("no pack command {other:?}")),
    };
    let options = match parsed {
        Ok(o) => o,
        Err(e) => return usage(&e),
    };
    let result = if *command == "send" {
        send(&options)
    } else {
        receive(&options)
    };
    match result {
        Ok(code) => code,
        Err(Problem::Usage(message)) => usage(&message),
        Err(Problem::Refused(error)) => failed(&error),
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn io(what: &str, e: std::io::Error) -> Error {
    Error::new(ErrorCode::StoreIo, format!("{what}: {e}"))
}

/// Reads at most `limit` + 1 bytes of `path` ("-" is stdin), so that what is too large is
/// refused by its size without being read whole.
fn read_limited(path: Option<&str>, limit: usize) -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::new();
    let cap = limit as u64 + 1;
    match path {
        None | Some("-") => std::io::stdin()
            .lock()
            .take(cap)
            .read_to_end(&mut bytes)
            .map_err(|e| io("cannot read stdin", e))?,
        Some(p) => std::fs::File::open(p)
            .map_err(|e| io(&format!("cannot open {p}"), e))?
            .take(cap)
            .read_to_end(&mut bytes)
            .map_err(|e| io(&format!("cannot read {p}"), e))?,
    };
    Ok(bytes)
}

/// A JSON file of the canonical data model (`what` names it in refusals).
fn json_file(path: &str, what: &str) -> Result<Value<'static>, Error> {
    let bytes = read_limited(Some(path), MAX_ENVELOPE_BYTES)?;
    if bytes.len() > MAX_ENVELOPE_BYTES {
        return Err(Error::new(
            ErrorCode::EnvelopeTooLarge,
            format!("{what} {path} is larger than an envelope ({MAX_ENVELOPE_BYTES} bytes)"),
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        Error::new(
            ErrorCode::InvalidUtf8,
            format!(
                "{what} {path} is not UTF-8 (byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    let value = canonical::parse(&text)
        .map_err(|e| Error::new(e.code(), format!("{what} {path}: {}", e.message())))?;
    Ok(value.owned())
}

fn nonce() -> Result<String, Error> {
    let mut bytes = [0u8; 24];
    dir::random_bytes(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn send(options: &Options) -> Result<ExitCode, Problem> {
    let key_id = options.require("--key")?;
    let content_type = options.require("--content-type")?;
    let content_type = ContentType::parse(content_type).ok_or_else(|| {
        format!(
            "--content-type is one of a2a_message, a2a_task, handoff_bundle, context_package, \
             not {content_type:?}"
        )
    })?;
    let payload_file = options.require("--payload")?;
    if options.get("--out").is_some() && options.get("--to").is_some() {
        return Err("--out and --to exclude each other".to_string().into());
    }
    let expires_in = match options.get("--expires-in") {
        None => DEFAULT_EXPIRES_IN_SECS,
        Some(s) => s
            .parse::<i64>()
            .ok()
            .filter(|n| *n > 0 && n * 1000 <= MAX_LIFETIME_MS)
            .ok_or_else(|| format!("--expires-in is 1 to {} seconds", MAX_LIFETIME_MS / 1000))?,
    };
    let timeout = match options.get("--timeout") {
        None => DEFAULT_TIMEOUT_SECS,
        Some(s) => s
            .parse::<u64>()
            .ok()
            .filter(|n| (1..=3600).contains(n))
            .ok_or_else(|| "--timeout is 1 to 3600 seconds".to_string())?,
    };
    let target = options.get("--to").map(http::target).transpose()?;
    let bearer = match options.get("--token-file") {
        Some(_) if target.is_none() => {
            return Err("--token-file goes with --to".to_string().into());
        }
        Some(file) => Some(dir::read_secret_file(Path::new(file))?.trim().to_string()),
        None => None,
    };
    if bearer
        .as_deref()
        .is_some_and(|t| t.is_empty() || t.chars().any(|c| c.is_control()))
    {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "the token file holds no usable token (one line of visible characters)",
        )
        .into());
    }
    let keys = KeyDir::open(&keys_dir(options))?;
    let signer = keys.signer(key_id)?;
    let payload = json_file(payload_file, "the payload")?;
    let metadata = match options.get("--metadata") {
        None => Vec::new(),
        Some(file) => match json_file(file, "the metadata")? {
            Value::Object(m) => m.into_iter().map(|(k, v)| (k.into_owned(), v)).collect(),
            _ => {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!("the metadata {file} must be a JSON object"),
                )
                .into());
            }
        },
    };
    let env_agent = std::env::var(AGENT_ID_ENV)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty());
    let agent_id = options
        .get("--agent-id")
        .map(str::to_string)
        .or(env_agent)
        .unwrap_or_else(|| key_id.to_string());
    let fingerprint = match (options.get("--fingerprint"), signer.kind()) {
        (Some(f), _) => f.to_string(),
        (None, SignatureKind::Ed25519) => signer
            .public_key()
            .map(|k| keys::fingerprint(&k))
            .unwrap_or_default(),
        (None, SignatureKind::HmacSha256) => format!("hmac-sha256:{key_id}"),
    };
    let now = now_ms();
    let fields = Fields {
        sent_at_ms: now,
        sender: Sender {
            agent_id,
            agent_type: options
                .get("--agent-type")
                .unwrap_or("agent-intercom")
                .to_string(),
            daemon_fingerprint: fingerprint,
            capabilities: options
                .all("--capability")
                .into_iter()
                .map(str::to_string)
                .collect(),
        },
        recipient: options.get("--recipient").map(str::to_string),
        content_type,
        payload,
        metadata,
        nonce: nonce()?,
        expires_at_ms: now + expires_in * 1000,
    };
    let text = envelope::sign(&fields, &signer)?;
    let summary = format!(
        "{} envelope signed by {} {key_id} (nonce {}, expires {})",
        content_type.as_str(),
        signer.kind().as_str(),
        fields.nonce,
        envelope::format_timestamp(fields.expires_at_ms)
    );
    if let Some(target) = target {
        let response = http::post(
            &target,
            text.as_bytes(),
            bearer.as_deref(),
            Duration::from_secs(timeout),
        )?;
        let body = String::from_utf8_lossy(&response.body);
        if (200..300).contains(&response.status) {
            eprintln!("agent-intercom: {summary}: accepted ({})", response.status);
            println!("{}", body.trim_end());
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!(
            "agent-intercom: {summary}: refused by {} with HTTP {}: {}",
            target.authority,
            response.status,
            body.trim_end()
        );
        return Ok(ExitCode::FAILURE);
    }
    match options.get("--out") {
        Some(out) => {
            write_private(Path::new(out), &text)?;
            eprintln!("agent-intercom: {summary}: written to {out}");
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            writeln!(stdout, "{text}")
                .and_then(|()| stdout.flush())
                .map_err(|e| io("cannot write stdout", e))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `text` to `path`, created 0600 (an envelope may carry private content), replacing a
/// regular file but never following a symbolic link.
fn write_private(path: &Path, text: &str) -> Result<(), Error> {
    use std::os::unix::fs::OpenOptionsExt;
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(Error::new(
            ErrorCode::StoreIo,
            format!("refusing {}: it is a symbolic link", path.display()),
        ));
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| io(&format!("cannot create {}", path.display()), e))?;
    writeln!(file, "{text}")
        .and_then(|()| file.sync_all())
        .map_err(|e| io(&format!("cannot write {}", path.display()), e))
}

fn receive(options: &Options) -> Result<ExitCode, Problem> {
    use agent_intercom_scratchpad::{Config, Store, SystemClock};
    let body = read_limited(options.get("--in"), MAX_ENVELOPE_BYTES)?;
    let keys = KeyDir::open(&keys_dir(options))?;
    let path = options.get("--db").map(PathBuf::from).unwrap_or_else(|| {
        agent_intercom_scratchpad::default_path(
            &agent_intercom_scratchpad::api::process_env,
            agent_intercom_broker::config::agent_dir_from_env,
        )
    });
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| io(&format!("cannot create {}", parent.display()), e))?;
    }
    let mut store = Store::open(&path, Config::default(), std::sync::Arc::new(SystemClock))?;
    let landed = handoff::accept(&mut store, &keys, &body, now_ms())?;
    println!("{}", landed.to_json());
    Ok(ExitCode::SUCCESS)
}

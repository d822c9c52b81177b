//! `agent-intercom pack send|receive`: signed transport envelopes (docs/envelope.md) to a file,
//! to stdout or over HTTP to `agent-intercom serve`, and from a file or stdin into the
//! scratchpad.

mod http;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_intercom_a2a::handoff;
use agent_intercom_a2a::keys::{self as dir, KeyDir};
use agent_intercom_core::canonical::{self, Value};
use agent_intercom_core::envelope::{
    self, ContentType, Fields, MAX_ENVELOPE_BYTES, MAX_LIFETIME_MS, Sender, SignatureKind, keys,
};
use agent_intercom_core::{Error, ErrorCode};
use clap::{Args, Subcommand};

use crate::fail::{Failure, Outcome, invalid};

#[derive(Args)]
pub struct PackArgs {
    #[command(subcommand)]
    command: PackCommand,
    /// Keys directory (default $AGENT_INTERCOM_KEYS_DIR, else agent-intercom-keys beside the
    /// scratchpad's default store)
    #[arg(long, value_name = "DIR", global = true)]
    keys: Option<PathBuf>,
}

#[derive(Subcommand)]
enum PackCommand {
    /// Sign a TransportEnvelopeV1 with an own key; print it, write it, or POST it
    Send(Box<SendArgs>),
    /// Verify an envelope (FILE, else stdin) against the keys directory, refuse a replay (nonces
    /// kept in the store), land it as the sender's message or task; print what landed
    Receive {
        /// The envelope (default stdin)
        #[arg(long = "in", value_name = "FILE")]
        input: Option<PathBuf>,
        /// Store (default $AGENT_INTERCOM_SCRATCHPAD, else <agent-dir>/scratchpad.sqlite); its
        /// directory must exist
        #[arg(long, value_name = "PATH")]
        db: Option<PathBuf>,
    },
}

#[derive(Args)]
struct SendArgs {
    /// An own key's id
    #[arg(long, value_name = "KEY_ID")]
    key: String,
    /// a2a_message, a2a_task, handoff_bundle or context_package (payloads: docs/envelope.md)
    #[arg(long, value_name = "TYPE", value_parser = content_type)]
    content_type: ContentType,
    /// The payload, a JSON file
    #[arg(long, value_name = "FILE")]
    payload: PathBuf,
    /// Who it is for (default: none)
    #[arg(long, value_name = "AGENT")]
    recipient: Option<String>,
    /// Write it to FILE (0600) instead of stdout
    #[arg(long, value_name = "FILE", conflicts_with = "to")]
    out: Option<PathBuf>,
    /// POST it to http://HOST:PORT[/PATH] (default path /v1/a2a/handoff)
    #[arg(long, value_name = "URL")]
    to: Option<String>,
    /// A bearer token for --to, read from a 0600 file
    #[arg(long, value_name = "FILE", requires = "to")]
    token_file: Option<PathBuf>,
    /// For --to: connect, send and answer each within SECS, 1 to 3600
    #[arg(
        long,
        value_name = "SECS",
        allow_hyphen_values = true,
        default_value_t = DEFAULT_TIMEOUT_SECS,
        value_parser = clap::value_parser!(u64).range(1..=3600),
    )]
    timeout: u64,
    /// The sender (default $AGENT_INTERCOM_AGENT_ID, else KEY_ID)
    #[arg(long, value_name = "ID")]
    agent_id: Option<String>,
    /// The sender's type
    #[arg(long, value_name = "TYPE", default_value = "agent-intercom")]
    agent_type: String,
    /// A capability of the sender (repeatable)
    #[arg(long = "capability", value_name = "CAP")]
    capabilities: Vec<String>,
    /// The sending daemon (default: the Ed25519 key's fingerprint, hmac-sha256:KEY_ID for an
    /// HMAC key)
    #[arg(long, value_name = "F")]
    fingerprint: Option<String>,
    /// A JSON object of transport metadata (default {})
    #[arg(long, value_name = "FILE")]
    metadata: Option<PathBuf>,
    /// Valid for SECS after now, 1 to 86400
    #[arg(
        long,
        value_name = "SECS",
        allow_hyphen_values = true,
        default_value_t = DEFAULT_EXPIRES_IN_SECS,
        value_parser = clap::value_parser!(i64).range(1..=MAX_LIFETIME_MS / 1000),
    )]
    expires_in: i64,
}

fn content_type(text: &str) -> Result<ContentType, String> {
    ContentType::parse(text)
        .ok_or_else(|| "one of a2a_message, a2a_task, handoff_bundle, context_package".to_string())
}

/// The variable naming the sending agent.
pub const AGENT_ID_ENV: &str = "AGENT_INTERCOM_AGENT_ID";
/// `--expires-in` by default, in seconds.
pub const DEFAULT_EXPIRES_IN_SECS: i64 = 3600;
/// `--timeout` by default, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

/// `agent-intercom pack ...`.
pub fn run(args: PackArgs) -> Outcome {
    let keys = crate::paths::keys(args.keys.as_deref()).path;
    match args.command {
        PackCommand::Send(send_args) => send(*send_args, &keys),
        PackCommand::Receive { input, db } => receive(input.as_deref(), db.as_deref(), &keys),
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn io(what: &str, e: std::io::Error) -> Error {
    Error::new(ErrorCode::Io, format!("{what}: {e}"))
}

/// An envelope-sized input (`None` or `-`: stdin), refused by its size beyond the limit.
fn read_envelope_sized(path: Option<&Path>, what: &str) -> Result<Vec<u8>, Failure> {
    let bytes = crate::paths::read_capped(
        path.unwrap_or(Path::new("-")),
        what,
        MAX_ENVELOPE_BYTES as u64,
    )?;
    if bytes.len() > MAX_ENVELOPE_BYTES {
        return Err(Error::new(
            ErrorCode::EnvelopeTooLarge,
            format!("{what} is larger than an envelope ({MAX_ENVELOPE_BYTES} bytes)"),
        )
        .into());
    }
    Ok(bytes)
}

/// A JSON file of the canonical data model (`what` names it in refusals).
fn json_file(path: &Path, what: &str) -> Result<Value<'static>, Failure> {
    let what = format!("{what} {}", path.display());
    let bytes = read_envelope_sized(Some(path), &what)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        Error::new(
            ErrorCode::InvalidUtf8,
            format!(
                "{what} is not UTF-8 (byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    let value = canonical::parse(&text)
        .map_err(|e| Error::new(e.code(), format!("{what}: {}", e.message())))?;
    Ok(value.owned())
}

fn nonce() -> Result<String, Error> {
    let mut bytes = [0u8; 24];
    dir::random_bytes(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn send(args: SendArgs, keys_dir: &Path) -> Outcome {
    let key_id = args.key.as_str();
    let target = args.to.as_deref().map(http::target).transpose()?;
    let bearer = match &args.token_file {
        Some(file) => Some(dir::read_secret_file(file)?.trim().to_string()),
        None => None,
    };
    if bearer
        .as_deref()
        .is_some_and(|t| t.is_empty() || t.chars().any(|c| c.is_control()))
    {
        return Err(invalid(
            "the token file holds no usable token (one line of visible characters)",
        ));
    }
    let keys = KeyDir::open(keys_dir)?;
    let signer = keys.signer(key_id)?;
    let payload = json_file(&args.payload, "the payload")?;
    let metadata = match &args.metadata {
        None => Vec::new(),
        Some(file) => match json_file(file, "the metadata")? {
            Value::Object(m) => m.into_iter().map(|(k, v)| (k.into_owned(), v)).collect(),
            _ => {
                return Err(invalid(format!(
                    "the metadata {} must be a JSON object",
                    file.display()
                )));
            }
        },
    };
    let env_agent = std::env::var(AGENT_ID_ENV)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty());
    let agent_id = args
        .agent_id
        .or(env_agent)
        .unwrap_or_else(|| key_id.to_string());
    let fingerprint = match (args.fingerprint, signer.kind()) {
        (Some(f), _) => f,
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
            agent_type: args.agent_type,
            daemon_fingerprint: fingerprint,
            capabilities: args.capabilities,
        },
        recipient: args.recipient,
        content_type: args.content_type,
        payload,
        metadata,
        nonce: nonce()?,
        expires_at_ms: now + args.expires_in * 1000,
    };
    let text = envelope::sign(&fields, &signer)?;
    let summary = format!(
        "{} envelope signed by {} {key_id} (nonce {}, expires {})",
        fields.content_type.as_str(),
        signer.kind().as_str(),
        fields.nonce,
        envelope::format_timestamp(fields.expires_at_ms)
    );
    if let Some(target) = target {
        let response = http::post(
            &target,
            text.as_bytes(),
            bearer.as_deref(),
            Duration::from_secs(args.timeout),
        )?;
        let body = String::from_utf8_lossy(&response.body);
        if (200..300).contains(&response.status) {
            eprintln!("agent-intercom: {summary}: accepted ({})", response.status);
            println!("{}", body.trim_end());
            return Ok(());
        }
        return Err(refused_by_peer(
            &summary,
            &target.authority,
            response.status,
            &body,
        ));
    }
    match &args.out {
        Some(out) => {
            write_private(out, &text)?;
            eprintln!("agent-intercom: {summary}: written to {}", out.display());
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            writeln!(stdout, "{text}")
                .and_then(|()| stdout.flush())
                .map_err(|e| io("cannot write stdout", e))?;
        }
    }
    Ok(())
}

/// A peer's refusal: the code it gives (`{"code":...}` or a JSON-RPC error's `data.code`) when
/// it is one of ours, else `PEER_REFUSED`; its status and body in the message.
fn refused_by_peer(summary: &str, authority: &str, status: u16, body: &str) -> Failure {
    let doc: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let named = doc.as_ref().and_then(|d| {
        [&d["code"], &d["error"]["code"], &d["error"]["data"]["code"]]
            .into_iter()
            .find_map(|v| v.as_str())
            .and_then(|name| ErrorCode::all().iter().find(|c| c.as_str() == name))
            .copied()
    });
    Failure::Peer(Error::new(
        named.unwrap_or(ErrorCode::PeerRefused),
        format!(
            "{summary}: refused by {authority} with HTTP {status}: {}",
            body.trim_end()
        ),
    ))
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

fn receive(input: Option<&Path>, db: Option<&Path>, keys_dir: &Path) -> Outcome {
    use agent_intercom_scratchpad::{Config, Store, SystemClock};
    let body = read_envelope_sized(input, "the envelope")?;
    let keys = KeyDir::open(keys_dir)?;
    let place = crate::paths::store(db);
    place.ready()?;
    let mut store = Store::open(
        &place.path,
        Config::default(),
        std::sync::Arc::new(SystemClock),
    )?;
    let landed = handoff::accept(&mut store, &keys, &body, now_ms())?;
    println!("{}", landed.to_json());
    Ok(())
}

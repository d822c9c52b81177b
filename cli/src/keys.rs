//! `agent-intercom keys`: the keys directory (agent_intercom_a2a::keys, docs/envelope.md). No
//! secret is ever taken on the command line or printed: secrets are generated into files or
//! read from files.

use std::path::{Path, PathBuf};

use agent_intercom_a2a::keys::{self as dir, KeyDir, KeyInfo};
use agent_intercom_core::envelope::SignatureKind;
use clap::{Args, Subcommand, ValueEnum};

use crate::fail::{Failure, Outcome};

#[derive(Args)]
pub struct KeysArgs {
    #[command(subcommand)]
    command: KeysCommand,
    /// Keys directory (default $AGENT_INTERCOM_KEYS_DIR, else agent-intercom-keys beside the
    /// scratchpad's default store); its parent directory must exist
    #[arg(long, value_name = "DIR", global = true)]
    keys: Option<PathBuf>,
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Make an own signing key (Ed25519) or HMAC secret; the secret stays in its 0600 file
    Generate {
        #[arg(long, value_enum)]
        kind: Kind,
        /// The key id
        #[arg(long, value_name = "KEY_ID")]
        id: String,
    },
    /// Key ids, kinds, own or peer, Ed25519 fingerprints (never a secret)
    List {
        /// One JSON array instead of lines
        #[arg(long)]
        json: bool,
    },
    /// Enroll a peer's Ed25519 public key, or store an HMAC secret shared with a peer
    #[command(group = clap::ArgGroup::new("key").required(true).args(["public", "hmac_secret"]))]
    Import {
        /// The key id
        #[arg(long, value_name = "KEY_ID")]
        id: String,
        /// The peer's Ed25519 public key (SPKI, PEM or DER)
        #[arg(long, value_name = "FILE")]
        public: Option<PathBuf>,
        /// A 0600 file holding the base64 of at least 32 secret bytes
        #[arg(long, value_name = "FILE")]
        hmac_secret: Option<PathBuf>,
    },
    /// Print an Ed25519 key's public half (SPKI PEM), to give to a peer
    ExportPublic {
        /// The key id
        #[arg(long, value_name = "KEY_ID")]
        id: String,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Kind {
    Ed25519,
    #[value(alias = "hmac-sha256")]
    Hmac,
}

impl Kind {
    fn signature(self) -> SignatureKind {
        match self {
            Kind::Ed25519 => SignatureKind::Ed25519,
            Kind::Hmac => SignatureKind::HmacSha256,
        }
    }
}

/// `agent-intercom keys ...`.
pub fn run(args: KeysArgs) -> Outcome {
    let place = crate::paths::keys(args.keys.as_deref());
    match args.command {
        KeysCommand::Generate { kind, id } => {
            place.ready()?;
            generate(kind.signature(), &id, &place.path)
        }
        KeysCommand::List { json } => list(json, &place.path),
        KeysCommand::Import {
            id,
            public,
            hmac_secret,
        } => {
            dir::check_key_id(&id)?;
            // The file is read before anything is created.
            let key = match (public, hmac_secret) {
                (Some(file), _) => {
                    let bytes =
                        crate::paths::read_input(&file, "the public key", dir::MAX_KEY_FILE_BYTES)?;
                    place.ready()?;
                    KeyDir::create(&place.path)?.import_public(&id, &bytes)?
                }
                (None, Some(file)) => {
                    let text = dir::read_secret_file(&file)?;
                    place.ready()?;
                    KeyDir::create(&place.path)?.import_hmac_secret(&id, &text)?
                }
                (None, None) => unreachable!("clap requires one of --public and --hmac-secret"),
            };
            println!(
                "imported {} key {id}{}",
                key.kind.as_str(),
                key.fingerprint
                    .as_deref()
                    .map(|f| format!(" (fingerprint {f})"))
                    .unwrap_or_default()
            );
            Ok(())
        }
        KeysCommand::ExportPublic { id } => {
            print!("{}", KeyDir::open(&place.path)?.export_public(&id)?);
            Ok(())
        }
    }
}

fn line(key: &KeyInfo) -> String {
    let role = if key.own { "own" } else { "peer" };
    let kind = key.kind.as_str();
    match &key.problem {
        Some(problem) => format!("{}\t{kind}\t{role}\tREFUSED: {problem}", key.id),
        None => format!(
            "{}\t{kind}\t{role}\t{}",
            key.id,
            key.fingerprint.as_deref().unwrap_or("-")
        ),
    }
}

fn info_json(key: &KeyInfo) -> serde_json::Value {
    serde_json::json!({
        "id": key.id, "kind": key.kind.as_str(), "own": key.own,
        "fingerprint": key.fingerprint, "problem": key.problem,
    })
}

fn generate(kind: SignatureKind, id: &str, path: &Path) -> Outcome {
    dir::check_key_id(id)?;
    let keys = KeyDir::create(path)?;
    let key = keys.generate(kind, id)?;
    match &key.fingerprint {
        Some(fingerprint) => println!(
            "generated {} key {id} in {} (public key fingerprint {fingerprint}; give it to peers \
             with `agent-intercom keys export-public --id {id}`)",
            kind.as_str(),
            keys.path().display()
        ),
        None => println!(
            "generated {} key {id} in {} (the secret stays in its 0600 file; share it with a peer \
             only over a secure channel)",
            kind.as_str(),
            keys.path().display()
        ),
    }
    Ok(())
}

/// Lists the keys; a key that is refused (bad mode, unreadable) is listed with why, and makes
/// the exit status 1.
fn list(json: bool, path: &Path) -> Outcome {
    let keys = KeyDir::open(path)?.list()?;
    if json {
        let list: Vec<_> = keys.iter().map(info_json).collect();
        println!("{}", serde_json::Value::Array(list));
    } else {
        for key in &keys {
            println!("{}", line(key));
        }
    }
    if keys.iter().any(|k| k.problem.is_some()) {
        Err(Failure::CheckFailed)
    } else {
        Ok(())
    }
}

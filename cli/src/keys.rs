//! `agent-intercom keys`: the keys directory (agent_intercom_a2a::keys, docs/envelope.md). No
//! secret is ever taken on the command line or printed: secrets are generated into files or
//! read from files.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agent_intercom_a2a::keys::{self as dir, KeyDir, KeyInfo};
use agent_intercom_core::envelope::SignatureKind;
use agent_intercom_core::{Error, ErrorCode};

/// The help of `agent-intercom keys`.
pub const HELP: &str = "  agent-intercom keys generate --kind ed25519|hmac --id KEY_ID
      make an own signing key (Ed25519) or HMAC secret; the secret stays in its 0600 file
  agent-intercom keys list [--json]
      key ids, kinds, own or peer, Ed25519 fingerprints (never a secret)
  agent-intercom keys import --id KEY_ID --public FILE
      enroll a peer's Ed25519 public key (SPKI, PEM or DER)
  agent-intercom keys import --id KEY_ID --hmac-secret FILE
      store an HMAC secret shared with a peer (a 0600 file: base64 of at least 32 bytes)
  agent-intercom keys export-public --id KEY_ID
      print an Ed25519 key's public half (SPKI PEM), to give to a peer
      --keys DIR         keys directory (default $AGENT_INTERCOM_KEYS_DIR, else
                         agent-intercom-keys beside the scratchpad's default store)";

/// Parsed `--name VALUE` options (each at most once, unless repeatable) and flags.
pub(crate) struct Options {
    values: Vec<(String, String)>,
    flags: Vec<String>,
}

impl Options {
    /// Reads `args`: `takes` are the options with a value, `repeatable` those of them that may
    /// be given more than once, `flags` the options without one. Anything else is refused.
    pub(crate) fn parse(
        args: &[String],
        takes: &[&str],
        repeatable: &[&str],
        flags: &[&str],
    ) -> Result<Options, String> {
        let mut out = Options {
            values: Vec::new(),
            flags: Vec::new(),
        };
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            if flags.contains(&arg.as_str()) {
                out.flags.push(arg.clone());
            } else if takes.contains(&arg.as_str()) {
                let value = it.next().ok_or_else(|| format!("{arg} needs a value"))?;
                if !repeatable.contains(&arg.as_str()) && out.get(arg).is_some() {
                    return Err(format!("{arg} is given twice"));
                }
                out.values.push((arg.clone(), value.clone()));
            } else {
                return Err(format!("unexpected argument {arg:?}"));
            }
        }
        Ok(out)
    }

    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn all(&self, name: &str) -> Vec<&str> {
        self.values
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub(crate) fn require(&self, name: &str) -> Result<&str, String> {
        self.get(name).ok_or_else(|| format!("{name} is required"))
    }

    pub(crate) fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }
}

/// The keys directory `--keys` names, else the default.
pub(crate) fn keys_dir(options: &Options) -> PathBuf {
    match options.get("--keys") {
        Some(path) => PathBuf::from(path),
        None => dir::default_dir(
            &agent_intercom_scratchpad::api::process_env,
            agent_intercom_broker::config::agent_dir_from_env,
        ),
    }
}

pub(crate) fn usage(command: &str, message: &str, help: &str) -> ExitCode {
    eprintln!("agent-intercom {command}: {message}\n\nusage:\n{help}");
    ExitCode::from(2)
}

/// Prints the error with its code: exit 1 when the store or a file could not be used, 2 for
/// input that was refused.
pub(crate) fn failed(error: &Error) -> ExitCode {
    eprintln!("agent-intercom: {} [{}]", error.message(), error.code());
    match error.code() {
        ErrorCode::StoreIo
        | ErrorCode::StoreCorrupt
        | ErrorCode::StoreNewerSchema
        | ErrorCode::Internal
        | ErrorCode::NotConnected
        | ErrorCode::InvalidFrame => ExitCode::FAILURE,
        _ => ExitCode::from(2),
    }
}

/// Reads a small file (a public key): at most 16 KiB.
fn read_small(path: &str) -> Result<Vec<u8>, Error> {
    use std::io::Read;
    let file = std::fs::File::open(path)
        .map_err(|e| Error::new(ErrorCode::StoreIo, format!("cannot open {path}: {e}")))?;
    let mut bytes = Vec::new();
    file.take(dir::MAX_KEY_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::new(ErrorCode::StoreIo, format!("cannot read {path}: {e}")))?;
    if bytes.len() as u64 > dir::MAX_KEY_FILE_BYTES {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!(
                "{path} is larger than a key file ({} bytes)",
                dir::MAX_KEY_FILE_BYTES
            ),
        ));
    }
    Ok(bytes)
}

fn kind_of(name: &str) -> Option<SignatureKind> {
    match name {
        "ed25519" => Some(SignatureKind::Ed25519),
        "hmac" | "hmac-sha256" => Some(SignatureKind::HmacSha256),
        _ => None,
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

/// `agent-intercom keys ...`.
pub fn run(args: &[&str]) -> ExitCode {
    let usage = |message: &str| usage("keys", message, HELP);
    let Some((command, rest)) = args.split_first() else {
        return usage("keys needs generate, list, import or export-public");
    };
    let rest: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
    let (takes, flags): (&[&str], &[&str]) = match *command {
        "generate" => (&["--kind", "--id", "--keys"], &[]),
        "list" => (&["--keys"], &["--json"]),
        "import" => (&["--id", "--public", "--hmac-secret", "--keys"], &[]),
        "export-public" => (&["--id", "--keys"], &[]),
        other => return usage(&format!("no keys command {other:?}")),
    };
    let options = match Options::parse(&rest, takes, &[], flags) {
        Ok(o) => o,
        Err(e) => return usage(&e),
    };
    let path = keys_dir(&options);
    let result = match *command {
        "generate" => generate(&options, &path),
        "list" => list(&options, &path),
        "import" => import(&options, &path),
        _ => export(&options, &path),
    };
    match result {
        Ok(code) => code,
        Err(Problem::Usage(message)) => usage(&message),
        Err(Problem::Refused(error)) => failed(&error),
    }
}

pub(crate) enum Problem {
    Usage(String),
    Refused(Error),
}

impl From<Error> for Problem {
    fn from(e: Error) -> Problem {
        Problem::Refused(e)
    }
}

impl From<String> for Problem {
    fn from(e: String) -> Problem {
        Problem::Usage(e)
    }
}

fn generate(options: &Options, path: &Path) -> Result<ExitCode, Problem> {
    let kind = options.require("--kind")?;
    let kind = kind_of(kind).ok_or_else(|| format!("--kind is ed25519 or hmac, not {kind:?}"))?;
    let id = options.require("--id")?;
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
    Ok(ExitCode::SUCCESS)
}

fn list(options: &Options, path: &Path) -> Result<ExitCode, Problem> {
    let keys = KeyDir::open(path)?.list()?;
    if options.flag("--json") {
        let list: Vec<_> = keys.iter().map(info_json).collect();
        println!("{}", serde_json::Value::Array(list));
    } else {
        for key in &keys {
            println!("{}", line(key));
        }
    }
    Ok(if keys.iter().any(|k| k.problem.is_some()) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn import(options: &Options, path: &Path) -> Result<ExitCode, Problem> {
    let id = options.require("--id")?;
    dir::check_key_id(id)?;
    let key = match (options.get("--public"), options.get("--hmac-secret")) {
        (Some(file), None) => {
            let bytes = read_small(file)?;
            KeyDir::create(path)?.import_public(id, &bytes)?
        }
        (None, Some(file)) => {
            let text = dir::read_secret_file(Path::new(file))?;
            KeyDir::create(path)?.import_hmac_secret(id, &text)?
        }
        _ => {
            return Err("import takes one of --public FILE and --hmac-secret FILE"
                .to_string()
                .into());
        }
    };
    println!(
        "imported {} key {id}{}",
        key.kind.as_str(),
        key.fingerprint
            .as_deref()
            .map(|f| format!(" (fingerprint {f})"))
            .unwrap_or_default()
    );
    Ok(ExitCode::SUCCESS)
}

fn export(options: &Options, path: &Path) -> Result<ExitCode, Problem> {
    let id = options.require("--id")?;
    print!("{}", KeyDir::open(path)?.export_public(id)?);
    Ok(ExitCode::SUCCESS)
}

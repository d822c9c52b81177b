//! The pure-contract commands: `scope check`, `vectors`, `hash`, `canonical`, `vendored check`
//! and the version line.

use std::ffi::OsString;
use std::io::Read;
use std::path::PathBuf;

use agent_intercom_core::protocol::{self, SCOPE_ENV};
use agent_intercom_core::{Error, ErrorCode, canonical, corpus, scope};
use agent_intercom_vendored as vendored;
use clap::{Args, Subcommand};

use crate::fail::{Failure, Outcome};
use crate::paths::read_input;

/// The largest input file or stdin document these commands read.
const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// `agent-intercom --version` and `agent-intercom version`, after the program's name.
pub fn version_line() -> String {
    format!(
        "{} (protocol {} v{}, vectors schema {}, semantics hash {})",
        agent_intercom_core::VERSION,
        protocol::PROTOCOL_NAME,
        protocol::PROTOCOL_VERSION,
        protocol::VECTOR_SCHEMA_VERSION,
        corpus::semantics_hash()
    )
}

#[derive(Args)]
pub struct ScopeArgs {
    #[command(subcommand)]
    command: ScopeCommand,
}

#[derive(Subcommand)]
enum ScopeCommand {
    /// Validate VALUE, or $AGENT_INTERCOM_SCOPE_ID when omitted; exit 0, or 2 without echoing it
    Check {
        /// The scope id (never echoed: a scope id is a capability)
        // Taken as any number of raw values so that no parse error can echo one: a value that
        // starts with '-' is a value, and a second one is refused here without naming it.
        #[arg(
            value_name = "VALUE",
            num_args = 0..,
            allow_hyphen_values = true,
            value_parser = clap::value_parser!(OsString),
        )]
        value: Vec<OsString>,
    },
}

pub fn scope(args: ScopeArgs) -> Outcome {
    let ScopeCommand::Check { value } = args.command;
    let (value, source) = match value.as_slice() {
        [] => (std::env::var_os(SCOPE_ENV), SCOPE_ENV),
        [one] => (Some(one.clone()), "scope id"),
        _ => {
            return Err(crate::fail::invalid(
                "scope check takes one VALUE (or none, for $AGENT_INTERCOM_SCOPE_ID)",
            ));
        }
    };
    match scope::scope_from_env_value(value.as_deref()) {
        Ok(Some(_)) => println!("{source}: valid scope id"),
        Ok(None) => println!("{source}: unscoped (absent or empty)"),
        // Never echo the value.
        Err(_) => {
            return Err(Failure::Error(Error::new(
                ErrorCode::InvalidScope,
                format!("{source} must match {}", protocol::SCOPE_ID_PATTERN_SOURCE),
            )));
        }
    }
    Ok(())
}

#[derive(Args)]
pub struct VectorsArgs {
    /// A corpus file to run instead of the embedded one
    #[arg(long, value_name = "PATH")]
    file: Option<PathBuf>,
}

fn text_of(bytes: Vec<u8>, what: &str) -> Result<String, Failure> {
    String::from_utf8(bytes).map_err(|e| {
        Failure::Error(Error::new(
            ErrorCode::InvalidUtf8,
            format!(
                "{what} is not valid UTF-8 (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        ))
    })
}

pub fn vectors(args: VectorsArgs) -> Outcome {
    let owned;
    let (text, origin) = match &args.file {
        None => (corpus::CORPUS_JSON, "embedded corpus".to_string()),
        Some(path) => {
            let what = format!("the corpus {}", path.display());
            owned = text_of(read_input(path, "the corpus", MAX_INPUT_BYTES)?, &what)?;
            (owned.as_str(), path.display().to_string())
        }
    };
    let doc = canonical::parse(text)?;
    let parsed = corpus::parse_vectors(&doc)?;
    let summary = corpus::run_all(&parsed);
    for (name, why) in &summary.failed {
        eprintln!("FAIL {name}: {why}");
    }
    for (name, reason) in &summary.skipped {
        println!("skip {name}: {reason}");
    }
    println!(
        "{origin}: {} vectors, {} executed, {} skipped",
        summary.total,
        summary.executed(),
        summary.skipped.len()
    );
    let hash = corpus::semantics_hash_of(&doc)?;
    let matches = hash == protocol::KNOWN_SEMANTICS_HASH;
    println!(
        "semantics hash {hash} ({})",
        if matches {
            "matches the published hash"
        } else {
            "DIFFERS from the published hash"
        }
    );
    println!(
        "{} passed, {} failed, {} skipped",
        summary.passed,
        summary.failed.len(),
        summary.skipped.len()
    );
    // A file of one's own may carry another hash; the embedded corpus must not.
    if summary.ok() && (matches || args.file.is_some()) {
        Ok(())
    } else {
        Err(Failure::CheckFailed)
    }
}

fn stdin_text() -> Result<String, Failure> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| crate::fail::io(format!("cannot read stdin: {e}")))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(crate::fail::invalid(format!(
            "stdin holds more than {MAX_INPUT_BYTES} bytes"
        )));
    }
    text_of(bytes, "stdin")
}

#[derive(Args)]
pub struct HashArgs {
    /// The hash domain (printable ASCII), e.g. boss-test-v1
    #[arg(allow_hyphen_values = true)]
    domain: String,
}

pub fn hash(args: HashArgs) -> Outcome {
    let text = stdin_text()?;
    println!(
        "{}",
        canonical::canonical_hash_of_text(&args.domain, &text)?
    );
    Ok(())
}

pub fn canonical() -> Outcome {
    let text = stdin_text()?;
    println!("{}", canonical::canonical_json_of_text(&text)?);
    Ok(())
}

#[derive(Args)]
pub struct VendoredArgs {
    #[command(subcommand)]
    command: VendoredCommand,
}

#[derive(Subcommand)]
enum VendoredCommand {
    /// Check a vendored copy for drift: byte-identical to a shipped file, schema and hash
    Check {
        /// The vendored agent-intercom-protocol-v4.mjs (or .cjs)
        path: PathBuf,
    },
}

pub fn vendored(args: VendoredArgs) -> Outcome {
    let VendoredCommand::Check { path } = args.command;
    let bytes = read_input(&path, "the vendored copy", MAX_INPUT_BYTES)?;
    let report = vendored::check_vendored(&bytes);
    if report.ok() {
        println!(
            "ok: {} is byte-identical (sha256 {}); schema {}, semantics hash {}",
            path.display(),
            report.sha256,
            protocol::VECTOR_SCHEMA_VERSION,
            corpus::semantics_hash()
        );
        return Ok(());
    }
    eprintln!("drift: {}", path.display());
    for problem in &report.problems {
        eprintln!("  - {problem}");
    }
    Err(Failure::CheckFailed)
}

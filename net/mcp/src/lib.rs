//! `agent-intercom mcp`: the intercom as MCP tools (stdio, on the official `rmcp` SDK), for every
//! harness that speaks the Model Context Protocol, with nothing delivered ever lost.
//!
//! - [`link`]: the broker link: registers at start with the session's identity and scope, and
//!   again after a broker restart; commits each delivered message before acknowledging it;
//!   replays unsettled sends.
//! - [`inbox`]: the durable inbox, outbox and counters (one SQLite file per session id).
//! - [`tools`]: the tools' names, strict schemas and annotations, and argument reading.
//! - [`server`]: the MCP handler: tools, the `intercom://inbox` resource, progress and
//!   cancellation of a waiting ask.
//! - [`pad`]: the scratchpad operations as tools.
//! - [`stdio`]: stdin and stdout for rmcp, answering the lines it would drop without a word.
//!
//! What each tool does and what the inbox guarantees: `docs/mcp.md`.

/// A line on stderr, `agent-intercom mcp: ` first. Never panics or waits, unlike `eprintln!`
/// when the host has closed its end of stderr or does not read it (see [`log_line`]).
macro_rules! log {
    ($($arg:tt)*) => {
        $crate::log_line(format_args!($($arg)*))
    };
}

pub mod inbox;
pub mod link;
pub mod pad;
pub mod server;
pub mod stdio;
pub mod team;
pub mod tools;

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_intercom_core::{Error, ErrorCode};
use sha2::Digest;

pub use inbox::Inbox;
pub use link::{Identity, Link, Reach};
pub use server::Server;

/// The variable naming the session id.
pub const SESSION_ID_ENV: &str = "AGENT_INTERCOM_SESSION_ID";
/// The variable naming the session.
pub const SESSION_NAME_ENV: &str = "AGENT_INTERCOM_SESSION_NAME";
/// The variable naming the model (or harness) the session reports.
pub const MODEL_ENV: &str = "AGENT_INTERCOM_MODEL";
/// The model reported when none is named.
pub const DEFAULT_MODEL: &str = "mcp";
/// Messages kept in an inbox at most (read ones go first, unread ones are reported).
pub const DEFAULT_MAX_INBOX_MESSAGES: u64 = 10_000;
/// How long the server waits for its first registration before it serves anyway (tools then
/// answer `NOT_CONNECTED` until the broker is reached).
const FIRST_REGISTRATION: Duration = Duration::from_secs(5);

/// Everything `run` needs.
#[derive(Clone, Debug)]
pub struct Config {
    /// Who this session is.
    pub identity: Identity,
    /// How to reach (and start) the broker.
    pub reach: Reach,
    /// The inbox file.
    pub inbox: PathBuf,
    /// The scratchpad store of the `pad_*` tools.
    pub pad: PathBuf,
    /// Messages kept in the inbox at most.
    pub max_inbox_messages: u64,
    /// The team manifest `intercom_team` reads (`$AGENT_INTERCOM_TEAM_MANIFEST`), if named.
    pub team_manifest: Option<String>,
}

/// A name from the working directory: its last component, with anything but letters, digits,
/// `.`, `_` and `-` made `-` (`mcp` when nothing is left).
pub fn name_from_dir(cwd: &Path) -> String {
    let base = cwd
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    let name = name.trim_matches('-').to_string();
    if name.is_empty() {
        DEFAULT_MODEL.to_string()
    } else {
        name
    }
}

/// The default inbox of a session: `<intercom dir>/mcp/<sha256 of the session id>.sqlite` (the
/// id may hold any character; its digest is a file name).
pub fn inbox_path(intercom_dir: &Path, session_id: &str) -> PathBuf {
    let digest = sha2::Sha256::digest(session_id.as_bytes());
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    intercom_dir.join("mcp").join(format!("{hex}.sqlite"))
}

/// Who `log!` lines say they are from ([`set_log_name`]).
static LOG_NAME: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Names the program in the link's and the server's log lines (`agent-intercom mcp` unless
/// set; `serve --broker` runs the link too). The first call wins.
pub fn set_log_name(name: &'static str) {
    let _ = LOG_NAME.set(name);
}

/// What `log!` writes, through the broker crate's log (`agent_intercom_broker::log`): never a
/// wait or a panic on a stderr the host does not read.
pub(crate) fn log_line(args: std::fmt::Arguments<'_>) {
    let name = LOG_NAME.get().copied().unwrap_or("agent-intercom mcp");
    agent_intercom_broker::log::line(format_args!("{name}: {args}"));
}

/// Makes `dir` (0700) when missing; an existing one must be a directory.
pub fn private_dir(dir: &Path) -> Result<(), Error> {
    use std::os::unix::fs::DirBuilderExt;
    if std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| {
            Error::new(
                ErrorCode::StoreIo,
                format!("cannot create {}: {e}", dir.display()),
            )
        })
}

/// Serves MCP on stdin and stdout until the client closes stdin. Logs go to stderr only.
pub fn run(config: Config) -> Result<(), Error> {
    link::check_identity(&config.identity)?;
    let inbox = Inbox::open(&config.inbox, config.max_inbox_messages)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::new(ErrorCode::Internal, format!("cannot start a runtime: {e}")))?;
    let outcome = runtime.block_on(async move {
        let link = Link::start(config.identity, config.reach, inbox)?;
        if !link.connected_within(FIRST_REGISTRATION).await {
            log!("the broker is not reached yet; serving, and registering as soon as it is");
        }
        let server = Server::new(
            link.clone(),
            pad::Pad::new(config.pad),
            config.team_manifest,
        );
        let io = stdio::transport()
            .map_err(|e| Error::new(ErrorCode::Io, format!("cannot read stdin: {e}")))?;
        let served = rmcp::ServiceExt::serve(server, io)
            .await
            .map_err(|e| Error::new(ErrorCode::Io, format!("cannot serve MCP: {e}")));
        let outcome = match served {
            Ok(running) => running
                .waiting()
                .await
                .map(|_| ())
                .map_err(|e| Error::new(ErrorCode::Internal, format!("MCP service: {e}"))),
            Err(e) => Err(e),
        };
        link.stop();
        outcome
    });
    // The last lines out before the process ends.
    agent_intercom_broker::log::flush(agent_intercom_broker::log::STALL);
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_directory_and_inboxes_from_the_id() {
        assert_eq!(name_from_dir(Path::new("/work/my repo!")), "my-repo");
        assert_eq!(name_from_dir(Path::new("/")), "mcp");
        assert_eq!(name_from_dir(Path::new("/x/---")), "mcp");
        let a = inbox_path(Path::new("/i"), "a/../b");
        assert!(a.starts_with("/i/mcp") && a.extension().unwrap() == "sqlite");
        assert_ne!(a, inbox_path(Path::new("/i"), "a/../c"));
        assert_eq!(a.file_name().unwrap().len(), 32 + ".sqlite".len());
    }
}

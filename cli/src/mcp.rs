//! `agent-intercom mcp`: the intercom as MCP tools on stdio (agent_intercom_mcp, docs/mcp.md).

use std::path::PathBuf;

use agent_intercom_core::protocol::{self, SCOPE_ENV};
use agent_intercom_core::{Error, ErrorCode, scope};
use agent_intercom_mcp::{
    Config, DEFAULT_MAX_INBOX_MESSAGES, DEFAULT_MODEL, Identity, MODEL_ENV, Reach, SESSION_ID_ENV,
    SESSION_NAME_ENV,
};
use clap::Args;

use crate::fail::{Failure, Outcome, invalid};

/// Reads MCP requests on stdin and answers on stdout; logs go to stderr.
#[derive(Args)]
pub struct McpArgs {
    /// The session id, the same across restarts for the inbox to carry over (default
    /// $AGENT_INTERCOM_SESSION_ID, else a new UUID)
    #[arg(long, value_name = "ID")]
    session_id: Option<String>,
    /// The session's name (default $AGENT_INTERCOM_SESSION_NAME, else the working directory's)
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// The model or harness the session reports (default $AGENT_INTERCOM_MODEL, else mcp)
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// Agent directory (default $PI_CODING_AGENT_DIR, else ~/.pi/agent); it must exist
    #[arg(long, value_name = "DIR")]
    agent_dir: Option<PathBuf>,
    /// The inbox (default <agent-dir>/intercom/mcp/<digest of the session id>.sqlite); its
    /// directory must exist
    #[arg(long, value_name = "PATH")]
    inbox: Option<PathBuf>,
    /// The scratchpad store of the pad_* tools (default as for pad); its directory must exist
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
}

/// An option, else its variable (blank counts as unset).
fn chosen(option: Option<String>, variable: &str) -> Option<String> {
    option.or_else(|| {
        std::env::var(variable)
            .ok()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    })
}

/// `AGENT_INTERCOM_SCOPE_ID`, read once and sent exactly (never echoed): `None` unscoped.
pub fn scope_from_env() -> Result<Option<String>, Failure> {
    match scope::scope_from_env_value(std::env::var_os(SCOPE_ENV).as_deref()) {
        Ok(Some(_)) => Ok(std::env::var(SCOPE_ENV).ok()),
        Ok(None) => Ok(None),
        Err(_) => Err(Failure::Error(Error::new(
            ErrorCode::InvalidScope,
            format!(
                "{SCOPE_ENV} must match {}",
                protocol::SCOPE_ID_PATTERN_SOURCE
            ),
        ))),
    }
}

pub fn run(args: McpArgs) -> Outcome {
    let scope = scope_from_env()?;
    let session_id =
        chosen(args.session_id, SESSION_ID_ENV).unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    if session_id.trim().is_empty() {
        return Err(invalid("--session-id is blank"));
    }
    let cwd = std::env::current_dir()
        .map_err(|e| crate::fail::io(format!("cannot read the working directory: {e}")))?;
    let name = chosen(args.name, SESSION_NAME_ENV)
        .unwrap_or_else(|| agent_intercom_mcp::name_from_dir(&cwd));
    if name.trim().is_empty() {
        // A session without a name cannot be reached by one; the directory's name is the default.
        return Err(invalid("--name is blank"));
    }
    let model = chosen(args.model, MODEL_ENV).unwrap_or_else(|| DEFAULT_MODEL.to_string());
    if let Some(dir) = &args.agent_dir {
        crate::paths::existing(dir, "--agent-dir")?;
    }
    let broker = agent_intercom_broker::embed::config(args.agent_dir.as_deref(), None, [])?;
    let inbox = match args.inbox {
        Some(path) => {
            crate::paths::Chosen::named(&path, "--inbox").ready()?;
            path
        }
        None => {
            let path = agent_intercom_mcp::inbox_path(&broker.intercom_dir, &session_id);
            if let Some(dir) = path.parent() {
                agent_intercom_mcp::private_dir(dir)?;
            }
            path
        }
    };
    let pad = crate::paths::store(args.db.as_deref());
    pad.ready()?;
    let program = std::env::current_exe()
        .map_err(|e| crate::fail::io(format!("cannot find this program: {e}")))?;
    let config = Config {
        identity: Identity {
            session_id,
            name,
            cwd: cwd.display().to_string(),
            model,
            scope,
            pid: std::process::id(),
            started_at: agent_intercom_mcp::link::now_ms(),
        },
        reach: Reach {
            socket: broker.socket_path.clone(),
            start: Some((program, args.agent_dir)),
        },
        inbox,
        pad: pad.path,
        max_inbox_messages: DEFAULT_MAX_INBOX_MESSAGES,
        team_manifest: std::env::var(agent_intercom_mcp::team::MANIFEST_ENV)
            .ok()
            .filter(|v| !agent_intercom_core::team::js_trim(v).is_empty()),
    };
    Ok(agent_intercom_mcp::run(config)?)
}

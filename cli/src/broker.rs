//! `agent-intercom broker` and `agent-intercom broker status`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_intercom_broker::config::{IDLE_EXIT_SECS_KEY, LOG_LEVEL_KEY};
use agent_intercom_broker::{BrokerConfig, Ensured, Health, LogLevel, StopReason};
use clap::{Args, Subcommand};

use crate::fail::{Failure, Outcome, invalid};
use crate::paths::Chosen;

#[derive(Args)]
pub struct BrokerArgs {
    #[command(subcommand)]
    command: Option<BrokerCommand>,
    #[command(flatten)]
    place: Place,
    /// Exit SECS after the last session leaves (0 = never)
    #[arg(long, value_name = "SECS", allow_hyphen_values = true)]
    idle_exit: Option<String>,
    /// Log level; no message body or scope is ever logged
    #[arg(long, value_name = "LEVEL")]
    log_level: Option<String>,
    /// Any limit, e.g. max_sessions=10000 (every key and range: docs/broker.md)
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
}

/// Where the broker is; given before or after `status`.
#[derive(Args)]
struct Place {
    /// Agent directory (default $PI_CODING_AGENT_DIR, else ~/.pi/agent); it must exist
    #[arg(long, value_name = "DIR", global = true)]
    agent_dir: Option<PathBuf>,
    /// Socket (default <agent-dir>/intercom/broker.sock); its directory must exist
    #[arg(long, value_name = "PATH", global = true)]
    socket: Option<PathBuf>,
}

#[derive(Subcommand)]
enum BrokerCommand {
    /// Health-check the broker: exit 0 when a compatible broker answers, 1 otherwise
    Status,
}

/// The help with the broker crate's defaults and log levels.
pub fn help(command: clap::Command) -> clap::Command {
    let levels: Vec<&str> = LogLevel::ALL.iter().map(|l| l.as_str()).collect();
    let default_level = BrokerConfig::for_agent_dir(Path::new("/")).log_level;
    let idle = agent_intercom_broker::config::DEFAULT_IDLE_EXIT_MS / 1000;
    command
        .mut_arg("idle_exit", |a| {
            a.help(format!(
                "Exit SECS after the last session leaves (default {idle}; 0 = never)"
            ))
        })
        .mut_arg("log_level", |a| {
            a.help(format!(
                "{} (default {}); no message body or scope is ever logged",
                levels.join("|"),
                default_level.as_str()
            ))
        })
}

fn config(args: &BrokerArgs) -> Result<BrokerConfig, Failure> {
    if let Some(dir) = &args.place.agent_dir {
        // The default agent directory is created by the broker; one given here must exist.
        crate::paths::existing(dir, "--agent-dir")?;
    }
    if let Some(socket) = &args.place.socket {
        Chosen::named(socket, "--socket").ready()?;
    }
    let mut sets: Vec<(&str, &str)> = Vec::new();
    if let Some(secs) = &args.idle_exit {
        sets.push((IDLE_EXIT_SECS_KEY, secs));
    }
    if let Some(level) = &args.log_level {
        sets.push((LOG_LEVEL_KEY, level));
    }
    for pair in &args.sets {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| invalid(format!("--set takes KEY=VALUE, not {pair:?}")))?;
        sets.push((key, value));
    }
    let mut config = agent_intercom_broker::embed::config(
        args.place.agent_dir.as_deref(),
        args.place.socket.as_deref(),
        sets,
    )?;
    config.handle_signals = true;
    Ok(config)
}

pub fn run(args: BrokerArgs) -> Outcome {
    if matches!(args.command, Some(BrokerCommand::Status))
        && (args.idle_exit.is_some() || args.log_level.is_some() || !args.sets.is_empty())
    {
        return Err(invalid("broker status takes only --agent-dir and --socket"));
    }
    let config = config(&args)?;
    let socket = config.socket_path.clone();
    if let Some(BrokerCommand::Status) = args.command {
        let health = agent_intercom_broker::health(&socket, Duration::from_secs(1));
        println!("{}: {health:?}", socket.display());
        return if health == Health::Compatible {
            Ok(())
        } else {
            Err(Failure::CheckFailed)
        };
    }
    let ensured = agent_intercom_broker::ensure(config, Duration::from_secs(5))
        .map_err(|e| agent_intercom_broker::embed::start_error(&e))?;
    match ensured {
        Ensured::Started(handle) => {
            // The line the Pi adapter's broker prints once it listens (its remote-access test
            // waits for it on stdout); the socket is bound and broker.pid written by now.
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "Intercom broker started (pid: {}, {})",
                std::process::id(),
                agent_intercom_broker::wire::REMOTE_ACCESS_FEATURE
            );
            let _ = out.flush();
            drop(out);
            let reason = handle.wait();
            // Through the broker's log (never a panic on a stderr nobody reads), flushed as
            // the process is about to end.
            agent_intercom_broker::log::line(format_args!(
                "agent-intercom: broker stopped ({reason:?})"
            ));
            agent_intercom_broker::log::flush(agent_intercom_broker::log::STALL);
            if reason == StopReason::Failed {
                return Err(crate::fail::io(
                    "the broker stopped on a failure (see the log above)",
                ));
            }
            Ok(())
        }
        Ensured::Running(pid) => {
            let pid = pid.map_or_else(|| "unknown pid".to_string(), |p| format!("pid {p}"));
            println!(
                "a broker is already running ({pid}) at {}; using it",
                socket.display()
            );
            Ok(())
        }
    }
}

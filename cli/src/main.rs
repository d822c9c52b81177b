//! `agent-intercom`: the command-line face of the protocol-v4 contract, the broker, the
//! scratchpad, the A2A endpoint, signing keys, envelopes and the outbound line.
//!
//! Errors and exit statuses are the same for every subcommand ([`fail`]): one line
//! `agent-intercom: error[CODE]: message` on stderr; 0 success, 1 runtime failure, 2 usage or
//! invalid input.

use std::process::ExitCode;

// mimalloc rather than glibc's malloc: the broker, the MCP server and serve allocate a little
// for every frame, and glibc's malloc and free were a fifth of the broker's profile.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod broker;
mod contract;
mod fail;
mod keys;
mod line;
mod mcp;
mod pack;
mod pad;
mod paths;
mod serve;
mod watch;

/// The canonical pi-intercom protocol-v4 contract, its broker and its tools.
#[derive(Parser)]
#[command(
    name = "agent-intercom",
    arg_required_else_help = true,
    max_term_width = 100,
    after_help = "Exit status: 0 success; 1 a runtime failure (store, socket, directory, peer) \
                  or a failed check;\n2 bad usage or invalid input. \
                  Every error is one line: agent-intercom: error[CODE]: message"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the broker (or use the one already running); `broker status` checks it
    ///
    /// Prints 'Intercom broker started (pid: PID, ...)' once it listens; SIGTERM or SIGINT stop it.
    Broker(broker::BrokerArgs),
    /// One scratchpad operation, or JSON lines of them on stdin
    ///
    /// Prints the operation's result as JSON (docs/scratchpad.md).
    Pad(pad::PadArgs),
    /// The A2A endpoint (JSON-RPC 1.0 and 0.3, Agent Card) over the scratchpad store
    ///
    /// Prints 'agent-intercom serve listening on http://ADDR:PORT'; SIGTERM or SIGINT stop it
    /// (docs/a2a.md).
    Serve(serve::ServeArgs),
    /// Signing keys: generate, list, import, export-public
    Keys(keys::KeysArgs),
    /// Signed transport envelopes: send, receive
    Pack(pack::PackArgs),
    /// The signed outbound Agent-to-Agent line
    Line(line::LineArgs),
    /// The intercom as MCP tools on stdio, with a durable inbox (docs/mcp.md)
    ///
    /// For any MCP harness (Claude Code, Codex, OpenCode, Gemini CLI, ...): registers at start,
    /// keeps every delivered message on disk until read, and reaches the broker again after it
    /// restarts.
    Mcp(mcp::McpArgs),
    /// The local broker at a glance: sessions, asks, queues, traffic (docs/watch.md)
    ///
    /// Full screen, refreshed every second (q quits, / filters, arrows move, enter shows a
    /// session); --once prints one snapshot, --once --json as JSON. Reads the broker as its
    /// local administrator (the admin token of broker-admin.json); no scope is ever shown.
    Watch(watch::WatchArgs),
    /// Scope ids
    Scope(contract::ScopeArgs),
    /// Run the protocol-v4 corpus; print counts and the semantics hash
    Vectors(contract::VectorsArgs),
    /// Canonical hash of the JSON document on stdin
    Hash(contract::HashArgs),
    /// Canonical JSON of the JSON document on stdin
    Canonical,
    /// Drift check of a vendored agent-intercom-protocol-v4.mjs
    Vendored(contract::VendoredArgs),
    /// Print versions
    Version,
}

/// The parser, with what the help says filled in from the crates that own it (the broker's
/// defaults, the scratchpad's operations, serve's defaults).
fn command() -> clap::Command {
    Cli::command()
        .version(contract::version_line())
        .mut_subcommand("broker", broker::help)
        .mut_subcommand("pad", pad::help)
        .mut_subcommand("serve", serve::help)
}

/// The usage line of the deepest subcommand `args` name (`Usage: agent-intercom serve ...`).
fn usage_of(args: &[std::ffi::OsString]) -> String {
    let mut cmd = command();
    cmd.build();
    let mut current = &mut cmd;
    for name in args.iter().skip(1).filter_map(|a| a.to_str()) {
        if current.find_subcommand(name).is_none() {
            continue;
        }
        current = current.find_subcommand_mut(name).expect("found above");
    }
    current.render_usage().to_string()
}

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let parsed = command()
        .try_get_matches_from(&args)
        .and_then(|matches| Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return fail::usage(e, || usage_of(&args)),
    };
    let outcome = match cli.command {
        Command::Broker(args) => broker::run(args),
        Command::Pad(args) => pad::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Keys(args) => keys::run(args),
        Command::Pack(args) => pack::run(args),
        Command::Line(args) => line::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Watch(args) => watch::run(args),
        Command::Scope(args) => contract::scope(args),
        Command::Vectors(args) => contract::vectors(args),
        Command::Hash(args) => contract::hash(args),
        Command::Canonical => contract::canonical(),
        Command::Vendored(args) => contract::vendored(args),
        Command::Version => {
            println!("agent-intercom {}", contract::version_line());
            Ok(())
        }
    };
    // Lines the broker, the MCP server or the A2A server logged (a store moved aside, ...) out
    // before the failure is reported and the process ends.
    agent_intercom_broker::log::flush(agent_intercom_broker::log::STALL);
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(),
    }
}

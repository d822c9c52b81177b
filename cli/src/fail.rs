//! The CLI's one error format and its exit statuses, for every subcommand.
//!
//! Every error is one line on stderr, `agent-intercom: error[CODE]: message`, where CODE is the
//! stable name C (`AIC_STATUS_<CODE>`) and JavaScript (`error.code`) use, or for `line` the
//! line's own stable code. The exit status says what kind of failure it was:
//!
//! - 0: success;
//! - 1: a runtime failure (a store, socket, directory or peer could not be used) or a check that
//!   ran and found a problem (`vectors`, `vendored check`, `broker status`);
//! - 2: bad usage or invalid input.

use std::process::ExitCode;

use agent_intercom_core::{Error, ErrorCode};
use agent_intercom_line::LineError;

/// Exit status 1.
pub const RUNTIME: u8 = 1;
/// Exit status 2.
pub const INVALID: u8 = 2;

/// Why a subcommand stopped without doing its work.
#[derive(Debug)]
pub enum Failure {
    /// An error with the core's stable code.
    Error(Error),
    /// A peer's refusal, with the code it gave: a runtime failure (exit 1) whatever the code.
    Peer(Error),
    /// A startup refusal of the outbound line, with the line's stable code.
    Line(LineError),
    /// A check ran and found problems, which it has printed already: exit 1.
    CheckFailed,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Error(e)
    }
}

impl From<LineError> for Failure {
    fn from(e: LineError) -> Failure {
        Failure::Line(e)
    }
}

/// What a subcommand returns.
pub type Outcome = Result<(), Failure>;

/// Invalid input: a value the command cannot use (exit 2).
pub fn invalid(message: impl Into<String>) -> Failure {
    Failure::Error(Error::new(ErrorCode::InvalidArgument, message))
}

/// A file, directory or address that could not be used (exit 1).
pub fn io(message: impl Into<String>) -> Failure {
    Failure::Error(Error::new(ErrorCode::Io, message))
}

/// The exit status of an error with this code: 1 when something the command needs could not be
/// used (a store, the broker, a file, a peer), 2 when the input was refused.
pub fn exit_status(code: ErrorCode) -> u8 {
    match code {
        ErrorCode::StoreIo
        | ErrorCode::StoreCorrupt
        | ErrorCode::StoreNewerSchema
        | ErrorCode::BrokerAlreadyRunning
        | ErrorCode::BrokerStore
        | ErrorCode::BrokerIo
        | ErrorCode::NotConnected
        | ErrorCode::InvalidFrame
        | ErrorCode::Internal
        | ErrorCode::Io
        | ErrorCode::PeerRefused => RUNTIME,
        _ => INVALID,
    }
}

/// Prints `agent-intercom: error[CODE]: message` on stderr (a stderr that cannot take it is
/// let be: the exit status still tells).
pub fn print(code: &str, message: &str) {
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr().lock(),
        "agent-intercom: error[{code}]: {message}"
    );
}

impl Failure {
    /// Prints the failure (a failed check has printed its findings already) and gives the exit
    /// status.
    pub fn report(self) -> ExitCode {
        match self {
            Failure::Error(e) => {
                print(e.code().as_str(), e.message());
                ExitCode::from(exit_status(e.code()))
            }
            Failure::Peer(e) => {
                print(e.code().as_str(), e.message());
                ExitCode::from(RUNTIME)
            }
            Failure::Line(e) => {
                // The members a session answer would carry (`field`, `scope`, ...) follow the
                // detail as one JSON object, so that a refusal loses nothing by being one line.
                let mut message = e.detail.clone();
                if !e.members.is_empty() {
                    let members: serde_json::Map<String, serde_json::Value> = e
                        .members
                        .iter()
                        .map(|(name, value)| ((*name).to_string(), value.clone()))
                        .collect();
                    message += &format!("; {}", serde_json::Value::Object(members));
                }
                print(e.code.as_str(), &message);
                ExitCode::from(e.code.exit_status())
            }
            Failure::CheckFailed => ExitCode::from(RUNTIME),
        }
    }
}

/// Reports a parse error of the command line: help and version go to stdout with status 0;
/// anything else is a usage error in the one format, followed by clap's tip and the usage line
/// of the subcommand (never the whole help), with status 2.
pub fn usage(error: clap::Error, usage_line: impl FnOnce() -> String) -> ExitCode {
    use clap::error::ErrorKind;
    let rendered = error.render().to_string();
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            print!("{rendered}");
            return ExitCode::SUCCESS;
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            eprint!("{rendered}");
            return ExitCode::from(INVALID);
        }
        _ => {}
    }
    let code = match error.kind() {
        ErrorKind::UnknownArgument | ErrorKind::InvalidSubcommand => ErrorCode::UnknownKey,
        ErrorKind::InvalidUtf8 => ErrorCode::InvalidUtf8,
        _ => ErrorCode::InvalidArgument,
    };
    let text = rendered.strip_prefix("error: ").unwrap_or(&rendered);
    let (mut message, mut rest) = text.split_once('\n').map_or_else(
        || (text.to_string(), ""),
        |(first, rest)| (first.to_string(), rest),
    );
    // "...were not provided:" is followed by the missing ones, indented: one line says it all.
    if message.ends_with(':') {
        while let Some((line, after)) = rest.split_once('\n') {
            if !line.starts_with("  ") {
                break;
            }
            message = format!("{message} {}", line.trim());
            rest = after;
        }
    }
    print(code.as_str(), &message);
    // Some of clap's errors (a missing value) carry no usage line: every usage error shows one.
    match rest.split_once("For more information") {
        Some((before, after)) if !rest.contains("Usage: ") => {
            eprint!("{before}{}\n\nFor more information{after}", usage_line());
        }
        _ => eprint!("{rest}"),
    }
    ExitCode::from(INVALID)
}

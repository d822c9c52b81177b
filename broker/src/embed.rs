//! Starting the broker from an embedding (the CLI, the C ABI, the Node addon) in one way: an
//! agent directory, an optional socket path and `key=value` settings in, a running broker or an
//! [`Error`] with a stable code out. Every embedding calls this instead of parsing settings and
//! mapping start failures itself.

use std::ffi::OsString;
use std::path::Path;

use agent_intercom_core::{Error, ErrorCode};

use crate::config::{BrokerConfig, ENV_SETTINGS, agent_dir_from_env};
use crate::server::{BrokerHandle, StartError, start as start_broker};

/// Splits one `key=value` setting (blanks around either side are ignored). A pair without `=`
/// is `INVALID_ARGUMENT`.
pub fn split_setting(pair: &str) -> Result<(&str, &str), Error> {
    pair.split_once('=')
        .map(|(k, v)| (k.trim(), v.trim()))
        .ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("setting {pair:?} is not key=value"),
            )
        })
}

/// The settings of a text of `key=value` lines (the C ABI's form); blank lines are skipped.
pub fn settings_lines(text: &str) -> Result<Vec<(&str, &str)>, Error> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(split_setting)
        .collect()
}

/// The configuration for `agent_dir` (`None`: `$PI_CODING_AGENT_DIR` or `~/.pi/agent`), with
/// what the environment sets ([`BrokerConfig::read_env`]), `socket_path` if given and every
/// setting applied in order ([`BrokerConfig::set`]). A setting given here wins over its variable
/// ([`crate::config::ENV_SETTINGS`]), which is then not read at all: a bad
/// `PI_INTERCOM_ASK_TIMEOUT_MS` does not stop a start that sets `ask_timeout_ms`. The first bad
/// setting, or a bad variable that is read, fails the whole call.
pub fn config<'a>(
    agent_dir: Option<&Path>,
    socket_path: Option<&Path>,
    settings: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<BrokerConfig, Error> {
    config_from_env(agent_dir, socket_path, settings, |name| {
        std::env::var_os(name)
    })
}

/// [`config`] with the variables `var` gives (`None`: unset) instead of the process's
/// environment (the agent directory, when `None`, still comes from the process's).
pub fn config_from_env<'a>(
    agent_dir: Option<&Path>,
    socket_path: Option<&Path>,
    settings: impl IntoIterator<Item = (&'a str, &'a str)>,
    var: impl Fn(&str) -> Option<OsString>,
) -> Result<BrokerConfig, Error> {
    let settings: Vec<(&str, &str)> = settings.into_iter().collect();
    let mut config = match agent_dir {
        Some(dir) => BrokerConfig::for_agent_dir(dir),
        None => BrokerConfig::for_agent_dir(&agent_dir_from_env()),
    };
    let explicit = |name: &str| {
        ENV_SETTINGS
            .iter()
            .any(|(env, key)| *env == name && settings.iter().any(|(k, _)| k == key))
    };
    config.read_env_from(|name| if explicit(name) { None } else { var(name) })?;
    if let Some(socket) = socket_path {
        config.socket_path = socket.to_path_buf();
    }
    for (key, value) in settings {
        config.set(key, value)?;
    }
    Ok(config)
}

/// A start failure as an [`Error`]: `BROKER_ALREADY_RUNNING`, `BROKER_STORE` (the SQLite store
/// or the access registry) or `BROKER_IO`.
pub fn start_error(e: &StartError) -> Error {
    let code = match e {
        StartError::AlreadyRunning(_) => ErrorCode::BrokerAlreadyRunning,
        StartError::Store(_) => ErrorCode::BrokerStore,
        StartError::Io(_) => ErrorCode::BrokerIo,
        StartError::Access(_) => ErrorCode::BrokerStore,
    };
    Error::new(code, e.to_string())
}

/// Starts the broker of `config` on its own thread ([`crate::start`]), failures as [`Error`].
pub fn start(config: BrokerConfig) -> Result<BrokerHandle, Error> {
    start_broker(config).map_err(|e| start_error(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_in_order_and_fail_with_stable_codes() {
        let dir = Path::new("/nonexistent-agent-dir");
        let lines =
            settings_lines("max_sessions=10\n\n  idle_exit_ms = 0 \nlog_level=debug").unwrap();
        let c = config(Some(dir), None, lines).unwrap();
        assert_eq!(c.max_sessions, 10);
        assert_eq!(c.idle_exit, None);
        assert_eq!(c.intercom_dir, dir.join("intercom"));
        assert_eq!(c.socket_path, dir.join("intercom/broker.sock"));
        let c = config(Some(dir), Some(Path::new("/tmp/x.sock")), []).unwrap();
        assert_eq!(c.socket_path, Path::new("/tmp/x.sock"));
        let code = |text: &str| {
            settings_lines(text)
                .and_then(|l| config(Some(dir), None, l))
                .unwrap_err()
                .code()
        };
        assert_eq!(code("max_sessions"), ErrorCode::InvalidArgument);
        assert_eq!(code("no_such_limit=1"), ErrorCode::UnknownKey);
        assert_eq!(
            code("idle_exit_secs=18446744073709551615"),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code("recent_delivery_ttl_ms=18446744073709551615"),
            ErrorCode::InvalidArgument
        );
    }
}

//! Where the store lives when the caller names no path: one rule for the CLI and the Node
//! package (the C ABI always takes a path).

use std::path::{Path, PathBuf};

/// The variable that names the store.
pub const PATH_ENV: &str = "AGENT_INTERCOM_SCRATCHPAD";

/// The store's file name in the agent directory.
pub const DEFAULT_FILE_NAME: &str = "scratchpad.sqlite";

/// The default store: `$AGENT_INTERCOM_SCRATCHPAD`, else `<agent_dir>/scratchpad.sqlite`.
///
/// The variable is read through `env` (`api::process_env` for the process environment). Blanks
/// around it are ignored and a blank value counts as unset, as for the agent directory's
/// `$PI_CODING_AGENT_DIR`; a relative path is resolved against the current directory.
/// `agent_dir` is only called when the variable is unset: the agent directory's own rule is the
/// broker's (`agent_intercom_broker::config::agent_dir_from_env`), which this crate does not
/// depend on.
pub fn default_path(
    env: &dyn Fn(&str) -> Option<String>,
    agent_dir: impl FnOnce() -> PathBuf,
) -> PathBuf {
    path_from_env(env, PATH_ENV).unwrap_or_else(|| agent_dir().join(DEFAULT_FILE_NAME))
}

/// The path the variable `name` holds, read through `env`: blanks around it ignored, a blank
/// value counted as unset (`None`), a relative path resolved against the current directory. The
/// rule of every path variable of the CLI and the Node package (the store's, the keys
/// directory's).
pub fn path_from_env(env: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<PathBuf> {
    let configured = env(name)?;
    let configured = configured.trim();
    if configured.is_empty() {
        return None;
    }
    let path = Path::new(configured);
    Some(if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_wins_trimmed_else_the_agent_dir() {
        let agent = || PathBuf::from("/agent");
        let with =
            |value: &'static str| move |key: &str| (key == PATH_ENV).then(|| value.to_string());
        assert_eq!(
            default_path(&|_| None, agent),
            Path::new("/agent/scratchpad.sqlite")
        );
        assert_eq!(
            default_path(&with("  "), agent),
            Path::new("/agent/scratchpad.sqlite")
        );
        assert_eq!(
            default_path(&with(" /tmp/pad.sqlite\n"), || unreachable!()),
            Path::new("/tmp/pad.sqlite")
        );
        assert_eq!(
            default_path(&with("pad.sqlite"), agent),
            std::env::current_dir().unwrap().join("pad.sqlite")
        );
    }
}

//! Where files go. A path the user names (an option or a variable) is used as it is: the
//! directory it goes in must exist, and nothing is created for it. Only the default agent
//! directory (`$PI_CODING_AGENT_DIR`, else `~/.pi/agent`) is created when missing, because it is
//! this tool's own.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use agent_intercom_a2a::keys::KEYS_DIR_ENV;
use agent_intercom_scratchpad::api::process_env;
use agent_intercom_scratchpad::paths::{PATH_ENV, path_from_env};

use crate::fail::{Failure, io};

/// A path and who chose it.
#[derive(Debug)]
pub struct Chosen {
    /// The path.
    pub path: PathBuf,
    /// The option or variable that named it; `None` for the default in the agent directory.
    named_by: Option<String>,
}

fn agent_dir() -> PathBuf {
    agent_intercom_broker::config::agent_dir_from_env()
}

/// The scratchpad store: `--db`, else `$AGENT_INTERCOM_SCRATCHPAD`, else the default.
pub fn store(db: Option<&Path>) -> Chosen {
    if let Some(path) = db {
        return Chosen::named(path, "--db");
    }
    let env = process_env;
    match path_from_env(&env, PATH_ENV) {
        Some(path) => Chosen::named(&path, &format!("${PATH_ENV}")),
        None => Chosen {
            path: agent_intercom_scratchpad::default_path(&env, agent_dir),
            named_by: None,
        },
    }
}

/// The keys directory: `--keys`, else `$AGENT_INTERCOM_KEYS_DIR`, else beside the store.
pub fn keys(dir: Option<&Path>) -> Chosen {
    if let Some(path) = dir {
        return Chosen::named(path, "--keys");
    }
    let env = process_env;
    if let Some(path) = path_from_env(&env, KEYS_DIR_ENV) {
        return Chosen::named(&path, &format!("${KEYS_DIR_ENV}"));
    }
    let store = store(None);
    Chosen {
        path: agent_intercom_a2a::keys::default_dir(&env, agent_dir),
        named_by: store.named_by,
    }
}

impl Chosen {
    /// A path the user named with `by`.
    pub fn named(path: &Path, by: &str) -> Chosen {
        Chosen {
            path: path.to_path_buf(),
            named_by: Some(by.to_string()),
        }
    }

    /// Makes sure the directory the path goes in exists. The default agent directory is created
    /// (0700, with its parents) when missing; a directory the user named is never created: a
    /// missing one, or a file where a directory should be, is an error naming it.
    pub fn ready(&self) -> Result<(), Failure> {
        let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) else {
            return Ok(());
        };
        match &self.named_by {
            Some(by) => existing_dir(parent).map_err(|why| {
                io(format!(
                    "{why} ({by} {} goes in {})",
                    self.path.display(),
                    parent.display()
                ))
            }),
            None => create_agent_dir(parent),
        }
    }
}

/// Refuses a directory the user named with `by` unless it exists.
pub fn existing(dir: &Path, by: &str) -> Result<(), Failure> {
    existing_dir(dir).map_err(|why| io(format!("{why} ({by} {})", dir.display())))
}

/// Why `dir` is not an existing directory, naming the first part of it that is wrong.
fn existing_dir(dir: &Path) -> Result<(), String> {
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(format!("{} is not a directory", dir.display())),
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            Err(first_problem(dir))
        }
        Err(e) => Err(format!("cannot use the directory {}: {e}", dir.display())),
    }
}

/// Walks `path`'s ancestors from the root and names the first that is missing or not a
/// directory (or `path` itself when only it is missing).
fn first_problem(path: &Path) -> String {
    let mut ancestors: Vec<&Path> = path.ancestors().skip(1).collect();
    ancestors.reverse();
    for part in ancestors.into_iter().filter(|p| !p.as_os_str().is_empty()) {
        match std::fs::metadata(part) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return format!("{} is not a directory", part.display()),
            Err(_) => return format!("the directory {} does not exist", part.display()),
        }
    }
    format!("{} does not exist", path.display())
}

/// Creates the default agent directory (and its parents), 0700.
fn create_agent_dir(dir: &Path) -> Result<(), Failure> {
    use std::os::unix::fs::DirBuilderExt;
    if std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| {
            let why = match e.kind() {
                ErrorKind::AlreadyExists | ErrorKind::NotADirectory => first_problem(dir),
                _ => e.to_string(),
            };
            io(format!(
                "cannot create the agent directory {}: {why}",
                dir.display()
            ))
        })
}

/// An input file the user named, read whole (at most `limit` bytes; more is refused by its size
/// without reading it all). `-` is stdin.
pub fn read_input(path: &Path, what: &str, limit: u64) -> Result<Vec<u8>, Failure> {
    let bytes = read_capped(path, what, limit)?;
    if bytes.len() as u64 > limit {
        return Err(crate::fail::invalid(format!(
            "{what} {} is larger than {limit} bytes",
            path.display()
        )));
    }
    Ok(bytes)
}

/// At most `limit` + 1 bytes of the file at `path` (`-` is stdin), so that the caller can refuse
/// what is too large by its size without reading it whole.
pub fn read_capped(path: &Path, what: &str, limit: u64) -> Result<Vec<u8>, Failure> {
    use std::io::Read;
    let mut bytes = Vec::new();
    let read = if path == Path::new("-") {
        std::io::stdin()
            .lock()
            .take(limit + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(limit + 1).read_to_end(&mut bytes))
    };
    read.map_err(|e| {
        let why = match e.kind() {
            ErrorKind::NotFound | ErrorKind::NotADirectory => first_problem(path),
            _ => e.to_string(),
        };
        io(format!("cannot read {what} {}: {why}", path.display()))
    })?;
    Ok(bytes)
}

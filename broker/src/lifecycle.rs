//! The files through which brokers and adapters coordinate, as today's adapters use them:
//! `broker.owner` (created exclusively, holding the owner's pid), `broker.pid`, and
//! `broker.spawn.lock` (pid and timestamp of whoever is starting one). All files are 0600 in a
//! 0700 directory.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// True when a process with this pid exists (a process we may not signal still exists).
pub fn pid_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks for existence and permission.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Creates the intercom directory (and parents) and makes it 0700.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
}

/// Writes a whole file with mode 0600 (replacing it).
pub fn write_private(path: &Path, contents: &str) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(contents.as_bytes())?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
}

fn read_pid(path: &Path) -> Option<i32> {
    fs::read_to_string(path)
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()
        .filter(|p: &i32| *p > 0)
}

/// Why ownership could not be taken.
#[derive(Debug)]
pub enum OwnershipError {
    /// A live process owns the broker.
    Owned(i32),
    /// The file system failed.
    Io(io::Error),
}

impl std::fmt::Display for OwnershipError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OwnershipError::Owned(pid) => {
                write!(f, "intercom broker already owned by live process {pid}")
            }
            OwnershipError::Io(e) => write!(f, "cannot take broker ownership: {e}"),
        }
    }
}

impl std::error::Error for OwnershipError {}

/// Held ownership of `broker.owner`; released (only if still ours) by [`Ownership::release`].
#[derive(Debug)]
pub struct Ownership {
    path: PathBuf,
    pid: i32,
}

/// Takes `broker.owner` exclusively for `pid`. A file left by a dead process is replaced; one
/// held by a live process is not.
pub fn acquire_ownership(path: &Path, pid: i32) -> Result<Ownership, OwnershipError> {
    for _ in 0..3 {
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
        {
            Ok(mut file) => {
                file.write_all(pid.to_string().as_bytes())
                    .map_err(OwnershipError::Io)?;
                file.sync_all().map_err(OwnershipError::Io)?;
                return Ok(Ownership {
                    path: path.to_path_buf(),
                    pid,
                });
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => match read_pid(path) {
                Some(owner) if pid_alive(owner) => return Err(OwnershipError::Owned(owner)),
                _ => {
                    // The owner is gone (or the file is half-written garbage from a crash).
                    // Remove it only if it is still the file we judged stale.
                    if let Err(e) = fs::remove_file(path)
                        && e.kind() != io::ErrorKind::NotFound
                    {
                        return Err(OwnershipError::Io(e));
                    }
                }
            },
            Err(e) => return Err(OwnershipError::Io(e)),
        }
    }
    Err(OwnershipError::Io(io::Error::other(
        "ownership file kept reappearing",
    )))
}

impl Ownership {
    /// True while the file still names us.
    pub fn holds(&self) -> bool {
        read_pid(&self.path) == Some(self.pid)
    }

    /// Removes the file if it still names us.
    pub fn release(&self) {
        if self.holds() {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// A held `broker.spawn.lock`; released on drop.
#[derive(Debug)]
pub struct SpawnLock {
    path: PathBuf,
}

impl Drop for SpawnLock {
    fn drop(&mut self) {
        if read_pid(&self.path) == Some(std::process::id() as i32) {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Tries to take the spawn lock. `Ok(None)` when a live process took it less than `stale_after`
/// ago; a lock from a dead process, an unreadable one, or an old one is replaced.
pub fn try_spawn_lock(path: &Path, stale_after: Duration) -> io::Result<Option<SpawnLock>> {
    for _ in 0..5 {
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
        {
            Ok(mut file) => {
                file.write_all(format!("{}\n{}\n", std::process::id(), now_ms()).as_bytes())?;
                return Ok(Some(SpawnLock {
                    path: path.to_path_buf(),
                }));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let text = fs::read_to_string(path).unwrap_or_default();
                let mut lines = text.lines();
                let pid: Option<i32> = lines.next().and_then(|l| l.trim().parse().ok());
                let created: Option<i64> = lines.next().and_then(|l| l.trim().parse().ok());
                let stale = match (pid, created) {
                    (Some(pid), Some(created)) => {
                        !pid_alive(pid) || now_ms() - created > stale_after.as_millis() as i64
                    }
                    _ => true,
                };
                if !stale {
                    return Ok(None);
                }
                let _ = fs::remove_file(path);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("aic-lifecycle-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        ensure_private_dir(&dir).unwrap();
        dir
    }

    #[test]
    fn ownership_is_exclusive_and_stale_files_are_replaced() {
        let dir = temp_dir("own");
        let path = dir.join("broker.owner");
        let me = std::process::id() as i32;
        let held = acquire_ownership(&path, me).unwrap();
        assert!(matches!(acquire_ownership(&path, me), Err(OwnershipError::Owned(p)) if p == me));
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        held.release();
        assert!(!path.exists());
        // A dead owner's file (pid 0 never exists; an absurd pid neither).
        fs::write(&path, "999999999").unwrap();
        let held = acquire_ownership(&path, me).unwrap();
        assert!(held.holds());
        fs::write(&path, "garbage").unwrap();
        assert!(!held.holds());
        held.release();
        assert!(
            path.exists(),
            "release never removes a file that is not ours"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn spawn_lock() {
        let dir = temp_dir("lock");
        let path = dir.join("broker.spawn.lock");
        let lock = try_spawn_lock(&path, Duration::from_secs(10))
            .unwrap()
            .expect("free");
        assert!(
            try_spawn_lock(&path, Duration::from_secs(10))
                .unwrap()
                .is_none()
        );
        drop(lock);
        assert!(!path.exists());
        fs::write(
            &path,
            format!("{}\n{}\n", std::process::id(), now_ms() - 60_000),
        )
        .unwrap();
        assert!(
            try_spawn_lock(&path, Duration::from_secs(10))
                .unwrap()
                .is_some(),
            "an old lock is stale"
        );
        assert_eq!(
            fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}

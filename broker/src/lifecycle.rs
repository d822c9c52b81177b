//! The files through which brokers and adapters coordinate, as today's adapters use them:
//! `broker.owner` (holding the owner's pid), `broker.pid`, and `broker.spawn.lock` (pid and
//! timestamp of whoever is starting one).
//!
//! Ownership is a kernel lock: the owner holds `flock(LOCK_EX)` on `broker.owner` for the
//! broker's whole life, so two threads of one process race as safely as two processes, and a
//! crashed owner's lock is gone with it. The pid in the file is for the adapters (which read it)
//! and for a broker that does not lock (the TypeScript one): a live pid in an unlocked file
//! counts only while something answers on the socket, so a pid reused after a crash and a reboot
//! cannot block a new broker.
//!
//! Every runtime file is opened without following symbolic links, and the intercom directory
//! must be a real directory owned by this user; it is kept at mode 0700 and the files at 0600.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
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

fn refuse(path: &Path, why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("refusing {}: {why}", path.display()),
    )
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Makes sure the intercom directory is a real directory (not a symbolic link) owned by this
/// user, creating it (and its parents) when missing, and sets its mode to 0700.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    if let Err(e) = fs::symlink_metadata(dir) {
        if e.kind() != io::ErrorKind::NotFound {
            return Err(e);
        }
        if let Some(parent) = dir.parent() {
            fs::create_dir_all(parent)?;
        }
        match fs::DirBuilder::new().mode(0o700).create(dir) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
    }
    let meta = fs::symlink_metadata(dir)?;
    if meta.file_type().is_symlink() {
        return Err(refuse(
            dir,
            "the intercom directory is a symbolic link, not a directory",
        ));
    }
    if !meta.is_dir() {
        return Err(refuse(dir, "the intercom directory is not a directory"));
    }
    if meta.uid() != euid() {
        return Err(refuse(
            dir,
            &format!(
                "the intercom directory belongs to uid {}, not to this user (uid {})",
                meta.uid(),
                euid()
            ),
        ));
    }
    if meta.mode() & 0o777 != 0o700 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// What a runtime file must be when it exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file (ownership files, the store and its side files).
    Regular,
    /// A Unix socket (`broker.sock`), or a regular file left in its place (removed as stale
    /// like an old socket).
    Socket,
}

/// Refuses a runtime file that exists as a symbolic link (dangling or not) or as something
/// other than `kind`. A missing file is fine.
pub fn check_runtime_file(path: &Path, kind: FileKind) -> io::Result<()> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let file_type = meta.file_type();
    if file_type.is_symlink() {
        return Err(refuse(path, "it is a symbolic link"));
    }
    let expected = match kind {
        FileKind::Regular => file_type.is_file(),
        FileKind::Socket => file_type.is_socket() || file_type.is_file(),
    };
    if !expected {
        let what = match kind {
            FileKind::Regular => "a regular file",
            FileKind::Socket => "a socket",
        };
        return Err(refuse(path, &format!("it exists and is not {what}")));
    }
    Ok(())
}

fn open_options(create_new: bool) -> OpenOptions {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    if create_new {
        options.create_new(true);
    } else {
        options.create(true);
    }
    options
}

fn nofollow_error(path: &Path, e: io::Error) -> io::Error {
    if e.raw_os_error() == Some(libc::ELOOP) {
        refuse(path, "it is a symbolic link")
    } else {
        e
    }
}

/// Reads a small runtime file without following a symbolic link.
fn read_nofollow(path: &Path) -> io::Result<String> {
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| nofollow_error(path, e))?;
    let mut text = String::new();
    Read::by_ref(&mut file)
        .take(4096)
        .read_to_string(&mut text)?;
    Ok(text)
}

/// Writes a whole file with mode 0600, atomically (a fresh file renamed into place), never
/// through a symbolic link: a link at `path` is refused.
pub fn write_private(path: &Path, contents: &str) -> io::Result<()> {
    check_runtime_file(path, FileKind::Regular)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = path.with_file_name(format!(
        ".{name}.{}-{}.tmp",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let result = (|| {
        let mut file = open_options(true)
            .open(&temp)
            .map_err(|e| nofollow_error(&temp, e))?;
        file.write_all(contents.as_bytes())?;
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

fn parse_pid(text: &str) -> Option<i32> {
    text.lines()
        .next()?
        .trim()
        .parse()
        .ok()
        .filter(|p: &i32| *p > 0)
}

/// The pid a runtime file names on its first line, read without following a symbolic link.
pub fn read_pid(path: &Path) -> Option<i32> {
    parse_pid(&read_nofollow(path).ok()?)
}

/// Why ownership could not be taken.
#[derive(Debug)]
pub enum OwnershipError {
    /// A live broker owns the directory (its pid, when the file names one yet).
    Owned(Option<i32>),
    /// The file system failed, or a runtime file was unsafe (a symbolic link).
    Io(io::Error),
}

impl std::fmt::Display for OwnershipError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OwnershipError::Owned(Some(pid)) => {
                write!(f, "intercom broker already owned by live process {pid}")
            }
            OwnershipError::Owned(None) => write!(f, "intercom broker already owned"),
            OwnershipError::Io(e) => write!(f, "cannot take broker ownership: {e}"),
        }
    }
}

impl std::error::Error for OwnershipError {}

/// Held ownership of `broker.owner`: the open file carries the kernel lock, released when the
/// ownership is dropped (after [`Ownership::release`] removed the file).
#[derive(Debug)]
pub struct Ownership {
    file: File,
    path: PathBuf,
    identity: (u64, u64),
}

/// How long an unlocked owner file naming a live process that does not answer yet counts as a
/// broker that is still starting (the TypeScript broker writes its pid before it listens).
pub const STARTING_GRACE: Duration = Duration::from_secs(10);

fn identity(meta: &fs::Metadata) -> (u64, u64) {
    (meta.dev(), meta.ino())
}

fn try_lock(file: &File) -> io::Result<bool> {
    // SAFETY: flock on a file descriptor we own; LOCK_NB never blocks.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// Whether a broker that does not lock (the TypeScript one), named by a live pid in an unlocked
/// owner file, really owns the directory: something answers on the socket, or the file is
/// young enough that it may still be starting.
fn foreign_owner_present(meta: &fs::Metadata, socket: &Path) -> bool {
    let young = meta
        .modified()
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .is_some_and(|age| age < STARTING_GRACE);
    young
        || crate::client::health(socket, Duration::from_millis(500))
            != crate::client::Health::Unreachable
}

/// Takes `broker.owner` for `pid`. Fails with [`OwnershipError::Owned`] while another broker
/// (a thread of this process or another process) holds its lock, or while an unlocked file
/// names a live process and a broker answers on `socket` (one that does not lock). A file left
/// by a dead process, or naming a reused pid with nothing answering, is taken over.
pub fn acquire_ownership(
    path: &Path,
    pid: i32,
    socket: &Path,
) -> Result<Ownership, OwnershipError> {
    let io = OwnershipError::Io;
    for _ in 0..8 {
        check_runtime_file(path, FileKind::Regular).map_err(io)?;
        let mut file = open_options(false)
            .open(path)
            .map_err(|e| io(nofollow_error(path, e)))?;
        let meta = file.metadata().map_err(io)?;
        if !try_lock(&file).map_err(io)? {
            // Locked: a broker of ours runs. It writes its pid right after locking.
            let mut owner = None;
            for _ in 0..20 {
                owner = read_pid(path);
                if owner.is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            return Err(OwnershipError::Owned(owner));
        }
        // Locked by us; make sure the name still leads to this file (a previous owner may have
        // removed it between our open and our lock).
        match fs::symlink_metadata(path) {
            Ok(now) if identity(&now) == identity(&meta) && now.file_type().is_file() => {}
            _ => continue,
        }
        let mut text = String::new();
        Read::by_ref(&mut file)
            .take(4096)
            .read_to_string(&mut text)
            .map_err(io)?;
        if let Some(owner) = parse_pid(&text)
            && owner != pid
            && pid_alive(owner)
            && foreign_owner_present(&meta, socket)
        {
            return Err(OwnershipError::Owned(Some(owner)));
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        file.write_all(pid.to_string().as_bytes()).map_err(io)?;
        file.sync_all().map_err(io)?;
        fs::set_permissions(path, fs::Permissions::from_mode(0o600)).map_err(io)?;
        return Ok(Ownership {
            file,
            path: path.to_path_buf(),
            identity: identity(&meta),
        });
    }
    Err(io(io::Error::other(
        "the ownership file kept being replaced",
    )))
}

impl Ownership {
    /// True while `broker.owner` is still the file this ownership locked.
    pub fn holds(&self) -> bool {
        fs::symlink_metadata(&self.path).is_ok_and(|m| identity(&m) == self.identity)
    }

    /// Removes `broker.owner` if it is still ours, then drops the lock.
    pub fn release(self) {
        if self.holds() {
            let _ = fs::remove_file(&self.path);
        }
        drop(self.file);
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
/// ago; a lock from a dead process, an unreadable one, or an old one is replaced. A symbolic
/// link at the lock's path is refused.
pub fn try_spawn_lock(path: &Path, stale_after: Duration) -> io::Result<Option<SpawnLock>> {
    for _ in 0..5 {
        check_runtime_file(path, FileKind::Regular)?;
        match open_options(true).open(path) {
            Ok(mut file) => {
                file.write_all(format!("{}\n{}\n", std::process::id(), now_ms()).as_bytes())?;
                return Ok(Some(SpawnLock {
                    path: path.to_path_buf(),
                }));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let text = read_nofollow(path).unwrap_or_default();
                let mut lines = text.lines();
                let pid: Option<i32> = lines.next().and_then(|l| l.trim().parse().ok());
                let created: Option<i64> = lines.next().and_then(|l| l.trim().parse().ok());
                let stale = match (pid, created) {
                    (Some(pid), Some(created)) => {
                        !pid_alive(pid)
                            || now_ms().saturating_sub(created) > stale_after.as_millis() as i64
                    }
                    _ => true,
                };
                if !stale {
                    return Ok(None);
                }
                let _ = fs::remove_file(path);
            }
            Err(e) => return Err(nofollow_error(path, e)),
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
    fn ownership_is_a_lock_and_stale_files_are_taken_over() {
        let dir = temp_dir("own");
        let path = dir.join("broker.owner");
        let socket = dir.join("broker.sock");
        let me = std::process::id() as i32;
        let held = acquire_ownership(&path, me, &socket).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), me.to_string());
        // Another open of the same file (another thread's) cannot take it.
        assert!(matches!(
            acquire_ownership(&path, me, &socket),
            Err(OwnershipError::Owned(Some(p))) if p == me
        ));
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        held.release();
        assert!(!path.exists());
        // A dead owner's file, and garbage, are taken over.
        for stale in ["999999999", "garbage", ""] {
            fs::write(&path, stale).unwrap();
            let held = acquire_ownership(&path, me, &socket).unwrap();
            assert!(held.holds());
            held.release();
        }
        // A file put in place of ours is never removed by our release.
        let held = acquire_ownership(&path, me, &socket).unwrap();
        fs::remove_file(&path).unwrap();
        fs::write(&path, "1").unwrap();
        assert!(!held.holds());
        held.release();
        assert!(
            path.exists(),
            "release never removes a file that is not ours"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_live_unrelated_pid_does_not_block_when_nothing_answers() {
        let dir = temp_dir("reuse");
        let path = dir.join("broker.owner");
        let socket = dir.join("broker.sock");
        // pid 1 is alive and is not a broker; make the file old, as after a reboot.
        fs::write(&path, "1").unwrap();
        let old = SystemTime::now() - Duration::from_secs(3600);
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let me = std::process::id() as i32;
        let held = acquire_ownership(&path, me, &socket).expect("pid reuse cannot block");
        held.release();
        // A young file naming a live process counts as a broker that is still starting.
        fs::write(&path, "1").unwrap();
        assert!(matches!(
            acquire_ownership(&path, me, &socket),
            Err(OwnershipError::Owned(Some(1)))
        ));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn symbolic_links_are_refused_and_nothing_is_written_through_them() {
        let dir = temp_dir("links");
        let outside = dir.join("outside.txt");
        fs::write(&outside, "keep").unwrap();
        let me = std::process::id() as i32;
        for name in ["broker.owner", "broker.pid", "broker.spawn.lock"] {
            let path = dir.join(name);
            for target in [outside.clone(), dir.join("dangling-target")] {
                std::os::unix::fs::symlink(&target, &path).unwrap();
                let refused = match name {
                    "broker.owner" => acquire_ownership(&path, me, &dir.join("s")).is_err(),
                    "broker.pid" => write_private(&path, "1").is_err(),
                    _ => try_spawn_lock(&path, Duration::from_secs(10)).is_err(),
                };
                assert!(refused, "{name} -> {}", target.display());
                assert!(
                    fs::symlink_metadata(&path)
                        .unwrap()
                        .file_type()
                        .is_symlink()
                );
                assert!(!dir.join("dangling-target").exists());
                fs::remove_file(&path).unwrap();
            }
        }
        assert_eq!(fs::read_to_string(&outside).unwrap(), "keep");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn runtime_files_of_the_wrong_kind_are_refused() {
        let dir = temp_dir("kind");
        let pid = dir.join("broker.pid");
        fs::create_dir(&pid).unwrap();
        let e = check_runtime_file(&pid, FileKind::Regular).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(write_private(&pid, "1").is_err());
        // A leftover regular file where the socket goes counts as stale; a directory does not.
        let sock = dir.join("broker.sock");
        fs::write(&sock, "").unwrap();
        check_runtime_file(&sock, FileKind::Socket).unwrap();
        fs::remove_file(&sock).unwrap();
        fs::create_dir(&sock).unwrap();
        assert!(check_runtime_file(&sock, FileKind::Socket).is_err());
        check_runtime_file(&dir.join("absent"), FileKind::Regular).unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_intercom_directory_must_be_a_real_private_directory() {
        let base = temp_dir("dir");
        let real = base.join("real");
        fs::create_dir(&real).unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o755)).unwrap();
        ensure_private_dir(&real).unwrap();
        assert_eq!(fs::metadata(&real).unwrap().mode() & 0o777, 0o700);
        let link = base.join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let e = ensure_private_dir(&link).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let file = base.join("file");
        fs::write(&file, "").unwrap();
        assert!(ensure_private_dir(&file).is_err());
        // Another user's directory is refused (needs root to make one; skipped otherwise).
        if euid() == 0 {
            let foreign = base.join("foreign");
            fs::create_dir(&foreign).unwrap();
            std::os::unix::fs::chown(&foreign, Some(65534), None).unwrap();
            let e = ensure_private_dir(&foreign).unwrap_err();
            assert!(e.to_string().contains("belongs to uid 65534"), "{e}");
        }
        let nested = base.join("a/b/intercom");
        ensure_private_dir(&nested).unwrap();
        assert_eq!(fs::metadata(&nested).unwrap().mode() & 0o777, 0o700);
        fs::remove_dir_all(&base).unwrap();
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

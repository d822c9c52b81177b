//! A private SQLite file in a user's directory: the hygiene of the scratchpad store, shared by
//! every store of ours that lives there (the scratchpad, the MCP server's inbox).
//!
//! The path is a file name, never an SQLite URI or special name; its directory's own symbolic
//! links are resolved, a symbolic link at the file or its `-wal`, `-shm` or `-journal` side
//! files is refused with nothing created or written through it, and a new file is created
//! 0600. The connection is in WAL mode with `synchronous=NORMAL` (a committed transaction
//! survives the process being killed) and a busy handler that keeps waiters competitive.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_intercom_core::{Error, ErrorCode};
use rusqlite::Connection;

use crate::BUSY_GIVE_UP;

/// Opens (or creates) the SQLite file at `path`, which errors call `what` ("the scratchpad
/// store"). Refusals: `INVALID_ARGUMENT` for an empty path or one naming no file, `STORE_IO`
/// for a symbolic link or a side file that is not a regular file or a file that cannot be
/// opened, `STORE_CORRUPT` for a file that is not a database. Nothing is ever replaced.
pub fn open_private(path: &Path, what: &str) -> Result<Connection, Error> {
    let path = private_file(path, what)?;
    // Not SQLite's default flags: no SQLITE_OPEN_URI (a name is a name), no CREATE (the file
    // was created above, 0600), and NOFOLLOW (SQLite refuses a link anywhere in the path, and
    // opens the file and its side files with O_NOFOLLOW).
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
        | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX
        | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let io = |e| sqlite_error(what, e);
    let mut conn = Connection::open_with_flags(&path, flags).map_err(io)?;
    // SQLite's own busy handler backs off to 100 ms sleeps, and its lock is not fair: under
    // several busy writers a waiter can lose every race for its whole timeout. Short, jittered
    // sleeps keep waiters competitive; give up after about BUSY_GIVE_UP.
    conn.busy_handler(Some(busy_wait)).map_err(io)?;
    // Switching a new file to WAL takes an exclusive lock and reports SQLITE_BUSY without
    // consulting the busy handler when another process is opening the same file right now.
    let started = std::time::Instant::now();
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Ok(()) => break,
            Err(rusqlite::Error::SqliteFailure(f, _))
                if f.code == rusqlite::ErrorCode::DatabaseBusy
                    && started.elapsed() < BUSY_GIVE_UP =>
            {
                busy_wait(0);
            }
            Err(e) => return Err(io(e)),
        }
    }
    // WAL with synchronous=NORMAL: a committed transaction survives the process being killed
    // (not necessarily a power cut).
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(io)?;
    Ok(conn)
}

/// The busy handler: sleeps of 0.5 to 1.5 ms (jitter from the clock), ~1 ms per attempt on
/// average, until [`BUSY_GIVE_UP`].
pub fn busy_wait(attempt: i32) -> bool {
    let max_attempts = BUSY_GIVE_UP.as_millis() as i32;
    if attempt >= max_attempts {
        return false;
    }
    let jitter = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() % 1000);
    std::thread::sleep(Duration::from_micros(500 + u64::from(jitter)));
    true
}

/// An SQLite failure of the file errors call `what`, with its stable code: `STORE_CORRUPT` for a
/// file that is not a database, `STORE_IO` for anything else (a full disk, a read-only file, a
/// link in its path).
pub fn sqlite_error(what: &str, e: rusqlite::Error) -> Error {
    let code = |e: &rusqlite::Error| match e {
        rusqlite::Error::SqliteFailure(f, _) => Some((f.code, f.extended_code)),
        _ => None,
    };
    use rusqlite::ErrorCode as C;
    match code(&e) {
        Some((C::NotADatabase | C::DatabaseCorrupt, _)) => Error::new(
            ErrorCode::StoreCorrupt,
            format!("{what} is not a readable database ({e}); it was left untouched"),
        ),
        Some((C::DiskFull | C::SystemIoFailure, _)) => Error::new(
            ErrorCode::StoreIo,
            format!(
                "{what} could not write to disk ({e}; is the disk full?); the operation was \
                 rolled back"
            ),
        ),
        Some((_, rusqlite::ffi::SQLITE_CANTOPEN_SYMLINK)) => Error::new(
            ErrorCode::StoreIo,
            format!("refusing {what}: its path holds a symbolic link ({e}); nothing was written"),
        ),
        Some((C::ReadOnly | C::CannotOpen | C::PermissionDenied, _)) => Error::new(
            ErrorCode::StoreIo,
            format!("{what} cannot be written ({e}); is it read-only? nothing was changed"),
        ),
        _ => Error::new(ErrorCode::StoreIo, format!("{what}: {e}")),
    }
}

fn path_io(what: &str, part: String, e: &std::io::Error) -> Error {
    Error::new(
        ErrorCode::StoreIo,
        format!("cannot open {what}: {part}: {e}; nothing was changed"),
    )
}

fn symlink_refused(what: &str, path: &Path) -> Error {
    Error::new(
        ErrorCode::StoreIo,
        format!(
            "refusing {what}: {} is a symbolic link (the file and its -wal, -shm and -journal \
             files must be plain files); nothing was written",
            path.display()
        ),
    )
}

/// The file as SQLite is given it: absolute, in its directory's resolved location, checked for
/// planted symbolic links, and created 0600 when new.
fn private_file(path: &Path, what: &str) -> Result<PathBuf, Error> {
    if path.as_os_str().is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("the path of {what} is empty"),
        ));
    }
    let absolute =
        std::path::absolute(path).map_err(|e| path_io(what, path.display().to_string(), &e))?;
    let (Some(dir), Some(name)) = (absolute.parent(), absolute.file_name()) else {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("the path {} of {what} names no file", path.display()),
        ));
    };
    // SQLITE_OPEN_NOFOLLOW refuses a link in any component: the directory's links are the user's
    // layout (a symlinked home), so they are resolved here; the file's own name is not.
    let dir = std::fs::canonicalize(dir)
        .map_err(|e| path_io(what, format!("its directory {}", dir.display()), &e))?;
    let file = dir.join(name);
    for side in ["", "-wal", "-shm", "-journal"] {
        let mut side_path = file.clone().into_os_string();
        side_path.push(side);
        let side_path = PathBuf::from(side_path);
        match std::fs::symlink_metadata(&side_path) {
            Ok(m) if m.file_type().is_symlink() => return Err(symlink_refused(what, &side_path)),
            Ok(m) if !m.is_file() => {
                return Err(Error::new(
                    ErrorCode::StoreIo,
                    format!(
                        "refusing {what}: {} is not a regular file",
                        side_path.display()
                    ),
                ));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(path_io(what, side_path.display().to_string(), &e)),
        }
    }
    // O_CREAT|O_EXCL never follows a symbolic link (POSIX), so a link planted since the check
    // above makes this fail rather than create a file elsewhere. Another process creating the
    // file at the same time is fine.
    let mut create = std::fs::OpenOptions::new();
    create.write(true).create_new(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut create, 0o600);
    match create.open(&file) {
        Ok(_) => Ok(file),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            match std::fs::symlink_metadata(&file) {
                Ok(m) if m.file_type().is_symlink() => Err(symlink_refused(what, &file)),
                _ => Ok(file),
            }
        }
        Err(e) => Err(path_io(what, file.display().to_string(), &e)),
    }
}

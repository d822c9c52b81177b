//! The custody database: its revisions behind the migration gate, and the one control process
//! that may use it.
//!
//! The database is a file of its own, marked with [`APPLICATION_ID`]; its revision is
//! `PRAGMA user_version`. Revision 1 (the design's "0022") creates the eight custody tables of
//! [`CUSTODY_TABLES`]; downgrading to 0 is refused while any of them holds a row (unused
//! capacity rows included). Triggers keep the custody append-only: no row is ever deleted,
//! a policy never changes, ceilings never change and counters never go down.

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::{Code, LineError};

/// `PRAGMA application_id` of a line custody database ("AILN").
pub const APPLICATION_ID: i32 = 0x4149_4c4e;
/// The custody revision (the outbound session's tables).
pub const CUSTODY_REVISION: i64 = 1;
/// The native run lab's revision (custody plus the run tables).
pub const NATIVE_REVISION: i64 = 2;
/// The newest revision this build knows (`host migrate`'s default).
pub const NEWEST_REVISION: i64 = NATIVE_REVISION;
/// The native run lab's tables (revision 2), in creation order.
pub const NATIVE_TABLES: &[&str] = &[
    "run_session",
    "run_record",
    "run_peer_task",
    "run_checkpoint",
    "run_closure",
    "run_reauthorization",
];
/// The custody tables of revision 1, in creation order.
pub const CUSTODY_TABLES: &[&str] = &[
    "line_host",
    "line_policy",
    "line_capacity",
    "line_peer",
    "line_peer_key",
    "line_task",
    "line_exchange",
    "line_observation",
];

/// Revision 1. `STRICT` tables: a value of the wrong type is an error, never coerced.
const REVISION_1: &str = include_str!("schema_v1.sql");
/// Revision 2.
const REVISION_2: &str = include_str!("schema_v2.sql");

pub(crate) fn io(what: &str, e: impl std::fmt::Display) -> LineError {
    LineError::new(Code::StoreIo, format!("{what}: {e}"))
}

fn configure(conn: &Connection) -> Result<(), LineError> {
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(|e| io("cannot configure the database", e))?;
    conn.execute_batch(
        "PRAGMA foreign_keys = ON; PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL;",
    )
    .map_err(|e| io("cannot configure the database", e))
}

/// The exclusive hold of one control process on a database: a kernel `flock` on the database
/// file, released when the process ends however it ends.
#[derive(Debug)]
pub struct ControlLock {
    _file: std::fs::File,
}

impl ControlLock {
    /// Takes the hold, or `session_busy` when another process has it.
    pub fn acquire(db: &Path) -> Result<ControlLock, LineError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
            .open(db)
            .map_err(|e| io("cannot open the database to lock it", e))?;
        // SAFETY: flock on a file descriptor this function owns; LOCK_NB never blocks.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                return Err(LineError::new(
                    Code::SessionBusy,
                    "another control process uses this database",
                ));
            }
            return Err(io("cannot lock the database", e));
        }
        Ok(ControlLock { _file: file })
    }
}

/// What a database is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// An empty database (no table, no application id).
    Empty,
    /// A line custody database at this revision.
    Revision(i64),
}

/// What `conn` holds: an empty database or a custody revision; anything else is refused.
pub fn state(conn: &Connection) -> Result<State, LineError> {
    let read = |pragma: &str| -> Result<i64, LineError> {
        conn.pragma_query_value(None, pragma, |r| r.get(0))
            .map_err(|e| LineError::new(Code::ForeignDatabase, format!("not a database: {e}")))
    };
    let app = read("application_id")?;
    let version = read("user_version")?;
    if app == i64::from(APPLICATION_ID) {
        return Ok(State::Revision(version));
    }
    let objects: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(|e| LineError::new(Code::ForeignDatabase, format!("not a database: {e}")))?;
    if app == 0 && version == 0 && objects == 0 {
        return Ok(State::Empty);
    }
    Err(LineError::new(
        Code::ForeignDatabase,
        "this file is a database of something else: the line keeps its custody in its own file",
    ))
}

/// Opens an existing database for the outbound session: at [`CUSTODY_REVISION`] or
/// [`NATIVE_REVISION`] (which only adds tables the session never touches). A missing or older
/// database is `migration_required`, a newer one `schema_newer`. Nothing is written.
pub fn open_at_revision(db: &Path) -> Result<Connection, LineError> {
    open_within(db, CUSTODY_REVISION, NATIVE_REVISION)
}

/// Opens an existing database for the native run lab: exactly at [`NATIVE_REVISION`].
pub fn open_native(db: &Path) -> Result<Connection, LineError> {
    open_within(db, NATIVE_REVISION, NATIVE_REVISION)
}

fn open_within(db: &Path, least: i64, most: i64) -> Result<Connection, LineError> {
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|_| {
        LineError::new(
            Code::MigrationRequired,
            "no custody database: run `agent-intercom line host migrate --db ABS` first",
        )
    })?;
    match state(&conn)? {
        State::Revision(r) if (least..=most).contains(&r) => {}
        State::Revision(r) if r > NEWEST_REVISION => {
            return Err(LineError::new(
                Code::SchemaNewer,
                format!(
                    "the database is at revision {r}; this build knows up to {NEWEST_REVISION}"
                ),
            ));
        }
        _ => {
            return Err(LineError::new(
                Code::MigrationRequired,
                format!(
                    "this profile needs revision {least}: run `line host migrate --to {least}`"
                ),
            ));
        }
    }
    configure(&conn)?;
    Ok(conn)
}

/// The result of a migration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Migrated {
    /// The revision before.
    pub from: i64,
    /// The revision now.
    pub to: i64,
}

/// Brings `db` (created when absent) to revision `to` (0, 1 or 2) under the control lock, one
/// revision at a time in one transaction. Downgrading is refused while any table it would drop
/// holds a row (and, from 2, while any task is native).
pub fn migrate(db: &Path, to: i64) -> Result<Migrated, LineError> {
    if !(0..=NEWEST_REVISION).contains(&to) {
        return Err(LineError::new(
            Code::Usage,
            format!("--to must be 0 to {NEWEST_REVISION}"),
        ));
    }
    let mut conn = Connection::open(db).map_err(|e| io("cannot open the database", e))?;
    let _lock = ControlLock::acquire(db)?;
    let from = match state(&conn)? {
        State::Empty => 0,
        State::Revision(r) if r > NEWEST_REVISION => {
            return Err(LineError::new(
                Code::SchemaNewer,
                format!(
                    "the database is at revision {r}; this build knows up to {NEWEST_REVISION}"
                ),
            ));
        }
        State::Revision(r) => r,
    };
    configure(&conn)?;
    if from == to {
        return Ok(Migrated { from, to });
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| io("cannot begin the migration", e))?;
    let mut at = from;
    while at < to {
        if at == 0 {
            tx.execute_batch(REVISION_1)
                .map_err(|e| io("cannot create the custody tables", e))?;
        } else {
            refuse_native_owners(&tx)?;
            tx.execute_batch(REVISION_2)
                .map_err(|e| io("cannot create the native tables", e))?;
        }
        at += 1;
    }
    while at > to {
        if at == NATIVE_REVISION {
            refuse_rows(&tx, NATIVE_TABLES)?;
            let native: i64 = tx
                .query_row(
                    "SELECT count(*) FROM line_task WHERE owner_kind = 'native'",
                    [],
                    |r| r.get(0),
                )
                .map_err(|e| io("cannot count native tasks", e))?;
            if native > 0 {
                return Err(LineError::new(
                    Code::DowngradeRefused,
                    format!("line_task holds {native} native task(s): custody is never dropped"),
                )
                .with("table", "line_task"));
            }
            drop_tables(&tx, NATIVE_TABLES)?;
        } else {
            refuse_rows(&tx, CUSTODY_TABLES)?;
            drop_tables(&tx, CUSTODY_TABLES)?;
        }
        at -= 1;
    }
    let app = if to == 0 { 0 } else { APPLICATION_ID };
    tx.pragma_update(None, "application_id", app)
        .and_then(|_| tx.pragma_update(None, "user_version", to))
        .map_err(|e| io("cannot record the revision", e))?;
    tx.commit()
        .map_err(|e| io("cannot commit the migration", e))?;
    Ok(Migrated { from, to })
}

/// Refuses while any of `tables` holds a row.
fn refuse_rows(tx: &rusqlite::Transaction<'_>, tables: &[&'static str]) -> Result<(), LineError> {
    for table in tables {
        let rows: i64 = tx
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .map_err(|e| io("cannot count custody rows", e))?;
        if rows > 0 {
            return Err(LineError::new(
                Code::DowngradeRefused,
                format!("{table} holds {rows} row(s): custody is never dropped"),
            )
            .with("table", *table));
        }
    }
    Ok(())
}

fn drop_tables(tx: &rusqlite::Transaction<'_>, tables: &[&str]) -> Result<(), LineError> {
    for table in tables.iter().rev() {
        tx.execute_batch(&format!("DROP TABLE {table};"))
            .map_err(|e| io("cannot drop a custody table", e))?;
    }
    Ok(())
}

/// The native revision binds every native task to a run; a task that already names a native
/// owner at revision 1 has none, so the upgrade is refused (`inconsistent_wait_owner`).
fn refuse_native_owners(tx: &rusqlite::Transaction<'_>) -> Result<(), LineError> {
    let orphans: i64 = tx
        .query_row(
            "SELECT count(*) FROM line_task WHERE owner_kind <> 'operator'",
            [],
            |r| r.get(0),
        )
        .map_err(|e| io("cannot read task owners", e))?;
    if orphans > 0 {
        return Err(LineError::new(
            Code::InconsistentWaitOwner,
            format!("{orphans} task(s) name a native owner with no run: the upgrade is refused"),
        )
        .with("table", "line_task"));
    }
    Ok(())
}

/// The database path from an absolute path text.
pub fn db_path(text: &str) -> Result<PathBuf, LineError> {
    crate::absolute_path("the database", text)
}

//! Durable broker state in SQLite (WAL): ask edges and duplicate-suppression results, so both
//! survive a crash (kill -9) and a restart. Scopes are never stored.

use std::fs::OpenOptions;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

/// The store's schema version. A store with a newer version is refused, never rewritten.
pub const SCHEMA_VERSION: i64 = 1;

/// Why the store could not be used.
#[derive(Debug)]
pub enum StoreError {
    /// The store was written by a newer broker.
    NewerSchema(i64),
    /// SQLite says the file is not a database, or is damaged.
    Corrupt(String),
    /// SQLite or the file system failed.
    Io(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::NewerSchema(v) => write!(
                f,
                "the broker store has schema version {v}, newer than {SCHEMA_VERSION}; \
                 refusing to touch it"
            ),
            StoreError::Corrupt(e) => write!(f, "broker store is damaged: {e}"),
            StoreError::Io(e) => write!(f, "broker store: {e}"),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
        match e.sqlite_error_code() {
            Some(NotADatabase | DatabaseCorrupt) => StoreError::Corrupt(e.to_string()),
            _ => StoreError::Io(e.to_string()),
        }
    }
}

/// A persisted ask edge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeRow {
    /// Asking session.
    pub from: String,
    /// The ask's message id.
    pub message_id: String,
    /// Asked session.
    pub to: String,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// Milliseconds since the epoch.
    pub expires_at: i64,
    /// "blocking" or "deferred".
    pub state: String,
}

/// A persisted delivery result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryRow {
    /// Sender.
    pub from: String,
    /// Message id.
    pub message_id: String,
    /// Digest of {to, replyTo, expectsReply, content}.
    pub fingerprint: String,
    /// Recipient.
    pub to: String,
    /// The `delivered` or `delivery_failed` frame, as JSON.
    pub response: String,
    /// A failure the sender may retry with the same id.
    pub retryable: bool,
    /// Milliseconds since the epoch.
    pub expires_at: i64,
}

/// The open store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

fn restrict(path: &Path) {
    if path.exists() {
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
}

impl Store {
    /// Opens (or creates, mode 0600) the store, on a plain path (never as an SQLite URI) and
    /// never through a symbolic link. A file SQLite reports as not a database, or as corrupt, is
    /// moved aside to `<name>.corrupt-<millis>` (never deleted) and a fresh store is created; any
    /// other failure (the file is locked or busy, unreadable, on a full disk) is returned and the
    /// file is left exactly as it is.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        match Store::open_inner(path) {
            Ok(store) => Ok(store),
            Err(StoreError::Corrupt(first)) => {
                let stamp = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis())
                    .unwrap_or(0);
                let aside = path.with_extension(format!("sqlite.corrupt-{stamp}"));
                std::fs::rename(path, &aside)
                    .map_err(|e| StoreError::Io(format!("{first}; moving it aside failed: {e}")))?;
                for suffix in ["-wal", "-shm"] {
                    let side = PathBuf::from(format!("{}{suffix}", path.display()));
                    let _ = std::fs::rename(
                        &side,
                        PathBuf::from(format!("{}{suffix}", aside.display())),
                    );
                }
                eprintln!(
                    "agent-intercom broker: store unreadable ({first}); moved aside to {}",
                    aside.display()
                );
                Store::open_inner(path)
            }
            Err(other) => Err(other),
        }
    }

    fn open_inner(path: &Path) -> Result<Store, StoreError> {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let file = PathBuf::from(format!("{}{suffix}", path.display()));
            if std::fs::symlink_metadata(&file).is_ok_and(|m| !m.file_type().is_file()) {
                return Err(StoreError::Io(format!(
                    "refusing {}: it is a symbolic link or not a regular file",
                    file.display()
                )));
            }
        }
        // Create the file ourselves so it (and SQLite's -wal/-shm, which copy its mode) is 0600.
        OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .map_err(|e| StoreError::Io(format!("{}: {e}", path.display())))?;
        restrict(path);
        // No SQLITE_OPEN_URI: the path is a file name, whatever it looks like.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(path, flags)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        // The broker owns the directory (broker.owner): no other process opens the store while it
        // runs, so the store is locked once instead of on every transaction.
        conn.pragma_update(None, "locking_mode", "EXCLUSIVE")?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
             CREATE TABLE IF NOT EXISTS ask_edges (
               from_id TEXT NOT NULL, message_id TEXT NOT NULL, to_id TEXT NOT NULL,
               created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, state TEXT NOT NULL,
               PRIMARY KEY (from_id, message_id));
             CREATE TABLE IF NOT EXISTS deliveries (
               from_id TEXT NOT NULL, message_id TEXT NOT NULL, fingerprint TEXT NOT NULL, \
               to_id TEXT NOT NULL,
               response TEXT NOT NULL, retryable INTEGER NOT NULL, expires_at INTEGER NOT NULL,
               PRIMARY KEY (from_id, message_id));",
        )?;
        let version: Option<i64> = conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        match version {
            None => {
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)",
                    [SCHEMA_VERSION],
                )?;
            }
            Some(v) if v > SCHEMA_VERSION => return Err(StoreError::NewerSchema(v)),
            Some(_) => {}
        }
        // Make sure every byte of the file is readable: a damaged page fails here, not later.
        let check: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
        if check != "ok" {
            return Err(StoreError::Corrupt(format!(
                "integrity check failed: {check}"
            )));
        }
        for suffix in ["-wal", "-shm"] {
            restrict(&PathBuf::from(format!("{}{suffix}", path.display())));
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens a transaction unless one is open: writes until [`Store::commit`] are one commit.
    pub fn begin(&self) -> Result<(), StoreError> {
        if self.conn.is_autocommit() {
            self.conn.execute_batch("BEGIN")?;
        }
        Ok(())
    }

    /// Commits the open transaction, if any.
    pub fn commit(&self) -> Result<(), StoreError> {
        if !self.conn.is_autocommit() {
            self.conn.execute_batch("COMMIT")?;
        }
        Ok(())
    }

    /// Live edges (expired ones are deleted).
    pub fn load_edges(&self, now_ms: i64) -> Result<Vec<EdgeRow>, StoreError> {
        self.conn
            .execute("DELETE FROM ask_edges WHERE expires_at <= ?1", [now_ms])?;
        let mut stmt = self.conn.prepare(
            "SELECT from_id, message_id, to_id, created_at, expires_at, state FROM ask_edges \
             ORDER BY created_at, from_id, message_id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(EdgeRow {
                from: r.get(0)?,
                message_id: r.get(1)?,
                to: r.get(2)?,
                created_at: r.get(3)?,
                expires_at: r.get(4)?,
                state: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Live delivery results (expired ones are deleted).
    pub fn load_deliveries(&self, now_ms: i64) -> Result<Vec<DeliveryRow>, StoreError> {
        self.conn
            .execute("DELETE FROM deliveries WHERE expires_at <= ?1", [now_ms])?;
        let mut stmt = self.conn.prepare(
            "SELECT from_id, message_id, fingerprint, to_id, response, retryable, expires_at \
             FROM deliveries",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(DeliveryRow {
                from: r.get(0)?,
                message_id: r.get(1)?,
                fingerprint: r.get(2)?,
                to: r.get(3)?,
                response: r.get(4)?,
                retryable: r.get::<_, i64>(5)? != 0,
                expires_at: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Inserts or replaces an edge.
    pub fn put_edge(&self, e: &EdgeRow) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO ask_edges \
                 (from_id, message_id, to_id, created_at, expires_at, state) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                e.from,
                e.message_id,
                e.to,
                e.created_at,
                e.expires_at,
                e.state
            ])?;
        Ok(())
    }

    /// Sets an edge's state.
    pub fn set_edge_state(
        &self,
        from: &str,
        message_id: &str,
        state: &str,
    ) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "UPDATE ask_edges SET state = ?3 WHERE from_id = ?1 AND message_id = ?2",
            )?
            .execute(params![from, message_id, state])?;
        Ok(())
    }

    /// Deletes an edge.
    pub fn delete_edge(&self, from: &str, message_id: &str) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM ask_edges WHERE from_id = ?1 AND message_id = ?2")?
            .execute(params![from, message_id])?;
        Ok(())
    }

    /// Inserts or replaces a delivery result.
    pub fn put_delivery(&self, d: &DeliveryRow) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO deliveries \
                 (from_id, message_id, fingerprint, to_id, response, retryable, expires_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                d.from,
                d.message_id,
                d.fingerprint,
                d.to,
                d.response,
                d.retryable as i64,
                d.expires_at
            ])?;
        Ok(())
    }

    /// One delivery result, if stored.
    pub fn get_delivery(
        &self,
        from: &str,
        message_id: &str,
    ) -> Result<Option<DeliveryRow>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT from_id, message_id, fingerprint, to_id, response, retryable, expires_at \
                 FROM deliveries WHERE from_id = ?1 AND message_id = ?2",
            )?
            .query_row(params![from, message_id], |r| {
                Ok(DeliveryRow {
                    from: r.get(0)?,
                    message_id: r.get(1)?,
                    fingerprint: r.get(2)?,
                    to: r.get(3)?,
                    response: r.get(4)?,
                    retryable: r.get::<_, i64>(5)? != 0,
                    expires_at: r.get(6)?,
                })
            })
            .optional()?)
    }

    /// Deletes a delivery result.
    pub fn delete_delivery(&self, from: &str, message_id: &str) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM deliveries WHERE from_id = ?1 AND message_id = ?2")?
            .execute(params![from, message_id])?;
        Ok(())
    }

    /// Deletes every delivery result a session sent or received (its remote access ended: a
    /// replay must be decided anew, not answered from before).
    pub fn delete_deliveries_of(&self, session: &str) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM deliveries WHERE from_id = ?1 OR to_id = ?1")?
            .execute(params![session])?;
        Ok(())
    }

    /// Overwrites the recorded schema version (for tests of the newer-schema refusal).
    #[doc(hidden)]
    pub fn debug_set_schema_version(&self, version: i64) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
            [version],
        )?;
        Ok(())
    }

    /// Deletes expired delivery results.
    pub fn prune_deliveries(&self, now_ms: i64) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM deliveries WHERE expires_at <= ?1")?
            .execute([now_ms])?;
        Ok(())
    }
}

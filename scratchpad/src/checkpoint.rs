//! SQLite WAL checkpoints off the writer's thread.
//!
//! SQLite's automatic checkpoint runs inside the `COMMIT` that pushes the write-ahead log past
//! its threshold: that commit copies the log into the database and waits for two fsyncs, and
//! whatever waits behind the writer (every frame of a broker on one thread, the next post) waits
//! with it. [`Checkpointer::install`] turns the automatic checkpoint off on the writer's
//! connection and has a thread of its own, on a connection of its own, do the work instead:
//!
//! - a PASSIVE checkpoint once the log holds [`Policy::passive_at`] pages, and again each time
//!   it has grown by as many since the last one started (it never blocks the writer; once every
//!   frame is copied, the writer's next commit starts the log over from its beginning, so the
//!   file stops growing). Not one per commit: a checkpoint copies the newest version of each
//!   page, so under a steady writer fewer, larger checkpoints copy the same hot pages fewer
//!   times (copying them again after every commit, a broker's checkpointing thread took a
//!   seventh of the broker process's CPU);
//! - a RESTART checkpoint if the log reached [`Policy::restart_at`] pages anyway (the writer
//!   outran the copies): the bound on the log's size, paid by a writer that waits briefly (a
//!   PASSIVE just before it leaves the RESTART little to copy);
//! - a TRUNCATE checkpoint once no commit came for [`Policy::idle`]: an idle store keeps no log.
//!
//! The thread starts with the first commit that needs it (a short-lived process that writes
//! little never starts one) and stops when the [`Checkpointer`] is dropped. Durability is
//! unchanged: a commit is in the log when `COMMIT` returns, whoever copies it later.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;
use rusqlite::wal::CheckpointMode;

/// When to checkpoint, in pages of the write-ahead log.
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    /// A PASSIVE checkpoint from this many pages on.
    pub passive_at: i32,
    /// A RESTART checkpoint (the writer waits for it) from this many pages on.
    pub restart_at: i32,
    /// A TRUNCATE checkpoint after this long without a commit.
    pub idle: Duration,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            passive_at: 1_000,
            restart_at: 16_000,
            idle: Duration::from_millis(500),
        }
    }
}

/// Opens the checkpointing thread's own connection to the same file.
pub type Opener = Arc<dyn Fn() -> rusqlite::Result<Connection> + Send + Sync>;

/// Runs the checkpoints of one writer's connection (see the module documentation).
pub struct Checkpointer {
    shared: Arc<Shared>,
}

struct Shared {
    inner: Mutex<Inner>,
    wake: Condvar,
    policy: Policy,
    open: Opener,
}

#[derive(Default)]
struct Inner {
    /// Pages in the log after the last commit.
    pages: i32,
    /// Pages in the log when the last PASSIVE checkpoint started (0 once the log started over).
    copied_at: i32,
    /// Commits seen so far.
    commits: u64,
    /// The thread waits on `wake` (so a commit that needs it must notify).
    waiting: bool,
    /// The thread waits without a timeout (the log was truncated; the next commit wakes it).
    deep: bool,
    /// The thread could not open its connection: the writer checkpoints itself, as SQLite would.
    failed: bool,
    stop: bool,
    thread: Option<JoinHandle<()>>,
    /// Checkpoints run so far, by kind (PASSIVE, RESTART, TRUNCATE).
    done: [u64; 3],
}

impl Inner {
    /// Whether the log has grown by [`Policy::passive_at`] pages since the last PASSIVE
    /// checkpoint started (or since it started over).
    fn passive_due(&self, policy: Policy) -> bool {
        self.pages - self.copied_at >= policy.passive_at
    }
}

impl Checkpointer {
    /// Turns the automatic checkpoint of `conn` (a connection in WAL mode) off and installs the
    /// hook that hands checkpoints to a thread, which opens its connection with `open`.
    pub fn install(
        conn: &mut Connection,
        policy: Policy,
        open: Opener,
    ) -> rusqlite::Result<Checkpointer> {
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner::default()),
            wake: Condvar::new(),
            policy,
            open,
        });
        let hook = shared.clone();
        // Installed after the pragma: `wal_autocheckpoint` replaces any WAL hook.
        conn.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, pages| {
            if hook.committed(pages) && pages >= hook.policy.passive_at {
                // The thread could not start: do what SQLite's own checkpoint would have.
                let _ = wal.checkpoint_v2(CheckpointMode::PASSIVE);
            }
            Ok(())
        }))?;
        Ok(Checkpointer { shared })
    }

    /// How many PASSIVE, RESTART and TRUNCATE checkpoints the thread ran (for tests).
    pub fn counts(&self) -> [u64; 3] {
        self.shared.lock().done
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        let thread = {
            let mut inner = self.shared.lock();
            inner.stop = true;
            inner.thread.take()
        };
        self.shared.wake.notify_one();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Called inside every commit (the WAL hook): records the log's size and wakes or starts the
    /// thread when there is work. True when the writer must checkpoint itself.
    fn committed(self: &Arc<Shared>, pages: i32) -> bool {
        let mut inner = self.lock();
        if pages < inner.pages {
            // The log started over.
            inner.copied_at = 0;
        }
        inner.pages = pages;
        inner.commits += 1;
        if inner.failed {
            return true;
        }
        let due = inner.passive_due(self.policy);
        if inner.thread.is_none() {
            if due && !inner.stop {
                let shared = self.clone();
                match std::thread::Builder::new()
                    .name("sqlite-checkpoint".into())
                    .spawn(move || shared.run())
                {
                    Ok(handle) => inner.thread = Some(handle),
                    Err(_) => inner.failed = true,
                }
            }
            return inner.failed;
        }
        if inner.waiting && (due || inner.deep) {
            inner.deep = false;
            self.wake.notify_one();
        }
        false
    }

    /// The thread: checkpoints while there is work, truncates the log once the writer is idle.
    fn run(self: Arc<Shared>) {
        // A checkpoint copies frames through a buffer of its own, not the page cache: a small
        // cache keeps the thread's memory small. A RESTART or TRUNCATE that cannot have the locks
        // it waits for within a second gives up (and is tried again later): dropping the store
        // waits for this thread, and must not wait for another process's long transaction.
        let opened = (self.open)().and_then(|mut conn| {
            conn.pragma_update(None, "cache_size", -64)?;
            conn.busy_handler(Some(busy_wait::<1>))?;
            Ok(conn)
        });
        let conn = match opened {
            Ok(conn) => conn,
            Err(_) => {
                self.lock().failed = true;
                return;
            }
        };
        let mut inner = self.lock();
        // The commit count at the last checkpoint, and at the last look at an idle writer.
        let (mut checkpointed, mut seen) = (u64::MAX, inner.commits);
        while !inner.stop {
            let fresh = inner.commits != checkpointed;
            let mode = if fresh && inner.pages >= self.policy.restart_at {
                Some(CheckpointMode::RESTART)
            } else if fresh && inner.passive_due(self.policy) {
                inner.copied_at = inner.pages;
                Some(CheckpointMode::PASSIVE)
            } else {
                None
            };
            if let Some(mode) = mode {
                checkpointed = inner.commits;
                drop(inner);
                if matches!(mode, CheckpointMode::RESTART) {
                    // The writer waits while a RESTART copies what no checkpoint has copied yet
                    // and syncs the log and the database: a PASSIVE first (the writer goes on)
                    // leaves it only the frames committed meanwhile (measured: the writer's
                    // longest wait went from 8-15 ms to 2-6 ms, with the busy handler below).
                    let _ = conn.wal_checkpoint_v2(None::<&str>, CheckpointMode::PASSIVE);
                }
                let _ = conn.wal_checkpoint_v2(None::<&str>, mode);
                inner = self.lock();
                inner.done[if matches!(mode, CheckpointMode::PASSIVE) {
                    0
                } else {
                    1
                }] += 1;
                continue;
            }
            inner.waiting = true;
            let timed_out = if inner.deep {
                inner = self.wake.wait(inner).unwrap_or_else(|p| p.into_inner());
                false
            } else {
                let (guard, wait) = self
                    .wake
                    .wait_timeout(inner, self.policy.idle)
                    .unwrap_or_else(|p| p.into_inner());
                inner = guard;
                wait.timed_out()
            };
            inner.waiting = false;
            if !timed_out || inner.stop {
                continue;
            }
            if inner.commits == seen && inner.pages > 0 {
                drop(inner);
                let _ = conn.wal_checkpoint_v2(None::<&str>, CheckpointMode::PASSIVE);
                let truncated = conn.wal_checkpoint_v2(None::<&str>, CheckpointMode::TRUNCATE);
                inner = self.lock();
                inner.done[2] += 1;
                if truncated.is_ok() && inner.commits == seen {
                    inner.pages = 0;
                    inner.copied_at = 0;
                    inner.deep = true;
                }
            }
            seen = inner.commits;
        }
    }
}

/// A busy handler that tries again every 200 µs, for `SECONDS` of waiting (from the first try
/// of each wait). SQLite's own sleeps 1, 2, 5, 10 ms and more between tries, and a RESTART or
/// TRUNCATE holds the writer's lock while it waits (for the writer's commit to end, for
/// readers to leave the log): with those sleeps a RESTART that had 50 frames left to copy took
/// 9 ms (measured; 4-5 ms with these), and a writer waiting for such a checkpoint oversleeps
/// it. The checkpoint thread waits a second; a writer may wait longer.
pub fn busy_wait<const SECONDS: u64>(attempt: i32) -> bool {
    thread_local! {
        /// When the current wait began (each wait's first try is attempt 0).
        static SINCE: std::cell::Cell<Option<std::time::Instant>> =
            const { std::cell::Cell::new(None) };
    }
    let now = std::time::Instant::now();
    let since = SINCE.with(|s| {
        if attempt == 0 {
            s.set(Some(now));
        }
        s.get().unwrap_or(now)
    });
    if now.duration_since(since) >= Duration::from_secs(SECONDS) {
        return false;
    }
    std::thread::sleep(Duration::from_micros(200));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busy_handler_tries_again_until_its_time_from_the_first_try_is_up() {
        assert!(busy_wait::<1>(0), "a wait starts");
        assert!(busy_wait::<1>(1), "and goes on within its second");
        assert!(!busy_wait::<0>(0), "a wait of no time gives up at once");
        assert!(!busy_wait::<0>(7));
    }
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    struct Dir(PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn dir(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("aic-ckpt-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn open(path: &Path) -> rusqlite::Result<Connection> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        Ok(conn)
    }

    /// A store in a fresh directory of its own, with the test table: the directory (removed on
    /// drop), the database's path and the writer's connection.
    fn store(tag: &str) -> (Dir, PathBuf, Connection) {
        let d = dir(tag);
        let path = d.0.join("s.sqlite");
        let conn = open(&path).unwrap();
        conn.execute_batch("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)")
            .unwrap();
        (d, path, conn)
    }

    /// The checkpoint thread's connection factory: its own connection to `path`.
    fn opener(path: &Path) -> Opener {
        let own = path.to_path_buf();
        Arc::new(move || open(&own))
    }

    fn wal_len(path: &Path) -> u64 {
        std::fs::metadata(format!("{}-wal", path.display())).map_or(0, |m| m.len())
    }

    /// Commits one row of about a page each, `n` times.
    fn write(conn: &Connection, from: usize, n: usize) {
        for i in from..from + n {
            conn.execute(
                "INSERT INTO t (k, v) VALUES (?1, ?2)",
                (i as i64, "x".repeat(3000)),
            )
            .unwrap();
        }
    }

    /// Waits (a liveness bound, not a timing claim) until `done` holds.
    fn eventually(what: &str, mut done: impl FnMut() -> bool) {
        let start = Instant::now();
        while !done() {
            assert!(start.elapsed() < Duration::from_secs(60), "never: {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    const SMALL: Policy = Policy {
        passive_at: 16,
        restart_at: 1_000_000,
        idle: Duration::from_millis(30),
    };

    #[test]
    fn the_thread_copies_the_log_and_truncates_it_once_the_writer_is_idle() {
        let (_d, path, mut conn) = store("idle");
        let ck = Checkpointer::install(&mut conn, SMALL, opener(&path)).unwrap();
        let auto: i64 = conn
            .pragma_query_value(None, "wal_autocheckpoint", |r| r.get(0))
            .unwrap();
        assert_eq!(auto, 0, "SQLite's own checkpoint is off");
        write(&conn, 0, 2);
        assert!(ck.shared.lock().pages < SMALL.passive_at);
        assert_eq!(ck.counts(), [0, 0, 0], "below the threshold no thread runs");
        assert!(ck.shared.lock().thread.is_none());
        write(&conn, 2, 206);
        eventually("a passive checkpoint", || ck.counts()[0] >= 1);
        eventually("the idle truncation", || {
            ck.counts()[2] >= 1 && wal_len(&path) == 0
        });
        // Every committed row is in the database file, read by a connection of its own.
        drop(conn);
        let other = Connection::open(&path).unwrap();
        let rows: i64 = other
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 208);
        // The writer resumes after the truncation: the thread wakes for it again.
        drop(other);
        drop(ck);
    }

    #[test]
    fn the_next_commit_wakes_a_thread_that_truncated_and_sleeps() {
        let (_d, path, mut conn) = store("wake");
        let ck = Checkpointer::install(&mut conn, SMALL, opener(&path)).unwrap();
        write(&conn, 0, 100);
        eventually("the first truncation", || {
            ck.counts()[2] >= 1 && ck.shared.lock().deep
        });
        write(&conn, 100, 100);
        eventually("a second truncation", || {
            ck.counts()[2] >= 2 && wal_len(&path) == 0
        });
    }

    #[test]
    fn a_growing_log_is_copied_again_only_after_another_threshold_of_pages() {
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner {
                stop: true, // no thread: only the bookkeeping of the hook is under test
                ..Inner::default()
            }),
            wake: Condvar::new(),
            policy: SMALL,
            open: Arc::new(|| Err(rusqlite::Error::InvalidQuery)),
        });
        let due = |pages: i32| {
            shared.committed(pages);
            shared.lock().passive_due(SMALL)
        };
        assert!(!due(SMALL.passive_at - 1));
        assert!(due(SMALL.passive_at));
        // The thread started a PASSIVE checkpoint at 20 pages; the writer kept committing.
        shared.lock().copied_at = 20;
        assert!(!due(21), "one more commit is not another checkpoint");
        assert!(!due(20 + SMALL.passive_at - 1));
        assert!(due(20 + SMALL.passive_at));
        // The log started over (fewer pages than the last commit left): counted from zero.
        assert!(!due(3));
        assert_eq!(shared.lock().copied_at, 0);
        assert!(due(SMALL.passive_at));
    }

    #[test]
    fn a_log_past_the_bound_is_restarted() {
        let (_d, path, mut conn) = store("restart");
        let policy = Policy {
            passive_at: 16,
            restart_at: 32,
            idle: Duration::from_secs(3600),
        };
        let ck = Checkpointer::install(&mut conn, policy, opener(&path)).unwrap();
        // One commit of many pages: the log is past the bound at once.
        conn.execute_batch("BEGIN").unwrap();
        write(&conn, 0, 100);
        conn.execute_batch("COMMIT").unwrap();
        eventually("a restart", || ck.counts()[1] >= 1);
    }

    #[test]
    fn without_its_connection_the_writer_checkpoints_as_sqlite_would() {
        let (_d, path, mut conn) = store("fail");
        let ck = Checkpointer::install(
            &mut conn,
            SMALL,
            Arc::new(|| Err(rusqlite::Error::InvalidQuery)),
        )
        .unwrap();
        write(&conn, 0, 20);
        eventually("the failure is seen", || ck.shared.lock().failed);
        // From now on every commit past the threshold copies the log back itself: the log
        // starts over instead of growing with every row.
        write(&conn, 20, 400);
        let pages = ck.shared.lock().pages;
        assert!(pages < 400, "the log restarted ({pages} pages)");
        assert!(wal_len(&path) < 100 * 4096 * 2, "{}", wal_len(&path));
    }
}

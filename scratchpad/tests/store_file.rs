//! The scratchpad store against real SQLite files: the file itself (schema versions and
//! migrations, planted symlinks, the path) and exports.

mod common;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use agent_intercom_scratchpad::{Config, NewMessage, Store};
use common::{ManualClock, Tmp, ids, msg, open};

#[test]
fn newer_or_corrupt_stores_are_refused_and_left_untouched() {
    let tmp = Tmp::new("refuse");
    let clock = Arc::new(ManualClock(AtomicI64::new(1)));
    drop(open(&tmp, &clock, Config::default()));
    rusqlite::Connection::open(tmp.db())
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let err = Store::open(&tmp.db(), Config::default(), clock.clone())
        .err()
        .unwrap();
    assert_eq!(err.code().as_str(), "STORE_NEWER_SCHEMA");
    let corrupt = tmp.0.join("corrupt.sqlite");
    let garbage =
        b"this is not an SQLite database, just some bytes that are long enough to be a header...."
            .repeat(8);
    std::fs::write(&corrupt, &garbage).unwrap();
    let err = Store::open(&corrupt, Config::default(), clock)
        .err()
        .unwrap();
    assert_eq!(err.code().as_str(), "STORE_CORRUPT", "{err}");
    assert_eq!(std::fs::read(&corrupt).unwrap(), garbage, "never replaced");
}

#[test]
fn export_is_bounded_ordered_redacted_and_written_atomically() {
    let tmp = Tmp::new("export");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000)));
    let mut store = open(&tmp, &clock, Config::default());
    store
        .register_agent("me", Some("/work/proj"), Some("T"))
        .unwrap();
    for i in 0..5 {
        clock.0.fetch_add(10, Ordering::SeqCst);
        let content = format!("note {i}: password=hunter{i} in /work/proj/src/lib.rs");
        store
            .post(&NewMessage {
                project_root: Some("/work/proj".into()),
                ..msg("me", &content)
            })
            .unwrap();
    }
    store
        .post(&NewMessage {
            privacy: Some("private".into()),
            to: Some("someone".into()),
            project_root: Some("/work/proj".into()),
            ..msg("other", "not for me")
        })
        .unwrap();
    let task = store
        .create_task("me", None, "token=abcd", Some("/work/proj"))
        .unwrap();
    let json = store.export("me", Some("/work/proj"), 3, false).unwrap();
    let doc: agent_intercom_core::canonical::Value =
        agent_intercom_core::canonical::parse(&json).unwrap();
    use agent_intercom_core::canonical::Value;
    assert_eq!(
        doc.get("schema").and_then(Value::as_str),
        Some("a2a-snapshot-v1")
    );
    assert_eq!(doc.get("schema_version").and_then(Value::as_i64), Some(1));
    let messages = doc.get("messages").and_then(Value::as_array).unwrap();
    assert_eq!(messages.len(), 3, "bounded");
    let contents: Vec<&str> = messages
        .iter()
        .map(|m| m.get("content").and_then(Value::as_str).unwrap())
        .collect();
    assert_eq!(
        contents,
        vec![
            "note 4: password=[REDACTED] in ./src/lib.rs",
            "note 3: password=[REDACTED] in ./src/lib.rs",
            "note 2: password=[REDACTED] in ./src/lib.rs"
        ]
    );
    assert!(
        !json.contains("hunter")
            && !json.contains("/work/proj")
            && !json.contains("not for me")
            && !json.contains("abcd"),
        "{json}"
    );
    let tasks = doc.get("tasks").and_then(Value::as_array).unwrap();
    assert_eq!(
        tasks[0].get("id").and_then(Value::as_str),
        Some(task.id.as_str())
    );
    assert!(
        store
            .export("me", None, 3, false)
            .unwrap()
            .contains("\"agents\"")
    );
    assert_eq!(
        store
            .export("me", None, 3, true)
            .unwrap_err()
            .code()
            .as_str(),
        "FORBIDDEN"
    );
    assert_eq!(
        store
            .export("me", None, 0, false)
            .unwrap_err()
            .code()
            .as_str(),
        "INVALID_ARGUMENT"
    );
    // Same state, same bytes (deterministic).
    assert_eq!(
        store.export("me", Some("/work/proj"), 3, false).unwrap(),
        json
    );
    let out = tmp.0.join("snapshot.json");
    store
        .export_to_file(&out, "me", Some("/work/proj"), 3, false)
        .unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), format!("{json}\n"));
    let leftovers: Vec<_> = std::fs::read_dir(&tmp.0)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty());
    let mut full = Store::open(
        &tmp.db(),
        Config {
            allow_full_export: true,
            ..Config::default()
        },
        clock.clone(),
    )
    .unwrap();
    assert!(
        full.export("me", Some("/work/proj"), 3, true)
            .unwrap()
            .contains("hunter4")
    );
}

#[test]
fn a_schema_v3_store_migrates_keeping_messages_and_read_marks() {
    let tmp = Tmp::new("migrate");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000_000)));
    {
        let mut s = open(&tmp, &clock, Config::default());
        for i in 0..5 {
            clock.0.fetch_add(1, Ordering::SeqCst);
            let mut m = msg("a", &format!("m{i}"));
            m.to = (i == 4).then(|| "b".to_string());
            s.post(&m).unwrap();
        }
        assert_eq!(ids(&s.read_unread("b", None).unwrap()).len(), 5);
        clock.0.fetch_add(1, Ordering::SeqCst);
        s.post(&msg("a", "m5")).unwrap();
    }
    // Turn the file back into what schema v3 looked like (no sequence, cursors or counts).
    {
        let conn = rusqlite::Connection::open(tmp.db()).unwrap();
        conn.execute_batch(
            "DROP TRIGGER messages_counted; DROP TRIGGER messages_uncounted;
             DROP TABLE message_counts; DROP TABLE read_cursors; DROP TABLE counters;
             DROP INDEX messages_seq; DROP INDEX messages_project_seq;
             ALTER TABLE messages DROP COLUMN seq; ALTER TABLE agents DROP COLUMN team_seq;
             DROP TABLE seen_nonces;
             DROP TABLE a2a_asks; DROP TABLE a2a_messages; DROP TABLE a2a_tasks;
             DROP INDEX tasks_updated;
             PRAGMA user_version = 3;",
        )
        .unwrap();
    }
    let mut s = Store::open(
        &tmp.db(),
        Config {
            per_recipient_cap: 1,
            ..Config::default()
        },
        clock.clone(),
    )
    .unwrap();
    // What b read before stays read; what it had not read is delivered once.
    assert_eq!(ids(&s.read_unread("b", None).unwrap()), ["m5"]);
    assert!(s.read_unread("b", None).unwrap().is_empty());
    assert_eq!(ids(&s.read_unread("c", None).unwrap()).len(), 6);
    // New posts continue the sequence and the backfilled counts still bound the recipient.
    clock.0.fetch_add(1, Ordering::SeqCst);
    let mut m = msg("a", "m6");
    m.to = Some("b".into());
    let posted = s.post(&m).unwrap();
    assert_eq!(
        posted.evicted.len(),
        1,
        "the one message already addressed to b was counted"
    );
    assert_eq!(ids(&s.read_unread("b", None).unwrap()), ["m6"]);
    assert_eq!(ids(&s.read_unread("c", None).unwrap()), ["m6"]);
}

#[cfg(unix)]
#[test]
fn planted_symlinks_at_the_store_or_its_side_files_are_refused_and_nothing_is_written_outside() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let clock = Arc::new(ManualClock(AtomicI64::new(1)));
    // A new store is created 0600 (its -wal and -shm take the same mode).
    let tmp = Tmp::new("mode");
    drop(open(&tmp, &clock, Config::default()));
    let mode = std::fs::metadata(tmp.db()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    for side in ["", "-wal", "-shm", "-journal"] {
        for dangling in [true, false] {
            let tmp = Tmp::new("symlink");
            let outside = tmp.0.join("outside");
            if !dangling {
                std::fs::write(&outside, b"keep me").unwrap();
            }
            if !side.is_empty() {
                // An existing store, with a side file planted next to it.
                drop(open(&tmp, &clock, Config::default()));
                for s in ["-wal", "-shm", "-journal"] {
                    let _ = std::fs::remove_file(format!("{}{s}", tmp.db().display()));
                }
            }
            let link = PathBuf::from(format!("{}{side}", tmp.db().display()));
            symlink(&outside, &link).unwrap();
            let err = Store::open(&tmp.db(), Config::default(), clock.clone())
                .err()
                .unwrap_or_else(|| panic!("{side} (dangling: {dangling}) was followed"));
            assert_eq!(err.code().as_str(), "STORE_IO", "{side}: {err}");
            assert!(err.message().contains("symbolic link"), "{side}: {err}");
            if dangling {
                assert!(!outside.exists(), "{side}: created a file through the link");
            } else {
                assert_eq!(std::fs::read(&outside).unwrap(), b"keep me", "{side}");
            }
            assert!(
                std::fs::symlink_metadata(&link)
                    .unwrap()
                    .file_type()
                    .is_symlink(),
                "{side}: the link was left as it was"
            );
        }
    }
}

#[test]
fn an_empty_store_path_is_refused() {
    let clock = Arc::new(ManualClock(AtomicI64::new(1)));
    let err = Store::open(std::path::Path::new(""), Config::default(), clock)
        .err()
        .unwrap();
    assert_eq!(err.code().as_str(), "INVALID_ARGUMENT", "{err}");
}

#[cfg(unix)]
#[test]
fn export_does_not_follow_planted_symlinks() {
    use std::os::unix::fs::symlink;
    let tmp = Tmp::new("export-links");
    let clock = Arc::new(ManualClock(AtomicI64::new(1)));
    let mut store = open(&tmp, &clock, Config::default());
    store.post(&msg("me", "hello")).unwrap();
    let outside = tmp.0.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    // At the destination: the link is replaced by the export, its target is not written.
    let victim = outside.join("victim");
    std::fs::write(&victim, b"keep me").unwrap();
    let dest = tmp.0.join("snapshot.json");
    symlink(&victim, &dest).unwrap();
    // At the temporary files' names: never followed.
    let planted = outside.join("planted");
    for name in [
        format!(".snapshot.json.tmp-{}", std::process::id()),
        format!(".snapshot.json.tmp-{}-0", std::process::id()),
    ] {
        symlink(&planted, tmp.0.join(name)).unwrap();
    }
    store.export_to_file(&dest, "me", None, 10, false).unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
    assert!(
        !planted.exists(),
        "a temporary file was written through a link"
    );
    let meta = std::fs::symlink_metadata(&dest).unwrap();
    assert!(meta.file_type().is_file(), "the export replaced the link");
    assert!(std::fs::read_to_string(&dest).unwrap().contains("hello"));
    let err = store
        .export_to_file(std::path::Path::new(""), "me", None, 10, false)
        .unwrap_err();
    assert_eq!(err.code().as_str(), "INVALID_ARGUMENT", "{err}");
}

#[test]
fn a_schema_v4_store_migrates_keeping_what_team_members_could_read() {
    let tmp = Tmp::new("migrate-v4");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000)));
    {
        let mut s = open(&tmp, &clock, Config::default());
        s.register_agent("b", None, Some("red")).unwrap();
        s.register_agent("a", None, Some("red")).unwrap();
        s.post(&NewMessage {
            privacy: Some("team".into()),
            ..msg("a", "old team news")
        })
        .unwrap();
    }
    {
        let conn = rusqlite::Connection::open(tmp.db()).unwrap();
        conn.execute_batch(
            "ALTER TABLE agents DROP COLUMN team_seq; DROP TABLE seen_nonces;
             DROP TABLE a2a_asks; DROP TABLE a2a_messages; DROP TABLE a2a_tasks;
             DROP INDEX tasks_updated;
             PRAGMA user_version = 4;",
        )
        .unwrap();
    }
    let mut s = open(&tmp, &clock, Config::default());
    // Registrations older than the join record count from the start: nothing is taken away.
    assert_eq!(
        ids(&s.list("b", None, None, None, 10, None).unwrap().messages),
        ["old team news"]
    );
    s.register_agent("c", None, Some("red")).unwrap();
    assert!(
        s.list("c", None, None, None, 10, None)
            .unwrap()
            .messages
            .is_empty()
    );
}

/// No post checkpoints: the store's own thread copies the log back (PASSIVE), then truncates it
/// once the store is idle, and every post is still there for another process's reader.
#[test]
fn the_store_checkpoints_on_its_own_thread_and_an_idle_store_keeps_no_log() {
    let tmp = Tmp::new("checkpoint");
    let clock = Arc::new(ManualClock(AtomicI64::new(1)));
    let mut store = open(&tmp, &clock, Config::default());
    store.register_agent("a", None, None).unwrap();
    let big = "x".repeat(3000);
    for i in 0..1_500 {
        store.post(&msg("a", &format!("{i} {big}"))).unwrap();
    }
    let wal = PathBuf::from(format!("{}-wal", tmp.db().display()));
    let start = std::time::Instant::now();
    // A liveness bound, not a timing claim.
    while store.checkpoints()[0] == 0
        || store.checkpoints()[2] == 0
        || std::fs::metadata(&wal).map_or(0, |m| m.len()) != 0
    {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "{:?}",
            store.checkpoints()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let other = rusqlite::Connection::open(tmp.db()).unwrap();
    let rows: i64 = other
        .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 1_500);
}

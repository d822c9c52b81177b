//! The store's file: a store written before the keyed tables were `WITHOUT ROWID` opens and
//! keeps every row; checkpoints run off the broker's thread and an idle store keeps no log.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use agent_intercom_broker::store::{DeliveryRow, EdgeRow, StatusRow, Store};
use common::TempDir;

/// The schema the broker wrote before (rowid tables; `kept` added by ALTER TABLE), with rows.
fn plant_older_store(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode=WAL;
         CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
         INSERT INTO meta VALUES ('schema_version', 1);
         CREATE TABLE ask_edges (
           from_id TEXT NOT NULL, message_id TEXT NOT NULL, to_id TEXT NOT NULL,
           created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, state TEXT NOT NULL,
           PRIMARY KEY (from_id, message_id));
         CREATE TABLE deliveries (
           from_id TEXT NOT NULL, message_id TEXT NOT NULL, fingerprint TEXT NOT NULL,
           to_id TEXT NOT NULL,
           response TEXT NOT NULL, retryable INTEGER NOT NULL, expires_at INTEGER NOT NULL,
           PRIMARY KEY (from_id, message_id));
         CREATE TABLE known_sessions (
           id TEXT PRIMARY KEY, last_seen INTEGER NOT NULL, remote INTEGER NOT NULL);
         CREATE TABLE offline_queue (
           seq INTEGER PRIMARY KEY, delivery_id TEXT NOT NULL UNIQUE, to_id TEXT NOT NULL,
           from_id TEXT NOT NULL, message_id TEXT NOT NULL, fingerprint TEXT NOT NULL,
           from_info TEXT NOT NULL, message TEXT NOT NULL, expects_reply INTEGER NOT NULL,
           reply_to TEXT, receipts INTEGER NOT NULL, queued_at INTEGER NOT NULL,
           expires_at INTEGER NOT NULL, UNIQUE (from_id, message_id));
         CREATE TABLE message_status (
           from_id TEXT NOT NULL, message_id TEXT NOT NULL, delivery_id TEXT NOT NULL,
           to_id TEXT NOT NULL, state TEXT NOT NULL, receipts INTEGER NOT NULL,
           expires_at INTEGER NOT NULL, PRIMARY KEY (from_id, message_id));
         CREATE INDEX message_status_delivery ON message_status (delivery_id);
         ALTER TABLE deliveries ADD COLUMN kept INTEGER NOT NULL DEFAULT 0;
         INSERT INTO ask_edges VALUES ('a', 'q1', 'b', 10, 9000000000000, 'blocking');
         INSERT INTO deliveries VALUES
           ('a', 'm1', 'fp1', 'b', '{\"type\":\"delivered\"}', 0, 9000000000000, 0),
           ('a', 'm2', 'fp2', 'b', '{\"type\":\"delivered\"}', 0, 9000000000000, 1);
         INSERT INTO known_sessions VALUES ('b', 1234, 0);
         INSERT INTO message_status VALUES ('a', 'm2', 'd2', 'b', 'queued', 1, 9000000000000);
         INSERT INTO offline_queue VALUES (7, 'd2', 'b', 'a', 'm2', 'fp2', '{}', '{}', 0, NULL,
           1, 20, 9000000000000);",
    )
    .unwrap();
}

fn rowid_tables(path: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' \
             AND wr = 0 AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn check_rows(store: &Store) {
    assert_eq!(
        store.load_edges(0).unwrap(),
        vec![EdgeRow {
            from: "a".into(),
            message_id: "q1".into(),
            to: "b".into(),
            created_at: 10,
            expires_at: 9_000_000_000_000,
            state: "blocking".into(),
        }]
    );
    let loaded = store.load_deliveries(0).unwrap();
    assert_eq!(loaded.len(), 1, "the kept result is looked up, not loaded");
    assert_eq!(loaded[0].message_id, "m1");
    let kept = store
        .get_delivery("a", "m2")
        .unwrap()
        .expect("the kept result");
    assert_eq!(
        kept,
        DeliveryRow {
            from: "a".into(),
            message_id: "m2".into(),
            fingerprint: "fp2".into(),
            to: "b".into(),
            response: "{\"type\":\"delivered\"}".into(),
            retryable: false,
            expires_at: 9_000_000_000_000,
            kept: true,
        }
    );
    assert_eq!(store.known_session("b").unwrap(), Some((1234, false)));
    let status = StatusRow {
        from: "a".into(),
        message_id: "m2".into(),
        delivery_id: "d2".into(),
        to: "b".into(),
        state: "queued".into(),
        receipts: true,
        expires_at: 9_000_000_000_000,
    };
    assert_eq!(store.status_of("a", "m2").unwrap(), Some(status.clone()));
    assert_eq!(store.status_by_delivery("d2").unwrap(), Some(status));
    let queued = store.load_queued().unwrap();
    assert_eq!((queued.len(), queued[0].seq), (1, 7));
}

#[test]
fn an_older_store_opens_with_every_row_and_its_keyed_tables_without_rowid() {
    let dir = TempDir::new("older");
    let path = dir.0.join("broker.sqlite");
    plant_older_store(&path);
    assert_eq!(
        rowid_tables(&path),
        [
            "ask_edges",
            "deliveries",
            "known_sessions",
            "message_status",
            "meta",
            "offline_queue"
        ]
    );
    let store = Store::open(&path).unwrap();
    check_rows(&store);
    // The rebuilt tables take writes, and their keys still refuse a duplicate.
    store.begin().unwrap();
    store
        .put_delivery(&store.get_delivery("a", "m2").unwrap().unwrap())
        .unwrap();
    store.delete_edge("a", "q1").unwrap();
    store.commit().unwrap();
    assert_eq!(store.load_edges(0).unwrap(), vec![]);
    drop(store);
    assert_eq!(rowid_tables(&path), ["meta", "offline_queue"]);
    // Opening again changes nothing.
    let store = Store::open(&path).unwrap();
    assert!(store.get_delivery("a", "m1").unwrap().is_some());
    assert_eq!(store.known_session("b").unwrap(), Some((1234, false)));
    drop(store);
    assert_eq!(rowid_tables(&path), ["meta", "offline_queue"]);
}

#[test]
fn a_new_store_has_its_keyed_tables_without_rowid() {
    let dir = TempDir::new("fresh");
    let path = dir.0.join("broker.sqlite");
    drop(Store::open(&path).unwrap());
    assert_eq!(rowid_tables(&path), ["meta", "offline_queue"]);
}

#[test]
fn checkpoints_run_off_the_writer_and_an_idle_store_keeps_no_log() {
    let dir = TempDir::new("ckpt");
    let path = dir.0.join("broker.sqlite");
    let store = Store::open(&path).unwrap();
    // About 3,000 commits of one result each: past SQLite's own threshold several times.
    for i in 0..3_000 {
        store.begin().unwrap();
        store
            .put_delivery(&DeliveryRow {
                from: format!("sender-{}", i % 7),
                message_id: format!("m{i}"),
                fingerprint: "f".repeat(64),
                to: "receiver".into(),
                response: format!("{{\"type\":\"delivered\",\"messageId\":\"m{i}\"}}"),
                retryable: false,
                expires_at: 9_000_000_000_000,
                kept: false,
            })
            .unwrap();
        store.commit().unwrap();
    }
    let start = Instant::now();
    let wal = std::path::PathBuf::from(format!("{}-wal", path.display()));
    // A liveness bound, not a timing claim: the thread copies and then truncates the log.
    while store.checkpoints()[0] == 0
        || store.checkpoints()[2] == 0
        || std::fs::metadata(&wal).map_or(0, |m| m.len()) != 0
    {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{:?}",
            store.checkpoints()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.load_deliveries(0).unwrap().len(), 3_000);
}

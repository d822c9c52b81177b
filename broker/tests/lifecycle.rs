//! Start, ownership, files and their modes, idle exit, and state that survives a restart.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use agent_intercom_broker::{StartError, StopReason};
use common::*;
use serde_json::json;

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn one_owner_per_directory_and_private_files() {
    let broker = Broker::start("owner");
    let config = config(&broker.dir.0);
    match agent_intercom_broker::start(config.clone()) {
        Err(StartError::AlreadyRunning(pid)) => assert_eq!(pid, Some(std::process::id() as i32)),
        other => panic!("a second broker started: {:?}", other.map(|_| ())),
    }
    assert_eq!(mode(&config.intercom_dir), 0o700);
    for file in [
        config.socket_path.clone(),
        config.pid_path(),
        config.owner_path(),
        config.store_path(),
    ] {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
    assert_eq!(
        std::fs::read_to_string(config.pid_path()).unwrap(),
        std::process::id().to_string()
    );
    // The running broker still serves after the refused start.
    broker.connect().register("still", None);
}

#[test]
fn idle_exit_removes_only_its_own_files() {
    let dir = TempDir::new("idle");
    let mut c = config(&dir.0);
    c.idle_exit = Some(Duration::from_millis(200));
    let handle = agent_intercom_broker::start(c.clone()).unwrap();
    let mut client = Client::connect(&c.socket_path);
    client.register("brief", None);
    std::thread::sleep(Duration::from_millis(400));
    assert!(
        !handle.is_finished(),
        "a connected session keeps the broker"
    );
    drop(client);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !handle.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(handle.wait(), StopReason::Idle);
    assert!(!c.socket_path.exists() && !c.pid_path().exists() && !c.owner_path().exists());
    assert!(
        c.store_path().exists(),
        "durable state is kept for the next broker"
    );
}

#[test]
fn stale_socket_and_dead_owner_are_cleaned_up() {
    let dir = TempDir::new("stale");
    let c = config(&dir.0);
    std::fs::create_dir_all(&c.intercom_dir).unwrap();
    std::fs::write(&c.socket_path, b"not a socket").unwrap();
    std::fs::write(c.owner_path(), b"999999999").unwrap();
    let handle = agent_intercom_broker::start(c.clone()).unwrap();
    let mut client = Client::connect(&c.socket_path);
    client.register("after-stale", None);
    assert_eq!(handle.close(), StopReason::Shutdown);
    assert!(!c.socket_path.exists());
}

#[test]
fn asks_and_delivery_results_survive_a_restart() {
    let mut broker = Broker::start("durable");
    let mut a = broker.connect();
    a.register_with(Some("asker"), "a", Some(A), "rt-a");
    let mut b = broker.connect();
    b.register_with(Some("asked"), "b", Some(B), "rt-b");
    a.send(json!({
        "type": "send",
        "to": "asked",
        "message": { "id": "q1", "timestamp": 1, "expectsReply": true, "content": { "text": "?" } },
    }));
    a.expect("delivery_accepted");
    let m = b.expect("message");
    b.send(json!({ "type": "message_received", "deliveryId": m["deliveryId"] }));
    a.expect("delivered");
    drop((a, b));
    broker.restart();
    let mut a = broker.connect();
    a.register_with(Some("asker"), "a", Some(A), "rt-a2");
    let mut b = broker.connect();
    b.register_with(Some("asked"), "b", Some(B), "rt-b2");
    // The reloaded ask is deferred (not blocking), still replyable, and threads to q1.
    b.send(json!({
        "type": "send",
        "to": "asker",
        "message": { "id": "r1", "timestamp": 2, "replyTo": "q1", "content": { "text": "!" } },
    }));
    b.expect("delivery_accepted");
    let reply = a.expect("message");
    assert_eq!(reply["message"]["replyTo"], "q1");
    a.send(json!({ "type": "message_received", "deliveryId": reply["deliveryId"] }));
    b.expect("delivered");
    // The duplicate-suppression result of q1 survived too.
    a.send(json!({
        "type": "send",
        "to": "asked",
        "message": {
            "id": "q1",
            "timestamp": 1,
            "expectsReply": true,
            "content": { "text": "other" },
        },
    }));
    assert_eq!(a.expect("delivery_failed")["code"], "DUPLICATE_MESSAGE_ID");
}

#[test]
fn a_newer_store_is_refused_and_a_corrupt_one_is_kept_aside() {
    let dir = TempDir::new("store");
    let c = config(&dir.0);
    std::fs::create_dir_all(&c.intercom_dir).unwrap();
    {
        let conn = rusqlite_free_store(&c.store_path());
        drop(conn);
    }
    match agent_intercom_broker::start(c.clone()) {
        Err(StartError::Store(e)) => assert!(e.to_string().contains("newer"), "{e}"),
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }
    assert!(
        !c.owner_path().exists(),
        "a refused start leaves no ownership behind"
    );
    std::fs::write(
        c.store_path(),
        b"this is not a database, it is a text file of some length......",
    )
    .unwrap();
    let handle = agent_intercom_broker::start(c.clone()).expect("starts over a corrupt store");
    let aside: Vec<_> = std::fs::read_dir(&c.intercom_dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("corrupt"))
        .collect();
    assert_eq!(aside.len(), 1, "the unreadable file is kept, not deleted");
    handle.close();
}

/// Writes a store claiming schema version 99, through the broker's own store type.
fn rusqlite_free_store(path: &std::path::Path) -> agent_intercom_broker::store::Store {
    let store = agent_intercom_broker::store::Store::open(path).unwrap();
    store.debug_set_schema_version(99).unwrap();
    store
}

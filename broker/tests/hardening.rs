//! Defects an adversarial probe found, each reproduced: racing starts inside one process, a
//! reused pid in `broker.owner`, a locked store, planted symbolic links, settings out of range,
//! and message text with lone surrogates as JavaScript writes it.

mod common;

use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::{Duration, SystemTime};

use agent_intercom_broker::{BrokerConfig, StartError, StopReason};
use agent_intercom_core::ErrorCode;
use common::*;

fn corrupt_copies(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".corrupt-"))
        .collect()
}

#[test]
fn eight_threads_racing_to_start_leave_one_broker_and_an_untouched_store() {
    let dir = TempDir::new("race");
    let c = config(&dir.0);
    // A store with content, so "untouched" means something.
    {
        let handle = agent_intercom_broker::start(c.clone()).unwrap();
        let mut a = Client::connect(&c.socket_path);
        a.register("seed", Some(A));
        handle.close();
    }
    for round in 0..30 {
        let barrier = Arc::new(Barrier::new(8));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (c, barrier) = (c.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    agent_intercom_broker::start(c)
                })
            })
            .collect();
        let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let mut winners = Vec::new();
        for result in results {
            match result {
                Ok(handle) => winners.push(handle),
                Err(StartError::AlreadyRunning(_)) => {}
                Err(e) => panic!("round {round}: a loser failed otherwise: {e}"),
            }
        }
        assert_eq!(winners.len(), 1, "round {round}: exactly one broker");
        let mut client = Client::connect(&c.socket_path);
        client.register(&format!("r{round}"), Some(A));
        assert_eq!(
            corrupt_copies(&c.intercom_dir),
            Vec::<String>::new(),
            "round {round}"
        );
        assert_eq!(winners.pop().unwrap().close(), StopReason::Shutdown);
    }
}

#[test]
fn a_locked_store_is_an_error_and_is_never_renamed() {
    let dir = TempDir::new("locked");
    let c = config(&dir.0);
    agent_intercom_broker::start(c.clone()).unwrap().close();
    let holder = rusqlite::Connection::open(c.store_path()).unwrap();
    holder
        .execute_batch("PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE;")
        .unwrap();
    let started = std::thread::spawn({
        let c = c.clone();
        move || agent_intercom_broker::start(c).map(|h| h.close())
    })
    .join()
    .unwrap();
    assert!(
        matches!(started, Err(StartError::Store(_))),
        "{:?}",
        started.map(|_| ())
    );
    assert!(c.store_path().exists());
    assert_eq!(corrupt_copies(&c.intercom_dir), Vec::<String>::new());
    assert!(!c.owner_path().exists() && !c.socket_path.exists() && !c.pid_path().exists());
    drop(holder);
    agent_intercom_broker::start(c)
        .expect("starts once unlocked")
        .close();
}

#[test]
fn a_reused_pid_in_the_owner_file_does_not_block_a_start() {
    let dir = TempDir::new("reuse");
    let c = config(&dir.0);
    std::fs::create_dir_all(&c.intercom_dir).unwrap();
    // pid 1 is alive and is no broker; an old file, as after a crash and a reboot.
    std::fs::write(c.owner_path(), "1").unwrap();
    std::fs::File::options()
        .write(true)
        .open(c.owner_path())
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(600))
        .unwrap();
    let handle = agent_intercom_broker::start(c.clone()).expect("not blocked by pid 1");
    assert_eq!(
        std::fs::read_to_string(c.owner_path()).unwrap(),
        std::process::id().to_string()
    );
    let mut client = Client::connect(&c.socket_path);
    client.register("after-reuse", None);
    handle.close();
}

#[test]
fn planted_symbolic_links_at_every_runtime_file_are_refused() {
    let names = [
        "broker.owner",
        "broker.pid",
        "broker.spawn.lock",
        "broker.sock",
        "broker-state.sqlite",
        "broker-state.sqlite-wal",
        "broker-state.sqlite-shm",
        "broker-state.sqlite-journal",
    ];
    for name in names {
        for dangling in [false, true] {
            let dir = TempDir::new("link");
            let c = config(&dir.0);
            std::fs::create_dir_all(&c.intercom_dir).unwrap();
            let outside = dir.0.join("outside");
            if !dangling {
                std::fs::write(&outside, "keep").unwrap();
            }
            std::os::unix::fs::symlink(&outside, c.intercom_dir.join(name)).unwrap();
            let started = agent_intercom_broker::start(c.clone());
            let err = match started {
                Ok(h) => {
                    h.close();
                    panic!("{name} (dangling: {dangling}) was followed");
                }
                Err(e) => e,
            };
            let mapped = agent_intercom_broker::embed::start_error(&err);
            assert_eq!(mapped.code(), ErrorCode::BrokerIo, "{name}: {err}");
            assert!(err.to_string().contains("symbolic link"), "{name}: {err}");
            if dangling {
                assert!(!outside.exists(), "{name}: the link's target was created");
            } else {
                assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep", "{name}");
            }
            // Nothing of ours was left behind either.
            assert!(!c.pid_path().exists() || name == "broker.pid", "{name}");
            assert!(
                std::fs::symlink_metadata(c.owner_path()).is_err() || name == "broker.owner",
                "{name}"
            );
        }
    }
}

#[test]
fn an_intercom_directory_that_is_a_link_is_refused() {
    let dir = TempDir::new("dirlink");
    let real = dir.0.join("elsewhere");
    std::fs::create_dir_all(&real).unwrap();
    let agent = dir.0.join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::os::unix::fs::symlink(&real, agent.join("intercom")).unwrap();
    let err = match agent_intercom_broker::start(config(&agent)) {
        Ok(h) => {
            h.close();
            panic!("a linked intercom directory was used")
        }
        Err(e) => e,
    };
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_dir(&real).unwrap().count(), 0);
}

#[test]
fn settings_out_of_range_are_refused_naming_key_and_range() {
    let mut c = BrokerConfig::for_agent_dir(Path::new("/x"));
    for (key, value) in [
        ("idle_exit_secs", "18446744073709551615"),
        ("idle_exit_ms", "99999999999999"),
        ("recent_delivery_ttl_ms", "18446744073709551615"),
        ("ask_timeout_ms", "18446744073709551616"),
        ("max_sessions", "0"),
        ("max_sessions", "-1"),
        ("max_frame_bytes", "1e3"),
        ("rate_capacity", "1.5"),
        ("max_outbound_bytes", ""),
        ("frame_timeout_ms", "+5"),
    ] {
        let before = format!("{c:?}");
        let e = c.set(key, value).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{key}={value}");
        assert!(
            e.message().contains(key) && e.message().contains(" to "),
            "{}",
            e.message()
        );
        assert_eq!(format!("{c:?}"), before, "nothing changes on error");
    }
    assert_eq!(
        c.set("Max_sessions", "1").unwrap_err().code(),
        ErrorCode::UnknownKey
    );
    // Every limit's default lies in its range, and its bounds are accepted.
    for limit in agent_intercom_broker::config::LIMITS {
        assert!(
            (limit.min..=limit.max).contains(&limit.default),
            "{}",
            limit.key
        );
        c.set(limit.key, &limit.min.to_string()).unwrap();
        c.set(limit.key, &limit.max.to_string()).unwrap();
    }
}

#[test]
fn the_largest_settings_run_without_overflow() {
    let dir = TempDir::new("maxset");
    let mut c = config(&dir.0);
    for limit in agent_intercom_broker::config::LIMITS {
        c.set(limit.key, &limit.max.to_string()).unwrap();
    }
    c.set(
        "idle_exit_secs",
        &(agent_intercom_broker::config::MAX_IDLE_EXIT_MS / 1000).to_string(),
    )
    .unwrap();
    let handle = agent_intercom_broker::start(c.clone()).unwrap();
    let mut a = Client::connect(&c.socket_path);
    let a_id = a.register("a", Some(A));
    let mut b = Client::connect(&c.socket_path);
    b.register("b", Some(A));
    for _ in 0..2 {
        // The same id twice: the second is suppressed as a duplicate, not delivered again.
        a.send_message("b", "m1", "hi");
        a.expect("delivery_accepted");
    }
    let m = b.expect("message");
    assert_eq!(m["from"]["id"], a_id.as_str());
    b.send(serde_json::json!({ "type": "message_received", "deliveryId": m["deliveryId"] }));
    a.expect("delivered");
    assert!(
        b.quiet(Duration::from_millis(300)),
        "delivered twice: {:?}",
        b.seen
    );
    assert!(!handle.is_finished());
    assert_eq!(handle.close(), StopReason::Shutdown);
}

#[test]
fn a_lone_surrogate_in_message_text_is_delivered_as_javascript_wrote_it() {
    let broker = Broker::start("surrogate");
    let mut a = broker.connect();
    a.register("a", Some(A));
    let mut b = broker.connect();
    b.register("b", Some(A));
    // What JSON.stringify writes for "a" + "\u{1F600}".slice(0, 1) + "b".
    let text = r#"a\ud83db"#;
    let message = format!(r#"{{"id":"s1","timestamp":1,"content":{{"text":"{text}"}}}}"#);
    let frame = format!(r#"{{"type":"send","to":"b","message":{message}}}"#);
    let mut bytes = (frame.len() as u32).to_be_bytes().to_vec();
    bytes.extend_from_slice(frame.as_bytes());
    a.send_raw(&bytes);
    a.expect("delivery_accepted");
    b.expect("message");
    let raw = String::from_utf8(b.last_raw.clone()).unwrap();
    assert!(
        raw.contains(&format!(r#""content":{{"text":"{text}"}}"#)),
        "{raw}"
    );
    // The sender stays connected and can go on.
    a.send_message("b", "s2", "plain");
    a.expect("delivery_accepted");
    assert_eq!(b.expect("message")["message"]["content"]["text"], "plain");
}

/// Delivery ids come from a generator seeded once, not from a system call each: they are still
/// RFC 9562 version-4 UUIDs, and distinct.
#[test]
fn delivery_ids_are_distinct_version_4_uuids() {
    let dir = TempDir::new("ids");
    let handle = agent_intercom_broker::start(config(&dir.0)).unwrap();
    let mut a = Client::connect(handle.socket_path());
    a.register("a", Some(A));
    let mut b = Client::connect(handle.socket_path());
    b.register("b", Some(A));
    let mut seen = std::collections::HashSet::new();
    for i in 0..200 {
        a.send_message("b", &format!("m{i}"), "x");
        let m = b.expect("message");
        let id = m["deliveryId"].as_str().unwrap().to_string();
        let parsed = uuid::Uuid::parse_str(&id).unwrap();
        assert_eq!(parsed.get_version(), Some(uuid::Version::Random), "{id}");
        assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122, "{id}");
        assert_eq!(id, parsed.hyphenated().to_string(), "lowercase, hyphenated");
        assert!(seen.insert(id));
        b.send(serde_json::json!({ "type": "message_received", "deliveryId": m["deliveryId"] }));
        a.expect("delivered");
    }
    handle.close();
}

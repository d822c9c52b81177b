//! Unit tests of the state machine, driven by events without a socket.

use super::*;

fn register(id: &str, runtime: &str, scope: Option<&str>) -> Value {
    let mut f = json!({
        "type": "register",
        "protocol": "pi-intercom",
        "version": 4,
        "sessionId": id,
        "session": {
            "cwd": "/w",
            "model": "m",
            "pid": 1,
            "startedAt": 1,
            "lastActivity": 1,
            "runtimeInstanceId": runtime,
        },
    });
    if let Some(scope) = scope {
        f["scopeId"] = json!(scope);
    }
    f
}

/// Whole frames received, closes as `{"type":"CLOSE"}`.
fn frames(rx: &mut mpsc::UnboundedReceiver<Out>) -> Vec<Value> {
    let mut out = Vec::new();
    while let Ok(o) = rx.try_recv() {
        out.push(match o {
            Out::Frame(bytes) => serde_json::from_slice(&bytes[4..]).unwrap(),
            Out::Close => json!({ "type": "CLOSE" }),
        });
    }
    out
}

/// The types of the frames received, closes as `CLOSE`.
fn outputs(rx: &mut mpsc::UnboundedReceiver<Out>) -> Vec<String> {
    frames(rx)
        .iter()
        .map(|f| f["type"].as_str().unwrap().to_string())
        .collect()
}

/// Frames that were already in flight on a superseded connection when the replacement
/// happened are discarded: no answer, no broadcast, and the connection is closed.
#[test]
fn late_frames_from_a_superseded_connection_are_discarded() {
    let mut config = BrokerConfig::for_agent_dir(std::path::Path::new("/nonexistent"));
    config.idle_exit = None;
    config.log_level = LogLevel::Off;
    let mut state = State::new(config, None);
    let mut rxs = Vec::new();
    for conn in 1..=3 {
        let (tx, rx) = mpsc::unbounded_channel();
        state.handle(Event::Accepted {
            origin: Origin::Local,
            conn,
            tx,
            queued: Default::default(),
            kill: Default::default(),
        });
        rxs.push(rx);
    }
    state.handle(Event::Frame {
        conn: 3,
        value: register("watcher", "w", Some("Scope_AAAAAAAAAA")),
    });
    state.handle(Event::Frame {
        conn: 1,
        value: register("mover", "rt", Some("Scope_AAAAAAAAAA")),
    });
    state.handle(Event::Frame {
        conn: 2,
        value: register("mover", "rt", Some("Scope_BBBBBBBBBB")),
    });
    state.flush();
    for rx in rxs.iter_mut() {
        outputs(rx);
    }
    let late = [
        json!({ "type": "list", "requestId": "late" }),
        json!({ "type": "presence", "status": "late" }),
        json!({
            "type": "send",
            "to": "watcher",
            "message": { "id": "late", "timestamp": 1, "content": { "text": "x" } },
        }),
        json!({ "type": "defer_ask", "requestId": "late", "messageId": "none" }),
    ];
    for frame in late {
        state.handle(Event::Frame {
            conn: 1,
            value: frame,
        });
    }
    state.flush();
    assert_eq!(outputs(&mut rxs[0]), vec!["CLOSE"; 4]);
    assert!(
        outputs(&mut rxs[1]).is_empty(),
        "the new binding hears nothing"
    );
    assert!(
        outputs(&mut rxs[2]).is_empty(),
        "the old scope hears nothing more"
    );
}

#[test]
fn a_rejected_connection_gets_its_frames_in_order_even_when_it_closes_in_the_same_batch() {
    let mut config = BrokerConfig::for_agent_dir(std::path::Path::new("/nonexistent"));
    config.idle_exit = None;
    config.log_level = LogLevel::Off;
    let mut state = State::new(config, None);
    let (tx, mut rx) = mpsc::unbounded_channel();
    state.handle(Event::Accepted {
        origin: Origin::Local,
        conn: 1,
        tx,
        queued: Default::default(),
        kill: Default::default(),
    });
    state.handle(Event::Frame {
        conn: 1,
        value: json!({
            "type": "register",
            "protocol": "pi-intercom",
            "version": 4,
            "sessionId": "a",
            "session": { "cwd": "/w", "model": "m", "pid": 1, "startedAt": 1, "lastActivity": 1 },
        }),
    });
    state.flush();
    while rx.try_recv().is_ok() {}
    state.handle(Event::Frame {
        conn: 1,
        value: json!({ "type": "list", "requestId": "r0" }),
    });
    state.handle(Event::Reject {
        conn: 1,
        code: "RATE_LIMITED",
        message: "slow down".into(),
    });
    state.handle(Event::Closed { conn: 1 });
    state.flush();
    let mut kinds = Vec::new();
    while let Ok(out) = rx.try_recv() {
        kinds.push(match out {
            Out::Frame(bytes) => serde_json::from_slice::<Value>(&bytes[4..]).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string(),
            Out::Close => "CLOSE".into(),
        });
    }
    assert_eq!(kinds, vec!["sessions", "error", "CLOSE"]);
}

/// A clock the test moves by hand: timers fire when it says so, not after a sleep.
#[derive(Clone)]
struct ManualClock {
    start: Instant,
    start_ms: i64,
    elapsed_ms: Arc<std::sync::atomic::AtomicU64>,
}

impl ManualClock {
    fn new() -> ManualClock {
        ManualClock {
            start: Instant::now(),
            start_ms: 1_700_000_000_000,
            elapsed_ms: Default::default(),
        }
    }

    fn advance(&self, ms: u64) {
        self.elapsed_ms.fetch_add(ms, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.start + Duration::from_millis(self.elapsed_ms.load(Ordering::Relaxed))
    }

    fn now_ms(&self) -> i64 {
        self.start_ms + self.elapsed_ms.load(Ordering::Relaxed) as i64
    }
}

/// A state in memory on a manual clock, quiet and without idle exit.
fn on_manual_clock(configure: impl FnOnce(&mut BrokerConfig)) -> (State, ManualClock) {
    let mut config = BrokerConfig::for_agent_dir(std::path::Path::new("/nonexistent"));
    config.idle_exit = None;
    config.log_level = LogLevel::Off;
    configure(&mut config);
    let clock = ManualClock::new();
    let state = State::with_clock(config, None, Box::new(clock.clone()));
    (state, clock)
}

/// A state on a manual clock with sessions `a` (connection 1) and `b` (connection 2)
/// registered, their greetings drained.
fn two_sessions(
    configure: impl FnOnce(&mut BrokerConfig),
) -> (State, ManualClock, Vec<mpsc::UnboundedReceiver<Out>>) {
    let (mut state, clock) = on_manual_clock(configure);
    let mut rxs = Vec::new();
    for (conn, id) in [(1, "a"), (2, "b")] {
        let (tx, rx) = mpsc::unbounded_channel();
        state.handle(Event::Accepted {
            origin: Origin::Local,
            conn,
            tx,
            queued: Default::default(),
            kill: Default::default(),
        });
        state.handle(Event::Frame {
            conn,
            value: register(id, id, None),
        });
        rxs.push(rx);
    }
    state.flush();
    for rx in rxs.iter_mut() {
        frames(rx);
    }
    (state, clock, rxs)
}

/// One frame from `conn`, then the batch ends.
fn step(state: &mut State, conn: ConnId, value: Value) {
    state.handle(Event::Frame { conn, value });
    state.flush();
}

/// The clock moves on `ms`; what fell due fires and the batch ends.
fn tick(state: &mut State, clock: &ManualClock, ms: u64) {
    clock.advance(ms);
    state.fire_due_timers();
    state.flush();
}

fn send(id: &str, to: &str, expects_reply: bool) -> Value {
    json!({
        "type": "send",
        "to": to,
        "message": {
            "id": id,
            "timestamp": 1,
            "expectsReply": expects_reply,
            "content": { "text": "x" },
        },
    })
}

#[test]
fn an_unacknowledged_delivery_times_out_when_the_clock_says_so() {
    let (mut state, clock, mut rxs) = two_sessions(|c| {
        c.delivery_ack_timeout = Duration::from_millis(8_000);
    });
    step(&mut state, 1, send("m1", "b", false));
    assert_eq!(frames(&mut rxs[0])[0]["type"], "delivery_accepted");
    assert_eq!(frames(&mut rxs[1])[0]["type"], "message");
    assert!(
        state
            .next_deadline()
            .is_some_and(|at| at <= clock.now() + Duration::from_millis(8_000)),
        "the acknowledgement deadline is armed on the state's clock"
    );

    tick(&mut state, &clock, 7_999);
    assert!(frames(&mut rxs[0]).is_empty(), "not yet due");

    tick(&mut state, &clock, 1);
    let failed = frames(&mut rxs[0]);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["type"], "delivery_failed");
    assert_eq!(failed[0]["messageId"], "m1");
    assert_eq!(failed[0]["accepted"], true);
    assert_eq!(failed[0]["code"], failure_code::DELIVERY_TIMEOUT);
    assert!(frames(&mut rxs[1]).is_empty());
}

#[test]
fn an_ask_expires_when_the_clock_says_so_and_may_then_be_asked_again() {
    let (mut state, clock, mut rxs) = two_sessions(|c| {
        c.ask_timeout = Duration::from_millis(60_000);
    });
    step(&mut state, 1, send("q1", "b", true));
    assert_eq!(frames(&mut rxs[0])[0]["type"], "delivery_accepted");
    let message = frames(&mut rxs[1]).remove(0);
    step(
        &mut state,
        2,
        json!({ "type": "message_received", "deliveryId": message["deliveryId"] }),
    );
    assert_eq!(frames(&mut rxs[0])[0]["type"], "delivered");

    tick(&mut state, &clock, 59_999);
    step(&mut state, 1, send("q2", "b", true));
    let refused = frames(&mut rxs[0]);
    assert_eq!(refused[0]["code"], "ASK_ALREADY_PENDING", "{refused:?}");
    assert!(frames(&mut rxs[1]).is_empty(), "not yet expired");

    tick(&mut state, &clock, 1);
    let cancelled = frames(&mut rxs[1]);
    assert_eq!(cancelled.len(), 1, "{cancelled:?}");
    assert_eq!(
        cancelled[0],
        json!({
            "type": "ask_cancelled",
            "messageId": "q1",
            "fromSessionId": "a",
            "reason": "expired",
        })
    );

    step(&mut state, 1, send("q3", "b", true));
    assert_eq!(frames(&mut rxs[0])[0]["type"], "delivery_accepted");
}

#[test]
fn a_connection_that_never_registers_is_refused_at_the_registration_timeout() {
    let (mut state, clock) = on_manual_clock(|c| {
        c.registration_timeout = Duration::from_millis(1_000);
    });
    let (tx, mut rx) = mpsc::unbounded_channel();
    state.handle(Event::Accepted {
        origin: Origin::Local,
        conn: 1,
        tx,
        queued: Default::default(),
        kill: Default::default(),
    });
    tick(&mut state, &clock, 999);
    assert!(outputs(&mut rx).is_empty());
    tick(&mut state, &clock, 1);
    assert_eq!(outputs(&mut rx), vec!["error", "CLOSE"]);
}

#[test]
fn the_results_kept_in_memory_churn_at_their_bound_without_the_map_growing() {
    let (mut state, _clock, mut rxs) = two_sessions(|c| c.max_recent_in_memory = 1_000);
    let room = state.recent.capacity();
    assert!(room >= 2_000, "room for twice the bound at start: {room}");
    for i in 0..12_000 {
        step(&mut state, 1, send(&format!("m{i}"), "b", false));
        let message = frames(&mut rxs[1]).remove(0);
        let ack = json!({ "type": "message_received", "deliveryId": message["deliveryId"] });
        step(&mut state, 2, ack);
        frames(&mut rxs[0]);
        assert!(state.recent.len() <= 1_000);
    }
    assert_eq!(state.recent.len(), 1_000);
    // `capacity` is the entries plus the free slots, which a tombstone takes one of: it may
    // shrink a little (until a rehash in place gives them back), never grow.
    let now = state.recent.capacity();
    assert!(now <= room, "the map grew: {room} -> {now}");
}

#[test]
fn a_restart_does_not_deliver_a_queued_ask_whose_ask_is_gone() {
    let dir = std::env::temp_dir().join(format!("aic-restore-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("broker-state.sqlite");
    let now = SystemClock.now_ms();
    let row = |seq: i64, id: &str, expects_reply: bool, expires_at: i64| crate::store::QueuedRow {
        seq,
        delivery_id: format!("d-{id}"),
        to: "b".into(),
        from: "a".into(),
        message_id: id.into(),
        fingerprint: "f".into(),
        from_info: r#"{"id":"a","name":"a"}"#.into(),
        message: format!(r#"{{"id":"{id}","timestamp":1,"content":{{"text":"x"}}}}"#),
        expects_reply,
        reply_to: None,
        receipts: false,
        queued_at: now,
        expires_at,
    };
    {
        // What a broker left: two asks without their edges (one whose own time is up), and a
        // plain message.
        let store = Store::open(&path).unwrap();
        store
            .put_queued(&row(1, "ask", true, now + 60_000))
            .unwrap();
        store.put_queued(&row(2, "late", true, now - 1)).unwrap();
        store
            .put_queued(&row(3, "plain", false, now + 60_000))
            .unwrap();
    }
    let mut config = BrokerConfig::for_agent_dir(&dir);
    config.idle_exit = None;
    config.log_level = LogLevel::Off;
    let mut state = State::new(config, Some(Store::open(&path).unwrap()));
    assert!(state.queue.get("d-ask").is_none(), "withdrawn");
    assert!(
        state.queue.get("d-plain").is_some(),
        "a message still waits"
    );
    let stored = state.store.as_ref().unwrap();
    let status = stored.status_of("a", "ask").unwrap().map(|r| r.state);
    assert_eq!(status.as_deref(), Some(crate::wire::delivery_state::FAILED));
    let result = stored.get_delivery("a", "ask").unwrap().unwrap();
    assert!(
        result.response.contains("ASK_CANCELLED"),
        "{}",
        result.response
    );
    // The one whose time was up expires by its timer, as any queued message.
    state.fire_due_timers();
    state.flush();
    let stored = state.store.as_ref().unwrap();
    let late = stored.get_delivery("a", "late").unwrap().unwrap();
    assert!(late.response.contains("QUEUE_EXPIRED"), "{}", late.response);
    drop(state);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_result_remembered_again_is_evicted_by_its_new_place_not_its_old_one() {
    let (mut state, _clock) = on_manual_clock(|c| c.max_recent_in_memory = 3);
    let result =
        || delivery::Recent::new("f".into(), "b".into(), &json!({}), false, i64::MAX, false);
    let key = |id: &str| ("a".to_string(), id.to_string());
    for id in ["k1", "k2", "k3"] {
        state.remember_recent(key(id), result());
    }
    // k1 leaves memory (as an expired result does) and comes back: it is now the newest.
    state.recent.remove(&key("k1"));
    state.remember_recent(key("k1"), result());
    state.remember_recent(key("k4"), result());
    let mut kept: Vec<&str> = state.recent.keys().map(|(_, id)| id.as_str()).collect();
    kept.sort_unstable();
    assert_eq!(kept, ["k1", "k3", "k4"], "the oldest, k2, left; not k1");
}

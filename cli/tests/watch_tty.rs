//! `agent-intercom watch` in a pseudo-terminal against a real broker: what the screen shows
//! (read back through a VT100 parser), the keys, a resize, a broker that stops and starts again,
//! and the terminal given back as it was (the normal screen, the cursor, cooked mode) on `q` and
//! on Ctrl-C. No scope value in any byte the watcher wrote.

mod watch_support;

use watch_support::tty::Tty;
use watch_support::*;

/// The row of the sessions table that holds `name`.
fn row<'a>(screen: &'a str, name: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(&format!("{name} is busy")))
        .unwrap_or_else(|| panic!("no row for {name}:\n{screen}"))
}

#[test]
fn the_screen_shows_sessions_asks_and_queues_and_the_keys_work() {
    let dir = Dir::new("tty");
    let broker = start(&dir);
    let _sessions = scenario(&dir.socket());
    let mut tty = Tty::spawn(&dir, 40, 120);
    let screen = tty.wait_for("the asks and the offline row", |s| {
        s.contains("alpha → beta") && s.contains("omega-00")
    });
    assert!(!tty.cooked(), "the watcher runs the terminal raw");
    assert!(
        screen.contains("4 sessions (scope 1: 2, scope 2: 1, unscoped: 1)"),
        "{screen}"
    );
    assert!(
        screen.contains("2 asks (1 deferred)") && screen.contains("1 queued"),
        "{screen}"
    );
    for (name, group) in [
        ("alpha", "scope 1"),
        ("beta", "scope 1"),
        ("gamma", "scope 2"),
        ("delta", "unscoped"),
    ] {
        let r = row(&screen, name);
        assert!(r.contains(group) && r.contains("local"), "{r}");
        assert!(r.contains(&format!("/work/{name}")), "{r}");
    }
    let ask = screen.lines().find(|l| l.contains("alpha → beta")).unwrap();
    assert!(ask.contains("waiting"), "{ask}");
    let deferred = screen.lines().find(|l| l.contains("→ gamma")).unwrap();
    assert!(
        deferred.contains("epsilon- (away)") && deferred.contains("deferred"),
        "{deferred}"
    );
    let offline = screen.lines().find(|l| l.contains("omega-00")).unwrap();
    assert!(
        offline.contains("offline") && offline.contains(" 1 "),
        "{offline}"
    );
    assert!(
        screen.contains("store ") && screen.contains("up "),
        "{screen}"
    );

    // `/` filters; enter keeps the filter; enter again shows the one row's session.
    tty.keys(b"/gam");
    tty.shows("filter: gam");
    tty.keys(b"\r");
    let filtered = tty.wait_for("only gamma", |s| {
        s.contains("gamma is busy") && !s.contains("alpha is busy")
    });
    assert!(!filtered.contains("delta is busy"), "{filtered}");
    tty.keys(b"\r");
    let details = tty.shows("working directory");
    assert!(
        details.contains("/work/gamma") && details.contains("model-gamma"),
        "{details}"
    );
    assert!(
        details.contains("Asks in flight involving it: 1"),
        "{details}"
    );
    assert!(details.contains("scope 2"), "{details}");
    // esc goes back to the list, a second esc clears the filter (the selection stays on
    // gamma); an arrow moves to the next row, enter opens it.
    tty.keys(b"\x1b");
    tty.shows("Sessions (");
    tty.keys(b"\x1b");
    tty.shows("alpha is busy");
    tty.keys(b"\x1b[B\r");
    tty.shows("/work/delta");
    tty.keys(b"\x1b");
    tty.shows("Asks in flight (2)");

    // It is live: a session that joins appears, one that leaves goes.
    let zeta = join(&dir.socket(), "zeta-6666", "zeta", None);
    tty.shows("zeta is busy");
    drop(zeta);
    tty.wait_for("zeta gone", |s| !s.contains("zeta is busy"));
    // A session's texts reach the terminal without their control characters: no escape
    // sequence of theirs runs in the watcher's terminal.
    let evil = "evil\x1b]0;pwned\x07\x1b[2J\u{9b}31m";
    let _evil = join(&dir.socket(), "evil-9999", evil, None);
    tty.shows("evil\u{fffd}]0;pwned\u{fffd}\u{fffd}[2J\u{fffd}31m");

    tty.keys(b"q");
    assert!(tty.wait_exit().success());
    tty.assert_restored();
    let written = tty.written();
    assert_no_scope(&written, "the watcher's screen");
    for injected in [
        &b"\x1b]0;pwned"[..],
        b"\x07",
        b"\x1b[2J\xc2\x9b",
        "\u{9b}".as_bytes(),
    ] {
        let found = written.windows(injected.len()).any(|w| w == injected);
        assert!(!found, "{injected:?} reached the terminal");
    }
    broker.close();
}

#[test]
fn it_adapts_to_the_terminal_and_reconnects_to_a_broker_that_starts_again() {
    let dir = Dir::new("tty-restart");
    let broker = start(&dir);
    let kappa = join(&dir.socket(), "kappa-7777", "kappa", Some(SCOPE_A));
    let mut tty = Tty::spawn(&dir, 30, 120);
    let wide = tty.shows("kappa is busy");
    assert!(
        wide.contains("MODEL") && wide.contains("messages per"),
        "{wide}"
    );
    // Narrow and short: the model column and the traffic pane give way.
    tty.resize(16, 64);
    let narrow = tty.wait_for("the narrow layout", |s| {
        s.contains("kappa-77") && !s.contains("MODEL")
    });
    assert!(!narrow.contains("messages per"), "{narrow}");
    assert!(narrow.contains("scope 1"), "{narrow}");
    // Far too small to hold anything: it still draws what fits, and comes back when it grows.
    tty.resize(3, 12);
    tty.shows("agent-inter");
    tty.resize(30, 120);
    tty.shows("MODEL");
    assert!(tty.alive(), "the watcher survived a tiny terminal");

    // The broker stops: the screen says so, and keeps trying.
    drop(kappa);
    broker.close();
    let down = tty.shows("The broker is not running at");
    assert!(down.contains("broker not running: reconnecting"), "{down}");
    assert!(!down.contains("kappa"), "{down}");
    // One starts again: the view comes back by itself.
    let broker = start(&dir);
    let _lambda = join(&dir.socket(), "lambda-8888", "lambda", Some(SCOPE_B));
    let back = tty.shows("lambda is busy");
    assert!(!back.contains("not running"), "{back}");
    assert!(
        row(&back, "lambda").contains("scope 1"),
        "labels are per snapshot"
    );

    // Ctrl-C ends it as q does, and gives the terminal back.
    tty.keys(b"\x03");
    assert!(tty.wait_exit().success());
    tty.assert_restored();
    assert_no_scope(&tty.written(), "the watcher's screen");
    broker.close();
}

#[test]
fn a_broker_that_is_not_running_ends_the_view_before_it_starts() {
    let dir = Dir::new("tty-down");
    let mut tty = Tty::spawn(&dir, 24, 100);
    let status = tty.wait_exit();
    assert_eq!(status.code(), Some(1));
    let written = String::from_utf8(tty.written()).unwrap();
    let socket = dir.socket().display().to_string();
    let expected =
        format!("agent-intercom: error[NOT_CONNECTED]: no broker is running at {socket}");
    assert!(written.contains(&expected), "{written:?}");
    assert!(
        !written.contains("\x1b[?1049h"),
        "the alternate screen was entered"
    );
    tty.assert_restored();
}

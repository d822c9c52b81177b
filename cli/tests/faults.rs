//! The CLI's test-only fault points, in a build with the `fault-injection` feature
//! (`cargo test -p agent-intercom-cli --features fault-injection --test faults`; the test
//! command runs every `faults` target that way).

#![cfg(feature = "fault-injection")]

mod watch_support;

use watch_support::tty::Tty;
use watch_support::*;

/// A panic in the live view gives the terminal back before its message is printed.
#[test]
fn a_panic_in_watch_restores_the_terminal() {
    let dir = Dir::new("panic");
    let broker = start(&dir);
    let _delta = join(&dir.socket(), DELTA, "delta", None);
    let mut tty = Tty::spawn_with(&dir, 30, 100, &[("AGENT_INTERCOM_WATCH_FAULT", "panic")]);
    let status = tty.wait_exit();
    assert_eq!(status.code(), Some(101), "a panic's exit status");
    tty.assert_restored();
    let written = String::from_utf8_lossy(&tty.written()).into_owned();
    let drawn = written
        .find("delta is busy")
        .expect("the first frame was drawn");
    let left = written
        .find("\x1b[?1049l")
        .expect("the alternate screen was left");
    let message = written
        .find("a panic after the first frame")
        .expect("the panic message");
    assert!(drawn < left && left < message, "{written:?}");
    // On the normal screen, where the user sees it.
    assert!(
        tty.screen().contains("a panic after the first frame"),
        "{}",
        tty.screen()
    );
    broker.close();
}

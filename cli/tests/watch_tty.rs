//! `agent-intercom watch` in a pseudo-terminal against a real broker: what the screen shows
//! (read back through a VT100 parser), the keys, a resize, a broker that stops and starts again,
//! and the terminal given back as it was (the normal screen, the cursor, cooked mode) on `q` and
//! on Ctrl-C. No scope value in any byte the watcher wrote.

mod watch_support;

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use watch_support::*;

const WAIT: Duration = Duration::from_secs(20);

/// What the watcher wrote: the screen it makes, and every byte.
struct Seen {
    parser: vt100::Parser,
    bytes: Vec<u8>,
}

/// The watcher on a pseudo-terminal.
struct Tty {
    master: File,
    child: Child,
    seen: Arc<Mutex<Seen>>,
}

fn cloexec(fd: i32) {
    // SAFETY: fcntl on a descriptor this test owns.
    unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
}

impl Tty {
    fn spawn(dir: &Dir, rows: u16, cols: u16) -> Tty {
        let (mut master, mut slave) = (0, 0);
        let size = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: two out-parameters and a window size, as openpty(3) takes them.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        cloexec(master);
        cloexec(slave);
        // SAFETY: openpty returned two descriptors that nothing else owns.
        let (master, slave) = unsafe { (File::from_raw_fd(master), File::from_raw_fd(slave)) };
        let mut command = Command::new(env!("CARGO_BIN_EXE_agent-intercom"));
        command
            .arg("watch")
            .arg("--agent-dir")
            .arg(&dir.0)
            .env("TERM", "xterm-256color")
            .stdin(slave.try_clone().unwrap())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave);
        // SAFETY: only async-signal-safe calls between fork and exec: the child leads a new
        // session whose controlling terminal is the pseudo-terminal (its stdin).
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() == -1 || libc::ioctl(0, libc::TIOCSCTTY, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().unwrap();
        drop(command); // this process's copies of the terminal's slave end
        let seen = Arc::new(Mutex::new(Seen {
            parser: vt100::Parser::new(rows, cols, 0),
            bytes: Vec::new(),
        }));
        let mut reader = master.try_clone().unwrap();
        let into = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            // Ends with EIO once the watcher exited and the slave end is closed.
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                let mut seen = into.lock().unwrap();
                seen.parser.process(&buf[..n]);
                seen.bytes.extend_from_slice(&buf[..n]);
            }
        });
        Tty {
            master,
            child,
            seen,
        }
    }

    /// The screen, and how many bytes made it.
    fn screen_at(&self) -> (String, usize) {
        let seen = self.seen.lock().unwrap();
        (seen.parser.screen().contents(), seen.bytes.len())
    }

    fn screen(&self) -> String {
        self.screen_at().0
    }

    /// Waits until the screen satisfies `ok` and is whole: nothing more was written for a
    /// moment after it (a frame reaches the terminal in several writes). Fails showing it.
    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let (screen, len) = self.screen_at();
            std::thread::sleep(Duration::from_millis(60));
            if ok(&screen) && self.screen_at().1 == len {
                return screen;
            }
            assert!(Instant::now() < deadline, "never showed {what}:\n{screen}");
        }
    }

    fn shows(&self, text: &str) -> String {
        self.wait_for(text, |s| s.contains(text))
    }

    fn keys(&mut self, bytes: &[u8]) {
        self.master.write_all(bytes).unwrap();
        self.master.flush().unwrap();
    }

    fn resize(&self, rows: u16, cols: u16) {
        let size = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCSWINSZ reads one winsize; the kernel signals the watcher (SIGWINCH).
        let rc = unsafe { libc::ioctl(self.master.as_raw_fd(), libc::TIOCSWINSZ, &size) };
        assert_eq!(rc, 0);
        self.seen.lock().unwrap().parser.set_size(rows, cols);
    }

    /// The terminal's local modes (ICANON, ECHO), as the watcher's side has them.
    fn cooked(&self) -> bool {
        // SAFETY: termios is plain data; tcgetattr fills it.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor and a termios to fill.
        let rc = unsafe { libc::tcgetattr(self.master.as_raw_fd(), &mut t) };
        assert_eq!(rc, 0);
        t.c_lflag & (libc::ICANON | libc::ECHO) == (libc::ICANON | libc::ECHO)
    }

    fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // The rest of what it wrote is read before the screen is looked at.
                std::thread::sleep(Duration::from_millis(200));
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "watch did not exit:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The normal screen, the cursor shown, cooked mode: as before the watcher started.
    fn assert_restored(&self) {
        let seen = self.seen.lock().unwrap();
        assert!(
            !seen.parser.screen().alternate_screen(),
            "still on the alternate screen"
        );
        assert!(
            !seen.parser.screen().hide_cursor(),
            "the cursor is still hidden"
        );
        drop(seen);
        assert!(self.cooked(), "the terminal was left in raw mode");
    }

    fn written(&self) -> Vec<u8> {
        self.seen.lock().unwrap().bytes.clone()
    }
}

impl Drop for Tty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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

    tty.keys(b"q");
    assert!(tty.wait_exit().success());
    tty.assert_restored();
    assert_no_scope(&tty.written(), "the watcher's screen");
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
    tty.resize(30, 120);
    tty.shows("MODEL");

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

//! A pseudo-terminal for the `watch` tests: the watcher runs on its slave end as on a real
//! terminal; what it writes goes through a VT100 parser, so a test reads the screen a user sees.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::Dir;

pub const WAIT: Duration = Duration::from_secs(20);

/// What the watcher wrote: the screen it makes, and every byte.
pub struct Seen {
    parser: vt100::Parser,
    bytes: Vec<u8>,
}

/// The watcher on a pseudo-terminal.
pub struct Tty {
    master: File,
    child: Child,
    seen: Arc<Mutex<Seen>>,
    /// Reads the terminal until the watcher's side of it is closed.
    reader: std::thread::JoinHandle<()>,
}

fn cloexec(fd: i32) {
    // SAFETY: fcntl on a descriptor this test owns.
    unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
}

impl Tty {
    pub fn spawn(dir: &Dir, rows: u16, cols: u16) -> Tty {
        Tty::spawn_with(dir, rows, cols, &[])
    }

    /// [`Tty::spawn`] with environment variables set for the watcher.
    pub fn spawn_with(dir: &Dir, rows: u16, cols: u16, env: &[(&str, &str)]) -> Tty {
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
            .envs(env.iter().copied())
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
        let reader = std::thread::spawn(move || {
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
            reader,
        }
    }

    /// The screen, and how many bytes made it.
    pub fn screen_at(&self) -> (String, usize) {
        let seen = self.seen.lock().unwrap();
        (seen.parser.screen().contents(), seen.bytes.len())
    }

    pub fn screen(&self) -> String {
        self.screen_at().0
    }

    /// Waits until the screen satisfies `ok` and is whole: nothing more was written for a
    /// moment after it (a frame reaches the terminal in several writes). Fails showing it.
    pub fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
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

    pub fn shows(&self, text: &str) -> String {
        self.wait_for(text, |s| s.contains(text))
    }

    pub fn keys(&mut self, bytes: &[u8]) {
        self.master.write_all(bytes).unwrap();
        self.master.flush().unwrap();
    }

    pub fn resize(&self, rows: u16, cols: u16) {
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
    pub fn cooked(&self) -> bool {
        // SAFETY: termios is plain data; tcgetattr fills it.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor and a termios to fill.
        let rc = unsafe { libc::tcgetattr(self.master.as_raw_fd(), &mut t) };
        assert_eq!(rc, 0);
        t.c_lflag & (libc::ICANON | libc::ECHO) == (libc::ICANON | libc::ECHO)
    }

    /// Whether the watcher is still running.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            // The rest of what it wrote is read before the screen is looked at: the reader
            // ends once the watcher exited and the terminal's other end is closed.
            if let Some(status) = self.child.try_wait().unwrap()
                && self.reader.is_finished()
            {
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
    pub fn assert_restored(&self) {
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

    pub fn written(&self) -> Vec<u8> {
        self.seen.lock().unwrap().bytes.clone()
    }
}

impl Drop for Tty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

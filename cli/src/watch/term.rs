//! The terminal while `watch` runs: raw mode on the alternate screen, given back as it was when
//! the view ends however it ends (quit, Ctrl-C, SIGINT/SIGTERM/SIGHUP, an error, a panic).

use std::io::{self, Stdout};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::cursor::{Hide, Show};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// The full-screen terminal; dropping it restores the terminal.
pub struct Screen {
    pub terminal: Terminal<CrosstermBackend<Stdout>>,
}

/// Gives the terminal back: the normal screen, the cursor, cooked mode. Safe to call twice.
pub fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(io::stdout(), LeaveAlternateScreen, Show);
}

impl Screen {
    /// Takes the terminal over. A panic from here on restores it before its message is printed.
    pub fn enter() -> io::Result<Screen> {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        enable_raw_mode()?;
        let entered = execute!(io::stdout(), EnterAlternateScreen, Hide)
            .and_then(|()| Terminal::new(CrosstermBackend::new(io::stdout())));
        match entered {
            Ok(terminal) => Ok(Screen { terminal }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

/// Set when SIGINT, SIGTERM or SIGHUP arrives (in raw mode Ctrl-C is a key, not a signal; these
/// come from elsewhere): the view then ends as on `q`.
pub fn stop_signals() -> io::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    Ok(stop)
}

/// Whether a stop signal arrived.
pub fn stopped(flag: &AtomicBool) -> bool {
    flag.load(Ordering::Relaxed)
}

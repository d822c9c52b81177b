//! `agent-intercom watch`: the local broker at a glance (docs/watch.md).
//!
//! Every second the watcher reads a snapshot from the broker, as its local administrator
//! (`agent_intercom_broker::watch`: an `access_control` action with the admin token), and shows
//! it full screen; `--once` prints one snapshot, as text or with `--json` as JSON, and exits.
//! No scope reaches it: the broker sends labels ("scope 1", "unscoped") instead.

mod input;
mod model;
mod render;
mod term;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use agent_intercom_broker::BrokerConfig;
use clap::Args;
use crossterm::event::{self, Event};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::Value;

use crate::fail::{Failure, Outcome, invalid, io};
use input::App;
use model::Snapshot;

/// How often the view reads the broker.
const REFRESH: Duration = Duration::from_secs(1);
/// How long one read waits for the broker's answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(3);
/// How long the view waits for a key before drawing again (idle times move on).
const TICK: Duration = Duration::from_millis(250);
/// Test-only: `panic` makes the live view panic once it has drawn its first frame, so that a
/// test sees the terminal given back by the panic hook. Only a build with the `fault-injection`
/// feature reads it; any other build refuses to start while it is set.
const FAULT_ENV: &str = "AGENT_INTERCOM_WATCH_FAULT";

/// Whether [`FAULT_ENV`] asks for a panic.
fn panic_fault() -> Result<bool, Failure> {
    let Some(value) = std::env::var_os(FAULT_ENV) else {
        return Ok(false);
    };
    if !cfg!(feature = "fault-injection") {
        return Err(invalid(format!(
            "{FAULT_ENV} is set, but this build has no fault injection"
        )));
    }
    match value.to_str() {
        Some("panic") => Ok(true),
        _ => Err(invalid(format!("{FAULT_ENV} takes only: panic"))),
    }
}

#[derive(Args)]
pub struct WatchArgs {
    /// Agent directory (default $PI_CODING_AGENT_DIR, else ~/.pi/agent); it must exist
    #[arg(long, value_name = "DIR")]
    agent_dir: Option<PathBuf>,
    /// Print one snapshot and exit (as text; as JSON with --json)
    #[arg(long)]
    once: bool,
    /// With --once: the snapshot as one line of JSON (docs/watch.md has every member)
    #[arg(long, requires = "once")]
    json: bool,
}

fn config(args: &WatchArgs) -> Result<BrokerConfig, Failure> {
    let dir = match &args.agent_dir {
        Some(dir) => {
            crate::paths::existing(dir, "--agent-dir")?;
            dir.clone()
        }
        None => agent_intercom_broker::config::agent_dir_from_env(),
    };
    Ok(BrokerConfig::for_agent_dir(&dir))
}

/// One read of the broker; a refusal or an unreachable broker is a runtime failure (exit 1).
fn read(config: &BrokerConfig) -> Result<Value, Failure> {
    agent_intercom_broker::watch::snapshot(config, ANSWER_TIMEOUT).map_err(Failure::Peer)
}

pub fn run(args: WatchArgs) -> Outcome {
    let config = config(&args)?;
    let panic = panic_fault()?;
    let terminal = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    if !args.once && !terminal {
        return Err(invalid(
            "watch needs a terminal; for scripts use watch --once (--json)",
        ));
    }
    let first = read(&config)?;
    if args.json {
        let mut out = std::io::stdout().lock();
        return writeln!(out, "{first}").map_err(|e| io(format!("cannot write: {e}")));
    }
    let snapshot = Snapshot::from_json(&first);
    let socket = config.socket_path.display().to_string();
    if args.once {
        return print_once(App::new(socket, snapshot));
    }
    live(config, App::new(socket, snapshot), panic)
}

/// The screen drawn once into memory and printed as plain text, at the terminal's width
/// (120 columns when not a terminal), as tall as its rows need.
fn print_once(app: App) -> Outcome {
    let width = match std::io::stdout().is_terminal() {
        true => crossterm::terminal::size().map_or(120, |(w, _)| w).max(40),
        false => 120,
    };
    let s = app.snapshot.as_ref().expect("read above");
    let rows = (s.sessions.len() + s.offline.len()).min(u16::MAX as usize / 8) as u16;
    let asks = (s.asks.len().min(u16::MAX as usize / 8) as u16 + 3).max(4);
    // The layout gives the asks at most a third of the body, and the traffic needs 18 lines.
    let body = (rows + 3 + asks + 5).max(3 * asks).max(18);
    let height = body + 3;
    let mut terminal = Terminal::new(TestBackend::new(width, height))
        .map_err(|e| io(format!("cannot draw: {e}")))?;
    terminal
        .draw(|f| render::draw(f, &app))
        .map_err(|e| io(format!("cannot draw: {e}")))?;
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    // The last line lists the keys, which a printed screen has no use for.
    for y in 0..buffer.area.height - 1 {
        let line: String = (0..buffer.area.width)
            .map(|x| buffer[(x, y)].symbol())
            .collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    std::io::stdout()
        .lock()
        .write_all(out.as_bytes())
        .map_err(|e| io(format!("cannot write: {e}")))
}

/// Reads the broker every [`REFRESH`] on a thread of its own, so that a slow broker never
/// holds the keys up; stops once the view is gone.
fn reader(config: BrokerConfig, tx: mpsc::Sender<Result<Snapshot, String>>) {
    loop {
        std::thread::sleep(REFRESH);
        let read = agent_intercom_broker::watch::snapshot(&config, ANSWER_TIMEOUT)
            .map(|v| Snapshot::from_json(&v))
            .map_err(|e| {
                model::printable(&format!("error[{}]: {}", e.code().as_str(), e.message()))
            });
        if tx.send(read).is_err() {
            return;
        }
    }
}

/// The live view, until `q`, Ctrl-C or a stop signal (`panic`: see [`FAULT_ENV`]).
fn live(config: BrokerConfig, mut app: App, panic: bool) -> Outcome {
    let failed = |e: std::io::Error| io(format!("terminal: {e}"));
    let stop = term::stop_signals().map_err(failed)?;
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("watch-reader".into())
        .spawn(move || reader(config, tx))
        .map_err(failed)?;
    let mut screen = term::Screen::enter().map_err(failed)?;
    loop {
        while let Ok(read) = rx.try_recv() {
            app.update(read);
        }
        screen
            .terminal
            .draw(|f| render::draw(f, &app))
            .map_err(failed)?;
        assert!(!panic, "{FAULT_ENV}=panic: a panic after the first frame");
        if app.quit || term::stopped(&stop) {
            return Ok(());
        }
        if event::poll(TICK).map_err(failed)?
            && let Event::Key(key) = event::read().map_err(failed)?
        {
            app.key(key);
        }
    }
}

//! Finding or starting the broker of an intercom directory, race-free: whoever takes
//! `broker.owner` runs it; everyone else waits until it answers `health` and uses it.

use std::time::{Duration, Instant};

use crate::client::{Health, health};
use crate::config::BrokerConfig;
use crate::server::{BrokerHandle, StartError, start};

/// The outcome of [`ensure`].
pub enum Ensured {
    /// This call started the broker; it runs until the handle stops it (or idle exit).
    Started(BrokerHandle),
    /// A compatible broker was already running (its pid when known).
    Running(Option<i32>),
}

/// Uses the running broker of `config`'s directory, or starts one. Concurrent callers (threads
/// or processes) end with exactly one broker: the one that takes `broker.owner` starts it, the
/// others wait (up to `wait`) until it answers `health`.
pub fn ensure(config: BrokerConfig, wait: Duration) -> Result<Ensured, StartError> {
    let socket = config.socket_path.clone();
    let pid_path = config.pid_path();
    let deadline = Instant::now() + wait;
    let _ = crate::lifecycle::ensure_private_dir(&config.intercom_dir);
    loop {
        if health(&socket, Duration::from_millis(500)) == Health::Compatible {
            return Ok(Ensured::Running(crate::lifecycle::read_pid(&pid_path)));
        }
        // Serialize starting with the adapters' convention: whoever holds broker.spawn.lock is
        // starting one; everyone else waits for it to answer.
        let lock = match crate::lifecycle::try_spawn_lock(
            &config.spawn_lock_path(),
            Duration::from_secs(10),
        ) {
            Ok(Some(lock)) => Some(lock),
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(25));
                continue;
            }
            _ => None,
        };
        let started = start(config.clone());
        drop(lock);
        match started {
            Ok(handle) => return Ok(Ensured::Started(handle)),
            Err(StartError::AlreadyRunning(pid)) => {
                if Instant::now() >= deadline {
                    return Err(StartError::AlreadyRunning(pid));
                }
                std::thread::sleep(Duration::from_millis(25));
            }
            Err(e) => return Err(e),
        }
    }
}

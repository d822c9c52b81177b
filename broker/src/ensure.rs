//! Finding or starting the broker of an intercom directory, race-free: whoever takes
//! `broker.owner` runs it; everyone else waits until it answers `health` and uses it.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::client::RawClient;
use crate::config::BrokerConfig;
use crate::server::{BrokerHandle, StartError, start};
use crate::wire;

/// What a `health` probe found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    /// A protocol-v4 broker with the remote-access contract current clients require.
    Compatible,
    /// Something answered `health_ok`, but not as current clients require.
    Incompatible,
    /// Nothing (usable) listens.
    Unreachable,
}

/// Probes the socket with a `health` frame, as the adapters do.
pub fn health(socket: &Path, timeout: Duration) -> Health {
    let Ok(mut client) = RawClient::connect(socket) else {
        return Health::Unreachable;
    };
    let _ = client.stream().set_write_timeout(Some(timeout));
    let request_id = uuid::Uuid::new_v4().to_string();
    if client
        .send(&json!({ "type": "health", "requestId": request_id }))
        .is_err()
    {
        return Health::Unreachable;
    }
    let Ok(Some(v)) = client.recv(timeout) else {
        return Health::Unreachable;
    };
    if v["type"] != "health_ok" || v["requestId"] != request_id.as_str() {
        return Health::Unreachable;
    }
    let compatible = v["protocol"] == agent_intercom_core::protocol::PROTOCOL_NAME
        && v["version"] == agent_intercom_core::protocol::PROTOCOL_VERSION
        && v["endpoint"] == wire::LOCAL_ENDPOINT
        && v["remoteAccess"] == wire::remote_access_contract();
    if compatible {
        Health::Compatible
    } else {
        Health::Incompatible
    }
}

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

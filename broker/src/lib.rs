//! # agent-intercom-broker
//!
//! The pi-intercom protocol-v4 broker, wire-compatible with the existing Pi, Claude Code, Codex
//! and OpenCode adapters (`docs/wire-v4.md` describes the wire). Protocol rules
//! (scopes, resolution, audiences, replacement order, late frames) come from
//! `agent_intercom_core`; this crate adds sockets, state, time and durability.
//!
//! ```no_run
//! let config = agent_intercom_broker::BrokerConfig::from_env().expect("a valid environment");
//! let broker = agent_intercom_broker::start(config).expect("started");
//! println!("listening on {}", broker.socket_path().display());
//! broker.wait(); // until idle exit or shutdown
//! ```

#![deny(missing_docs)]

pub mod access;
pub mod client;
pub mod config;
pub mod embed;
mod ensure;
pub mod fast;
pub mod jstext;
pub mod lifecycle;
pub mod log;
mod server;
mod state;
pub mod store;
pub mod watch;
pub mod wire;

pub use client::{Health, health};
pub use config::{BrokerConfig, LogLevel, Transport};
pub use ensure::{Ensured, ensure};
pub use server::{BrokerHandle, StartError, start};
pub use state::StopReason;

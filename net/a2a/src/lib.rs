//! # agent-intercom-a2a
//!
//! `agent-intercom serve`: the A2A HTTP endpoint over the scratchpad's SQLite store. A2A clients
//! (1.0 and 0.3 JSON-RPC, and the legacy 0.1 `tasks/send`) hand work to the local agents: a
//! message becomes a scratchpad task assigned to a local agent, which works on it through
//! `agent-intercom pad` or the Node API like on any other task. With `--broker` the service is a
//! session of the broker instead, and a message becomes an ask to a live session whose reply
//! completes the task (`gateway`, `bridge`). Documented in `docs/a2a.md`.

mod app;
pub mod auth;
mod bridge;
pub mod card;
mod dialect;
pub mod errors;
pub mod feed;
mod fields;
pub mod gateway;
pub mod handoff;
pub mod http;
pub mod json;
pub mod keys;
mod landing;
mod listener;
pub mod ops;
mod panics;
pub mod rpc;
pub mod server;
pub mod signed;
pub mod stream;
pub mod wire;
mod worker;

pub use server::{Running, ServeConfig, StartError, run, spawn};

//! # agent-intercom-a2a
//!
//! `agent-intercom serve`: the A2A HTTP endpoint over the scratchpad's SQLite store.

pub mod handoff;
pub mod keys;

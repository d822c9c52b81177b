//! The C ABI of agent-intercom. Every function here only converts C arguments, calls
//! `agent_intercom_core` (or the broker and scratchpad crates), and converts the answer back;
//! the rules live in those crates. Every export is written with `ffi_fn!` (`macros.rs`), which
//! catches panics and reports failures in one place; arguments pass the checks of `args.rs`.
//!
//! See `include/agent_intercom.h` (generated from this crate by `cargo xtask gen`) for the
//! conventions: status codes, (pointer, length) UTF-8 inputs, ownership of outputs, and the ABI
//! stability policy.

#![allow(non_camel_case_types)]

#[macro_use]
mod macros;

mod args;
pub mod broker;
pub mod client;
pub mod contract;
pub mod pad;
pub mod status;
#[cfg(test)]
mod tests;

/// The ABI version. See the stability policy at the top of this header.
pub const AIC_ABI_VERSION: u32 = 1;
/// Length of a hex SHA-256 digest, without the terminating NUL.
pub const AIC_HASH_HEX_LEN: usize = 64;
const _: () = assert!(AIC_HASH_HEX_LEN == agent_intercom_core::canonical::HASH_HEX_LEN);

//! # agent-intercom-core
//!
//! The canonical Rust source of the pi-intercom protocol-v4 contract: constants, scope rules,
//! routing and visibility rules, canonical JSON and the semantics hash of the acceptance corpus.
//! No I/O, no binding dependencies; the C ABI (`agent-intercom-ffi`) and the Node package
//! (`agent-intercom-node`) are thin shells over this crate.
//!
//! ```
//! use agent_intercom_core::{canonical, corpus, protocol, scope};
//!
//! let scoped = scope::parse_scope(Some("Scope_AAAAAAAAAA"), "scopeId").unwrap();
//! assert!(scoped.is_some());
//! assert!(scope::parse_scope(Some(" Scope_AAAAAAAAAA"), "scopeId").is_err());
//! assert_eq!(corpus::semantics_hash(), protocol::KNOWN_SEMANTICS_HASH);
//! let hash = canonical::canonical_hash_of_text("boss-test-v1", r#"{"b":2,"a":1}"#).unwrap();
//! assert!(hash.starts_with("4ff6c078"));
//! ```

#![deny(missing_docs)]

pub mod asks;
pub mod boss;
pub mod canonical;
pub mod contract;
pub mod corpus;
pub mod envelope;
pub mod error;
pub mod httpsig;
pub mod policy;
pub mod protocol;
pub mod registry;
pub mod routing;
pub mod scope;
pub mod scratchpad;
pub mod team;
pub mod time;

pub use error::{Error, ErrorCode};

/// This crate's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

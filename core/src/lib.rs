//! # agent-intercom-core
//!
//! The pure core of agent-intercom: every rule that the broker, the scratchpad, the network
//! services and the two bindings (the C ABI, `agent-intercom-ffi`; the Node package,
//! `agent-intercom-node`) apply, written once. No I/O: no files, sockets, environment, clocks or
//! threads; callers bring those, and the bindings are thin shells over this crate.
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
//!
//! ## What it holds, floor by floor
//!
//! Each part imports only the parts listed above it here (tests aside), never one below.
//!
//! 1. **The protocol-v4 rules** (pi-intercom protocol v4, what the broker and every adapter
//!    share): [`protocol`] (identity constants), [`error`] (the stable error codes), [`scope`]
//!    (scope ids), [`routing`] (targets, visibility, frame generations), [`asks`] (ask edges and
//!    their limits), [`canonical`] (canonical JSON and hashes), [`corpus`] (the acceptance
//!    corpus and its semantics hash), [`scratchpad`] (the scratchpad's rules) and [`time`]
//!    (calendar arithmetic).
//! 2. **The contract vocabulary**, [`contract`]: the words the TypeScript core's rules are
//!    written in here (a JavaScript value, [`contract::Js`]; arguments, answers, refusals with
//!    their error class; one operation, [`contract::Op`]) and the readers every parser is built
//!    from. It imports no rule module; its [`contract::ops`] and [`contract::canonical`] are the
//!    canonical readers and canonical JSON as operations.
//! 3. **The rules written in that vocabulary**, each module with its own `OPS` table, in two
//!    families that do not import each other:
//!    * the TypeScript-core contract (`@ctliz/agent-intercom-core` 0.2.0, rule for rule):
//!      [`policy`] (the remote-access policy kernel), [`team`] (the team manifest) and [`boss`]
//!      (the Boss run contract: records, the Boss policy [`boss::policy`], feature-aware
//!      authorization, stores, supervision, delivery);
//!    * the signatures: [`httpsig`] (RFC 9421 HTTP message signatures) and [`envelope`]
//!      (transport envelopes between machines).
//! 4. **The registry**, [`registry`], on top: every operation of every `OPS` table by its name,
//!    the one door through which the bindings call an operation ([`registry::call_json`] from C,
//!    [`registry::call_snapshot`] from Node). No module of this crate imports it outside its
//!    tests: a rule that needs another rule calls its function.
//!
//! Where a change goes: a protocol-v4 rule into its module on floor 1; a reader every parser
//! shares into [`contract::read`]; a rule of the TypeScript contract or a signature check into
//! its module on floor 3, with an entry in that module's `OPS` table when the bindings call it (a
//! new table is one more line in [`registry`]). A Boss constant that several Boss modules share
//! goes into [`boss::wire`], any other into its own module; each reaches `boss.constants`
//! ([`boss::constants`]) through its module's `add_constants`.
//!
//! ## Why the TypeScript-core contract stays at the top level
//!
//! It is one family ([`contract`], [`policy`], [`team`], [`boss`]), but neither a module tree of
//! its own (a `ts/` folder) nor a crate of its own:
//!
//! * the floors already keep it apart: nothing on floor 1 imports it, and it and the signatures
//!   meet only in [`contract`] below and [`registry`] above. A `ts/` folder would add a level to
//!   every path without changing one arrow;
//! * the signatures' operations are written in the same [`contract`] vocabulary: under `ts/`, it
//!   would have them reach into the other family;
//! * its modules carry the names of the TypeScript subpaths they replace (`./boss`, `./policy`,
//!   `./team-manifest`), the names its operations carry (`boss.…`, `policy.…`, `team.…`) and the
//!   docs use;
//! * a crate split stays the seam to take if compile time or review load ever ask for it: with
//!   no arrow between the two families and the registry on top, either family can leave as a
//!   crate over floors 1 and 2, the registry going above it.

#![deny(missing_docs)]

// The protocol-v4 rules.
pub mod asks;
pub mod canonical;
pub mod corpus;
pub mod error;
pub mod protocol;
pub mod routing;
pub mod scope;
pub mod scratchpad;
pub mod time;

// The contract vocabulary, then the TypeScript-core contract and the signatures written in it.
pub mod boss;
pub mod contract;
pub mod envelope;
pub mod httpsig;
pub mod policy;
pub mod team;

// Every operation by name, on top.
pub mod registry;

pub use error::{Error, ErrorCode};

/// This crate's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

//! `canonicalJson`, `canonicalFrame` and `canonicalHash` over snapshot values, and the store gate.

use crate::contract::Op;

/// The operations of this module.
pub const OPS: &[Op] = &[];

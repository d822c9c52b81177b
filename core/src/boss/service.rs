//! Broker feature attestations, capability advertisements and compatibility.

use crate::contract::Op;

/// The operations of this module.
pub const OPS: &[Op] = &[];

//! Participant states.

use crate::contract::Op;

/// The operations of this module.
pub const OPS: &[Op] = &[];

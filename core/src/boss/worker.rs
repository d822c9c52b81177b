//! Worker identity v2 and its environment form.

use crate::contract::Op;

/// The operations of this module.
pub const OPS: &[Op] = &[];

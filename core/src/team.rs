//! The tmuxdeck team manifest (`./team-manifest`): the pure parser.

use crate::contract::Op;

/// The operations of this module.
pub const OPS: &[Op] = &[];

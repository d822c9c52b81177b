//! The Boss policy (`./boss/policy`): principals and `authorizeBossPolicy`.

use crate::contract::Op;

/// The operations of this module.
pub const OPS: &[Op] = &[];

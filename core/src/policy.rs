//! The remote-access policy kernel (`./policy`): authorize, ancestry, revoke and adopt.

use crate::contract::Op;

/// The operations of this module.
pub const OPS: &[Op] = &[];

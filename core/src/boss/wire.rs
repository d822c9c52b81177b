//! Boss wire records: the feature contract, participant bindings, credentials, control envelopes.

use crate::contract::Op;

/// The operations of this module.
pub const OPS: &[Op] = &[];

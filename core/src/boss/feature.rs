//! Feature-aware authorization: registrations, the legacy boundary and `authorizeFeatureAware`.

use crate::contract::Op;

/// The operations of this module.
pub const OPS: &[Op] = &[];

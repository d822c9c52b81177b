//! The Boss run contract (`./boss`, `./boss/policy`): feature contract constants and hashes,
//! record parsers, the Boss and feature-aware policies.

pub mod feature;
pub mod participant;
pub mod policy;
pub mod service;
pub mod wire;
pub mod worker;

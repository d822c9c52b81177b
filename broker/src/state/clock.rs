//! Where the state machine's time comes from: a monotonic instant for timer deadlines, and
//! wall-clock milliseconds for what is stored or sent (ask expiry, how long results are kept,
//! `lastActivity`). The broker runs on [`SystemClock`]; tests drive a clock of their own, so a
//! timeout fires without sleeping.

use std::time::Instant;

/// A source of time for [`State`](super::State).
pub trait Clock: Send {
    /// Monotonic now, for timer deadlines.
    fn now(&self) -> Instant;
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
}

/// The system's clocks.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn now_ms(&self) -> i64 {
        crate::lifecycle::now_ms()
    }
}

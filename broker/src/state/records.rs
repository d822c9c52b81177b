//! The records a delivery and the offline queue both hold: a delivery awaiting its
//! acknowledgement, the extensions it carries, and where a send that may be queued goes.

use std::time::Instant;

use super::ConnId;
use crate::wire;

/// A delivery awaiting the recipient's acknowledgement, keyed by delivery id.
pub(super) struct Pending {
    /// Its delivery-timeout timer.
    pub(super) timer: (Instant, u64),
    pub(super) key: (String, String),
    pub(super) fingerprint: String,
    pub(super) message_id: String,
    /// The ask this message answers (asker, message id): resolved once it is delivered.
    pub(super) resolves: Option<(String, String)>,
    pub(super) expects_reply: bool,
    pub(super) from: String,
    pub(super) to: String,
    pub(super) from_conn: ConnId,
    pub(super) to_conn: ConnId,
    pub(super) from_generation: u64,
    pub(super) to_generation: u64,
    /// What the sender opted into (nothing, for every adapter of protocol v4).
    pub(super) tracking: Tracking,
}

/// The opt-in extensions a delivery carries (docs/hub.md).
#[derive(Default)]
pub(super) struct Tracking {
    /// Sent with `queue`: its result is kept for the retention window whether or not the
    /// recipient is connected.
    pub(super) queue: bool,
    /// Sent with `receipts`.
    pub(super) receipts: bool,
    /// Handed out from the offline queue: its sender may be anywhere (or nowhere), and a
    /// recipient that leaves before acknowledging gets it again on its next registration.
    pub(super) from_queue: bool,
    /// For a live delivery of a send with `queue` between local sessions: the sender's
    /// SessionInfo and the message (JSON text), to queue it if the recipient leaves before
    /// acknowledging.
    pub(super) requeue: Option<(String, String)>,
}

impl Tracking {
    /// The broker keeps this message's state for `delivery_status`.
    pub(super) fn tracked(&self) -> bool {
        self.queue || self.receipts
    }
}

/// What a send that may be queued resolves to.
pub(super) enum Route {
    /// The ordinary path: resolve among the connected sessions.
    Live,
    /// Queue for this known, offline session.
    Queue(String),
}

/// A message to queue: the send, its recipient, and what it does to the open asks.
pub(super) struct Enqueue<'a> {
    pub(super) key: (String, String),
    pub(super) fingerprint: String,
    pub(super) send: &'a wire::Send,
    pub(super) to: String,
    pub(super) from_info: String,
    /// A delivery id already told to the sender (a delivery that went back to the queue).
    pub(super) delivery_id: Option<String>,
}

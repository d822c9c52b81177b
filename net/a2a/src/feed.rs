//! The task layer's feed of one task: the task as it stood when a stream began
//! ([`Following::snapshot`]), then each change after it in the order it happened
//! ([`TaskEvent`]). Streams (`stream.rs`) consume a [`Following`] and know nothing of where the
//! changes come from, so another task layer (tasks answered through the broker, say) gives them
//! its own.
//!
//! Here the changes come from the scratchpad store. The store thread tells when the store has
//! changed, whichever process wrote ([`StoreHandle::changes`]: SQLite's `data_version`, the
//! signal blocking sends wait on), and the feed then reads what is new on its task
//! (`Store::a2a_changes`): the transitions and artifacts after those already reported. Nothing
//! is polled per task: a store that does not change costs a feed nothing.

use agent_intercom_core::scratchpad::TaskState;
use agent_intercom_scratchpad::{A2aChanges, A2aView, Artifact, Transition};
use tokio::sync::mpsc;

use crate::errors::RpcError;
use crate::worker::StoreHandle;

/// One change of a task, as the task layer reports it.
#[derive(Clone, Debug)]
pub enum TaskEvent {
    /// The task moved to another state: its `ordinal`-th transition (its creation is the first).
    Status {
        /// Which transition of the task this is (from 1).
        ordinal: i64,
        /// The transition: the new state, who made it, why and when.
        transition: Transition,
    },
    /// An artifact was attached to the task.
    Artifact {
        /// Which artifact of the task this is (from 0).
        index: usize,
        /// The artifact.
        artifact: Artifact,
    },
    /// The feed cannot go on (the store failed, or the task is gone): nothing follows.
    Failed(RpcError),
}

/// A task followed from a point on: what it was then, and what happens to it after.
#[derive(Debug)]
pub struct Following {
    /// The task when following began (with the history asked for and all its artifacts).
    pub snapshot: A2aView,
    /// Its changes after the snapshot, in order. The channel closes when the feed ends: the task
    /// is terminal (nothing more can happen to it) or the feed failed.
    pub events: mpsc::Receiver<TaskEvent>,
}

/// Events a feed may be ahead of its stream.
const FEED_BUFFER: usize = 16;

/// Follows the A2A task of `snapshot` (read for `sender`) in the scratchpad store: its changes
/// after the snapshot. The feed stops when the receiver is dropped.
pub fn follow(store: StoreHandle, sender: String, snapshot: A2aView) -> Following {
    let (tx, events) = mpsc::channel(FEED_BUFFER);
    let seen = Seen {
        transitions: snapshot.task.transitions,
        artifacts: snapshot.artifacts.len(),
    };
    let id = snapshot.task.task.id.clone();
    tokio::spawn(feed(store, id, sender, seen, tx));
    Following { snapshot, events }
}

/// How much of a task has been reported.
#[derive(Clone, Copy, Debug)]
struct Seen {
    transitions: i64,
    artifacts: usize,
}

async fn feed(
    store: StoreHandle,
    id: String,
    sender: String,
    mut seen: Seen,
    tx: mpsc::Sender<TaskEvent>,
) {
    let mut changes = store.changes();
    loop {
        // Marked as seen before the read, so that a change made during it is read again.
        changes.borrow_and_update();
        let (id_, sender_) = (id.clone(), sender.clone());
        let read = store
            .call(move |s| s.a2a_changes(&id_, &sender_, seen.transitions, seen.artifacts))
            .await;
        let found = match read {
            Ok(Some(found)) => found,
            Ok(None) => {
                let _ = tx
                    .send(TaskEvent::Failed(RpcError::task_not_found(&id)))
                    .await;
                return;
            }
            Err(e) => {
                let _ = tx.send(TaskEvent::Failed(RpcError::internal(&e))).await;
                return;
            }
        };
        let terminal = is_terminal(&found.task.task.state);
        for event in in_order(found, seen) {
            match &event {
                TaskEvent::Status { ordinal, .. } => seen.transitions = *ordinal,
                TaskEvent::Artifact { index, .. } => seen.artifacts = index + 1,
                TaskEvent::Failed(_) => {}
            }
            if tx.send(event).await.is_err() {
                return;
            }
        }
        if terminal {
            return;
        }
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
            () = tx.closed() => return,
        }
    }
}

fn is_terminal(state: &str) -> bool {
    TaskState::parse(state, "state").is_ok_and(TaskState::is_terminal)
}

/// The changes as events in the order they happened: transitions and artifacts each in their
/// own order, merged by time (a transition first at the same millisecond), except that a
/// terminal transition comes after every artifact read with it, so it is always the last event.
fn in_order(changes: A2aChanges, seen: Seen) -> Vec<TaskEvent> {
    let mut transitions = (seen.transitions + 1..).zip(changes.transitions).peekable();
    let mut artifacts = (seen.artifacts..).zip(changes.artifacts).peekable();
    let mut events = Vec::new();
    loop {
        let transition_next = match (transitions.peek(), artifacts.peek()) {
            (None, None) => return events,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((_, t)), Some((_, a))) => !is_terminal(&t.to) && t.at <= a.at,
        };
        let event = if transition_next {
            transitions
                .next()
                .map(|(ordinal, transition)| TaskEvent::Status {
                    ordinal,
                    transition,
                })
        } else {
            artifacts
                .next()
                .map(|(index, artifact)| TaskEvent::Artifact { index, artifact })
        };
        events.extend(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_intercom_scratchpad::{A2aTask, Task};

    fn transition(to: &str, at: i64) -> Transition {
        Transition {
            from: None,
            to: to.into(),
            by: "worker".into(),
            reason: None,
            at,
        }
    }

    fn artifact(name: &str, at: i64) -> Artifact {
        Artifact {
            by: "worker".into(),
            name: name.into(),
            content: String::new(),
            at,
        }
    }

    fn names(events: &[TaskEvent]) -> Vec<String> {
        events
            .iter()
            .map(|e| match e {
                TaskEvent::Status {
                    ordinal,
                    transition,
                } => format!("{ordinal}:{}", transition.to),
                TaskEvent::Artifact { index, artifact } => format!("{index}:{}", artifact.name),
                TaskEvent::Failed(_) => "failed".into(),
            })
            .collect()
    }

    fn changes(transitions: Vec<Transition>, artifacts: Vec<Artifact>) -> A2aChanges {
        let task = Task {
            id: "t".into(),
            creator: "c".into(),
            assignee: None,
            title: "t".into(),
            state: "working".into(),
            project_root: None,
            created_at: 0,
            updated_at: 0,
        };
        A2aChanges {
            task: A2aTask {
                task,
                context_id: "x".into(),
                legacy_id: None,
                dialect: "1.0".into(),
                transitions: 1,
                last: transition("submitted", 0),
            },
            transitions,
            artifacts,
        }
    }

    #[test]
    fn changes_merge_by_time_and_a_terminal_state_comes_last() {
        let seen = Seen {
            transitions: 1,
            artifacts: 2,
        };
        let c = changes(
            vec![transition("working", 10), transition("input-required", 30)],
            vec![artifact("a", 10), artifact("b", 20), artifact("c", 40)],
        );
        assert_eq!(
            names(&in_order(c, seen)),
            ["2:working", "2:a", "3:b", "3:input-required", "4:c"]
        );
        // Attached after the completion, or at its millisecond: still before it.
        let c = changes(
            vec![transition("completed", 10)],
            vec![artifact("a", 10), artifact("b", 50)],
        );
        assert_eq!(names(&in_order(c, seen)), ["2:a", "3:b", "2:completed"]);
        // A clock that went back does not reorder a task's own transitions.
        let c = changes(
            vec![transition("working", 50), transition("completed", 5)],
            vec![],
        );
        assert_eq!(names(&in_order(c, seen)), ["2:working", "3:completed"]);
    }
}

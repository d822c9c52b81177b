//! A2A tasks: scratchpad tasks that A2A clients create through `agent-intercom serve`, with what
//! A2A adds to them (schema step 7): the context id, the client's messages in the task's history
//! with their parts, idempotency per sender and `messageId` (with a digest of what was sent), and
//! for the 0.1 dialect the task id the client chose. The task itself, its state, transitions and
//! artifacts are the scratchpad's, so local agents work on it through `task.*` as on any other.

use agent_intercom_core::scratchpad::{Privacy, TaskState};
use agent_intercom_core::{Error, ErrorCode};
use rusqlite::{OptionalExtension, params};

use crate::gateway::insert_ask;
use crate::messages::insert_message;
use crate::tasks::{artifacts_after, insert_task, transitions_after};
use crate::{Artifact, NewMessage, Observed, Store, Task, Transition, io, state_of};

/// Longest sender, message id, context id or client task id kept (longer ones are refused, not
/// truncated).
pub const MAX_A2A_ID_BYTES: usize = 256;

/// Category of the scratchpad message that delivers an A2A client's message to the assignee.
pub const A2A_CATEGORY: &str = "a2a";

/// Hours the delivery message lives (the longest time to live; the task's A2A history keeps the
/// message for good).
const DELIVERY_TTL_HOURS: i64 = agent_intercom_core::scratchpad::MAX_TTL_HOURS as i64;

/// A message an A2A client sent, as [`Store::a2a_receive`] stores it.
#[derive(Clone, Debug)]
pub struct A2aInbound<'a> {
    /// The client's identity: the task's creator (who alone reads and cancels it).
    pub sender: &'a str,
    /// The client's `messageId`: one message per sender and id.
    pub message_id: &'a str,
    /// A digest of what was sent under `message_id`: a repeat must match it.
    pub digest: &'a str,
    /// The client's context id, if it gave one.
    pub context_id: Option<&'a str>,
    /// The task the message continues, if any.
    pub task_id: Option<&'a str>,
    /// The task id a 0.1 client chose (`tasks/send`): continues that task, or names a new one.
    pub legacy_id: Option<&'a str>,
    /// The A2A version the task was created with ("1.0", "0.3", "0.1").
    pub dialect: &'a str,
    /// The message as stored in the task's history (JSON text).
    pub message: &'a str,
    /// The title of a new task.
    pub title: &'a str,
    /// The message as text, delivered to the assignee as a private scratchpad message.
    pub text: &'a str,
    /// Who works on A2A tasks.
    pub assignee: &'a str,
    /// Project root of new tasks and of the delivery.
    pub project_root: Option<&'a str>,
    /// `serve --broker`: a new task goes to a live session as an ask (gateway.rs), recorded with
    /// it, instead of a scratchpad message to the assignee; a task with an ask takes no second
    /// message ([`Receipt::OneMessage`]), whether or not this one is given.
    pub gateway: Option<GatewayTarget<'a>>,
}

/// Where the ask of a gateway task goes, and what it says.
#[derive(Clone, Copy, Debug)]
pub struct GatewayTarget<'a> {
    /// The session asked (a name or an id, as the broker resolves it).
    pub target: &'a str,
    /// The ask's `content` (`{text, attachments?}`) as JSON text.
    pub content: &'a str,
}

/// An A2A task: the scratchpad task and what A2A adds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct A2aTask {
    /// The scratchpad task (its `updated_at` is the status timestamp).
    pub task: Task,
    /// Its context.
    pub context_id: String,
    /// The task id its 0.1 client chose.
    pub legacy_id: Option<String>,
    /// The A2A version it was created with.
    pub dialect: String,
    /// How many transitions it has had (creation counts as one).
    pub transitions: i64,
    /// Its latest transition.
    pub last: Transition,
}

/// An A2A task with its history (stored messages, oldest first) and artifacts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct A2aView {
    /// The task.
    pub task: A2aTask,
    /// The most recent messages of its history, oldest first (JSON text as stored).
    pub history: Vec<String>,
    /// Its artifacts, oldest first (empty unless asked for).
    pub artifacts: Vec<Artifact>,
}

/// What changed on an A2A task after a point ([`Store::a2a_changes`]): its transitions and
/// artifacts after the first ones already seen, oldest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct A2aChanges {
    /// The task now.
    pub task: A2aTask,
    /// Its transitions after those seen; the first has the number `seen + 1` (creation is 1).
    pub transitions: Vec<Transition>,
    /// Its artifacts after those seen.
    pub artifacts: Vec<Artifact>,
}

/// What [`Store::a2a_receive`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Receipt {
    /// A new task was created with the message in its history.
    Created(A2aTask),
    /// The message was added to the history of the task it names.
    Appended(A2aTask),
    /// This sender already sent this `messageId` with the same digest: nothing was stored; the
    /// task it went to.
    Repeated(A2aTask),
    /// This sender already sent this `messageId` with another digest: refused, nothing stored.
    Reused {
        /// The task the first message went to.
        task_id: String,
    },
    /// The task named is not one of this sender's A2A tasks: refused.
    NoTask,
    /// The task named is in a terminal state and takes no more messages: refused.
    Terminal(A2aTask),
    /// The task named is a gateway task (its one message became an ask): refused.
    OneMessage(A2aTask),
    /// The context id given is not the task's: refused.
    ContextMismatch(A2aTask),
}

/// What [`Store::a2a_cancel`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Canceled {
    /// The task is now canceled in the store.
    Canceled(A2aTask),
    /// No such A2A task for this sender.
    NoTask,
    /// The task is in a terminal state already; nothing changed.
    NotCancelable(A2aTask),
}

/// A [`Store::a2a_list`] query.
#[derive(Clone, Debug)]
pub struct A2aQuery<'a> {
    /// Whose tasks.
    pub sender: &'a str,
    /// Only this context.
    pub context_id: Option<&'a str>,
    /// Only tasks in this state.
    pub state: Option<TaskState>,
    /// Only tasks whose status changed at or after this time (milliseconds).
    pub updated_after: Option<i64>,
    /// Tasks per page (1..=100).
    pub limit: usize,
    /// Continue after this task: its status timestamp and id (a page's `next`).
    pub after: Option<(i64, String)>,
    /// Messages of history per task (`None`: all).
    pub history: Option<usize>,
    /// Whether to load artifacts.
    pub artifacts: bool,
}

/// A page of [`Store::a2a_list`]: newest status first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct A2aPage {
    /// The tasks.
    pub tasks: Vec<A2aView>,
    /// Where the next page starts, if there is one.
    pub next: Option<(i64, String)>,
    /// How many tasks match the filters, all pages together.
    pub total: i64,
}

/// The largest page of [`Store::a2a_list`].
pub const MAX_A2A_PAGE: usize = 100;

fn check_id(what: &str, value: &str) -> Result<(), Error> {
    if value.is_empty() || value.len() > MAX_A2A_ID_BYTES {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("the {what} must be 1 to {MAX_A2A_ID_BYTES} bytes"),
        ));
    }
    Ok(())
}

impl Store {
    /// Stores a message an A2A client sent, in one write transaction: a repeat of a `messageId`
    /// this sender already used is [`Receipt::Repeated`] (same digest) or [`Receipt::Reused`]
    /// (another digest) and stores nothing; a message naming a task continues it (unless it is
    /// another sender's or unknown, terminal, or of another context); otherwise a new task is
    /// created (creator the sender, assignee `assignee`, in `submitted`). A stored message is
    /// added to the task's A2A history and delivered to the assignee as a private scratchpad
    /// message (category `a2a`, with the task id) so that local agents read it with `unread`.
    pub fn a2a_receive(&mut self, m: &A2aInbound<'_>) -> Result<Receipt, Error> {
        check_id("sender", m.sender)?;
        check_id("message id", m.message_id)?;
        check_id("assignee", m.assignee)?;
        for (what, value) in [
            ("context id", m.context_id),
            ("task id", m.task_id),
            ("client task id", m.legacy_id),
        ] {
            if let Some(value) = value {
                check_id(what, value)?;
            }
        }
        if m.title.is_empty() {
            return Err(Error::new(ErrorCode::InvalidArgument, "the title is empty"));
        }
        let mut delivery = NewMessage {
            from: m.sender.to_string(),
            to: Some(m.assignee.to_string()),
            category: A2A_CATEGORY.to_string(),
            priority: None,
            privacy: Some(Privacy::Private.as_str().to_string()),
            content: m.text.to_string(),
            metadata: None,
            task_id: None,
            project_root: m.project_root.map(str::to_string),
            ttl_hours: Some(DELIVERY_TTL_HOURS),
        };
        let checked = self.check_new(&delivery)?;
        let caps = (self.config.per_project_cap, self.config.per_recipient_cap);
        let Observed { tx, now, reader } = self.observe(m.sender, m.project_root)?;
        let earlier: Option<(String, String)> = tx
            .query_row(
                "SELECT task_id, digest FROM a2a_messages WHERE sender = ?1 AND message_id = ?2",
                params![m.sender, m.message_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(io)?;
        if let Some((task_id, digest)) = earlier {
            drop(tx);
            if digest != m.digest {
                return Ok(Receipt::Reused { task_id });
            }
            return Ok(match self.a2a_task(&task_id, m.sender)? {
                Some(task) => Receipt::Repeated(task),
                None => Receipt::NoTask,
            });
        }
        // The task the message continues: named by id, or by the id a 0.1 client chose.
        let named: Option<String> = match (m.task_id, m.legacy_id) {
            (Some(id), _) => Some(id.to_string()),
            (None, Some(legacy)) => tx
                .query_row(
                    "SELECT task_id FROM a2a_tasks WHERE sender = ?1 AND legacy_id = ?2",
                    params![m.sender, legacy],
                    |r| r.get(0),
                )
                .optional()
                .map_err(io)?,
            (None, None) => None,
        };
        let (task_id, created) = match named {
            Some(id) => {
                // Whether the task went to a live session as an ask decides the one-message
                // rule, not how this server runs: a task made before a restart with (or
                // without) `--broker` keeps what it was.
                let found: Option<(String, i64, bool, Option<String>)> = tx
                    .query_row(
                        "SELECT a.context_id, t.state, \
                         EXISTS (SELECT 1 FROM a2a_asks g WHERE g.task_id = a.task_id), \
                         t.assignee FROM a2a_tasks a JOIN tasks t \
                         ON t.id = a.task_id WHERE a.task_id = ?1 AND a.sender = ?2",
                        params![id, m.sender],
                        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                    )
                    .optional()
                    .map_err(io)?;
                let Some((context, state, asked, assignee)) = found else {
                    return Ok(Receipt::NoTask);
                };
                // A follow-up goes to whoever has the task, not to whoever new tasks go to now.
                if let Some(assignee) = assignee {
                    delivery.to = Some(assignee);
                }
                let refusal = if state_of(state).is_terminal() {
                    Some(Receipt::Terminal as fn(A2aTask) -> Receipt)
                } else if asked {
                    Some(Receipt::OneMessage as fn(A2aTask) -> Receipt)
                } else if m.context_id.is_some_and(|c| c != context) {
                    Some(Receipt::ContextMismatch as fn(A2aTask) -> Receipt)
                } else {
                    None
                };
                if let Some(refusal) = refusal {
                    drop(tx);
                    return Ok(match self.a2a_task(&id, m.sender)? {
                        Some(task) => refusal(task),
                        None => Receipt::NoTask,
                    });
                }
                (id, false)
            }
            None => {
                let id = insert_task(
                    &tx,
                    m.sender,
                    Some(m.assignee),
                    m.title,
                    m.project_root,
                    now,
                )?;
                let context = match m.context_id {
                    Some(c) => c.to_string(),
                    None => uuid::Uuid::now_v7().to_string(),
                };
                tx.execute(
                    "INSERT INTO a2a_tasks (task_id, sender, context_id, legacy_id, dialect, \
                     created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![id, m.sender, context, m.legacy_id, m.dialect, now],
                )
                .map_err(io)?;
                (id, true)
            }
        };
        tx.execute(
            "INSERT INTO a2a_messages (task_id, seq, sender, message_id, digest, message, at) \
             VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM a2a_messages WHERE task_id = ?1), \
             ?2, ?3, ?4, ?5, ?6)",
            params![task_id, m.sender, m.message_id, m.digest, m.message, now],
        )
        .map_err(io)?;
        // A new task's one message becomes its ask; a later message to a task without one (made
        // without --broker) goes to its assignee, as it would have then.
        if let Some(gateway) = m.gateway.filter(|_| created) {
            insert_ask(&tx, &task_id, gateway.target, gateway.content, now)?;
        } else {
            delivery.task_id = Some(task_id.clone());
            delivery.metadata = Some(
                serde_json::json!({ "a2a": { "message_id": m.message_id, "task_id": task_id } })
                    .to_string(),
            );
            insert_message(&tx, &delivery, checked, caps, now, reader.team.as_deref())?;
        }
        tx.commit().map_err(io)?;
        let task = self.a2a_task(&task_id, m.sender)?.ok_or_else(|| {
            Error::new(ErrorCode::Internal, "the A2A task just stored is missing")
        })?;
        Ok(if created {
            Receipt::Created(task)
        } else {
            Receipt::Appended(task)
        })
    }

    /// The A2A task `id` of `sender`; `None` when there is none (unknown, not an A2A task, or
    /// another sender's: not told apart).
    pub fn a2a_task(&mut self, id: &str, sender: &str) -> Result<Option<A2aTask>, Error> {
        let row: Option<(String, Option<String>, String)> = self
            .conn
            .query_row(
                "SELECT context_id, legacy_id, dialect FROM a2a_tasks \
                 WHERE task_id = ?1 AND sender = ?2",
                params![id, sender],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(io)?;
        let Some((context_id, legacy_id, dialect)) = row else {
            return Ok(None);
        };
        let task = self.task_row(id)?;
        let (transitions, last) = self
            .conn
            .query_row(
                "SELECT (SELECT count(*) FROM task_history WHERE task_id = ?1), from_state, \
                 to_state, by_agent, reason, at FROM task_history WHERE task_id = ?1 \
                 ORDER BY seq DESC LIMIT 1",
                [id],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        Transition {
                            from: r
                                .get::<_, Option<i64>>(1)?
                                .map(|s| state_of(s).as_str().to_string()),
                            to: state_of(r.get(2)?).as_str().to_string(),
                            by: r.get(3)?,
                            reason: r.get(4)?,
                            at: r.get(5)?,
                        },
                    ))
                },
            )
            .map_err(io)?;
        Ok(Some(A2aTask {
            task,
            context_id,
            legacy_id,
            dialect,
            transitions,
            last,
        }))
    }

    /// The A2A task of `sender` that its 0.1 client named `legacy_id`.
    pub fn a2a_task_by_legacy_id(
        &mut self,
        legacy_id: &str,
        sender: &str,
    ) -> Result<Option<A2aTask>, Error> {
        let id: Option<String> = self
            .conn
            .query_row(
                "SELECT task_id FROM a2a_tasks WHERE sender = ?1 AND legacy_id = ?2",
                params![sender, legacy_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(io)?;
        match id {
            Some(id) => self.a2a_task(&id, sender),
            None => Ok(None),
        }
    }

    /// The A2A task `id` of `sender` with its most recent `history` messages (`None`: all) and,
    /// when asked, its artifacts.
    /// What it holds is one snapshot of the store, however other processes write meanwhile: its
    /// state, its transition count and its artifacts agree.
    pub fn a2a_view(
        &mut self,
        id: &str,
        sender: &str,
        history: Option<usize>,
        artifacts: bool,
    ) -> Result<Option<A2aView>, Error> {
        self.in_snapshot(|s| {
            let Some(task) = s.a2a_task(id, sender)? else {
                return Ok(None);
            };
            s.a2a_view_of(task, history, artifacts).map(Some)
        })
    }

    /// What changed on the A2A task `id` of `sender` after its first `transitions` transitions
    /// and `artifacts` artifacts (as an [`A2aView`] counts them): the rest of each, oldest first,
    /// read in one snapshot. `None` when there is no such task for this sender.
    pub fn a2a_changes(
        &mut self,
        id: &str,
        sender: &str,
        transitions: i64,
        artifacts: usize,
    ) -> Result<Option<A2aChanges>, Error> {
        self.in_snapshot(|s| {
            let Some(task) = s.a2a_task(id, sender)? else {
                return Ok(None);
            };
            let seen = i64::try_from(artifacts).unwrap_or(i64::MAX);
            Ok(Some(A2aChanges {
                transitions: transitions_after(&s.conn, id, transitions)?,
                artifacts: artifacts_after(&s.conn, id, seen)?,
                task,
            }))
        })
    }

    /// Runs `f` in one read transaction, so that what it reads is one snapshot of the store
    /// (WAL) even while other processes write. Inside a transaction already, `f` just runs.
    fn in_snapshot<T>(
        &mut self,
        f: impl FnOnce(&mut Store) -> Result<T, Error>,
    ) -> Result<T, Error> {
        if !self.conn.is_autocommit() {
            return f(self);
        }
        self.conn.execute_batch("BEGIN DEFERRED").map_err(io)?;
        let out = f(self);
        // Nothing was written: either way the transaction only lets go of its snapshot.
        let end = self
            .conn
            .execute_batch(if out.is_ok() { "COMMIT" } else { "ROLLBACK" });
        match (out, end) {
            (Ok(value), Ok(())) => Ok(value),
            (Ok(_), Err(e)) => Err(io(e)),
            (Err(e), _) => Err(e),
        }
    }

    fn a2a_view_of(
        &mut self,
        task: A2aTask,
        history: Option<usize>,
        artifacts: bool,
    ) -> Result<A2aView, Error> {
        let limit = history.map_or(i64::MAX, |n| n.min(i64::MAX as usize) as i64);
        let mut messages: Vec<String> = {
            let mut stmt = self
                .conn
                .prepare(
                    "SELECT message FROM a2a_messages WHERE task_id = ?1 \
                     ORDER BY seq DESC LIMIT ?2",
                )
                .map_err(io)?;
            stmt.query_map(params![task.task.id, limit], |r| r.get(0))
                .map_err(io)?
                .collect::<Result<_, _>>()
                .map_err(io)?
        };
        messages.reverse();
        let artifacts = if artifacts {
            self.artifacts(&task.task.id, &task.task.creator)?
        } else {
            Vec::new()
        };
        Ok(A2aView {
            task,
            history: messages,
            artifacts,
        })
    }

    /// Cancels the A2A task `id` of `sender` in the store (a transition to `canceled` by its
    /// creator, with `reason` in its history); [`Canceled::NotCancelable`] when it is terminal
    /// already (completed, failed, rejected or canceled: nothing changes).
    pub fn a2a_cancel(&mut self, id: &str, sender: &str, reason: &str) -> Result<Canceled, Error> {
        let Some(task) = self.a2a_task(id, sender)? else {
            return Ok(Canceled::NoTask);
        };
        match self.transition_task(id, sender, TaskState::Canceled.as_str(), Some(reason)) {
            Ok(_) => {}
            // Terminal meanwhile (a local agent completed it first): not cancelable.
            Err(e) if e.code() == ErrorCode::InvalidTransition => {
                let now = self.a2a_task(id, sender)?.unwrap_or(task);
                return Ok(Canceled::NotCancelable(now));
            }
            Err(e) => return Err(e),
        }
        let now = self.a2a_task(id, sender)?.ok_or_else(|| {
            Error::new(ErrorCode::Internal, "the A2A task just canceled is missing")
        })?;
        Ok(Canceled::Canceled(now))
    }

    /// A page of `sender`'s A2A tasks, newest status first (then id), with the filters of `q`.
    pub fn a2a_list(&mut self, q: &A2aQuery<'_>) -> Result<A2aPage, Error> {
        if !(1..=MAX_A2A_PAGE).contains(&q.limit) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("the page size must be from 1 to {MAX_A2A_PAGE}"),
            ));
        }
        let filters = "FROM tasks t JOIN a2a_tasks a ON a.task_id = t.id WHERE a.sender = ?1 \
                       AND (?2 IS NULL OR a.context_id = ?2) AND (?3 IS NULL OR t.state = ?3) \
                       AND (?4 IS NULL OR t.updated_at >= ?4)";
        let state = q.state.map(|s| s as i64);
        let total: i64 = self
            .conn
            .query_row(
                &format!("SELECT count(*) {filters}"),
                params![q.sender, q.context_id, state, q.updated_after],
                |r| r.get(0),
            )
            .map_err(io)?;
        let (after_at, after_id) = match &q.after {
            Some((at, id)) => (Some(*at), Some(id.as_str())),
            None => (None, None),
        };
        let rows: Vec<(i64, String)> = {
            let mut stmt = self
                .conn
                .prepare(&format!(
                    "SELECT t.updated_at, t.id {filters} AND (?5 IS NULL OR t.updated_at < ?5 \
                     OR (t.updated_at = ?5 AND t.id < ?6)) \
                     ORDER BY t.updated_at DESC, t.id DESC LIMIT ?7"
                ))
                .map_err(io)?;
            stmt.query_map(
                params![
                    q.sender,
                    q.context_id,
                    state,
                    q.updated_after,
                    after_at,
                    after_id,
                    q.limit as i64 + 1
                ],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(io)?
            .collect::<Result<_, _>>()
            .map_err(io)?
        };
        let next = (rows.len() > q.limit).then(|| rows[q.limit - 1].clone());
        let mut tasks = Vec::new();
        for (_, id) in rows.into_iter().take(q.limit) {
            if let Some(task) = self.a2a_task(&id, q.sender)? {
                tasks.push(self.a2a_view_of(task, q.history, q.artifacts)?);
            }
        }
        Ok(A2aPage { tasks, next, total })
    }

    /// A value that changes whenever the store changes, through this connection or another
    /// process's: SQLite's `data_version` and this connection's change count. A service waiting
    /// for local agents polls it instead of its tasks.
    pub fn change_marker(&self) -> Result<(i64, u64), Error> {
        let version: i64 = self
            .conn
            .pragma_query_value(None, "data_version", |r| r.get(0))
            .map_err(io)?;
        Ok((version, self.conn.total_changes()))
    }
}

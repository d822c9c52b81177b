//! The asks of `agent-intercom serve --broker` (schema step 8): each A2A task the gateway
//! forwards to a live session becomes one ask at the broker, recorded here in the same
//! transaction that creates the task ([`Store::a2a_receive`] with [`A2aInbound::gateway`]), so a
//! task is never stored without the ask that will carry it. The ask's message id is the task's
//! id behind [`ASK_ID_PREFIX`]; a reply names it (`replyTo`) and so finds its task after any
//! restart. The row says how far the ask got ([`AskState`]); the task's state says what the A2A
//! client sees.
//!
//! [`A2aInbound::gateway`]: crate::A2aInbound::gateway

use agent_intercom_core::scratchpad::TaskState;
use agent_intercom_core::{Error, ErrorCode};
use rusqlite::{OptionalExtension, Transaction, params};

use crate::tasks::transition_in;
use crate::{Store, io, state_of};

/// The message id of the ask of task `T` is `a2a-task-T`.
pub const ASK_ID_PREFIX: &str = "a2a-task-";

/// How far an ask got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AskState {
    /// Stored with its task; not yet accepted by the broker (or not known to be).
    Pending,
    /// The broker holds it in its offline queue for the target, which is away.
    Queued,
    /// The target acknowledged it: the task is working, the gateway waits for the reply.
    Delivered,
    /// Done with: answered, failed, or (task cancelled) cancelled at the broker.
    Closed,
}

impl AskState {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            AskState::Pending => "pending",
            AskState::Queued => "queued",
            AskState::Delivered => "delivered",
            AskState::Closed => "closed",
        }
    }

    fn parse(text: &str) -> AskState {
        match text {
            "pending" => AskState::Pending,
            "queued" => AskState::Queued,
            "delivered" => AskState::Delivered,
            _ => AskState::Closed,
        }
    }
}

/// One ask of the gateway and its task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatewayAsk {
    /// The A2A task.
    pub task_id: String,
    /// The ask's message id at the broker.
    pub ask_id: String,
    /// Whom it asks (a session name or id, as the broker resolves it).
    pub target: String,
    /// The ask's `content` (`{text, attachments?}`) as JSON text.
    pub content: String,
    /// How far it got.
    pub state: AskState,
    /// The task's state ("submitted", "working", "canceled", ...).
    pub task_state: String,
}

impl GatewayAsk {
    /// Whether its task is in a terminal state.
    pub fn task_done(&self) -> bool {
        TaskState::parse(&self.task_state, "state").is_ok_and(TaskState::is_terminal)
    }
}

/// How an ask ends its task ([`Store::a2a_ask_finish`]).
#[derive(Clone, Debug)]
pub struct GatewayReply<'a> {
    /// Who makes the change (the gateway, the tasks' assignee).
    pub by: &'a str,
    /// `completed` (answered), `failed` (given up after delivery) or `rejected` (never
    /// delivered); a task still submitted goes through `working` to `completed` or `failed`.
    pub to: TaskState,
    /// The reason in the task's history (the client sees it as the status message).
    pub reason: &'a str,
    /// Artifacts attached first (name, content): the reply's text and attachments.
    pub artifacts: &'a [(String, String)],
}

const COLUMNS: &str = "a.task_id, a.ask_id, a.target, a.content, a.state, t.state";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<GatewayAsk> {
    Ok(GatewayAsk {
        task_id: r.get(0)?,
        ask_id: r.get(1)?,
        target: r.get(2)?,
        content: r.get(3)?,
        state: AskState::parse(&r.get::<_, String>(4)?),
        task_state: state_of(r.get(5)?).as_str().to_string(),
    })
}

/// Records the ask of a task just created, in its transaction.
pub(crate) fn insert_ask(
    tx: &Transaction<'_>,
    task_id: &str,
    target: &str,
    content: &str,
    now: i64,
) -> Result<(), Error> {
    tx.execute(
        "INSERT INTO a2a_asks (task_id, ask_id, target, content, state, updated_at) \
         VALUES (?1, ?2, ?3, ?4, 'pending', ?5)",
        params![
            task_id,
            format!("{ASK_ID_PREFIX}{task_id}"),
            target,
            content,
            now
        ],
    )
    .map_err(io)?;
    Ok(())
}

fn set_state(tx: &Transaction<'_>, ask_id: &str, state: AskState, now: i64) -> Result<(), Error> {
    tx.execute(
        "UPDATE a2a_asks SET state = ?2, updated_at = ?3 WHERE ask_id = ?1",
        params![ask_id, state.as_str(), now],
    )
    .map_err(io)?;
    Ok(())
}

fn ask_in(conn: &rusqlite::Connection, ask_id: &str) -> Result<Option<GatewayAsk>, Error> {
    conn.query_row(
        &format!(
            "SELECT {COLUMNS} FROM a2a_asks a JOIN tasks t ON t.id = a.task_id WHERE a.ask_id = ?1"
        ),
        [ask_id],
        row,
    )
    .optional()
    .map_err(io)
}

impl Store {
    /// The asks not closed yet, oldest first (those whose task has ended are among them until
    /// the gateway closes them: a cancelled task's ask is cancelled at the broker first).
    pub fn a2a_asks_open(&mut self) -> Result<Vec<GatewayAsk>, Error> {
        let mut statement = self
            .conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM a2a_asks a JOIN tasks t ON t.id = a.task_id \
                 WHERE a.state != 'closed' ORDER BY a.updated_at, a.task_id"
            ))
            .map_err(io)?;
        let rows = statement.query_map([], row).map_err(io)?;
        rows.collect::<Result<_, _>>().map_err(io)
    }

    /// The ask `ask_id` (a reply's `replyTo`), if it is one of the gateway's.
    pub fn a2a_ask(&mut self, ask_id: &str) -> Result<Option<GatewayAsk>, Error> {
        ask_in(&self.conn, ask_id)
    }

    /// The broker queued the ask for its target, which is away: `pending` becomes `queued`.
    pub fn a2a_ask_queued(&mut self, ask_id: &str) -> Result<bool, Error> {
        let now = self.clock.now_ms();
        let tx = self.write()?;
        let Some(ask) = ask_in(&tx, ask_id)? else {
            return Ok(false);
        };
        if ask.state != AskState::Pending {
            return Ok(false);
        }
        set_state(&tx, ask_id, AskState::Queued, now)?;
        tx.commit().map_err(io)?;
        Ok(true)
    }

    /// The target acknowledged the ask: the task becomes `working` (by `by`, with `reason`), in
    /// the same transaction. False when it was delivered, closed or its task ended before.
    pub fn a2a_ask_delivered(
        &mut self,
        ask_id: &str,
        by: &str,
        reason: &str,
    ) -> Result<bool, Error> {
        let now = self.clock.now_ms();
        let tx = self.write()?;
        let Some(ask) = ask_in(&tx, ask_id)? else {
            return Ok(false);
        };
        if !matches!(ask.state, AskState::Pending | AskState::Queued) || ask.task_done() {
            return Ok(false);
        }
        set_state(&tx, ask_id, AskState::Delivered, now)?;
        if ask.task_state == TaskState::Submitted.as_str() {
            transition_in(&tx, &ask.task_id, by, TaskState::Working, Some(reason), now)?;
        }
        tx.commit().map_err(io)?;
        Ok(true)
    }

    /// Ends the ask's task as `reply` says, its artifacts attached first, and closes the ask,
    /// in one transaction. False (nothing changed but the ask closed) when the task had ended
    /// already: a reply to a cancelled task is not taken. An artifact larger than the store's
    /// content limit is `CONTENT_TOO_LARGE`, and nothing changes.
    pub fn a2a_ask_finish(
        &mut self,
        ask_id: &str,
        reply: &GatewayReply<'_>,
    ) -> Result<bool, Error> {
        for (name, content) in reply.artifacts {
            if content.len() > self.config.max_content_bytes {
                return Err(Error::new(
                    ErrorCode::ContentTooLarge,
                    format!(
                        "{name:?} is {} bytes, more than the {} an artifact may hold",
                        content.len(),
                        self.config.max_content_bytes
                    ),
                ));
            }
        }
        let now = self.clock.now_ms();
        let tx = self.write()?;
        let Some(ask) = ask_in(&tx, ask_id)? else {
            return Ok(false);
        };
        set_state(&tx, ask_id, AskState::Closed, now)?;
        if ask.task_done() {
            tx.commit().map_err(io)?;
            return Ok(false);
        }
        let submitted = ask.task_state == TaskState::Submitted.as_str();
        if submitted && reply.to != TaskState::Rejected {
            transition_in(
                &tx,
                &ask.task_id,
                reply.by,
                TaskState::Working,
                Some("delivered"),
                now,
            )?;
        }
        for (name, content) in reply.artifacts {
            tx.execute(
                "INSERT INTO task_artifacts (task_id, seq, by_agent, name, content, at) \
                 VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM task_artifacts \
                 WHERE task_id = ?1), ?2, ?3, ?4, ?5)",
                params![ask.task_id, reply.by, name, content, now],
            )
            .map_err(io)?;
        }
        let to = if !submitted && reply.to == TaskState::Rejected {
            TaskState::Failed
        } else {
            reply.to
        };
        transition_in(&tx, &ask.task_id, reply.by, to, Some(reply.reason), now)?;
        tx.commit().map_err(io)?;
        Ok(true)
    }

    /// Closes the ask (its task ended otherwise, and the broker was told).
    pub fn a2a_ask_close(&mut self, ask_id: &str) -> Result<(), Error> {
        let now = self.clock.now_ms();
        let tx = self.write()?;
        set_state(&tx, ask_id, AskState::Closed, now)?;
        tx.commit().map_err(io)
    }
}

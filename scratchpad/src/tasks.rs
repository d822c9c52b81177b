//! Tasks: creation, the state table, history and artifacts, for their participants.

use agent_intercom_core::scratchpad::{self, TaskState, TaskView};
use agent_intercom_core::{Error, ErrorCode};
use rusqlite::{OptionalExtension, Transaction, params};

use crate::events::emit;
use crate::{Store, io, root_key, root_value, state_of};

/// A task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// UUIDv7.
    pub id: String,
    /// Who created it (the only one who may cancel it).
    pub creator: String,
    /// Who works on it.
    pub assignee: Option<String>,
    /// What it is.
    pub title: String,
    /// State name.
    pub state: String,
    /// Project root.
    pub project_root: Option<String>,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// Milliseconds since the epoch.
    pub updated_at: i64,
}

impl Task {
    fn view(&self) -> TaskView<'_> {
        TaskView {
            creator: &self.creator,
            assignee: self.assignee.as_deref(),
        }
    }
}

/// One recorded state change of a task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    /// The previous state (None for creation).
    pub from: Option<String>,
    /// The new state.
    pub to: String,
    /// Who changed it.
    pub by: String,
    /// Why.
    pub reason: Option<String>,
    /// Milliseconds since the epoch.
    pub at: i64,
}

/// A task artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Artifact {
    /// Who attached it.
    pub by: String,
    /// Its name.
    pub name: String,
    /// Its content.
    pub content: String,
    /// Milliseconds since the epoch.
    pub at: i64,
}

impl Store {
    /// Creates a task in `submitted`, with its first history entry.
    pub fn create_task(
        &mut self,
        creator: &str,
        assignee: Option<&str>,
        title: &str,
        project_root: Option<&str>,
    ) -> Result<Task, Error> {
        if creator.is_empty() || title.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "creator and title must be non-empty",
            ));
        }
        let now = self.clock.now_ms();
        let tx = self.write()?;
        let id = insert_task(&tx, creator, assignee, title, project_root, now)?;
        tx.commit().map_err(io)?;
        self.task_row(&id)
    }

    /// A task by id, for `agent`: only its participants may read it (`FORBIDDEN`; see
    /// `agent_intercom_core::scratchpad::check_task_read`); `NOT_FOUND` when there is none.
    pub fn task(&mut self, id: &str, agent: &str) -> Result<Task, Error> {
        let task = self.task_row(id)?;
        scratchpad::check_task_read(&task.view(), agent)?;
        Ok(task)
    }

    pub(crate) fn task_row(&self, id: &str) -> Result<Task, Error> {
        self.conn
            .query_row(
                "SELECT id, creator, assignee, title, state, project_root, created_at, updated_at \
                 FROM tasks WHERE id = ?1",
                [id],
                |r| {
                    Ok(Task {
                        id: r.get(0)?,
                        creator: r.get(1)?,
                        assignee: r.get(2)?,
                        title: r.get(3)?,
                        state: state_of(r.get(4)?).as_str().to_string(),
                        project_root: root_value(r.get(5)?),
                        created_at: r.get(6)?,
                        updated_at: r.get(7)?,
                    })
                },
            )
            .optional()
            .map_err(io)?
            .ok_or_else(|| Error::new(ErrorCode::NotFound, "no such task"))
    }

    /// Moves a task to `to` ("working", "completed" ...). Only its creator and assignee may; only
    /// the creator may cancel; the transition table decides the rest (terminal states are never
    /// left). The change and its reason are recorded in the history, atomically.
    pub fn transition_task(
        &mut self,
        id: &str,
        by: &str,
        to: &str,
        reason: Option<&str>,
    ) -> Result<Task, Error> {
        let to = TaskState::parse(to, "state")?;
        let now = self.clock.now_ms();
        let tx = self.write()?;
        transition_in(&tx, id, by, to, reason, now)?;
        tx.commit().map_err(io)?;
        self.task_row(id)
    }

    /// The task's transitions, oldest first (creation included), for `agent`: participants only,
    /// as [`Store::task`].
    pub fn task_history(&mut self, id: &str, agent: &str) -> Result<Vec<Transition>, Error> {
        self.task(id, agent)?;
        transitions_after(&self.conn, id, 0)
    }

    /// Attaches an artifact to a task (participants only).
    pub fn add_artifact(
        &mut self,
        id: &str,
        by: &str,
        name: &str,
        content: &str,
    ) -> Result<(), Error> {
        let task = self.task_row(id)?;
        if !scratchpad::is_participant(&task.view(), by) {
            return Err(Error::new(
                ErrorCode::Forbidden,
                "only the task's creator and assignee may attach artifacts",
            ));
        }
        if content.len() > self.config.max_content_bytes {
            return Err(Error::new(
                ErrorCode::ContentTooLarge,
                format!(
                    "artifact is larger than {} bytes",
                    self.config.max_content_bytes
                ),
            ));
        }
        let now = self.clock.now_ms();
        let tx = self.write()?;
        let seq: i64 = tx
            .query_row(
                "SELECT coalesce(max(seq), 0) + 1 FROM task_artifacts WHERE task_id = ?1",
                [id],
                |r| r.get(0),
            )
            .map_err(io)?;
        tx.execute(
            "INSERT INTO task_artifacts (task_id, seq, by_agent, name, content, at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![id, seq, by, name, content, now],
        )
        .map_err(io)?;
        tx.commit().map_err(io)
    }

    /// The task's artifacts, oldest first, for `agent`: participants only, as [`Store::task`].
    pub fn artifacts(&mut self, id: &str, agent: &str) -> Result<Vec<Artifact>, Error> {
        self.task(id, agent)?;
        artifacts_after(&self.conn, id, 0)
    }
}

/// The transitions of task `id` after its first `after` (creation is the first), oldest first.
pub(crate) fn transitions_after(
    conn: &rusqlite::Connection,
    id: &str,
    after: i64,
) -> Result<Vec<Transition>, Error> {
    let mut stmt = conn
        .prepare(
            "SELECT from_state, to_state, by_agent, reason, at FROM task_history \
             WHERE task_id = ?1 AND seq > ?2 ORDER BY seq",
        )
        .map_err(io)?;
    let rows = stmt
        .query_map(params![id, after], |r| {
            Ok(Transition {
                from: r
                    .get::<_, Option<i64>>(0)?
                    .map(|s| state_of(s).as_str().to_string()),
                to: state_of(r.get(1)?).as_str().to_string(),
                by: r.get(2)?,
                reason: r.get(3)?,
                at: r.get(4)?,
            })
        })
        .map_err(io)?;
    rows.collect::<Result<_, _>>().map_err(io)
}

/// The artifacts of task `id` after its first `after`, oldest first.
pub(crate) fn artifacts_after(
    conn: &rusqlite::Connection,
    id: &str,
    after: i64,
) -> Result<Vec<Artifact>, Error> {
    let mut stmt = conn
        .prepare(
            "SELECT by_agent, name, content, at FROM task_artifacts \
             WHERE task_id = ?1 AND seq > ?2 ORDER BY seq",
        )
        .map_err(io)?;
    let rows = stmt
        .query_map(params![id, after], |r| {
            Ok(Artifact {
                by: r.get(0)?,
                name: r.get(1)?,
                content: r.get(2)?,
                at: r.get(3)?,
            })
        })
        .map_err(io)?;
    rows.collect::<Result<_, _>>().map_err(io)
}

/// Inserts a task in `submitted` with its first history entry and its `task.created` event, in
/// an open write transaction (the caller commits); its new id.
pub(crate) fn insert_task(
    tx: &Transaction<'_>,
    creator: &str,
    assignee: Option<&str>,
    title: &str,
    project_root: Option<&str>,
    now: i64,
) -> Result<String, Error> {
    let id = uuid::Uuid::now_v7().to_string();
    tx.execute(
        "INSERT INTO tasks (id, creator, assignee, title, state, project_root, created_at, \
         updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
        params![
            id,
            creator,
            assignee,
            title,
            TaskState::Submitted as i64,
            root_key(project_root),
            now
        ],
    )
    .map_err(io)?;
    tx.execute(
        "INSERT INTO task_history (task_id, seq, from_state, to_state, by_agent, reason, at) \
         VALUES (?1, 1, NULL, ?2, ?3, 'created', ?4)",
        params![id, TaskState::Submitted as i64, creator, now],
    )
    .map_err(io)?;
    emit(
        tx,
        "task.created",
        creator,
        assignee,
        root_key(project_root),
        &id,
        now,
    )?;
    Ok(id)
}

/// Moves task `id` to `to` in an open write transaction (the caller commits): the rules of
/// [`Store::transition_task`], its history entry and its `task.transition` event.
pub(crate) fn transition_in(
    tx: &Transaction<'_>,
    id: &str,
    by: &str,
    to: TaskState,
    reason: Option<&str>,
    now: i64,
) -> Result<(), Error> {
    let row: Option<(String, Option<String>, i64)> = tx
        .query_row(
            "SELECT creator, assignee, state FROM tasks WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()
        .map_err(io)?;
    let Some((creator, assignee, state)) = row else {
        return Err(Error::new(ErrorCode::NotFound, "no such task"));
    };
    let task = TaskView {
        creator: &creator,
        assignee: assignee.as_deref(),
    };
    if !scratchpad::is_participant(&task, by) {
        return Err(Error::new(
            ErrorCode::Forbidden,
            "only the task's creator and assignee may update it",
        ));
    }
    if to == TaskState::Canceled && by != creator {
        return Err(Error::new(
            ErrorCode::Forbidden,
            "only the task's creator may cancel it",
        ));
    }
    let from = state_of(state);
    scratchpad::check_transition(from, to)?;
    let seq: i64 = tx
        .query_row(
            "SELECT coalesce(max(seq), 0) + 1 FROM task_history WHERE task_id = ?1",
            [id],
            |r| r.get(0),
        )
        .map_err(io)?;
    tx.execute(
        "UPDATE tasks SET state = ?2, updated_at = ?3 WHERE id = ?1",
        params![id, to as i64, now],
    )
    .map_err(io)?;
    tx.execute(
        "INSERT INTO task_history (task_id, seq, from_state, to_state, by_agent, reason, at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![id, seq, from as i64, to as i64, by, reason, now],
    )
    .map_err(io)?;
    let other = if by == creator {
        assignee.as_deref()
    } else {
        Some(creator.as_str())
    };
    let root: String = tx
        .query_row("SELECT project_root FROM tasks WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .map_err(io)?;
    emit(tx, "task.transition", by, other, &root, id, now)?;
    Ok(())
}

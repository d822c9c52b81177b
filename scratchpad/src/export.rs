//! The `a2a-snapshot-v1` export, redacted unless a full one is allowed and asked for.

use std::path::Path;

use agent_intercom_core::canonical::Value;
use agent_intercom_core::scratchpad::{self, TaskView};
use agent_intercom_core::{Error, ErrorCode};
use rusqlite::params;

use crate::{Store, check_limit, io, root_key, state_of};

/// The export format's name.
pub const SNAPSHOT_SCHEMA: &str = "a2a-snapshot-v1";
/// Most items of each kind an export holds.
pub const MAX_EXPORT_ITEMS: usize = 1000;

/// What one export covers, and how its text is shown.
struct Scope<'a> {
    agent: &'a str,
    project_root: Option<&'a str>,
    limit: usize,
    full: bool,
}

impl Scope<'_> {
    /// Text as the export shows it: as stored in a full export, redacted otherwise.
    fn clean(&self, text: &str) -> String {
        if self.full {
            text.to_string()
        } else {
            scratchpad::redact(text, self.project_root)
        }
    }
}

fn s(v: &str) -> Value<'static> {
    Value::String(v.to_string().into())
}

fn opt(v: Option<&str>) -> Value<'static> {
    v.map_or(Value::Null, s)
}

fn obj(pairs: Vec<(&str, Value<'static>)>) -> Value<'static> {
    Value::Object(
        pairs
            .into_iter()
            .map(|(k, v)| (k.to_string().into(), v))
            .collect(),
    )
}

impl Store {
    /// An `a2a-snapshot-v1` export for `agent`: the newest `limit` (1..=1000) agents, visible
    /// messages and tasks it takes part in (or of its project), each list sorted newest first
    /// then by id, as canonical JSON. Redacted unless `full` is asked and the store's
    /// configuration allows it (`FORBIDDEN` otherwise).
    pub fn export(
        &mut self,
        agent: &str,
        project_root: Option<&str>,
        limit: usize,
        full: bool,
    ) -> Result<String, Error> {
        check_limit(limit, MAX_EXPORT_ITEMS)?;
        if full && !self.config.allow_full_export {
            return Err(Error::new(
                ErrorCode::Forbidden,
                "full exports are not allowed by this store's configuration",
            ));
        }
        let now = self.clock.now_ms();
        let scope = Scope {
            agent,
            project_root,
            limit,
            full,
        };
        let messages = self.export_messages(&scope)?;
        let agents = self.export_agents(&scope)?;
        let tasks = self.export_tasks(&scope)?;
        let snapshot = obj(vec![
            ("schema", s(SNAPSHOT_SCHEMA)),
            ("schema_version", Value::Int(1)),
            ("generated_at", Value::Int(now)),
            ("agent", s(agent)),
            (
                "project_root",
                if full {
                    opt(project_root)
                } else {
                    opt(project_root.map(|_| "."))
                },
            ),
            ("redacted", Value::Bool(!full)),
            ("limit", Value::Int(limit as i64)),
            ("agents", Value::Array(agents)),
            ("messages", Value::Array(messages)),
            ("tasks", Value::Array(tasks)),
        ]);
        agent_intercom_core::canonical::canonical_json(&snapshot)
    }

    /// Messages: everything visible, newest first.
    fn export_messages(&mut self, scope: &Scope<'_>) -> Result<Vec<Value<'static>>, Error> {
        let mut messages = self
            .list(
                scope.agent,
                scope.project_root,
                None,
                None,
                MAX_EXPORT_ITEMS,
                None,
            )?
            .messages;
        messages.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        messages.truncate(scope.limit);
        Ok(messages
            .iter()
            .map(|m| {
                obj(vec![
                    ("id", s(&m.id)),
                    ("from", s(&m.from)),
                    ("to", opt(m.to.as_deref())),
                    ("category", s(&m.category)),
                    ("priority", s(&m.priority)),
                    ("privacy", s(&m.privacy)),
                    ("content", s(&scope.clean(&m.content))),
                    (
                        "metadata",
                        m.metadata
                            .as_deref()
                            .map_or(Value::Null, |md| s(&scope.clean(md))),
                    ),
                    ("task_id", opt(m.task_id.as_deref())),
                    ("created_at", Value::Int(m.created_at)),
                    ("expires_at", Value::Int(m.expires_at)),
                ])
            })
            .collect())
    }

    /// Agents of the project (of every project without one), newest registration first.
    fn export_agents(&self, scope: &Scope<'_>) -> Result<Vec<Value<'static>>, Error> {
        let root = root_key(scope.project_root);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT agent_id, team_id, registered_at FROM agents \
                 WHERE (?1 = 0 OR project_root = ?2) \
                 ORDER BY registered_at DESC, agent_id DESC LIMIT ?3",
            )
            .map_err(io)?;
        let rows = stmt
            .query_map(
                params![
                    scope.project_root.is_some() as i64,
                    root,
                    scope.limit as i64
                ],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, Option<String>>(1)?,
                        r.get::<_, i64>(2)?,
                    ))
                },
            )
            .map_err(io)?;
        Ok(rows
            .collect::<Result<Vec<_>, _>>()
            .map_err(io)?
            .into_iter()
            .map(|(id, team, at)| {
                obj(vec![
                    ("agent_id", s(&id)),
                    ("team_id", opt(team.as_deref())),
                    ("registered_at", Value::Int(at)),
                ])
            })
            .collect())
    }

    /// Tasks the agent takes part in, of the project (of every project without one), newest
    /// first.
    fn export_tasks(&self, scope: &Scope<'_>) -> Result<Vec<Value<'static>>, Error> {
        let (agent, root) = (scope.agent, root_key(scope.project_root));
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, creator, assignee, title, state, created_at, updated_at FROM tasks
                     WHERE (creator = ?1 OR assignee = ?1) AND (?2 = 0 OR project_root = ?3)
                     ORDER BY created_at DESC, id DESC LIMIT ?4",
            )
            .map_err(io)?;
        let rows = stmt
            .query_map(
                params![
                    agent,
                    scope.project_root.is_some() as i64,
                    root,
                    scope.limit as i64
                ],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, Option<String>>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, i64>(4)?,
                        r.get::<_, i64>(5)?,
                        r.get::<_, i64>(6)?,
                    ))
                },
            )
            .map_err(io)?;
        // The query selects the participants' tasks; the read rule is still the judge.
        Ok(rows
            .collect::<Result<Vec<_>, _>>()
            .map_err(io)?
            .into_iter()
            .filter(|(_, creator, assignee, ..)| {
                let task = TaskView {
                    creator,
                    assignee: assignee.as_deref(),
                };
                scratchpad::check_task_read(&task, agent).is_ok()
            })
            .map(|(id, creator, assignee, title, state, created, updated)| {
                obj(vec![
                    ("id", s(&id)),
                    ("creator", s(&creator)),
                    ("assignee", opt(assignee.as_deref())),
                    ("title", s(&scope.clean(&title))),
                    ("state", s(state_of(state).as_str())),
                    ("created_at", Value::Int(created)),
                    ("updated_at", Value::Int(updated)),
                ])
            })
            .collect())
    }

    /// Writes [`Store::export`] to `path` atomically: a new temporary file in the same directory
    /// (a fresh name, opened with O_CREAT|O_EXCL, which never follows a symbolic link; mode
    /// 0600), synced, then renamed over `path` (a symbolic link at `path` is replaced, never
    /// written through).
    pub fn export_to_file(
        &mut self,
        path: &Path,
        agent: &str,
        project_root: Option<&str>,
        limit: usize,
        full: bool,
    ) -> Result<(), Error> {
        use std::io::Write;
        let Some(base) = path.file_name().and_then(|n| n.to_str()) else {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "path {:?} names no file to write the export to",
                    path.display().to_string()
                ),
            ));
        };
        let json = self.export(agent, project_root, limit, full)?;
        let fail = |e: std::io::Error| {
            Error::new(
                ErrorCode::StoreIo,
                format!("cannot write the export to {}: {e}", path.display()),
            )
        };
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut attempt = 0;
        let (tmp, mut file) = loop {
            let tmp = dir.join(format!(
                ".{base}.tmp-{}-{}",
                std::process::id(),
                uuid::Uuid::now_v7().simple()
            ));
            let mut create = std::fs::OpenOptions::new();
            create.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut create, 0o600);
            match create.open(&tmp) {
                Ok(file) => break (tmp, file),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 8 => {
                    attempt += 1;
                }
                Err(e) => return Err(fail(e)),
            }
        };
        let result = (|| {
            file.write_all(json.as_bytes())?;
            file.write_all(b"\n")?;
            file.sync_all()?;
            std::fs::rename(&tmp, path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result.map_err(fail)
    }
}

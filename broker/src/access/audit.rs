//! `broker-audit.jsonl`: one JSON line per access decision, appended and fsynced, file 0600.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::json::ObjectWriter;
use super::{AUDIT_FILE_NAME, files};

/// The `version` of every audit line.
pub const AUDIT_VERSION: i64 = 1;

/// The events the Pi broker records (`BrokerAuditEvent`); [`AuditLog::record`] refuses others.
pub const AUDIT_EVENTS: [&str; 14] = [
    "enrollment_issued",
    "enrollment_consumed",
    "remote_connect",
    "remote_reconnect",
    "remote_disconnect",
    "remote_registration_denied",
    "remote_delivery_denied",
    "credential_reuse_denied",
    "remote_visibility_filtered",
    "tree_inspected",
    "principal_revoked",
    "principal_expired",
    "principal_adopted",
    "generation_fenced",
];

/// The outcomes an audit line may have.
pub const AUDIT_OUTCOMES: [&str; 3] = ["allowed", "denied", "observed"];

/// One audit line. Absent fields are left out of the line. Never put a secret or a scope here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AuditEntry<'a> {
    /// One of [`AUDIT_EVENTS`].
    pub event: &'a str,
    /// One of [`AUDIT_OUTCOMES`].
    pub outcome: &'a str,
    /// Who acted.
    pub actor_id: Option<&'a str>,
    /// Whom or what it concerned.
    pub target_id: Option<&'a str>,
    /// The actor's remote host.
    pub remote_host_id: Option<&'a str>,
    /// The actor's generation.
    pub generation: Option<u64>,
    /// A short code or note.
    pub reason: Option<&'a str>,
    /// Sessions shown (list, inspect).
    pub visible_count: Option<usize>,
    /// Sessions hidden (list).
    pub hidden_count: Option<usize>,
}

impl AuditEntry<'_> {
    /// The line, without its newline: `{"version":1,"timestamp":…,"event":…,"outcome":…}` then
    /// the present fields in the order actorId, targetId, remoteHostId, generation, reason,
    /// visibleCount, hiddenCount.
    pub fn to_line(&self, now_ms: i64) -> String {
        let mut out = String::new();
        let mut w = ObjectWriter::new(&mut out);
        w.integer("version", AUDIT_VERSION);
        w.integer("timestamp", now_ms);
        w.string("event", self.event);
        w.string("outcome", self.outcome);
        let texts = [
            ("actorId", self.actor_id),
            ("targetId", self.target_id),
            ("remoteHostId", self.remote_host_id),
        ];
        for (key, value) in texts {
            if let Some(value) = value {
                w.string(key, value);
            }
        }
        if let Some(generation) = self.generation {
            w.integer("generation", generation as i64);
        }
        if let Some(reason) = self.reason {
            w.string("reason", reason);
        }
        if let Some(n) = self.visible_count {
            w.integer("visibleCount", n as i64);
        }
        if let Some(n) = self.hidden_count {
            w.integer("hiddenCount", n as i64);
        }
        w.finish();
        out
    }
}

/// The audit log of one intercom directory.
#[derive(Clone, Debug)]
pub struct AuditLog {
    path: PathBuf,
}

impl AuditLog {
    /// The log at `<intercom_dir>/broker-audit.jsonl` (created at the first record).
    pub fn open(intercom_dir: &Path) -> AuditLog {
        AuditLog {
            path: intercom_dir.join(AUDIT_FILE_NAME),
        }
    }

    /// The log file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one line and fsyncs it; the file is created 0600 and kept 0600. A symlink or a
    /// non-file at the path is refused, never followed; an event or outcome outside the known sets
    /// is refused (`InvalidInput`) without writing.
    pub fn record(&self, e: &AuditEntry, now_ms: i64) -> io::Result<()> {
        if !AUDIT_EVENTS.contains(&e.event) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("unknown audit event {:?}", e.event),
            ));
        }
        if !AUDIT_OUTCOMES.contains(&e.outcome) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("unknown audit outcome {:?}", e.outcome),
            ));
        }
        let mut line = e.to_line(now_ms);
        line.push('\n');
        let opened = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(files::RUNTIME_FILE_MODE)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
            .open(&self.path);
        let mut file = match opened {
            Ok(file) => file,
            Err(err) if err.raw_os_error() == Some(libc::ELOOP) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{} is a symbolic link; refusing to follow it",
                        self.path.display()
                    ),
                ));
            }
            Err(err) => {
                return Err(io::Error::new(
                    err.kind(),
                    format!("cannot open {}: {err}", self.path.display()),
                ));
            }
        };
        if !file.metadata()?.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a regular file", self.path.display()),
            ));
        }
        // One write of the whole line: with O_APPEND it lands after whatever is there.
        file.write_all(line.as_bytes())?;
        file.sync_all()?;
        files::restrict(&file)
    }
}

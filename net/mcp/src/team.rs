//! `intercom_team`: the team of the tmuxdeck manifest `AGENT_INTERCOM_TEAM_MANIFEST` names, read
//! with the rules of `readTeamManifest` (docs/team-manifest.md; the rules are the core's
//! `team` module, this is only the I/O): the parent a 0700 directory of this user, the file a
//! 0600 regular file of this user of at most 64 KiB, opened without following a link and checked
//! to be the file that was inspected.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};

use agent_intercom_core::contract::{Failure, Js};
use agent_intercom_core::team::{self, Manifest, Stat};

/// The variable naming the manifest.
pub const MANIFEST_ENV: &str = "AGENT_INTERCOM_TEAM_MANIFEST";

fn stat_of(meta: &std::fs::Metadata) -> Stat {
    Stat {
        directory: meta.is_dir(),
        file: meta.is_file(),
        symlink: meta.file_type().is_symlink(),
        mode: u64::from(meta.mode()),
        uid: u64::from(meta.uid()),
        size: meta.size(),
        dev: meta.dev(),
        ino: meta.ino(),
    }
}

fn unavailable() -> Failure {
    team::refusal(team::UNAVAILABLE)
}

/// The manifest at `raw` (the variable's text), `None` when it is blank. Refusals are the
/// core's `ERR_TEAM_MANIFEST_INVALID` and `ERR_TEAM_MANIFEST_UNAVAILABLE`.
pub fn read(raw: &str) -> Result<Option<Manifest>, Failure> {
    let Some(path) = team::resolve_path(&Js::str(raw))? else {
        return Ok(None);
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = Some(u64::from(unsafe { libc::geteuid() }));
    let parent = std::fs::symlink_metadata(&path.parent).map_err(|_| unavailable())?;
    let parent = stat_of(&parent);
    team::check_directory(&parent, uid, None)?;
    let linked = std::fs::symlink_metadata(&path.path).map_err(|_| unavailable())?;
    let linked = stat_of(&linked);
    team::check_file(&linked, uid, None)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&path.path)
        .map_err(|_| unavailable())?;
    let opened = stat_of(&file.metadata().map_err(|_| unavailable())?);
    team::check_file(&opened, uid, Some(&linked))?;
    let again = std::fs::symlink_metadata(&path.parent).map_err(|_| unavailable())?;
    team::check_directory(&stat_of(&again), uid, Some(&parent))?;
    let mut bytes = Vec::new();
    file.take(team::MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| unavailable())?;
    team::check_length(bytes.len() as u64)?;
    let text = String::from_utf8_lossy(&bytes);
    team::parse(&Js::str(text)).map(Some)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    const LEAD: &str = "tmuxdeck-0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d";
    const WORKER: &str = "tmuxdeck-1b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d";

    fn manifest_dir(name: &str, mode: u32) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("aic-team-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
        dir
    }

    fn write(path: &std::path::Path, text: &str, mode: u32) {
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn manifest() -> String {
        format!(
            r#"{{"version":"tmuxdeck.team.v1","backend":"tmuxdeck",
            "runId":"team_2b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d","leadId":"{LEAD}",
            "members":[{{"sessionId":"{LEAD}","role":"lead"}},
                       {{"sessionId":"{WORKER}","role":"worker"}}],
            "createdAt":1,"capabilities":[]}}"#
        )
    }

    #[test]
    fn a_private_manifest_is_read_and_anything_else_is_refused_with_the_core_codes() {
        let dir = manifest_dir("ok", 0o700);
        let file = dir.join("team.json");
        write(&file, &manifest(), 0o600);
        let read_back = read(&format!("  {}  ", file.display())).unwrap().unwrap();
        assert_eq!(read_back.lead_id, LEAD);
        assert_eq!(read_back.members.len(), 2);
        assert_eq!(read("   ").unwrap(), None);
        let code = |raw: &str| read(raw).err().unwrap().code.unwrap();
        assert_eq!(code("relative/team.json"), team::INVALID);
        // Readable by others: unavailable, never read.
        write(&file, &manifest(), 0o644);
        assert_eq!(code(&file.display().to_string()), team::UNAVAILABLE);
        write(&file, "{}", 0o600);
        assert_eq!(code(&file.display().to_string()), team::INVALID);
        let link = dir.join("link.json");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(code(&link.display().to_string()), team::UNAVAILABLE);
        let open = manifest_dir("open", 0o755);
        write(&open.join("team.json"), &manifest(), 0o600);
        assert_eq!(
            code(&open.join("team.json").display().to_string()),
            team::UNAVAILABLE
        );
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&open).unwrap();
    }
}

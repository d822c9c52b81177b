//! The broker's private files: read without following a planted symlink, replaced durably.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Mode of every runtime file the broker writes (Pi's `INTERCOM_RUNTIME_FILE_MODE`).
pub const RUNTIME_FILE_MODE: u32 = 0o600;

/// The access file is small (hashes and a few hundred principals); anything far larger is not
/// one, and reading it whole would only cost memory.
const MAX_FILE_BYTES: u64 = 64 << 20;

fn with_path(path: &Path, what: &str, e: &io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{what} {}: {e}", path.display()))
}

/// Opens `path` for reading if it is a regular file: `Ok(None)` if nothing is there, an error if
/// it is a symlink (never followed), a directory, a FIFO or anything else.
fn open_regular(path: &Path) -> io::Result<Option<File>> {
    let opened = OpenOptions::new()
        .read(true)
        // O_NONBLOCK keeps a planted FIFO from blocking the open; it is refused just below.
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is a symbolic link; refusing to follow it",
                    path.display()
                ),
            ));
        }
        Err(e) => return Err(with_path(path, "cannot open", &e)),
    };
    let meta = file
        .metadata()
        .map_err(|e| with_path(path, "cannot inspect", &e))?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    Ok(Some(file))
}

/// Reads a regular file as UTF-8 text, `Ok(None)` if it does not exist.
pub(crate) fn read_text(path: &Path) -> io::Result<Option<(String, File)>> {
    let Some(mut file) = open_regular(path)? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| with_path(path, "cannot read", &e))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is larger than {MAX_FILE_BYTES} bytes", path.display()),
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} is not UTF-8 (byte {})",
                path.display(),
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    Ok(Some((text, file)))
}

/// Sets an open file's mode to 0600 (through the descriptor, so no path is followed).
pub(crate) fn restrict(file: &File) -> io::Result<()> {
    file.set_permissions(fs::Permissions::from_mode(RUNTIME_FILE_MODE))
}

/// Removes the temporary file on every early return; disarmed once the rename has taken it.
struct TempFile<'p>(Option<&'p Path>);

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        if let Some(path) = self.0 {
            let _ = fs::remove_file(path);
        }
    }
}

/// Replaces `path` with `bytes` durably, as Pi's `writeDurableJson`: a uniquely named temporary
/// file beside it (created exclusively, 0600), written and fsynced, renamed over the target, then
/// the directory fsynced. A symlink or a non-file at `path` is refused rather than replaced, so
/// a planted link can neither redirect the write nor be silently discarded.
///
/// An error before the rename leaves `path` as it was. An error from the final directory fsync
/// comes after the rename: the new content is in place but may not survive a power cut.
pub(crate) fn write_durable(path: &Path, bytes: &[u8]) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is a symbolic link; refusing to replace it",
                    path.display()
                ),
            ));
        }
        Ok(meta) if !meta.is_file() => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a regular file", path.display()),
            ));
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(with_path(path, "cannot inspect", &e)),
    }
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "a file path is required"))?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let temp_path = dir.join(format!(
        "{}.{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        uuid::Uuid::new_v4()
    ));
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(RUNTIME_FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&temp_path)
        .map_err(|e| with_path(&temp_path, "cannot create", &e))?;
    let mut temp = TempFile(Some(&temp_path));
    file.write_all(bytes)
        .map_err(|e| with_path(&temp_path, "cannot write", &e))?;
    // The umask may have narrowed the creation mode; the file ends up 0600 either way.
    restrict(&file).map_err(|e| with_path(&temp_path, "cannot chmod", &e))?;
    file.sync_all()
        .map_err(|e| with_path(&temp_path, "cannot fsync", &e))?;
    drop(file);
    fs::rename(&temp_path, path).map_err(|e| with_path(path, "cannot replace", &e))?;
    temp.0 = None;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| with_path(dir, "cannot fsync directory", &e))
}

//! What php-fuzz keeps on disk: the corpus directory, crash artifacts and
//! the campaign's statistics file.
//!
//! Every file is written atomically (a temporary file in the same directory,
//! then a rename), so a reader never sees half a file, and several php-fuzz
//! processes can share one corpus directory. The statistics file is the
//! exception: it is appended to, a whole line per write (`stats`).

mod artifacts;
mod corpus_dir;
mod stats;

use std::fs;
use std::path::{Path, PathBuf};

pub use artifacts::{ArtifactDir, ArtifactNaming, CrashRecord, SavedArtifact};
pub use corpus_dir::{CorpusDir, CorpusFile, Loaded, OWNERSHIP_JOURNAL, STATE_DIR};
pub use stats::{
    Resume, STATS_FILE, STATS_VERSION, Sample, StatsEvent, StatsFile, StatsLine,
    default_stats_path, read_stats,
};

/// Hex SHA-1 of `data`: the name of corpus entries and artifacts.
pub fn content_hash(data: &[u8]) -> String {
    sha1_smol::Sha1::from(data).digest().to_string()
}

/// Writes a finding's input alone, as `dir/<prefix>-<sha1>`, for a folder a
/// test suite replays (a PHPUnit fuzz test's `fuzz/<Class>/<method>/`): no
/// report beside it, since every file there is an input. Returns the path.
pub fn save_finding_input(dir: &Path, prefix: &str, input: &[u8]) -> Result<PathBuf, StorageError> {
    fs::create_dir_all(dir).map_err(|source| StorageError::Io {
        path: dir.to_path_buf(),
        what: "cannot create the findings folder",
        source,
    })?;
    let path = dir.join(format!("{prefix}-{}", content_hash(input)));
    write_atomically(&path, input)?;
    Ok(path)
}

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("{}: {what}: {source}", path.display())]
    Io {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: is a file, but a corpus must be a directory", path.display())]
    NotADirectory { path: PathBuf },
    #[error("{}: cannot write the crash report: {source}", path.display())]
    Sidecar {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

pub(crate) fn io_error(
    path: impl Into<PathBuf>,
    what: &'static str,
) -> impl FnOnce(std::io::Error) -> StorageError {
    let path = path.into();
    move |source| StorageError::Io { path, what, source }
}

pub(crate) fn is_not_found(err: &std::io::Error) -> bool {
    err.kind() == std::io::ErrorKind::NotFound
}

/// Temporary files are named `.php-fuzz-tmp-<pid>-…`: the pid tells which
/// were left behind by a php-fuzz process that was killed while writing.
const TEMP_PREFIX: &str = ".php-fuzz-tmp-";

fn temp_file_with(
    path: &std::path::Path,
    data: &[u8],
) -> Result<tempfile::NamedTempFile, StorageError> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let mut file = tempfile::Builder::new()
        .prefix(&format!("{TEMP_PREFIX}{}-", std::process::id()))
        .tempfile_in(dir)
        .map_err(io_error(dir, "cannot create a file in this directory"))?;
    file.write_all(data)
        .map_err(io_error(file.path(), "cannot write"))?;
    Ok(file)
}

/// Checks that php-fuzz can create files in `dir`, so a directory it cannot
/// write is an error at start rather than when the first crash is found.
pub(crate) fn check_writable(dir: &Path, what: &'static str) -> Result<(), StorageError> {
    tempfile::Builder::new()
        .prefix(&format!("{TEMP_PREFIX}{}-", std::process::id()))
        .tempfile_in(dir)
        .map(drop)
        .map_err(io_error(dir, what))
}

/// Deletes the temporary files that php-fuzz processes no longer running
/// left in `dir` (killed between writing a file and renaming it into place).
/// A process still running may be writing its own: those stay.
pub(crate) fn remove_stale_temp_files(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(TEMP_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Held (shared) by every file write from its temporary file to its rename;
/// [`stop_writing`] takes it for good.
static WRITES: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Waits for the file writes in progress to end and lets no other begin:
/// for a process about to exit at once (a second Ctrl-C), so that it leaves
/// no temporary file behind. Writes that try later block until the exit.
pub fn stop_writing() {
    let guard = WRITES.write().unwrap_or_else(|p| p.into_inner());
    std::mem::forget(guard);
}

fn writing() -> std::sync::RwLockReadGuard<'static, ()> {
    WRITES.read().unwrap_or_else(|p| p.into_inner())
}

/// Writes `data` to `path` atomically. Returns false, writing nothing, if
/// `path` already exists.
pub(crate) fn write_atomically(path: &std::path::Path, data: &[u8]) -> Result<bool, StorageError> {
    let _writing = writing();
    match temp_file_with(path, data)?.persist_noclobber(path) {
        Ok(_) => Ok(true),
        Err(err) if err.error.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(err) => Err(StorageError::Io {
            path: path.to_path_buf(),
            what: "cannot write",
            source: err.error,
        }),
    }
}

/// Writes `data` to `path` atomically, replacing what is there: a reader
/// sees the old file or the new one, never a mix or nothing.
pub fn replace_atomically(path: &std::path::Path, data: &[u8]) -> Result<(), StorageError> {
    let _writing = writing();
    temp_file_with(path, data)?
        .persist(path)
        .map(drop)
        .map_err(|err| StorageError::Io {
            path: path.to_path_buf(),
            what: "cannot write",
            source: err.error,
        })
}

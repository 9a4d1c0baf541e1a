//! The findings of an artifact directory as a SARIF 2.1.0 log, for GitHub
//! code scanning and other SARIF viewers ([docs/sarif.md]).
//!
//! - `findings` reads the crash reports (`<prefix>-<sha1>.json`);
//! - `rules` gives each finding its rule: id, level, texts, tags, severity;
//! - `trace` reads the stack frames out of a report's trace;
//! - `uri` turns file paths into URIs relative to the source root;
//! - `log` assembles the log.
//!
//! The SARIF types are `serde-sarif`'s, generated from the OASIS schema.
//!
//! [docs/sarif.md]: https://github.com/php-fuzz/php-fuzz/blob/main/docs/sarif.md

mod findings;
mod log;
mod rules;
mod trace;
mod uri;

use std::path::{Path, PathBuf};

use php_fuzz_storage::{StorageError, replace_atomically};
use serde_sarif::sarif::ResultLevel;

use uri::SourceRoot;

/// What [`write_sarif`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SarifSummary {
    /// The log's path.
    pub out: PathBuf,
    /// Results, one per finding report.
    pub results: usize,
    /// Results at level `error`, `warning` and `note`.
    pub errors: usize,
    pub warnings: usize,
    pub notes: usize,
    /// Rules the results use.
    pub rules: usize,
    /// Reports left out because they could not be read.
    pub skipped: Vec<SkippedReport>,
}

/// A `<prefix>-<sha1>.json` file that is not a crash report php-fuzz can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedReport {
    pub path: PathBuf,
    pub reason: String,
}

impl std::fmt::Display for SkippedReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SarifError {
    #[error("{}: the artifact directory does not exist", path.display())]
    NoArtifactDir { path: PathBuf },
    #[error("{}: cannot read the artifact directory: {source}", path.display())]
    ReadDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: the source root must be an existing directory: {source}", path.display())]
    SourceRoot {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot encode the SARIF log: {0}")]
    Encode(#[from] serde_json::Error),
    #[error("cannot write the SARIF log {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: StorageError,
    },
}

/// Writes the SARIF log of every finding report in `artifact_dir` to `out`
/// (atomically: a reader sees the old file or the new one), with file URIs
/// relative to `source_root` (`%SRCROOT%`). An artifact directory without
/// reports gives a log with no results; reports that cannot be read are
/// left out and listed in the summary.
pub fn write_sarif(
    artifact_dir: &Path,
    out: &Path,
    source_root: &Path,
) -> Result<SarifSummary, SarifError> {
    let root = SourceRoot::new(source_root).map_err(|source| SarifError::SourceRoot {
        path: source_root.to_path_buf(),
        source,
    })?;
    let (findings, skipped) = findings::read_findings(artifact_dir)?;
    let log = log::sarif_log(&findings, &root);
    let mut json = serde_json::to_vec_pretty(&log)?;
    json.push(b'\n');
    replace_atomically(out, &json).map_err(|source| SarifError::Write {
        path: out.to_path_buf(),
        source,
    })?;
    let results = log.runs[0].results.as_deref().unwrap_or_default();
    let count = |level: ResultLevel| results.iter().filter(|r| r.level == Some(level)).count();
    Ok(SarifSummary {
        out: out.to_path_buf(),
        results: results.len(),
        errors: count(ResultLevel::Error),
        warnings: count(ResultLevel::Warning),
        notes: count(ResultLevel::Note),
        rules: log.runs[0].tool.driver.rules.as_ref().map_or(0, Vec::len),
        skipped,
    })
}

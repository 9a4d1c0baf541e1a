//! php-fuzz's reports.
//!
//! - The coverage report: block hit counts in; a self-contained HTML report
//!   (an index plus one page per file), `coverage.json` and `lcov.info` out.
//! - The findings as a SARIF log (`sarif`, [`write_sarif`]): an artifact
//!   directory's crash reports in, a SARIF 2.1.0 file for GitHub code
//!   scanning out.
//!
//! The caller (the `report-coverage` command) replays the corpus and fills a
//! [`ReportInput`]; [`write_report`] does the rest and touches nothing but
//! the output directory.
//!
//! How the pieces fit:
//! - `analysis` computes everything once per file: where each block sits
//!   in the source, per-line and per-function numbers, the jump targets;
//! - `paths` finds the common root and gives every file a unique page name;
//! - `listing` turns the source bytes into lines of text and markers (no
//!   HTML: askama escapes everything when the templates render it);
//! - `plot` turns the campaign's history into SVG line geometry;
//! - `html`, `json` and `lcov` write the three outputs from the same
//!   analysis, so they cannot disagree. File pages are independent of each
//!   other and render in parallel (rayon).

mod analysis;
mod html;
mod json;
mod lcov;
mod listing;
mod paths;
mod plot;
mod sarif;
mod scan;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

pub use sarif::{SarifError, SarifSummary, SkippedReport, write_sarif};
pub use scan::{ScanEntryPoint, ScanFinding, ScanPage, write_scan_page};

/// Everything a report shows.
#[derive(Debug, Clone)]
pub struct ReportInput {
    /// The target script (`target.php`).
    pub target: PathBuf,
    pub corpus_dir: PathBuf,
    pub corpus_entries: usize,
    /// Already formatted, e.g. "2026-11-22 14:05 UTC".
    pub generated_at: String,
    pub files: Vec<FileCoverage>,
    /// Corpus entries that crashed while replaying: reported, and skipped.
    pub crashes: Vec<ReplayCrash>,
    /// The campaign's statistics over time, plotted on the index page when
    /// `fuzz` wrote any.
    pub history: Option<CampaignHistory>,
}

/// What a campaign's statistics file says, in file order.
#[derive(Debug, Clone)]
pub struct CampaignHistory {
    /// The statistics file, as shown on the page.
    pub source: PathBuf,
    pub samples: Vec<HistorySample>,
    /// Sessions after the first: when each resumed the campaign.
    pub restarts: Vec<HistoryRestart>,
    /// Distinct crashes, when each was first seen.
    pub crashes: Vec<HistoryCrash>,
}

/// The campaign's numbers at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct HistorySample {
    pub session: u32,
    /// Seconds of fuzzing since the campaign began (over all sessions).
    pub elapsed: f64,
    /// Runs since the campaign began.
    pub runs: u64,
    /// Edges covered.
    pub cov: usize,
    pub ft: usize,
    pub execs_per_sec: f64,
    /// The learned mutation schedule's draw by group, shares summing to 1
    /// (`bytes`, `dict`, `i2s`, `grammar`, `custom`); empty under the
    /// uniform schedule.
    pub mix: Vec<(String, f64)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HistoryRestart {
    pub session: u32,
    pub elapsed: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HistoryCrash {
    pub elapsed: f64,
    pub kind: String,
    /// One line, e.g. "Error: bang in Classifier.php:14".
    pub summary: String,
    /// The saved input's path, as `fuzz` wrote it.
    pub artifact: String,
}

/// One instrumented PHP file and the hit count of each of its blocks.
#[derive(Debug, Clone)]
pub struct FileCoverage {
    /// Absolute path of the PHP file.
    pub path: PathBuf,
    /// The original source. May be invalid UTF-8: it is shown lossily.
    pub source: Vec<u8>,
    pub blocks: Vec<BlockCoverage>,
}

/// A block and how often it ran over the whole corpus. Covered when `hits > 0`.
#[derive(Debug, Clone)]
pub struct BlockCoverage {
    pub block: php_fuzz_instrument::Block,
    pub hits: u64,
}

/// A corpus entry that crashed while replaying.
#[derive(Debug, Clone)]
pub struct ReplayCrash {
    pub input: PathBuf,
    /// E.g. "exception", "timeout".
    pub kind: String,
    /// One line, e.g. "Error: bang in Classifier.php:14".
    pub summary: String,
}

/// What [`write_report`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportSummary {
    pub files: usize,
    pub blocks: usize,
    pub covered_blocks: usize,
    /// `out_dir/index.html`.
    pub index: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot render {page}: {source}")]
    Render {
        page: String,
        #[source]
        source: askama::Error,
    },
    #[error("cannot encode coverage.json: {0}")]
    Json(#[from] serde_json::Error),
}

/// Writes the report into `out_dir` (created if missing):
/// - `index.html`: one row per file, totals, the crashes seen while replaying,
///   and the campaign's plots when there is a history;
/// - `files/<name>.html`: one page per file, the source with every block marked;
/// - `coverage.json`: every block with its position and hit count;
/// - `lcov.info`: line and function coverage for CI services and editors.
///
/// Files already in `out_dir` are overwritten; other files are left alone.
pub fn write_report(input: &ReportInput, out_dir: &Path) -> Result<ReportSummary, ReportError> {
    let report = analysis::Report::new(input);
    let files_dir = out_dir.join(paths::FILES_DIR);
    create_dir(&files_dir)?;
    report.files.par_iter().try_for_each(|file| {
        write(
            &out_dir.join(&file.page),
            html::file_page(&report, file)?.as_bytes(),
        )
    })?;
    let index = out_dir.join("index.html");
    write(&index, html::index_page(&report)?.as_bytes())?;
    write(
        &out_dir.join("coverage.json"),
        &json::coverage_json(&report)?,
    )?;
    write(
        &out_dir.join("lcov.info"),
        lcov::tracefile(&report).as_bytes(),
    )?;
    Ok(ReportSummary {
        files: report.files.len(),
        blocks: report.totals.blocks,
        covered_blocks: report.totals.covered_blocks,
        index,
    })
}

fn create_dir(dir: &Path) -> Result<(), ReportError> {
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Write {
        path: dir.to_path_buf(),
        source,
    })
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    std::fs::write(path, bytes).map_err(|source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

//! The coverage report: block hit counts in, a self-contained HTML report
//! (index plus one page per file), `coverage.json` and `lcov.info` out.

mod html;
mod model;

use std::path::{Path, PathBuf};

pub use model::{FileSummary, FunctionSummary};

/// Everything a report shows.
#[derive(Debug, Clone)]
pub struct ReportInput {
    pub target: PathBuf,
    pub corpus_dir: PathBuf,
    pub corpus_entries: usize,
    /// Already formatted, e.g. "2026-11-22 14:05 UTC".
    pub generated_at: String,
    pub files: Vec<FileCoverage>,
    /// Corpus entries that crashed while replaying; reported and skipped.
    pub crashes: Vec<ReplayCrash>,
}

#[derive(Debug, Clone)]
pub struct FileCoverage {
    /// Absolute path of the PHP file.
    pub path: PathBuf,
    /// The original source (may be invalid UTF-8).
    pub source: Vec<u8>,
    pub blocks: Vec<BlockHits>,
}

#[derive(Debug, Clone)]
pub struct BlockHits {
    pub block: php_fuzz_instrument::Block,
    pub hits: u64,
}

#[derive(Debug, Clone)]
pub struct ReplayCrash {
    pub input: PathBuf,
    pub kind: String,
    pub summary: String,
}

#[derive(Debug, Clone)]
pub struct ReportSummary {
    pub files: usize,
    pub blocks: usize,
    pub covered_blocks: usize,
    pub index: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("rendering {page}: {source}")]
    Render {
        page: String,
        #[source]
        source: askama::Error,
    },
    #[error("encoding coverage.json: {0}")]
    Json(#[from] serde_json::Error),
}

/// Writes `index.html`, `files/*.html`, `coverage.json` and `lcov.info` into `out_dir`.
pub fn write_report(input: &ReportInput, out_dir: &Path) -> Result<ReportSummary, ReportError> {
    let files = model::summarize(input);
    let write = |path: PathBuf, bytes: &[u8]| -> Result<(), ReportError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| ReportError::Write {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        std::fs::write(&path, bytes).map_err(|source| ReportError::Write { path, source })
    };
    for (file, summary) in input.files.iter().zip(&files) {
        let page = html::file_page(input, file, summary)?;
        write(out_dir.join(&summary.page), page.as_bytes())?;
    }
    let index = out_dir.join("index.html");
    write(index.clone(), html::index_page(input, &files)?.as_bytes())?;
    write(
        out_dir.join("coverage.json"),
        &model::coverage_json(input, &files)?,
    )?;
    write(
        out_dir.join("lcov.info"),
        model::lcov(input, &files).as_bytes(),
    )?;
    Ok(ReportSummary {
        files: files.len(),
        blocks: files.iter().map(|f| f.blocks).sum(),
        covered_blocks: files.iter().map(|f| f.covered).sum(),
        index,
    })
}

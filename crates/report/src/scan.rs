//! The page `php-fuzz scan` writes as OUT/report.html: the package's entry
//! points in rank order with what fuzzing each found, the distinct
//! findings, and a link to the package's coverage report (OUT/coverage/).
//! Every string reaches the page through askama's HTML escaping.

use std::path::Path;

use askama::Template;

use crate::ReportError;

/// One entry point's row.
#[derive(Debug, Clone)]
pub struct ScanEntryPoint {
    pub rank: u32,
    pub callee: String,
    /// `file:line` of its declaration.
    pub place: String,
    pub score: f64,
    pub reach: u64,
    pub seconds: f64,
    pub runs: u64,
    pub edges: usize,
    /// The ids of the findings it found first.
    pub findings: Vec<usize>,
    /// Why it was not fuzzed, or not fully; empty otherwise.
    pub note: String,
}

/// One distinct finding.
#[derive(Debug, Clone)]
pub struct ScanFinding {
    pub id: usize,
    pub kind: String,
    pub headline: String,
    /// `file:line` of the crash site.
    pub place: String,
    pub entry_point: String,
    /// Other entry points that reached it, comma-separated.
    pub also_via: String,
    /// Its input, relative to OUT.
    pub input: String,
    pub reproduce: String,
}

/// Everything the scan page shows.
#[derive(Debug, Clone, Template)]
#[template(path = "scan.html")]
pub struct ScanPage {
    pub dir: String,
    pub generated_at: String,
    pub seconds: f64,
    pub blocks: usize,
    pub covered_blocks: usize,
    pub entry_points: Vec<ScanEntryPoint>,
    pub findings: Vec<ScanFinding>,
}

impl ScanPage {
    fn coverage_text(&self) -> String {
        if self.blocks == 0 {
            return "–".into();
        }
        let percent = 100.0 * self.covered_blocks as f64 / self.blocks as f64;
        format!("{:.1} %", (percent * 10.0).floor() / 10.0)
    }

    fn fuzzed(&self) -> usize {
        self.entry_points.iter().filter(|e| e.runs > 0).count()
    }
}

/// Writes the page to `path`.
pub fn write_scan_page(page: &ScanPage, path: &Path) -> Result<(), ReportError> {
    let html = page.render().map_err(|source| ReportError::Render {
        page: "report.html".into(),
        source,
    })?;
    crate::write(path, html.as_bytes())
}

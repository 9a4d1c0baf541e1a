//! `coverage.json`: every block with its position and hit count, per file,
//! plus the totals the index shows.

use serde::Serialize;

use crate::ReportError;
use crate::analysis::{Counts, Report, RunDetails};

#[derive(Serialize)]
struct Json<'a> {
    #[serde(flatten)]
    run: RunDetails<'a>,
    totals: Totals,
    files: Vec<File<'a>>,
    crashes: Vec<Crash<'a>>,
}

#[derive(Serialize)]
struct Totals {
    files: usize,
    blocks: usize,
    covered_blocks: usize,
    /// Covered blocks in percent, two decimals.
    percent: f64,
    lines: usize,
    covered_lines: usize,
    functions: usize,
    covered_functions: usize,
}

impl Totals {
    fn new(files: usize, c: &Counts) -> Self {
        Totals {
            files,
            blocks: c.blocks,
            covered_blocks: c.covered_blocks,
            percent: (c.percent() * 100.0).round() / 100.0,
            lines: c.lines,
            covered_lines: c.covered_lines,
            functions: c.functions,
            covered_functions: c.covered_functions,
        }
    }
}

#[derive(Serialize)]
struct File<'a> {
    path: String,
    relative: &'a str,
    /// The HTML page, relative to the report directory.
    page: &'a str,
    blocks_total: usize,
    blocks_covered: usize,
    lines_total: usize,
    lines_covered: usize,
    functions: Vec<Function<'a>>,
    /// In source order.
    blocks: Vec<Block<'a>>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    line: usize,
    blocks_total: usize,
    blocks_covered: usize,
    entries: u64,
}

#[derive(Serialize)]
struct Block<'a> {
    id: u32,
    line: u32,
    column: u32,
    kind: php_fuzz_instrument::BlockKind,
    function: Option<&'a str>,
    hits: u64,
}

#[derive(Serialize)]
struct Crash<'a> {
    input: String,
    kind: &'a str,
    summary: &'a str,
}

pub(crate) fn coverage_json(report: &Report<'_>) -> Result<Vec<u8>, ReportError> {
    let input = report.input;
    let json = Json {
        run: report.run_details(),
        totals: Totals::new(report.files.len(), &report.totals),
        files: report
            .files
            .iter()
            .map(|f| File {
                path: f.file.path.display().to_string(),
                relative: &f.relative,
                page: &f.page,
                blocks_total: f.counts.blocks,
                blocks_covered: f.counts.covered_blocks,
                lines_total: f.counts.lines,
                lines_covered: f.counts.covered_lines,
                functions: f
                    .functions
                    .iter()
                    .map(|g| Function {
                        name: &g.name,
                        line: g.first_line,
                        blocks_total: g.blocks,
                        blocks_covered: g.covered,
                        entries: g.entries,
                    })
                    .collect(),
                blocks: f
                    .placed
                    .iter()
                    .map(|p| {
                        let b = &p.hits.block;
                        Block {
                            id: b.id.0,
                            line: b.line,
                            column: b.column,
                            kind: b.kind,
                            function: b.function.as_deref(),
                            hits: p.hits.hits,
                        }
                    })
                    .collect(),
            })
            .collect(),
        crashes: input
            .crashes
            .iter()
            .map(|c| Crash {
                input: c.input.display().to_string(),
                kind: &c.kind,
                summary: &c.summary,
            })
            .collect(),
    };
    let mut bytes = serde_json::to_vec_pretty(&json)?;
    bytes.push(b'\n');
    Ok(bytes)
}

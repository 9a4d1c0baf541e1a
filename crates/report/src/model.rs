//! Per-file and per-function numbers, and the machine-readable outputs.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::{ReportError, ReportInput};

#[derive(Debug, Clone)]
pub struct FunctionSummary {
    pub name: String,
    pub first_line: u32,
    pub blocks: usize,
    pub covered: usize,
    /// Hits of the function's first block: how often it was entered.
    pub entries: u64,
}

#[derive(Debug, Clone)]
pub struct FileSummary {
    /// Relative to the common root of all files.
    pub relative: String,
    /// The page, relative to the output directory.
    pub page: String,
    pub blocks: usize,
    pub covered: usize,
    /// Lines with at least one block, and those with a covered one.
    pub lines: usize,
    pub covered_lines: usize,
    pub functions: Vec<FunctionSummary>,
}

pub(crate) fn summarize(input: &ReportInput) -> Vec<FileSummary> {
    let root = common_root(input.files.iter().map(|f| f.path.as_path()));
    let mut pages: BTreeMap<String, usize> = BTreeMap::new();
    input
        .files
        .iter()
        .map(|file| {
            let relative = file
                .path
                .strip_prefix(&root)
                .ok()
                .filter(|r| !r.as_os_str().is_empty())
                .unwrap_or(&file.path)
                .display()
                .to_string();
            let mut page = format!("files/{}.html", sanitize(&relative));
            let seen = pages.entry(page.clone()).or_insert(0);
            *seen += 1;
            if *seen > 1 {
                page = format!("files/{}-{}.html", sanitize(&relative), seen);
            }
            let mut lines: BTreeMap<u32, bool> = BTreeMap::new();
            let mut functions: Vec<FunctionSummary> = Vec::new();
            let mut by_name: BTreeMap<&str, usize> = BTreeMap::new();
            for b in &file.blocks {
                *lines.entry(b.block.line).or_insert(false) |= b.hits > 0;
                let name = b.block.function.as_deref().unwrap_or("{main}");
                let index = *by_name.entry(name).or_insert_with(|| {
                    functions.push(FunctionSummary {
                        name: name.to_string(),
                        first_line: b.block.line,
                        blocks: 0,
                        covered: 0,
                        entries: b.hits,
                    });
                    functions.len() - 1
                });
                let f = &mut functions[index];
                f.blocks += 1;
                f.covered += usize::from(b.hits > 0);
                f.first_line = f.first_line.min(b.block.line);
            }
            functions.sort_by_key(|f| f.first_line);
            FileSummary {
                relative,
                page,
                blocks: file.blocks.len(),
                covered: file.blocks.iter().filter(|b| b.hits > 0).count(),
                lines: lines.len(),
                covered_lines: lines.values().filter(|c| **c).count(),
                functions,
            }
        })
        .collect()
}

fn common_root<'a>(paths: impl Iterator<Item = &'a Path>) -> PathBuf {
    let mut root: Option<PathBuf> = None;
    for path in paths {
        let dir = path.parent().unwrap_or(Path::new(""));
        root = Some(match root {
            None => dir.to_path_buf(),
            Some(current) => current
                .components()
                .zip(dir.components())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a)
                .collect(),
        });
    }
    root.unwrap_or_default()
}

fn sanitize(relative: &str) -> String {
    relative
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

pub(crate) fn percent(covered: usize, total: usize) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * covered as f64 / total as f64
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    target: String,
    corpus_dir: String,
    corpus_entries: usize,
    generated_at: &'a str,
    totals: JsonTotals,
    files: Vec<JsonFile<'a>>,
    crashes: Vec<JsonCrash<'a>>,
}

#[derive(Serialize)]
struct JsonTotals {
    files: usize,
    blocks: usize,
    covered_blocks: usize,
    percent: f64,
}

#[derive(Serialize)]
struct JsonFile<'a> {
    path: String,
    relative: &'a str,
    blocks_total: usize,
    blocks_covered: usize,
    blocks: Vec<JsonBlock<'a>>,
}

#[derive(Serialize)]
struct JsonBlock<'a> {
    id: u32,
    line: u32,
    column: u32,
    kind: php_fuzz_instrument::BlockKind,
    function: Option<&'a str>,
    hits: u64,
}

#[derive(Serialize)]
struct JsonCrash<'a> {
    input: String,
    kind: &'a str,
    summary: &'a str,
}

pub(crate) fn coverage_json(
    input: &ReportInput,
    files: &[FileSummary],
) -> Result<Vec<u8>, ReportError> {
    let blocks: usize = files.iter().map(|f| f.blocks).sum();
    let covered: usize = files.iter().map(|f| f.covered).sum();
    let report = JsonReport {
        target: input.target.display().to_string(),
        corpus_dir: input.corpus_dir.display().to_string(),
        corpus_entries: input.corpus_entries,
        generated_at: &input.generated_at,
        totals: JsonTotals {
            files: files.len(),
            blocks,
            covered_blocks: covered,
            percent: percent(covered, blocks),
        },
        files: input
            .files
            .iter()
            .zip(files)
            .map(|(file, summary)| JsonFile {
                path: file.path.display().to_string(),
                relative: &summary.relative,
                blocks_total: summary.blocks,
                blocks_covered: summary.covered,
                blocks: file
                    .blocks
                    .iter()
                    .map(|b| JsonBlock {
                        id: b.block.id.0,
                        line: b.block.line,
                        column: b.block.column,
                        kind: b.block.kind,
                        function: b.block.function.as_deref(),
                        hits: b.hits,
                    })
                    .collect(),
            })
            .collect(),
        crashes: input
            .crashes
            .iter()
            .map(|c| JsonCrash {
                input: c.input.display().to_string(),
                kind: &c.kind,
                summary: &c.summary,
            })
            .collect(),
    };
    let mut bytes = serde_json::to_vec_pretty(&report)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// LCOV tracefile. A line's count is the highest hit count of the blocks
/// on it, so a line is covered when any of its blocks ran. A function's
/// count is the hit count of its first block (its entry).
pub(crate) fn lcov(input: &ReportInput, files: &[FileSummary]) -> String {
    let mut out = String::new();
    for (file, summary) in input.files.iter().zip(files) {
        let _ = writeln!(out, "TN:");
        let _ = writeln!(out, "SF:{}", file.path.display());
        for f in &summary.functions {
            let _ = writeln!(out, "FN:{},{}", f.first_line, f.name);
        }
        for f in &summary.functions {
            let _ = writeln!(out, "FNDA:{},{}", f.entries, f.name);
        }
        let _ = writeln!(out, "FNF:{}", summary.functions.len());
        let _ = writeln!(
            out,
            "FNH:{}",
            summary.functions.iter().filter(|f| f.entries > 0).count()
        );
        let mut lines: BTreeMap<u32, u64> = BTreeMap::new();
        for b in &file.blocks {
            let count = lines.entry(b.block.line).or_insert(0);
            *count = (*count).max(b.hits);
        }
        for (line, count) in &lines {
            let _ = writeln!(out, "DA:{line},{count}");
        }
        let _ = writeln!(out, "LF:{}", lines.len());
        let _ = writeln!(out, "LH:{}", lines.values().filter(|c| **c > 0).count());
        let _ = writeln!(out, "end_of_record");
    }
    out
}

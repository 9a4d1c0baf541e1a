//! Everything the three outputs show, computed once per file: where each
//! block sits, per-line and per-function numbers, and the uncovered runs
//! the "next uncovered" jumps go through.

use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;

use php_fuzz_instrument::BlockKind;

use crate::paths::{PageNames, common_root, relative};
use crate::{BlockCoverage, FileCoverage, ReportInput};

/// The name top-level code gets, as in PHP stack traces.
pub(crate) const TOP_LEVEL: &str = "{main}";

pub(crate) struct Report<'a> {
    pub input: &'a ReportInput,
    /// Every file's path is shown relative to this.
    pub root: PathBuf,
    /// Sorted by relative path.
    pub files: Vec<FileReport<'a>>,
    pub totals: Counts,
}

/// The run a report covers, as each of its outputs states it.
#[derive(Debug, serde::Serialize)]
pub(crate) struct RunDetails<'a> {
    pub target: String,
    pub corpus_dir: String,
    pub corpus_entries: usize,
    pub generated_at: &'a str,
    /// The directory file paths are shown relative to.
    pub root: String,
}

impl<'a> Report<'a> {
    pub fn run_details(&self) -> RunDetails<'a> {
        let input = self.input;
        RunDetails {
            target: input.target.display().to_string(),
            corpus_dir: input.corpus_dir.display().to_string(),
            corpus_entries: input.corpus_entries,
            generated_at: &input.generated_at,
            root: self.root.display().to_string(),
        }
    }
}

/// Blocks and lines (lines that hold at least one block), found and covered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub blocks: usize,
    pub covered_blocks: usize,
    pub lines: usize,
    pub covered_lines: usize,
    /// Functions and methods (not top-level code), and those entered.
    pub functions: usize,
    pub covered_functions: usize,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        self.blocks += other.blocks;
        self.covered_blocks += other.covered_blocks;
        self.lines += other.lines;
        self.covered_lines += other.covered_lines;
        self.functions += other.functions;
        self.covered_functions += other.covered_functions;
    }

    pub(crate) fn percent(&self) -> f64 {
        percent(self.covered_blocks, self.blocks)
    }

    pub(crate) fn uncovered_blocks(&self) -> usize {
        self.blocks - self.covered_blocks
    }
}

pub(crate) fn percent(covered: usize, total: usize) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * covered as f64 / total as f64
    }
}

pub(crate) struct FileReport<'a> {
    pub file: &'a FileCoverage,
    /// Path relative to the report's root, for display.
    pub relative: String,
    /// Page relative to the output directory, `files/….html`.
    pub page: String,
    /// Byte range of each displayed line (without its `\n` or `\r\n`).
    pub lines: Vec<Range<usize>>,
    /// The blocks in source order.
    pub placed: Vec<Placed<'a>>,
    /// One entry per line that holds a block, in line order.
    pub line_hits: Vec<LineHits>,
    /// In order of first line; top-level code is [`TOP_LEVEL`].
    pub functions: Vec<Function>,
    pub counts: Counts,
    /// How many runs of uncovered blocks (no covered block between) there are.
    pub runs: usize,
}

/// A block and where the page shows it.
pub(crate) struct Placed<'a> {
    pub hits: &'a BlockCoverage,
    /// 0-based index into [`FileReport::lines`].
    pub line: usize,
    /// Absolute byte offset into the source, within `lines[line]`.
    pub offset: usize,
    /// 1-based number of the uncovered run this block starts, if it does.
    pub starts_run: Option<usize>,
    /// For an uncovered block: the run the "next" link goes to (wraps around).
    pub next_run: usize,
}

impl Placed<'_> {
    pub(crate) fn covered(&self) -> bool {
        self.hits.hits > 0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LineHits {
    /// 1-based.
    pub line: usize,
    /// The highest hit count of the line's blocks: a line counts as run when
    /// any of its blocks ran (LCOV's `DA` has one number per line).
    pub hits: u64,
    pub blocks: usize,
    pub covered: usize,
}

pub(crate) struct Function {
    /// Unique within the file: closures become `{closure:LINE}` (as PHP 8.4
    /// names them in traces), other repeated names get ` (line N)`.
    pub name: String,
    pub top_level: bool,
    /// 1-based line of its first block (for a function, the body's `{`).
    pub first_line: usize,
    pub blocks: usize,
    pub covered: usize,
    /// How often it was entered: its entry block's hits, or (with no entry
    /// block) the highest hit count of its blocks.
    pub entries: u64,
}

impl<'a> Report<'a> {
    pub(crate) fn new(input: &'a ReportInput) -> Self {
        let root = common_root(input.files.iter().map(|f| f.path.as_path()));
        let mut files: Vec<(String, &FileCoverage)> = input
            .files
            .iter()
            .map(|f| (relative(&f.path, &root), f))
            .collect();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let mut names = PageNames::default();
        let files: Vec<FileReport<'a>> = files
            .into_iter()
            .map(|(relative, file)| {
                let page = names.assign(&relative);
                FileReport::new(file, relative, page)
            })
            .collect();
        let mut totals = Counts::default();
        for file in &files {
            totals.add(&file.counts);
        }
        Report {
            input,
            root,
            files,
            totals,
        }
    }
}

impl<'a> FileReport<'a> {
    fn new(file: &'a FileCoverage, relative: String, page: String) -> Self {
        let lines = split_lines(&file.source);
        let placed = place(&file.source, &lines, &file.blocks);
        let line_hits = line_hits(&placed);
        let functions = functions(&placed);
        let mut counts = Counts {
            blocks: placed.len(),
            covered_blocks: placed.iter().filter(|p| p.covered()).count(),
            lines: line_hits.len(),
            covered_lines: line_hits.iter().filter(|l| l.hits > 0).count(),
            ..Counts::default()
        };
        for f in functions.iter().filter(|f| !f.top_level) {
            counts.functions += 1;
            counts.covered_functions += usize::from(f.entries > 0);
        }
        let mut report = FileReport {
            file,
            relative,
            page,
            lines,
            placed,
            line_hits,
            functions,
            counts,
            runs: 0,
        };
        report.number_runs();
        report
    }

    /// Numbers the runs of uncovered blocks and points every uncovered block
    /// at the next run, so that the links walk the file and wrap around.
    fn number_runs(&mut self) {
        let mut runs = 0;
        let mut previous_covered = true;
        for p in &mut self.placed {
            if !p.covered() && previous_covered {
                runs += 1;
                p.starts_run = Some(runs);
            }
            previous_covered = p.covered();
        }
        let mut current = 0;
        for p in &mut self.placed {
            if let Some(run) = p.starts_run {
                current = run;
            }
            if !p.covered() {
                p.next_run = if current == runs { 1 } else { current + 1 };
            }
        }
        self.runs = runs;
    }
}

/// Line ranges without the line break; a final `\n` does not start a line.
/// An empty source has one empty line.
fn split_lines(source: &[u8]) -> Vec<Range<usize>> {
    let mut lines = Vec::new();
    let mut start = 0;
    for (i, &b) in source.iter().enumerate() {
        if b == b'\n' {
            lines.push(start..i);
            start = i + 1;
        }
    }
    if start < source.len() || lines.is_empty() {
        lines.push(start..source.len());
    }
    for line in &mut lines {
        if line.end > line.start && source[line.end - 1] == b'\r' {
            line.end -= 1;
        }
    }
    lines
}

/// Places each block at its line and column. A stale block map (line past
/// the end, column past the line) cannot hide a block: it lands at the end
/// of the nearest line, so every block is still shown and counted.
fn place<'a>(
    source: &[u8],
    lines: &[Range<usize>],
    blocks: &'a [BlockCoverage],
) -> Vec<Placed<'a>> {
    let mut placed: Vec<Placed<'a>> = blocks
        .iter()
        .map(|hits| {
            let b = &hits.block;
            let by_line = (b.line as usize)
                .checked_sub(1)
                .filter(|&l| l < lines.len());
            let (line, offset) = match by_line {
                Some(line) => {
                    let range = &lines[line];
                    let column = (b.column as usize).saturating_sub(1);
                    (line, range.start.saturating_add(column).min(range.end))
                }
                None => {
                    let offset = b.byte_offset.min(source.len());
                    let line = lines
                        .partition_point(|r| r.start <= offset)
                        .saturating_sub(1);
                    (line, offset.clamp(lines[line].start, lines[line].end))
                }
            };
            Placed {
                hits,
                line,
                offset,
                starts_run: None,
                next_run: 0,
            }
        })
        .collect();
    // Stable: blocks at the same position keep the caller's order.
    placed.sort_by_key(|p| p.offset);
    placed
}

fn line_hits(placed: &[Placed<'_>]) -> Vec<LineHits> {
    let mut out: Vec<LineHits> = Vec::new();
    for p in placed {
        let line = p.line + 1;
        let covered = usize::from(p.covered());
        match out.last_mut() {
            Some(last) if last.line == line => {
                last.hits = last.hits.max(p.hits.hits);
                last.blocks += 1;
                last.covered += covered;
            }
            _ => out.push(LineHits {
                line,
                hits: p.hits.hits,
                blocks: 1,
                covered,
            }),
        }
    }
    out
}

fn is_entry(kind: BlockKind) -> bool {
    matches!(
        kind,
        BlockKind::FunctionEntry
            | BlockKind::MethodEntry
            | BlockKind::ClosureEntry
            | BlockKind::ArrowFunctionBody
            | BlockKind::PropertyHook
    )
}

/// Groups blocks into functions. Blocks only name their function, so an
/// entry block starts a new instance of its name (two closures in one file
/// are two rows), and the other blocks join the latest instance of theirs.
/// A closure nested in a closure cannot be told apart this way: the outer
/// closure's blocks after the inner one count for the inner one.
fn functions(placed: &[Placed<'_>]) -> Vec<Function> {
    struct Instance<'b> {
        raw: Option<&'b str>,
        function: Function,
        entered: Option<u64>,
    }
    let mut instances: Vec<Instance<'_>> = Vec::new();
    let mut latest: HashMap<Option<&str>, usize> = HashMap::new();
    for p in placed {
        let block = &p.hits.block;
        let raw = block.function.as_deref();
        let entry = raw.is_some() && is_entry(block.kind);
        let index = match latest.get(&raw) {
            Some(&index) if !entry => index,
            _ => {
                instances.push(Instance {
                    raw,
                    function: Function {
                        name: String::new(),
                        top_level: raw.is_none(),
                        first_line: p.line + 1,
                        blocks: 0,
                        covered: 0,
                        entries: 0,
                    },
                    entered: entry.then_some(p.hits.hits),
                });
                latest.insert(raw, instances.len() - 1);
                instances.len() - 1
            }
        };
        let f = &mut instances[index].function;
        f.blocks += 1;
        f.covered += usize::from(p.covered());
        f.entries = f.entries.max(p.hits.hits);
    }
    let mut repeats: HashMap<Option<&str>, usize> = HashMap::new();
    for i in &instances {
        *repeats.entry(i.raw).or_default() += 1;
    }
    let mut functions: Vec<Function> = instances
        .into_iter()
        .map(|i| {
            let mut f = i.function;
            if let Some(entered) = i.entered {
                f.entries = entered;
            }
            f.name = match i.raw {
                None => TOP_LEVEL.to_string(),
                Some("{closure}") => format!("{{closure:{}}}", f.first_line),
                Some(name) if repeats[&i.raw] > 1 => format!("{name} (line {})", f.first_line),
                Some(name) => name.to_string(),
            };
            f
        })
        .collect();
    functions.sort_by_key(|f| (!f.top_level, f.first_line));
    functions
}

#[cfg(test)]
mod tests {
    use super::*;
    use php_fuzz_instrument::{Block, BlockId};

    fn block(
        id: u32,
        kind: BlockKind,
        line: u32,
        column: u32,
        function: Option<&str>,
        hits: u64,
    ) -> BlockCoverage {
        BlockCoverage {
            block: Block {
                id: BlockId(id),
                kind,
                byte_offset: 0,
                line,
                column,
                function: function.map(str::to_string),
            },
            hits,
        }
    }

    #[test]
    fn lines_drop_line_breaks_and_a_final_newline() {
        assert_eq!(split_lines(b""), vec![0..0]);
        assert_eq!(split_lines(b"a\r\nbc\n"), vec![0..1, 3..5]);
        assert_eq!(split_lines(b"a\n\nb"), vec![0..1, 2..2, 3..4]);
        assert_eq!(split_lines(b"\n"), vec![0..0]);
    }

    #[test]
    fn stale_positions_land_on_the_nearest_line_end() {
        let source = b"<?php\nf();\n";
        let lines = split_lines(source);
        let mut far = block(1, BlockKind::IfBranch, 9, 1, None, 0);
        far.block.byte_offset = 999;
        let blocks = [block(2, BlockKind::FileEntry, 2, 40, None, 1), far];
        let placed = place(source, &lines, &blocks);
        assert_eq!((placed[0].line, placed[0].offset), (1, 10));
        assert_eq!((placed[1].line, placed[1].offset), (1, 10));
    }

    #[test]
    fn closures_are_told_apart_and_methods_keep_their_blocks_around_them() {
        let blocks = [
            block(1, BlockKind::FileEntry, 1, 1, None, 1),
            block(2, BlockKind::MethodEntry, 3, 5, Some("A::f"), 4),
            block(3, BlockKind::ClosureEntry, 4, 20, Some("{closure}"), 0),
            block(4, BlockKind::IfBranch, 5, 9, Some("A::f"), 2),
            block(5, BlockKind::ClosureEntry, 6, 20, Some("{closure}"), 3),
            block(6, BlockKind::LoopBody, 7, 20, Some("{closure}"), 9),
        ];
        let source = "x\n".repeat(8);
        let lines = split_lines(source.as_bytes());
        let placed = place(source.as_bytes(), &lines, &blocks);
        let functions = functions(&placed);
        let rows: Vec<(&str, usize, usize, usize, u64)> = functions
            .iter()
            .map(|f| {
                (
                    f.name.as_str(),
                    f.first_line,
                    f.blocks,
                    f.covered,
                    f.entries,
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                ("{main}", 1, 1, 1, 1),
                ("A::f", 3, 2, 2, 4),
                ("{closure:4}", 4, 1, 0, 0),
                ("{closure:6}", 6, 2, 2, 3),
            ]
        );
    }

    #[test]
    fn runs_of_uncovered_blocks_link_to_the_next_run_and_wrap() {
        let blocks = [
            block(1, BlockKind::FileEntry, 1, 1, None, 0),
            block(2, BlockKind::IfBranch, 2, 1, None, 0),
            block(3, BlockKind::AfterIf, 3, 1, None, 5),
            block(4, BlockKind::IfBranch, 4, 1, None, 0),
        ];
        let input = FileCoverage {
            path: "/x.php".into(),
            source: b"a\nb\nc\nd\n".to_vec(),
            blocks: blocks.to_vec(),
        };
        let file = FileReport::new(&input, "x.php".into(), "files/x.php.html".into());
        assert_eq!(file.runs, 2);
        let runs: Vec<(Option<usize>, usize)> = file
            .placed
            .iter()
            .map(|p| (p.starts_run, p.next_run))
            .collect();
        assert_eq!(runs, vec![(Some(1), 2), (None, 2), (None, 0), (Some(2), 1)]);
        assert_eq!(
            file.counts,
            Counts {
                blocks: 4,
                covered_blocks: 1,
                lines: 4,
                covered_lines: 1,
                ..Counts::default()
            }
        );
    }
}

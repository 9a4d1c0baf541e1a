//! The two halves of [`crate::instrument`] for callers that instrument many
//! files at once: plan every file in parallel, allocate ids in a fixed file
//! order, render in parallel. Ids then do not depend on thread timing.

use crate::analyze::{
    self, Analysis, CmpInsertion, Comparisons, Insertion, PlannedBlock, SinkInsertion, Sinks,
};
use crate::lexical::is_name_byte;
use crate::stub::{Piece, SinkPiece};
use crate::{Block, BlockId, Coverage, DetectorSet, Instrumented, SkipReason, StubStyle, parse};

/// A parsed and analysed file, ready to render once it has its ids.
#[derive(Debug)]
pub struct Plan<'s> {
    source: &'s [u8],
    /// Blocks in source order: the block with id `first + i` is `blocks[i]`.
    blocks: Vec<Located>,
    /// Sorted by offset, then by nesting; `block` indexes `blocks`.
    insertions: Vec<Insertion>,
    names: Vec<String>,
    cmp: CmpPlan,
    /// The detectors' sink rewrites, sorted like `insertions`.
    sinks: Vec<SinkInsertion>,
    detectors: DetectorSet,
}

/// The comparison pass's result, ready to render.
#[derive(Debug)]
struct CmpPlan {
    /// The dictionary taken from the file's comparisons: sorted, no repeats.
    literals: Vec<Vec<u8>>,
    /// Comparison-logging insertions of the sites kept, sorted like
    /// `Plan::insertions`; `site` numbers the kept sites from 0.
    insertions: Vec<CmpInsertion>,
    sites: u32,
    /// Source ranges of the literals listed after a switch or match subject.
    lists: Vec<(usize, usize)>,
}

/// At most this many dictionary entries come from one file.
const MAX_LITERALS_PER_FILE: usize = 4096;

#[derive(Debug)]
struct Located {
    planned: PlannedBlock,
    line: u32,
    column: u32,
}

impl<'s> Plan<'s> {
    /// Parses and analyses `source`, planning the blocks `coverage` records;
    /// the costly half, independent of ids.
    pub fn new(source: &'s [u8], coverage: Coverage) -> Result<Plan<'s>, SkipReason> {
        let parsed = parse::parse(source).map_err(|line| SkipReason::ParseError { line })?;
        let code = &source[..parsed.code_end];
        let Analysis {
            blocks,
            mut insertions,
            names,
            comparisons,
            sinks:
                Sinks {
                    seen: detectors,
                    insertions: sinks,
                    ..
                },
        } = analyze::analyze(code, &parsed.tree, coverage);
        drop(parsed);

        // Blocks in anchor order; `renumber[i]` is the new index of block i.
        let mut order: Vec<u32> = (0..blocks.len() as u32)
            .filter(|&i| blocks[i as usize].valid)
            .collect();
        order.sort_unstable_by_key(|&i| blocks[i as usize].anchor);
        let mut renumber = vec![u32::MAX; blocks.len()];
        for (new, &old) in order.iter().enumerate() {
            renumber[old as usize] = new as u32;
        }
        insertions.retain_mut(|insertion| {
            let old = insertion.block as usize;
            insertion.block = renumber[old];
            if insertion.block != u32::MAX {
                return true;
            }
            // A left-out counter that bounds the trace keeps its check.
            let keep = blocks[old].pruned && insertion.piece == Piece::BoundingCounter;
            if keep {
                insertion.piece = Piece::TraceBound;
                insertion.block = 0;
            }
            keep
        });
        insertions.sort_by_key(|insertion| (insertion.offset, insertion.rank));

        let mut lines = LineCounter::new(source);
        let blocks = order
            .iter()
            .map(|&i| {
                let planned = blocks[i as usize].clone();
                let (line, column) = lines.position(planned.anchor);
                Located {
                    planned,
                    line,
                    column,
                }
            })
            .collect();
        Ok(Plan {
            source,
            blocks,
            insertions,
            names,
            cmp: CmpPlan::new(comparisons),
            sinks,
            detectors,
        })
    }

    /// Lines of the checked `preg_*` calls, sorted, each once.
    fn regex_lines(&self) -> Vec<u32> {
        let mut lines = LineCounter::new(self.source);
        let mut found: Vec<u32> = self
            .sinks
            .iter()
            .filter(|s| matches!(s.piece, SinkPiece::OpenRegex { .. }))
            .map(|s| lines.position(s.offset).0)
            .collect();
        found.dedup();
        found
    }

    /// The plan with the detectors' sink hooks, or without them.
    pub fn with_hooks(mut self, hooks: crate::Hooks) -> Plan<'s> {
        if hooks == crate::Hooks::LeaveOut {
            self.sinks.clear();
        }
        self
    }

    /// The literal operands of the file's comparisons, in the forms a
    /// parser reads them from (see `docs/instrumentation.md`): sorted, each once.
    pub fn comparison_literals(&self) -> &[Vec<u8>] {
        &self.cmp.literals
    }

    /// How many comparison sites [`Plan::render_cmplog`] numbers.
    pub fn comparison_sites(&self) -> u32 {
        self.cmp.sites
    }

    /// How many ids [`Plan::render`] needs.
    pub fn block_count(&self) -> u32 {
        self.blocks.len() as u32
    }

    /// The instrumented file, with ids `first .. first + block_count()`.
    pub fn render(&self, first: BlockId, style: StubStyle) -> Instrumented {
        self.render_with(first, style, None)
    }

    /// The `cmplog` rendering: the same blocks, and every comparison site
    /// wrapped in calls that log its operands, with site ids
    /// `first_site .. first_site + comparison_sites()`.
    pub fn render_cmplog(&self, first: BlockId, first_site: u32, style: StubStyle) -> Instrumented {
        self.render_with(first, style, Some(first_site))
    }

    fn render_with(
        &self,
        first: BlockId,
        style: StubStyle,
        first_site: Option<u32>,
    ) -> Instrumented {
        let cmp_insertions: &[CmpInsertion] = match first_site {
            Some(_) => &self.cmp.insertions,
            None => &[],
        };
        let cmplog = first_site.is_some();
        let first_site = first_site.unwrap_or(0);
        let capacity: usize = self.insertions.iter().map(|i| i.piece.max_len(style)).sum();
        let mut out = Vec::with_capacity(self.source.len() + capacity);
        let mut copied = 0;
        let mut last_terminator = None;
        let mut cmp = cmp_insertions.iter().peekable();
        let mut coverage = self.insertions.iter().peekable();
        let mut sinks = self
            .sinks
            .iter()
            .filter(|sink| cmplog || !sink.guide)
            .peekable();
        loop {
            // At one (offset, rank), coverage first, then comparisons, then
            // sinks: ranks order what encloses what.
            let next = [
                coverage.peek().map(|c| (c.offset, c.rank, 0)),
                cmp.peek().map(|m| (m.offset, m.rank, 1)),
                sinks.peek().map(|s| (s.offset, s.rank, 2)),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some((offset, _, stream)) = next else {
                break;
            };
            let offset = offset.max(copied);
            out.extend_from_slice(&self.source[copied..offset]);
            copied = offset;
            match stream {
                1 => {
                    let insertion = cmp.next().expect("peeked");
                    space_after_name(&mut out, insertion.piece.starts_with_name());
                    insertion.piece.write(
                        &mut out,
                        first_site + insertion.site,
                        self.source,
                        &self.cmp.lists,
                    );
                }
                2 => {
                    let insertion = sinks.next().expect("peeked");
                    space_after_name(&mut out, insertion.piece.starts_with_name());
                    insertion.piece.write(&mut out);
                    copied += insertion.piece.skip();
                }
                _ => {
                    let insertion = coverage.next().expect("peeked");
                    if insertion.piece == Piece::Terminator {
                        // Two constructs ending at one `?>` need one `;` between them.
                        if last_terminator == Some(insertion.offset) {
                            continue;
                        }
                        last_terminator = Some(insertion.offset);
                    }
                    // `$a and$b` must not become `and\PhpFuzz\…`, one qualified name.
                    space_after_name(&mut out, insertion.piece.starts_with_name());
                    insertion
                        .piece
                        .write(&mut out, style, first.0 + insertion.block);
                }
            }
        }
        out.extend_from_slice(&self.source[copied..]);

        let blocks = self
            .blocks
            .iter()
            .enumerate()
            .map(|(i, located)| Block {
                id: BlockId(first.0 + i as u32),
                kind: located.planned.kind,
                byte_offset: located.planned.anchor,
                line: located.line,
                column: located.column,
                function: located
                    .planned
                    .function
                    .map(|f| self.names[f as usize].clone()),
            })
            .collect();
        Instrumented {
            source: out,
            blocks,
            comparison_literals: self.cmp.literals.clone(),
            comparison_sites: if cmp_insertions.is_empty() {
                0
            } else {
                self.cmp.sites
            },
            detectors: self.detectors,
            regex_lines: self.regex_lines(),
        }
    }
}

/// A space between a name that ends `out` and a piece that starts with one.
fn space_after_name(out: &mut Vec<u8>, starts_with_name: bool) {
    if starts_with_name && out.last().is_some_and(|&b| is_name_byte(b)) {
        out.push(b' ');
    }
}

impl CmpPlan {
    /// The dictionary (sorted, deduplicated, bounded) and the kept sites'
    /// insertions in render order, renumbered densely.
    fn new(comparisons: Comparisons) -> CmpPlan {
        let Comparisons {
            mut tokens,
            sites,
            mut insertions,
            lists,
            ..
        } = comparisons;
        tokens.sort_unstable();
        tokens.dedup();
        tokens.truncate(MAX_LITERALS_PER_FILE);
        let mut renumber = vec![u32::MAX; sites.len()];
        let mut kept = 0;
        for (site, valid) in sites.iter().enumerate() {
            if *valid {
                renumber[site] = kept;
                kept += 1;
            }
        }
        insertions.retain_mut(|insertion| {
            insertion.site = renumber[insertion.site as usize];
            insertion.site != u32::MAX
        });
        insertions.sort_by_key(|insertion| (insertion.offset, insertion.rank));
        CmpPlan {
            literals: tokens,
            insertions,
            sites: kept,
            lists,
        }
    }
}

/// Byte offsets to 1-based (line, column) for offsets asked in rising order.
struct LineCounter<'s> {
    source: &'s [u8],
    offset: usize,
    line: u32,
    line_start: usize,
}

impl<'s> LineCounter<'s> {
    fn new(source: &'s [u8]) -> Self {
        LineCounter {
            source,
            offset: 0,
            line: 1,
            line_start: 0,
        }
    }

    fn position(&mut self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.source.len());
        for newline in memchr::memchr_iter(b'\n', &self.source[self.offset..offset]) {
            self.line += 1;
            self.line_start = self.offset + newline + 1;
        }
        self.offset = offset;
        (self.line, (offset - self.line_start + 1) as u32)
    }
}

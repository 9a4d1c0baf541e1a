//! PHP source in, instrumented PHP source plus a block map out.
//!
//! Pure: no I/O. The caller owns the [`BlockIdAllocator`], one per fuzzing
//! session, so block ids stay unique across every file and every harness
//! process of that session.

mod analyze;
mod grammar;
mod ids;
mod lexical;
mod newer_syntax;
mod parse;
mod render;
mod stub;

pub use ids::{BlockId, BlockIdAllocator, MAX_BLOCK_ID};
pub use render::Plan;

pub use php_fuzz_detectors::{Detector, DetectorSet};
use serde::{Deserialize, Serialize};

/// What a block marks. The kinds up to `GotoLabel` get a counter statement;
/// those from `ShortCircuit` on mark an expression and get a wrapper around
/// it (see `docs/instrumentation.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    FileEntry,
    FunctionEntry,
    MethodEntry,
    ClosureEntry,
    PropertyHook,
    IfBranch,
    ElseIfBranch,
    ElseBranch,
    AfterIf,
    LoopBody,
    LoopExit,
    SwitchCase,
    AfterSwitch,
    TryBody,
    Catch,
    Finally,
    AfterTry,
    GotoLabel,
    /// Right operand of `&&`, `||`, `and`, `or`.
    ShortCircuit,
    /// Right operand of `??`, value of `??=`.
    Coalesce,
    TernaryThen,
    TernaryElse,
    MatchArm,
    ArrowFunctionBody,
    YieldResume,
}

impl BlockKind {
    /// Whether this block's counter also keeps the trace bounded: every
    /// loop iteration passes a loop body or a label, and every call an
    /// entry, so no run records more than a bounded stretch without one.
    pub fn bounds_trace(self) -> bool {
        matches!(
            self,
            BlockKind::LoopBody
                | BlockKind::GotoLabel
                | BlockKind::FunctionEntry
                | BlockKind::MethodEntry
                | BlockKind::ClosureEntry
                | BlockKind::PropertyHook
        )
    }
}

/// One entry of the block map.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    pub id: BlockId,
    pub kind: BlockKind,
    /// Byte offset in the original source of the construct this block marks.
    pub byte_offset: usize,
    /// 1-based line in the original (and, identically, the instrumented) source.
    pub line: u32,
    /// 1-based column, counted in bytes.
    pub column: u32,
    /// Enclosing function as PHP would name it (`Parser::parse`, `{closure}`,
    /// `parse`), `None` for top-level code.
    pub function: Option<String>,
}

/// How a block records that it ran. See `docs/instrumentation.md`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StubStyle {
    /// Append the block id (4 bytes, little-endian) to `FuzzingContext::$trace`;
    /// edges and hit counts are computed outside PHP.
    #[default]
    Trace,
    /// Count `(prev << 28) | id` in `FuzzingContext::$edges`, as php-fuzzer does
    /// (without its visible `$___key` local).
    EdgeMap,
}

/// Which blocks are recorded. See `docs/instrumentation.md`, "Pruned coverage".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Coverage {
    /// Every block: each branch, body and case, and the code after every
    /// if, loop, switch and try (the join points). What the coverage report
    /// uses, since every line then belongs to a recorded block.
    #[default]
    Full,
    /// Leaves out blocks that other blocks imply when no exception (or
    /// `exit`) intervenes: a join point (after if, switch, try, do-while)
    /// whose every entry passed a recorded branch, case or body of the
    /// statement, and the entry counter of a body whose plain statements
    /// lead into such a statement (see `docs/instrumentation.md`). Fewer
    /// records per run; the features differ from [`Coverage::Full`]'s
    /// where an exception leaves a body.
    Pruned,
}

impl Coverage {
    /// The join points [`Coverage::Pruned`] leaves out where every path
    /// into them passed a recorded block.
    pub const JOIN_POINTS: [BlockKind; 4] = [
        BlockKind::AfterIf,
        BlockKind::LoopExit,
        BlockKind::AfterSwitch,
        BlockKind::AfterTry,
    ];

    /// The kinds [`Coverage::Pruned`] leaves out where other blocks imply
    /// them: the counters after the `{` or `:` of a body.
    pub const IMPLIED_ENTRIES: [BlockKind; 11] = [
        BlockKind::FunctionEntry,
        BlockKind::MethodEntry,
        BlockKind::ClosureEntry,
        BlockKind::PropertyHook,
        BlockKind::IfBranch,
        BlockKind::ElseIfBranch,
        BlockKind::ElseBranch,
        BlockKind::LoopBody,
        BlockKind::TryBody,
        BlockKind::Catch,
        BlockKind::Finally,
    ];

    /// The name used on the command line and in the block map.
    pub fn name(self) -> &'static str {
        match self {
            Coverage::Full => "full",
            Coverage::Pruned => "pruned",
        }
    }
}

impl std::fmt::Display for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instrumented {
    pub source: Vec<u8>,
    pub blocks: Vec<Block>,
    /// The dictionary taken from the file: the literal operands of its
    /// comparisons, in the forms a parser reads them from (see
    /// `docs/instrumentation.md`). Sorted, each once.
    pub comparison_literals: Vec<Vec<u8>>,
    /// Comparison sites the source logs (the `cmplog` rendering), else 0.
    pub comparison_sites: u32,
    /// The detectors whose sinks the file calls: their words join the
    /// dictionary (docs/detectors.md).
    pub detectors: DetectorSet,
    /// Lines of the `preg_*` calls whose results are checked, sorted, each
    /// once: a run stuck past the timeout on one is `regex-dos`.
    pub regex_lines: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// tree-sitter produced ERROR or MISSING nodes; 1-based line of the first.
    ParseError { line: u32 },
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::ParseError { line } => {
                write!(
                    f,
                    "tree-sitter-php cannot parse this file (first error on line {line})"
                )
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Instrumented(Instrumented),
    /// Returned unchanged; PHP reports any real syntax error itself.
    Skipped(SkipReason),
}

#[derive(Debug, thiserror::Error)]
pub enum InstrumentError {
    #[error("out of block ids: {requested} more needed, {available} left of {max}", max = MAX_BLOCK_ID)]
    OutOfBlockIds { requested: u32, available: u32 },
    #[error("out of comparison site ids")]
    OutOfSiteIds,
}

/// Whether the calls of the bug detectors' sinks go through php-fuzz's
/// hooks (docs/detectors.md). Code with hooks needs the harness's runtime
/// (`php-runtime/internal/Sinks.php` and the detectors) to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Hooks {
    /// Sink calls are rewritten: what the harness serves by default.
    #[default]
    Rewrite,
    /// Sink calls stay as they are: no detector, no side-effect refusal.
    LeaveOut,
}

/// Instruments one PHP file: `source` in, instrumented source and its block
/// map out, with one contiguous range of ids taken from `ids`; `coverage`
/// says which blocks are recorded, `hooks` whether sinks are hooked.
///
/// Never panics, whatever the bytes. A file tree-sitter cannot parse comes
/// back as [`Outcome::Skipped`]: run it unchanged, and PHP reports any real
/// syntax error itself. A file with nothing to instrument (no PHP code)
/// comes back instrumented with no blocks and its source unchanged.
pub fn instrument(
    source: &[u8],
    ids: &mut BlockIdAllocator,
    style: StubStyle,
    coverage: Coverage,
    hooks: Hooks,
) -> Result<Outcome, InstrumentError> {
    planned(source, coverage, hooks, |plan| {
        let first = ids.allocate(plan.block_count())?;
        Ok(plan.render(first, style))
    })
}

/// [`instrument`] in the `cmplog` rendering: the same blocks (in either
/// [`Coverage`]; the comparison sites do not depend on it), and every
/// comparison wrapped in calls to `\PhpFuzz\CmpLog` that log its operands
/// (see `docs/instrumentation.md`). Site ids start at `*next_site`, which
/// moves past the file's sites.
pub fn instrument_cmplog(
    source: &[u8],
    ids: &mut BlockIdAllocator,
    next_site: &mut u32,
    style: StubStyle,
    coverage: Coverage,
    hooks: Hooks,
) -> Result<Outcome, InstrumentError> {
    planned(source, coverage, hooks, |plan| {
        let end = next_site
            .checked_add(plan.comparison_sites())
            .ok_or(InstrumentError::OutOfSiteIds)?;
        let first = ids.allocate(plan.block_count())?;
        let instrumented = plan.render_cmplog(first, *next_site, style);
        *next_site = end;
        Ok(instrumented)
    })
}

/// What `render` makes of `source`'s plan, or why tree-sitter could not
/// parse it.
fn planned(
    source: &[u8],
    coverage: Coverage,
    hooks: Hooks,
    render: impl FnOnce(Plan<'_>) -> Result<Instrumented, InstrumentError>,
) -> Result<Outcome, InstrumentError> {
    match Plan::new(source, coverage) {
        Err(reason) => Ok(Outcome::Skipped(reason)),
        Ok(plan) => render(plan.with_hooks(hooks)).map(Outcome::Instrumented),
    }
}

//! PHP source in, instrumented PHP source plus a block map out.
//!
//! Pure: no I/O. The caller owns the [`BlockIdAllocator`], one per fuzzing
//! session, so block ids stay unique across every file and every harness
//! process of that session.

mod analyze;
mod ids;
mod render;
mod stub;

pub use ids::{BlockId, BlockIdAllocator, MAX_BLOCK_ID};

use serde::{Deserialize, Serialize};

/// What a block's counter marks. Statement-level kinds get a counter
/// statement, expression-level kinds a `traceBlock()` wrapper.
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
    pub fn is_expression_level(self) -> bool {
        matches!(
            self,
            BlockKind::ShortCircuit
                | BlockKind::Coalesce
                | BlockKind::TernaryThen
                | BlockKind::TernaryElse
                | BlockKind::MatchArm
                | BlockKind::ArrowFunctionBody
                | BlockKind::YieldResume
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
    /// Append the block id to the array `FuzzingContext::$trace`; edges and
    /// hit counts are computed outside PHP.
    #[default]
    Trace,
    /// Count `(prev << 28) | id` in `FuzzingContext::$edges`, as php-fuzzer does
    /// (without its visible `$___key` local).
    EdgeMap,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instrumented {
    pub source: Vec<u8>,
    pub blocks: Vec<Block>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// tree-sitter produced ERROR or MISSING nodes; 1-based line of the first.
    ParseError { line: u32 },
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
}

/// Instruments one PHP file: `source` in, instrumented source and its block
/// map out. Never panics, whatever the bytes. A file tree-sitter cannot parse
/// comes back [`Outcome::Skipped`], unchanged: PHP reports any real syntax
/// error itself. One contiguous range of ids is taken from `ids`.
pub fn instrument(
    source: &[u8],
    ids: &mut BlockIdAllocator,
    style: StubStyle,
) -> Result<Outcome, InstrumentError> {
    instrument_with(source, style, |count| ids.allocate(count))
}

/// Like [`instrument`], with ids from `allocate`, called once with the
/// number of blocks and returning the first id of a free range that long.
/// Lets threads share an allocator and hold its lock only for that call.
pub fn instrument_with(
    source: &[u8],
    style: StubStyle,
    allocate: impl FnOnce(u32) -> Result<BlockId, InstrumentError>,
) -> Result<Outcome, InstrumentError> {
    let language: tree_sitter::Language = tree_sitter_php::LANGUAGE_PHP.into();
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&language)
        .expect("tree-sitter-php matches the tree-sitter version");
    let Some(tree) = parser.parse(source, None) else {
        return Ok(Outcome::Skipped(SkipReason::ParseError { line: 1 }));
    };
    let root = tree.root_node();
    let limit = analyze::halt_compiler_end(source, root).unwrap_or(source.len());
    if let Some(line) = first_error_line(root, limit) {
        return Ok(Outcome::Skipped(SkipReason::ParseError { line }));
    }
    let mut plan = analyze::analyze(source, root, &language, limit);

    // Ids follow the source order of the blocks.
    let mut order: Vec<usize> = (0..plan.blocks.len()).collect();
    order.sort_by_key(|&i| plan.blocks[i].anchor);
    let first = allocate(plan.blocks.len() as u32)?;
    let mut block_ids = vec![0u32; plan.blocks.len()];
    for (rank, &index) in order.iter().enumerate() {
        block_ids[index] = first.0 + rank as u32;
    }
    let lines = LineIndex::new(source);
    let blocks = order
        .iter()
        .map(|&index| {
            let planned = &plan.blocks[index];
            let (line, column) = lines.position(planned.anchor);
            Block {
                id: BlockId(block_ids[index]),
                kind: planned.kind,
                byte_offset: planned.anchor,
                line,
                column,
                function: planned.function.clone(),
            }
        })
        .collect();
    let instrumented = render::render(source, &mut plan, &block_ids, style);
    Ok(Outcome::Instrumented(Instrumented {
        source: instrumented,
        blocks,
    }))
}

/// Line (1-based) of the first ERROR or MISSING node before `limit`.
fn first_error_line(root: tree_sitter::Node<'_>, limit: usize) -> Option<u32> {
    if !root.has_error() {
        return None;
    }
    let mut cursor = root.walk();
    'outer: loop {
        let node = cursor.node();
        if node.start_byte() < limit && (node.is_error() || node.is_missing()) {
            return Some(node.start_position().row as u32 + 1);
        }
        if node.has_error() && node.start_byte() < limit && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'outer;
            }
            if !cursor.goto_parent() {
                return None;
            }
        }
    }
}

/// Byte offset → (line, column), both 1-based.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(source: &[u8]) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            source
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex { starts }
    }

    fn position(&self, offset: usize) -> (u32, u32) {
        let line = self.starts.partition_point(|&s| s <= offset);
        let column = offset - self.starts[line - 1] + 1;
        (line as u32, column as u32)
    }
}

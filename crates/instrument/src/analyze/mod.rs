//! Finds the blocks of a parsed file and plans the insertions that mark them.
//!
//! One walk over the tree with a cursor (no recursion, so no input can
//! overflow the stack). On entering a node the walk first updates the
//! [`Scope`] (which function, which class, whether calls are allowed), then
//! plans the coverage blocks the node opens: [`statements`] for counters in
//! statement lists and bodies, [`expressions`] for wrappers around
//! expressions. [`regions`] notes where PHP code is, and at the end drops
//! the blocks that would put anything outside it. Another pass over the same
//! nodes (collecting comparison operands, say) would be one more module
//! called from `Analyzer::enter` beside `plan_coverage`, reading the same
//! scope and, if it inserts anything, going through `block` / `insert` and
//! the same regions check.
//!
//! Each block gets an anchor, a byte of the original source that belongs to
//! it alone, and the insertions that mark it:
//!
//! | kinds | anchor |
//! | --- | --- |
//! | file entry | the opening `<?php` |
//! | function, method, closure, hook entry; try, catch, finally | the body's `{` |
//! | if, elseif, else, loop bodies | the body's `{` or `:`; for a brace-less body the `)` before it, or the `else` / `do` keyword |
//! | switch case | the `case` / `default` keyword |
//! | after if, loop exit, after switch, after try | the last byte of the statement |
//! | goto label | the label's first byte |
//! | short circuit, coalesce | the operator |
//! | ternary then / else | the `?` / the `:` |
//! | match arm, arrow function body | the arm's or the function's `=>` |
//! | yield resume | the `yield` keyword |
//!
//! No byte anchors two blocks, so the block map never has two blocks at one
//! position.

mod comparisons;
mod expressions;
mod literals;
mod pruning;
mod regions;
mod scope;
mod side_effects;
mod sinks;
mod statements;

use tree_sitter::{Node, Tree};

use crate::grammar::{Grammar, NodeKind};
use crate::stub::Piece;
use crate::{BlockKind, Coverage};
pub(crate) use comparisons::{CmpInsertion, Comparisons};
use regions::CodeRegions;
use scope::Scope;
pub(crate) use sinks::{SinkInsertion, Sinks};

/// A block found in the file, before it has an id.
#[derive(Debug, Clone)]
pub(crate) struct PlannedBlock {
    pub kind: BlockKind,
    pub anchor: usize,
    /// Index into `Analysis::names`.
    pub function: Option<u32>,
    /// What a wrapper or added braces enclose, if anything.
    pub span: Option<(usize, usize)>,
    /// Cleared when one of its insertions would land outside PHP code, or
    /// when the block is left out as implied (`pruned`).
    pub valid: bool,
    /// Left out as implied by other blocks: a counter that bounds the
    /// trace then keeps its length check (`Piece::TraceBound`).
    pub pruned: bool,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Insertion {
    pub offset: usize,
    /// Order among insertions at one offset; see `Rank`.
    pub rank: u32,
    pub block: u32,
    pub piece: Piece,
}

/// What the analysis of one file found, in walk order; holds no tree.
/// `render::Plan` orders it and gives it line numbers.
#[derive(Debug, Default)]
pub(crate) struct Analysis {
    pub blocks: Vec<PlannedBlock>,
    pub insertions: Vec<Insertion>,
    /// Function names as PHP gives them; `PlannedBlock::function` indexes it.
    pub names: Vec<String>,
    pub comparisons: Comparisons,
    pub sinks: Sinks,
}

/// Order of insertions at the same offset. Everything that closes a
/// construct comes before everything that opens one; closings go innermost
/// first, openings outermost first. Depths are doubled so that a `yield`'s
/// own wrapper nests inside a wrapper its parent puts around the same node.
struct Rank;

impl Rank {
    const SPAN: u32 = 1 << 30;

    fn close(depth2: u32) -> u32 {
        1 + (Self::SPAN - 1 - depth2.min(Self::SPAN - 1))
    }

    fn open(depth2: u32) -> u32 {
        Self::SPAN + 1 + depth2.min(Self::SPAN - 1)
    }
}

struct Analyzer<'s> {
    source: &'s [u8],
    grammar: &'static Grammar,
    coverage: Coverage,
    blocks: Vec<PlannedBlock>,
    insertions: Vec<Insertion>,
    scope: Scope<'s>,
    regions: CodeRegions,
    /// Nodes whose value must stay a reference: the body of `fn&() =>`.
    by_reference: Vec<usize>,
    /// Brace-less bodies that must stay brace-less (see `dangling_else`).
    keep_brace_less: Vec<usize>,
    comparisons: Comparisons,
    sinks: Sinks,
    /// Pruned coverage: blocks other blocks imply (see `pruning`).
    implied: Vec<pruning::Implied>,
}

/// Plans the instrumentation of `source`, parsed without errors into `tree`,
/// with the blocks `coverage` records.
pub(crate) fn analyze(source: &[u8], tree: &Tree, coverage: Coverage) -> Analysis {
    let grammar = Grammar::get();
    let mut analyzer = Analyzer {
        source,
        grammar,
        coverage,
        blocks: Vec::new(),
        insertions: Vec::new(),
        scope: Scope::new(source, grammar),
        regions: CodeRegions::default(),
        by_reference: Vec::new(),
        keep_brace_less: Vec::new(),
        comparisons: Comparisons::default(),
        sinks: Sinks::default(),
        implied: Vec::new(),
    };
    analyzer.walk(tree);
    let Analyzer {
        mut blocks,
        insertions,
        scope,
        regions,
        mut comparisons,
        mut sinks,
        implied,
        ..
    } = analyzer;
    let outside = regions.outside_php();
    outside.invalidate_blocks(&mut blocks, &insertions);
    outside.invalidate_sites(&mut comparisons);
    pruning::leave_out_implied(&mut blocks, &implied);
    sinks.finish();
    Analysis {
        blocks,
        insertions,
        names: scope.into_names(),
        comparisons,
        sinks,
    }
}

impl<'s> Analyzer<'s> {
    fn walk(&mut self, tree: &Tree) {
        let mut cursor = tree.walk();
        let mut depth = 0u32;
        'walk: loop {
            if self.enter(cursor.node(), depth) && cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            loop {
                self.scope.leave(depth);
                if cursor.goto_next_sibling() {
                    continue 'walk;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
                depth -= 1;
            }
        }
    }

    /// Handles entering `node`; returns whether to walk its children.
    // Into the walk's loop: as a call it costs about 2 % of the analysis.
    #[inline(always)]
    fn enter(&mut self, node: Node<'_>, depth: u32) -> bool {
        let kind = self.grammar.kind(node);
        if self.grammar.is_opaque(node) {
            if kind == NodeKind::NamespaceUseDeclaration {
                self.note_use_declaration(node);
            }
            self.scope.push_parent(kind, false);
            return false;
        }
        self.scope.enter(node, kind, depth);
        let descend = self.plan_coverage(node, kind, depth);
        self.plan_comparisons(node, kind, depth);
        self.plan_sinks(node, kind, depth);
        let is_list = self.is_statement_list(node, kind);
        self.scope.push_parent(kind, is_list);
        descend
    }

    /// Plans the blocks `node` opens; returns whether to walk its children.
    fn plan_coverage(&mut self, node: Node<'_>, kind: NodeKind, depth: u32) -> bool {
        match kind {
            NodeKind::Program => self.file_entry(node),
            NodeKind::PhpTag => {
                let parent = self.scope.parent_kind();
                self.regions.open_tag(self.source, node, parent);
            }
            NodeKind::TextInterpolation => {
                let parent = self.scope.parent_kind();
                self.regions
                    .text_interpolation(self.source, self.grammar, node, parent);
                return false;
            }
            NodeKind::FunctionDefinition => self.body_entry(node, BlockKind::FunctionEntry, depth),
            NodeKind::MethodDeclaration => self.body_entry(node, BlockKind::MethodEntry, depth),
            NodeKind::AnonymousFunction => self.body_entry(node, BlockKind::ClosureEntry, depth),
            NodeKind::PropertyHook => self.property_hook(node, depth),
            NodeKind::ArrowFunction => self.arrow_function(node, depth),
            NodeKind::IfStatement => self.if_statement(node, depth),
            NodeKind::WhileStatement | NodeKind::ForeachStatement => {
                self.loop_statement(node, depth)
            }
            NodeKind::DoStatement => self.do_statement(node, depth),
            NodeKind::ForStatement => self.for_statement(node, depth),
            NodeKind::SwitchStatement => self.after(node, BlockKind::AfterSwitch, depth),
            NodeKind::CaseStatement | NodeKind::DefaultStatement => self.switch_case(node, depth),
            NodeKind::TryStatement => {
                self.body_entry(node, BlockKind::TryBody, depth);
                self.after(node, BlockKind::AfterTry, depth);
            }
            NodeKind::CatchClause => self.body_entry(node, BlockKind::Catch, depth),
            NodeKind::FinallyClause => self.body_entry(node, BlockKind::Finally, depth),
            NodeKind::NamedLabelStatement => self.label(node, depth),
            NodeKind::BinaryExpression => self.binary(node, depth),
            NodeKind::AugmentedAssignmentExpression => self.augmented_assignment(node, depth),
            NodeKind::ConditionalExpression => self.conditional(node, depth),
            NodeKind::MatchConditionalExpression | NodeKind::MatchDefaultExpression => {
                self.match_arm(node, depth)
            }
            NodeKind::YieldExpression => self.yield_expression(node, depth),
            _ => {}
        }
        true
    }

    // ----- blocks and insertions -----

    fn block(&mut self, kind: BlockKind, anchor: usize) -> u32 {
        self.blocks.push(PlannedBlock {
            kind,
            anchor,
            function: self.scope.function(),
            span: None,
            valid: !self.scope.in_assert(),
            pruned: false,
        });
        (self.blocks.len() - 1) as u32
    }

    fn insert(&mut self, offset: usize, rank: u32, block: u32, piece: Piece) {
        // Every loop iteration and every call passes a counter that bounds
        // the trace (docs/instrumentation.md, "A bounded trace").
        let piece = match piece {
            Piece::Counter if self.blocks[block as usize].kind.bounds_trace() => {
                Piece::BoundingCounter
            }
            Piece::BraceCounter if self.blocks[block as usize].kind.bounds_trace() => {
                Piece::BoundingBraceCounter
            }
            other => other,
        };
        self.insertions.push(Insertion {
            offset,
            rank,
            block,
            piece,
        });
    }

    /// A block whose insertions enclose `start..end`: `open` before it,
    /// `close` after it, both at nesting `depth2` (a doubled depth, see
    /// `Rank`).
    fn enclose(
        &mut self,
        kind: BlockKind,
        anchor: usize,
        (start, end): (usize, usize),
        depth2: u32,
        (open, close): (Piece, Piece),
    ) {
        let block = self.block(kind, anchor);
        self.blocks[block as usize].span = Some((start, end));
        self.insert(start, Rank::open(depth2), block, open);
        self.insert(end, Rank::close(depth2), block, close);
    }
}

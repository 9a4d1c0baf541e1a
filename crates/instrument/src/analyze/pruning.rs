//! [`Coverage::Pruned`](crate::Coverage::Pruned): leaves out the blocks
//! that other blocks imply, where the syntax shows it with certainty.
//!
//! SanitizerCoverage leaves out a block that dominates all its successors,
//! and a join that post-dominates all its (several) predecessors, after it
//! has split the critical edges, so that the edge of a condition that skips
//! a body keeps a counter of its own. Here, without a control-flow graph:
//!
//! - **A join point** (after an if, switch, try or do-while) whose every
//!   entry passed a recorded block of the statement: an `if` whose chain
//!   ends in an `else`, a `switch` with a `default`, any `try`, a
//!   `do … while`. Every run that reaches the join recorded a branch, a
//!   case, the try or catch body, or the loop body on the way, so the join
//!   adds no path the edges do not already tell apart. An `if` without an
//!   `else`, a `switch` without a `default`, and the exit of a `while`,
//!   `for` or `foreach` keep theirs: there the join is the only record of
//!   the condition that skipped the body (`if ($bad) return;` followed by
//!   nothing recorded: without the join, passing the guard adds no
//!   feature, and the fuzzer cannot see the progress).
//! - **The entry counter of a body** whose every run reaches another
//!   recorded block before anything else can happen: a `{ … }` or `: …`
//!   body whose statements are plain expression statements followed by an
//!   `if` with a final `else` (through any `elseif` / `else if` chain), a
//!   `try`, or a `do … while`. A plain statement contains no `yield` (the
//!   generator may never resume), no `throw`, no `exit` / `die`, and is no
//!   label, `return`, `break`, `continue` or `goto`: it cannot leave the
//!   body but by an exception.
//!
//! The witnesses (the blocks that imply the left-out one) are checked after
//! the analysis, against the blocks that survived: a witness dropped
//! because it would land outside PHP code, or a brace-less body that could
//! not take braces, keeps the block. A witness may itself be left out by
//! this rule: it is then implied by its own witnesses, which are nested
//! inside it, so the implication never runs in a circle.

use tree_sitter::Node;

use super::{Analyzer, PlannedBlock};
use crate::BlockKind;
use crate::grammar::NodeKind;

/// A block left out if every witness (an anchor and the kind of the block
/// there) is a block that survived the analysis.
#[derive(Debug)]
pub(super) struct Implied {
    pub block: u32,
    pub witnesses: Vec<(usize, BlockKind)>,
}

impl Analyzer<'_> {
    /// Notes that `block`, the counter at the start of `list` (a `{ … }` or
    /// `: …` body), is implied, if its statements say so.
    pub(super) fn note_implied(&mut self, block: u32, list: Node<'_>) {
        if let Some(witnesses) = self.witnesses_of_list(list) {
            self.implied.push(Implied { block, witnesses });
        }
    }

    /// Notes that `block`, the join point after `statement`, is implied if
    /// every path into it passed a recorded block of the statement.
    pub(super) fn note_implied_join(&mut self, block: u32, statement: Node<'_>) {
        let mut witnesses = Vec::new();
        let found = match self.grammar.kind(statement) {
            NodeKind::IfStatement => self.if_witnesses(statement, false, &mut witnesses),
            NodeKind::SwitchStatement => self.switch_witnesses(statement, &mut witnesses),
            NodeKind::TryStatement => self.body_opening(statement).map(|at| {
                witnesses.push((at, BlockKind::TryBody));
            }),
            NodeKind::DoStatement => self.do_witness(statement).map(|w| witnesses.push(w)),
            _ => None,
        };
        if found.is_some() {
            self.implied.push(Implied { block, witnesses });
        }
    }

    /// Every case of a switch with a `default` (so that some case counter
    /// runs whatever the subject).
    fn switch_witnesses(
        &self,
        node: Node<'_>,
        witnesses: &mut Vec<(usize, BlockKind)>,
    ) -> Option<()> {
        let body = node.child_by_field_id(self.grammar.fields.body.get())?;
        let mut cursor = body.walk();
        let mut default = false;
        for case in body.named_children(&mut cursor) {
            match self.grammar.kind(case) {
                NodeKind::CaseStatement => {}
                NodeKind::DefaultStatement => default = true,
                _ => continue,
            }
            witnesses.push((case.start_byte(), BlockKind::SwitchCase));
        }
        default.then_some(())
    }

    /// The body counter of a `do … while`, which runs at least once.
    fn do_witness(&self, node: Node<'_>) -> Option<(usize, BlockKind)> {
        let anchor = self.body_opening(node).unwrap_or_else(|| node.start_byte());
        Some((anchor, BlockKind::LoopBody))
    }

    /// The blocks one of which every run of `list` records (exceptions
    /// aside), if the statements show it.
    fn witnesses_of_list(&self, list: Node<'_>) -> Option<Vec<(usize, BlockKind)>> {
        let mut cursor = list.walk();
        let mut statements = Vec::new();
        for child in list.children(&mut cursor) {
            if child.is_extra() {
                // `?> html <?php` between the statements: leave it alone.
                if self.grammar.kind(child) == NodeKind::TextInterpolation {
                    return None;
                }
                continue;
            }
            if child.is_named() {
                statements.push(child);
            }
        }
        let (last, before) = statements.split_last()?;
        let mut witnesses = Vec::new();
        match self.grammar.kind(*last) {
            NodeKind::IfStatement => self.if_witnesses(*last, false, &mut witnesses)?,
            NodeKind::TryStatement => {
                witnesses.push((self.body_opening(*last)?, BlockKind::TryBody));
            }
            NodeKind::DoStatement => witnesses.push(self.do_witness(*last)?),
            _ => return None,
        }
        before
            .iter()
            .all(|s| self.is_plain_statement(*s))
            .then_some(witnesses)
    }

    /// The branch counters of an `if` with a final `else`; `chained` for
    /// the `if` of an `else if`.
    fn if_witnesses(
        &self,
        node: Node<'_>,
        chained: bool,
        witnesses: &mut Vec<(usize, BlockKind)>,
    ) -> Option<()> {
        let first = if chained {
            BlockKind::ElseIfBranch
        } else {
            BlockKind::IfBranch
        };
        let condition_end = |clause: Node<'_>| {
            clause
                .child_by_field_id(self.grammar.fields.condition.get())
                .map(|c| c.end_byte().saturating_sub(1))
        };
        witnesses.push((
            self.body_opening(node).or_else(|| condition_end(node))?,
            first,
        ));
        let f = &self.grammar.fields;
        let mut cursor = node.walk();
        let alternatives: Vec<Node<'_>> = node
            .children_by_field_id(f.alternative, &mut cursor)
            .collect();
        let (last, middle) = alternatives.split_last()?;
        for alternative in middle {
            if self.grammar.kind(*alternative) != NodeKind::ElseIfClause {
                return None;
            }
            let anchor = self
                .body_opening(*alternative)
                .or_else(|| condition_end(*alternative))?;
            witnesses.push((anchor, BlockKind::ElseIfBranch));
        }
        if self.grammar.kind(*last) != NodeKind::ElseClause {
            return None;
        }
        let body = last.child_by_field_id(f.body.get())?;
        if self.grammar.kind(body) == NodeKind::IfStatement {
            self.if_witnesses(body, true, witnesses)
        } else {
            let anchor = self.body_opening(*last).unwrap_or(last.start_byte());
            witnesses.push((anchor, BlockKind::ElseBranch));
            Some(())
        }
    }

    /// The `{` or `:` opening `node`'s body, where that body's counter is
    /// anchored; `None` for a brace-less body.
    fn body_opening(&self, node: Node<'_>) -> Option<usize> {
        let body = node.child_by_field_id(self.grammar.fields.body.get())?;
        let expected = match self.grammar.kind(body) {
            NodeKind::CompoundStatement => NodeKind::LBrace,
            NodeKind::ColonBlock => NodeKind::Colon,
            _ => return None,
        };
        body.child(0)
            .filter(|t| self.grammar.kind(*t) == expected)
            .map(|t| t.start_byte())
    }

    /// An expression statement that can leave only by an exception: no
    /// `yield`, `throw`, `exit` or `die` anywhere in it.
    fn is_plain_statement(&self, statement: Node<'_>) -> bool {
        match self.grammar.kind(statement) {
            NodeKind::EmptyStatement => return true,
            NodeKind::ExpressionStatement => {}
            _ => return false,
        }
        let mut cursor = statement.walk();
        let mut depth = 0u32;
        'walk: loop {
            let node = cursor.node();
            match self.grammar.kind(node) {
                NodeKind::YieldExpression | NodeKind::ThrowExpression => return false,
                NodeKind::Name if self.is_exit_keyword(node) => return false,
                _ => {}
            }
            if cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            while depth > 0 {
                if cursor.goto_next_sibling() {
                    continue 'walk;
                }
                cursor.goto_parent();
                depth -= 1;
            }
            return true;
        }
    }
}

/// Leaves out every implied block whose witnesses all survived the
/// analysis. Decided on the blocks as they were before any of these is
/// left out: a witness left out here is still implied by its own.
pub(super) fn leave_out_implied(blocks: &mut [PlannedBlock], implied: &[Implied]) {
    if implied.is_empty() {
        return;
    }
    let mut surviving: Vec<(usize, BlockKind)> = blocks
        .iter()
        .filter(|b| b.valid)
        .map(|b| (b.anchor, b.kind))
        .collect();
    surviving.sort_unstable();
    let implied: Vec<u32> = implied
        .iter()
        .filter(|i| {
            blocks[i.block as usize].valid
                && i.witnesses
                    .iter()
                    .all(|w| surviving.binary_search(w).is_ok())
        })
        .map(|i| i.block)
        .collect();
    for block in implied {
        blocks[block as usize].valid = false;
        blocks[block as usize].pruned = true;
    }
}

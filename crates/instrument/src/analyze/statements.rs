//! Statement-level blocks: counter statements at the entry of a file, a
//! function or a body, and after a whole if, loop, switch or try.

use tree_sitter::Node;

use super::{Analyzer, Rank};
use crate::grammar::NodeKind;
use crate::lexical::close_tag_after;
use crate::stub::Piece;
use crate::{BlockKind, Coverage};

impl Analyzer<'_> {
    /// Whether `node`'s statement children form a list where a statement
    /// may be added.
    pub(super) fn is_statement_list(&self, node: Node<'_>, kind: NodeKind) -> bool {
        match kind {
            NodeKind::Program
            | NodeKind::CompoundStatement
            | NodeKind::ColonBlock
            | NodeKind::CaseStatement
            | NodeKind::DefaultStatement => true,
            // Alternative syntax: `for (…): a(); b(); endfor;` hangs its
            // statements off the for statement itself, likewise `declare`.
            NodeKind::ForStatement | NodeKind::DeclareStatement => {
                self.grammar.child_of_kind(node, NodeKind::Colon).is_some()
            }
            _ => false,
        }
    }

    pub(super) fn file_entry(&mut self, program: Node<'_>) {
        let mut cursor = program.walk();
        let mut children = program.children(&mut cursor).filter(|c| !c.is_extra());
        // Inline HTML (or a `#!` line) may come before the first tag.
        let Some(tag) = children
            .by_ref()
            .find(|c| self.grammar.kind(*c) != NodeKind::Text)
        else {
            return;
        };
        // Only a file that opens with `<?php` and whitespace gets a file
        // entry; one that opens with `<?=` or `<?` is a template.
        if self.grammar.kind(tag) != NodeKind::PhpTag
            || !self
                .source
                .get(tag.byte_range())
                .is_some_and(|t| t.eq_ignore_ascii_case(b"<?php"))
        {
            return;
        }
        let mut at = match self.source.get(tag.end_byte()..) {
            Some([b'\r', b'\n', ..]) => tag.end_byte() + 2,
            Some([b' ' | b'\t' | b'\n' | b'\r', ..]) => tag.end_byte() + 1,
            _ => return,
        };
        for statement in children {
            match self.grammar.kind(statement) {
                // `declare(strict_types=1);` must stay the first statement,
                // and any declare may come before a namespace declaration.
                NodeKind::DeclareStatement => match self.terminated_end(statement) {
                    Some(end) => at = end,
                    None => return,
                },
                // PHP drops empty statements before it compiles anything.
                NodeKind::EmptyStatement => at = statement.end_byte(),
                // So must a namespace declaration.
                NodeKind::NamespaceDefinition => {
                    match statement.child_by_field_id(self.grammar.fields.body.get()) {
                        Some(body) => match body
                            .child(0)
                            .filter(|t| self.grammar.kind(*t) == NodeKind::LBrace)
                        {
                            Some(brace) => at = brace.end_byte(),
                            None => return,
                        },
                        None => match self.terminated_end(statement) {
                            Some(end) => at = end,
                            None => return,
                        },
                    }
                    break;
                }
                _ => break,
            }
        }
        let block = self.block(BlockKind::FileEntry, tag.start_byte());
        self.insert(at, Rank::open(0), block, Piece::Counter);
    }

    /// Entry of a function, method, closure, property hook, try, catch or
    /// finally: a counter after the `{` of its body.
    pub(super) fn body_entry(&mut self, node: Node<'_>, kind: BlockKind, depth: u32) {
        if let Some(body) = node.child_by_field_id(self.grammar.fields.body.get()) {
            self.counter_after_opening(body, kind, depth + 1);
        }
    }

    pub(super) fn if_statement<'t>(&mut self, node: Node<'t>, depth: u32) {
        self.dangling_else(node);
        let f = &self.grammar.fields;
        // `else if (…)` is an if statement as the body of an else clause:
        // treat it like `elseif`, with no after-if of its own.
        let chained = self.scope.parent_kind() == Some(NodeKind::ElseClause);
        if let Some(body) = node.child_by_field_id(f.body.get()) {
            let kind = if chained {
                BlockKind::ElseIfBranch
            } else {
                BlockKind::IfBranch
            };
            self.body(body, kind, self.condition_end(node), depth + 1);
        }
        let mut cursor = node.walk();
        let alternatives: Vec<Node<'t>> = node
            .children_by_field_id(f.alternative, &mut cursor)
            .collect();
        for alternative in alternatives {
            let Some(body) = alternative.child_by_field_id(f.body.get()) else {
                continue;
            };
            match self.grammar.kind(alternative) {
                NodeKind::ElseIfClause => {
                    let before = self.condition_end(alternative);
                    self.body(body, BlockKind::ElseIfBranch, before, depth + 2);
                }
                NodeKind::ElseClause if self.grammar.kind(body) != NodeKind::IfStatement => {
                    self.body(
                        body,
                        BlockKind::ElseBranch,
                        Some(alternative.start_byte()),
                        depth + 2,
                    );
                }
                _ => {}
            }
        }
        if !chained {
            self.after(node, BlockKind::AfterIf, depth);
        }
    }

    /// The last byte of an if's or an elseif's condition, the `)`.
    fn condition_end(&self, node: Node<'_>) -> Option<usize> {
        node.child_by_field_id(self.grammar.fields.condition.get())
            .map(|c| c.end_byte().saturating_sub(1))
    }

    /// In `if ($a) if ($b) x(); else y();` PHP gives the `else` to the
    /// innermost if without one, `if ($b)`; tree-sitter-php gives it to
    /// `if ($a)`. Braces around any body that holds `if ($b)` would close it
    /// before the `else` and make PHP agree with tree-sitter, so those
    /// bodies stay brace-less. (Their blocks are lost; the else body still
    /// gets its counter, which runs exactly when PHP runs that body.)
    fn dangling_else(&mut self, node: Node<'_>) {
        let f = &self.grammar.fields;
        let mut cursor = node.walk();
        if node
            .children_by_field_id(f.alternative, &mut cursor)
            .next()
            .is_none()
        {
            return;
        }
        // The right spine of the body: the statements the `else` follows.
        let mut spine = Vec::new();
        let mut innermost_open_if = None;
        let mut current = node.child_by_field_id(f.body.get());
        while let Some(statement) = current {
            spine.push(statement.id());
            current = match self.grammar.kind(statement) {
                NodeKind::IfStatement => {
                    let mut cursor = statement.walk();
                    match statement
                        .children_by_field_id(f.alternative, &mut cursor)
                        .last()
                    {
                        Some(alternative) => alternative.child_by_field_id(f.body.get()),
                        None => {
                            innermost_open_if = Some(spine.len());
                            statement.child_by_field_id(f.body.get())
                        }
                    }
                }
                NodeKind::WhileStatement
                | NodeKind::ForStatement
                | NodeKind::ForeachStatement
                | NodeKind::DeclareStatement => statement.child_by_field_id(f.body.get()),
                _ => None,
            };
        }
        if let Some(end) = innermost_open_if {
            self.keep_brace_less.extend_from_slice(&spine[..end]);
        }
    }

    /// `while (…) body` and `foreach (…) body`.
    pub(super) fn loop_statement(&mut self, node: Node<'_>, depth: u32) {
        if let Some(body) = node.child_by_field_id(self.grammar.fields.body.get()) {
            let before = self.last_token_before(node, body);
            self.body(body, BlockKind::LoopBody, before, depth + 1);
        }
        self.after(node, BlockKind::LoopExit, depth);
    }

    pub(super) fn do_statement(&mut self, node: Node<'_>, depth: u32) {
        if let Some(body) = node.child_by_field_id(self.grammar.fields.body.get()) {
            self.body(
                body,
                BlockKind::LoopBody,
                Some(node.start_byte()),
                depth + 1,
            );
        }
        self.after(node, BlockKind::LoopExit, depth);
    }

    pub(super) fn for_statement(&mut self, node: Node<'_>, depth: u32) {
        let mut cursor = node.walk();
        let mut close = None;
        let mut colon = None;
        for child in node.children(&mut cursor) {
            match self.grammar.kind(child) {
                NodeKind::RParen if colon.is_none() => close = Some(child),
                NodeKind::Colon if close.is_some() => {
                    colon = Some(child);
                    break;
                }
                _ => {}
            }
        }
        if let Some(colon) = colon {
            let block = self.block(BlockKind::LoopBody, colon.start_byte());
            self.insert(
                colon.end_byte(),
                Rank::open(2 * (depth + 1)),
                block,
                Piece::Counter,
            );
        } else if let Some(body) = node.child_by_field_id(self.grammar.fields.body.get()) {
            self.body(
                body,
                BlockKind::LoopBody,
                close.map(|c| c.start_byte()),
                depth + 1,
            );
        }
        self.after(node, BlockKind::LoopExit, depth);
    }

    pub(super) fn switch_case(&mut self, node: Node<'_>, depth: u32) {
        // `case 1:` or `case 1;`: the first `:`/`;` child after the value.
        let mut cursor = node.walk();
        let separator = node.children(&mut cursor).skip(1).find(|c| {
            !c.is_named() && matches!(self.grammar.kind(*c), NodeKind::Colon | NodeKind::Semicolon)
        });
        if let Some(separator) = separator {
            let block = self.block(BlockKind::SwitchCase, node.start_byte());
            self.insert(
                separator.end_byte(),
                Rank::open(2 * depth),
                block,
                Piece::Counter,
            );
        }
    }

    pub(super) fn label(&mut self, node: Node<'_>, depth: u32) {
        if !self.scope.in_statement_list() {
            return;
        }
        if let Some(end) = self.terminated_end(node) {
            let block = self.block(BlockKind::GotoLabel, node.start_byte());
            self.insert(end, Rank::open(2 * depth), block, Piece::Counter);
        }
    }

    /// A counter right after the first token of `opener`, a `{…}` or `: …` block.
    fn counter_after_opening(&mut self, opener: Node<'_>, kind: BlockKind, depth: u32) {
        let expected = match self.grammar.kind(opener) {
            NodeKind::CompoundStatement => NodeKind::LBrace,
            NodeKind::ColonBlock => NodeKind::Colon,
            _ => return,
        };
        let Some(token) = opener
            .child(0)
            .filter(|t| self.grammar.kind(*t) == expected)
        else {
            return;
        };
        let block = self.block(kind, token.start_byte());
        self.insert(
            token.end_byte(),
            Rank::open(2 * depth),
            block,
            Piece::Counter,
        );
        if self.coverage == Coverage::Pruned {
            self.note_implied(block, opener);
        }
    }

    /// The body of a branch or a loop: a `{…}` block, an alternative-syntax
    /// `: …` block, or one statement that gets braces on its own lines.
    /// `before` is the token before a brace-less body, its anchor.
    fn body(&mut self, body: Node<'_>, kind: BlockKind, before: Option<usize>, depth: u32) {
        match self.grammar.kind(body) {
            NodeKind::CompoundStatement | NodeKind::ColonBlock => {
                self.counter_after_opening(body, kind, depth)
            }
            _ if self.keep_brace_less.contains(&body.id()) => {}
            _ => {
                // The `}` goes right after the statement, so the statement
                // must end in a token of its own: a `?>` standing in for its
                // `;` would also end the `if` before an `else`.
                let (Some(anchor), Some(end)) = (before, self.terminated_end(body)) else {
                    return;
                };
                self.enclose(
                    kind,
                    anchor,
                    (body.start_byte(), end),
                    2 * depth,
                    (Piece::BraceCounter, Piece::BraceClose),
                );
            }
        }
    }

    /// The counter after a whole if, loop, switch or try: the code that
    /// follows it. Only where a statement may follow, in a statement list;
    /// a brace-less body (`while ($a) if ($b) x();`) has nothing after it
    /// inside the body, and its parent's own counter follows at once.
    ///
    /// [`Coverage::Pruned`] leaves such a join point out where every path
    /// into it passed a recorded block of the statement (see `pruning`).
    pub(super) fn after(&mut self, node: Node<'_>, kind: BlockKind, depth: u32) {
        if !self.scope.in_statement_list() {
            return;
        }
        let anchor = node.end_byte().saturating_sub(1);
        let block = if let Some(end) = self.terminated_end(node) {
            let block = self.block(kind, anchor);
            self.insert(end, Rank::close(2 * depth), block, Piece::Counter);
            block
        } else if close_tag_after(self.source, node.end_byte()).is_some() {
            // `<?php endif ?>`: the `?>` is the statement's `;`. Adding one
            // leaves the `?>` as an empty statement, which is harmless here.
            // The `;` ranks with the counter (and goes first), after the
            // closing parentheses of wrappers inside the statement.
            let block = self.block(kind, anchor);
            let end = node.end_byte();
            self.insert(end, Rank::close(2 * depth), block, Piece::Terminator);
            self.insert(end, Rank::close(2 * depth), block, Piece::Counter);
            block
        } else {
            return;
        };
        if self.coverage == Coverage::Pruned {
            self.note_implied_join(block, node);
        }
    }

    /// `node`'s end, if `node` ends with its own `;`, `}` or label `:`, and
    /// not with an expression (a closure's `}` in `$f = function () {} ?>`).
    fn terminated_end(&self, node: Node<'_>) -> Option<usize> {
        let mut current = node;
        loop {
            if !self.grammar.in_statement_chain(current) {
                return None;
            }
            let count = current.child_count();
            let last = current.child(count.checked_sub(1)?)?;
            if last.is_extra() {
                return None;
            }
            match self.grammar.kind(last) {
                NodeKind::Semicolon | NodeKind::RBrace => return Some(node.end_byte()),
                NodeKind::Colon if self.grammar.kind(current) == NodeKind::NamedLabelStatement => {
                    return Some(node.end_byte());
                }
                _ if last.child_count() > 0 => current = last,
                _ => return None,
            }
        }
    }

    /// Last byte of the token just before `child` among `node`'s children:
    /// the `)` of `while (…) body`.
    fn last_token_before(&self, node: Node<'_>, child: Node<'_>) -> Option<usize> {
        let mut cursor = node.walk();
        let mut before = None;
        for c in node.children(&mut cursor) {
            if c.id() == child.id() {
                return before;
            }
            if !c.is_extra() {
                before = Some(c.end_byte().saturating_sub(1));
            }
        }
        None
    }
}

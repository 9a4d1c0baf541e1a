//! Where PHP code is: the walk notes the open and close tags and the inline
//! HTML between them, and at the end every block with an insertion outside
//! PHP code is dropped.

use tree_sitter::Node;

use super::{Comparisons, Insertion, PlannedBlock};
use crate::grammar::{Grammar, NodeKind};
use crate::lexical::is_php_space;

#[derive(Default)]
pub(super) struct CodeRegions {
    /// Byte ranges (inclusive) where nothing may be inserted: inline HTML,
    /// the inside of open and close tags.
    forbidden: Vec<(usize, usize)>,
    /// Where an open tag PHP may not take for one starts (`<?` needs
    /// `short_open_tag`, `<?php` whitespace after it): nothing goes between
    /// it and the next `?>`.
    short_tags: Vec<usize>,
    /// Where each `?>` starts.
    close_tags: Vec<usize>,
    /// `?>` inside an expression (or a simple statement): tree-sitter reads
    /// the code around it as one construct, PHP ends the statement there.
    /// Nothing may be enclosed across one.
    misplaced_close_tags: Vec<usize>,
    saw_open_tag: bool,
}

impl CodeRegions {
    /// An open tag; `parent` is the node it sits in, `None` for one inside
    /// a text interpolation.
    pub fn open_tag(&mut self, source: &[u8], tag: Node<'_>, parent: Option<NodeKind>) {
        if parent == Some(NodeKind::Program) && !self.saw_open_tag {
            self.saw_open_tag = true;
            self.forbidden.push((0, tag.end_byte()));
        }
        // `<?` is an open tag only when short_open_tag is on, and `<?php` only
        // when whitespace follows it; otherwise PHP reads on as HTML.
        let length = tag.end_byte() - tag.start_byte();
        let php_without_space = length == 5
            && source
                .get(tag.end_byte())
                .is_some_and(|&b| !is_php_space(b));
        if length == 2 || php_without_space {
            self.short_tags.push(tag.start_byte());
        }
    }

    /// `?> html <?php`, which sits in `parent`.
    pub fn text_interpolation(
        &mut self,
        source: &[u8],
        grammar: &Grammar,
        node: Node<'_>,
        parent: Option<NodeKind>,
    ) {
        // Nothing may go after the `?` of `?>` up to the end of the opening
        // tag (a `<?php` needs the whitespace after it, and a `<?=` is
        // followed by an expression).
        self.forbidden
            .push((node.start_byte() + 1, node.end_byte()));
        let between_statements = parent.is_some_and(|kind| {
            matches!(
                kind,
                NodeKind::Program
                    | NodeKind::CompoundStatement
                    | NodeKind::ColonBlock
                    | NodeKind::CaseStatement
                    | NodeKind::DefaultStatement
                    | NodeKind::SwitchBlock
                    | NodeKind::IfStatement
                    | NodeKind::ElseIfClause
                    | NodeKind::ElseClause
                    | NodeKind::WhileStatement
                    | NodeKind::ForStatement
                    | NodeKind::ForeachStatement
                    | NodeKind::DoStatement
                    | NodeKind::DeclareStatement
                    | NodeKind::SwitchStatement
                    | NodeKind::TryStatement
                    | NodeKind::CatchClause
                    | NodeKind::FinallyClause
                    | NodeKind::NamespaceDefinition
            )
        });
        if !between_statements {
            self.misplaced_close_tags.push(node.start_byte());
        }
        let mut cursor = node.walk();
        for part in node.children(&mut cursor) {
            match grammar.kind(part) {
                NodeKind::PhpEndTag => self.close_tags.push(part.start_byte()),
                NodeKind::PhpTag => self.open_tag(source, part, None),
                _ => {}
            }
        }
    }

    /// Where nothing may be inserted, once the walk has seen every tag.
    pub fn outside_php(mut self) -> OutsidePhp {
        if !self.saw_open_tag {
            return OutsidePhp {
                everywhere: true,
                forbidden: Vec::new(),
                misplaced_close_tags: Vec::new(),
            };
        }
        // A short open tag's code runs to the next `?>`, or to the end.
        self.close_tags.sort_unstable();
        for &start in &self.short_tags {
            let at = self.close_tags.partition_point(|&c| c <= start);
            let end = self.close_tags.get(at).copied().unwrap_or(usize::MAX);
            self.forbidden.push((start, end));
        }
        self.forbidden.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(self.forbidden.len());
        for &(start, end) in &self.forbidden {
            match merged.last_mut() {
                Some(last) if start <= last.1.saturating_add(1) => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        self.misplaced_close_tags.sort_unstable();
        OutsidePhp {
            everywhere: false,
            forbidden: merged,
            misplaced_close_tags: self.misplaced_close_tags,
        }
    }
}

/// The places no insertion may go: inline HTML, the inside of tags, code
/// PHP may read as HTML; and the misplaced `?>` nothing may enclose.
pub(super) struct OutsidePhp {
    /// No open tag at all: the file is all HTML.
    everywhere: bool,
    /// Sorted, disjoint, inclusive byte ranges.
    forbidden: Vec<(usize, usize)>,
    misplaced_close_tags: Vec<usize>,
}

impl OutsidePhp {
    fn forbids(&self, offset: usize) -> bool {
        if self.everywhere {
            return true;
        }
        let at = self.forbidden.partition_point(|r| r.1 < offset);
        self.forbidden.get(at).is_some_and(|r| r.0 <= offset)
    }

    fn encloses_close_tag(&self, (start, end): (usize, usize)) -> bool {
        let misplaced = &self.misplaced_close_tags;
        let at = misplaced.partition_point(|&m| m < start);
        misplaced.get(at).is_some_and(|&m| m < end)
    }

    /// Drops every block with an insertion in inline HTML or inside a tag,
    /// or that encloses a misplaced `?>`.
    pub fn invalidate_blocks(&self, blocks: &mut [PlannedBlock], insertions: &[Insertion]) {
        if self.everywhere {
            for block in blocks {
                block.valid = false;
            }
            return;
        }
        for insertion in insertions {
            if self.forbids(insertion.offset) {
                blocks[insertion.block as usize].valid = false;
            }
        }
        if !self.misplaced_close_tags.is_empty() {
            for block in blocks {
                if block.span.is_some_and(|span| self.encloses_close_tag(span)) {
                    block.valid = false;
                }
            }
        }
    }

    /// The same for comparison sites: one bad insertion drops the whole site.
    pub fn invalidate_sites(&self, comparisons: &mut Comparisons) {
        for insertion in &comparisons.insertions {
            if self.forbids(insertion.offset) {
                comparisons.sites[insertion.site as usize] = false;
            }
        }
        for &(site, start, end) in &comparisons.spans {
            if self.encloses_close_tag((start, end)) {
                comparisons.sites[site as usize] = false;
            }
        }
    }
}

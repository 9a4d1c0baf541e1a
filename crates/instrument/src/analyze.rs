//! Finds the blocks of a parsed file and plans the insertions that mark them.
//!
//! One walk over the tree with a cursor (no recursion, so no input can
//! overflow the stack). Each block gets an anchor, a byte of the original
//! source that belongs to it alone, and the insertions that mark it:
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

use tree_sitter::{Node, Tree};

use crate::BlockKind;
use crate::kinds::{K, Table, is_php_space};
use crate::stub::Piece;

/// A block found in the file, before it has an id.
#[derive(Debug, Clone)]
pub(crate) struct PlannedBlock {
    pub kind: BlockKind,
    pub anchor: usize,
    /// Index into `Plan::names`.
    pub function: Option<u32>,
    /// What a wrapper or added braces enclose, if anything.
    pub span: Option<(usize, usize)>,
    /// Cleared when one of its insertions would land outside PHP code.
    pub valid: bool,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Insertion {
    pub offset: usize,
    /// Order among insertions at one offset; see `Rank`.
    pub rank: u32,
    pub block: u32,
    pub piece: Piece,
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

/// Everything the render pass needs; holds no tree.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub blocks: Vec<PlannedBlock>,
    pub insertions: Vec<Insertion>,
    pub names: Vec<String>,
}

/// What lies around a node: which statement list it is in, which function,
/// which class, whether calls are allowed there.
#[derive(Clone, Copy)]
struct Parent {
    kind: K,
    /// Its statement children form a list where a statement may be added.
    is_list: bool,
}

struct Analyzer<'s> {
    source: &'s [u8],
    table: &'static Table,
    plan: Plan,
    parents: Vec<Parent>,
    /// (depth of the node that opened it, calls allowed?) — constant
    /// expressions (defaults, constants, attributes…) allow no calls.
    const_frames: Vec<(u32, bool)>,
    function_frames: Vec<(u32, u32)>,
    class_frames: Vec<(u32, String)>,
    /// (depth of a braced namespace, namespace outside it).
    namespace_frames: Vec<(u32, String)>,
    namespace: String,
    /// The property whose declaration the walk is in, for naming hooks.
    property: String,
    /// Depths of the `assert(…)` calls the walk is in. PHP builds an
    /// assertion's message from the source of its arguments, so nothing
    /// inside them may change.
    frozen_frames: Vec<u32>,
    /// Nodes whose value must stay a reference: the body of `fn&() =>`.
    by_reference: Vec<usize>,
    /// Brace-less bodies that must stay brace-less (see `dangling_else`).
    keep_brace_less: Vec<usize>,
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

/// Plans the instrumentation of `source`, parsed without errors into `tree`.
pub(crate) fn analyze(source: &[u8], tree: &Tree) -> Plan {
    let mut analyzer = Analyzer {
        source,
        table: Table::get(),
        plan: Plan::default(),
        parents: Vec::new(),
        const_frames: Vec::new(),
        function_frames: Vec::new(),
        class_frames: Vec::new(),
        namespace_frames: Vec::new(),
        namespace: String::new(),
        property: String::new(),
        frozen_frames: Vec::new(),
        by_reference: Vec::new(),
        keep_brace_less: Vec::new(),
        forbidden: Vec::new(),
        short_tags: Vec::new(),
        close_tags: Vec::new(),
        misplaced_close_tags: Vec::new(),
        saw_open_tag: false,
    };
    analyzer.walk(tree);
    analyzer.invalidate_outside_php();
    analyzer.plan
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
                self.leave(depth);
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

    fn leave(&mut self, depth: u32) {
        self.parents.pop();
        // One node may open several frames of a kind (a parameter that is
        // promoted and hooked opens two const frames), so pop all of this depth.
        while self.const_frames.last().is_some_and(|f| f.0 == depth) {
            self.const_frames.pop();
        }
        while self.function_frames.last().is_some_and(|f| f.0 == depth) {
            self.function_frames.pop();
        }
        while self.class_frames.last().is_some_and(|f| f.0 == depth) {
            self.class_frames.pop();
        }
        if self.frozen_frames.last() == Some(&depth) {
            self.frozen_frames.pop();
        }
        while let Some((frame_depth, _)) = self.namespace_frames.last()
            && *frame_depth == depth
            && let Some((_, outer)) = self.namespace_frames.pop()
        {
            self.namespace = outer;
        }
    }

    /// Handles entering `node`; returns whether to walk its children.
    fn enter(&mut self, node: Node<'_>, depth: u32) -> bool {
        let kind = self.table.kind(node);
        if self.table.is_opaque(node) {
            self.parents.push(Parent {
                kind,
                is_list: false,
            });
            return false;
        }
        let mut descend = true;
        match kind {
            K::Program => self.file_entry(node),
            K::PhpTag => self.open_tag(node, true),
            K::TextInterpolation => {
                self.text_interpolation(node);
                descend = false;
            }
            K::NamespaceDefinition => self.namespace_definition(node, depth),
            K::ClassDeclaration
            | K::InterfaceDeclaration
            | K::TraitDeclaration
            | K::EnumDeclaration => {
                let name = self.field_text(node, self.table.fields.name);
                let qualified = self.qualify(&name);
                self.class_frames.push((depth, qualified));
            }
            K::AnonymousClass => self
                .class_frames
                .push((depth, "class@anonymous".to_string())),
            K::FunctionDefinition => {
                let name = self.field_text(node, self.table.fields.name);
                let qualified = self.qualify(&name);
                self.enter_function(depth, qualified);
                self.entry(node, BlockKind::FunctionEntry, depth);
            }
            K::MethodDeclaration => {
                let method = self.field_text(node, self.table.fields.name);
                let name = match self.class_frames.last() {
                    Some((_, class)) => format!("{class}::{method}"),
                    None => method,
                };
                self.enter_function(depth, name);
                self.entry(node, BlockKind::MethodEntry, depth);
            }
            K::AnonymousFunction => {
                self.enter_function(depth, "{closure}".to_string());
                self.entry(node, BlockKind::ClosureEntry, depth);
            }
            K::ArrowFunction => {
                self.enter_function(depth, "{closure}".to_string());
                self.arrow_function(node, depth);
            }
            K::PropertyDeclaration => {
                let mut cursor = node.walk();
                let element = node
                    .children(&mut cursor)
                    .find(|c| self.table.kind(*c) == K::PropertyElement);
                self.property = element
                    .map(|e| self.field_text(e, self.table.fields.name))
                    .unwrap_or_default();
            }
            K::PropertyPromotionParameter => {
                self.property = self.field_text(node, self.table.fields.name);
                // Its default is a constant expression; its hooks (PHP 8.4)
                // are functions, which allow calls again.
                self.const_frames.push((depth, false));
            }
            // Parameter and property defaults are constant expressions.
            K::SimpleParameter | K::VariadicParameter | K::PropertyElement => {
                self.const_frames.push((depth, false))
            }
            K::PropertyHook => self.property_hook(node, depth),
            K::ConstElement
            | K::StaticVariableDeclaration
            | K::EnumCase
            | K::AttributeList
            | K::DeclareDirective => {
                self.const_frames.push((depth, false));
            }
            K::IfStatement => self.if_statement(node, depth),
            K::WhileStatement | K::ForeachStatement => {
                if let Some(body) = node.child_by_field_id(self.table.fields.body.get()) {
                    let before = self.last_token_before(node, body);
                    self.body(body, BlockKind::LoopBody, before, depth + 1);
                }
                self.after(node, BlockKind::LoopExit, depth);
            }
            K::DoStatement => {
                if let Some(body) = node.child_by_field_id(self.table.fields.body.get()) {
                    self.body(
                        body,
                        BlockKind::LoopBody,
                        Some(node.start_byte()),
                        depth + 1,
                    );
                }
                self.after(node, BlockKind::LoopExit, depth);
            }
            K::ForStatement => self.for_statement(node, depth),
            K::SwitchStatement => self.after(node, BlockKind::AfterSwitch, depth),
            K::CaseStatement | K::DefaultStatement => self.switch_case(node, depth),
            K::TryStatement => {
                self.block_body(node, BlockKind::TryBody, depth);
                self.after(node, BlockKind::AfterTry, depth);
            }
            K::CatchClause => self.block_body(node, BlockKind::Catch, depth),
            K::FinallyClause => self.block_body(node, BlockKind::Finally, depth),
            K::NamedLabelStatement => self.label(node, depth),
            K::BinaryExpression => self.binary(node, depth),
            K::AugmentedAssignmentExpression => {
                let f = &self.table.fields;
                if let (Some(op), Some(right)) = (
                    node.child_by_field_id(f.operator.get()),
                    node.child_by_field_id(f.right.get()),
                ) && self.table.kind(op) == K::CoalesceAssign
                {
                    self.wrap(right, BlockKind::Coalesce, op.start_byte(), depth + 1);
                }
            }
            K::ConditionalExpression => self.conditional(node, depth),
            K::MatchConditionalExpression | K::MatchDefaultExpression => {
                if let Some(value) =
                    node.child_by_field_id(self.table.fields.return_expression.get())
                    && let Some(arrow) = self.child_token(node, K::FatArrow)
                {
                    self.wrap(value, BlockKind::MatchArm, arrow.start_byte(), depth + 1);
                }
            }
            K::YieldExpression => self.yield_expression(node, depth),
            K::FunctionCallExpression if self.is_assert_call(node) => {
                self.frozen_frames.push(depth)
            }
            _ => {}
        }
        self.parents.push(Parent {
            kind,
            is_list: self.is_list(node, kind),
        });
        descend
    }

    fn is_list(&self, node: Node<'_>, kind: K) -> bool {
        match kind {
            K::Program
            | K::CompoundStatement
            | K::ColonBlock
            | K::CaseStatement
            | K::DefaultStatement => true,
            // Alternative syntax: `for (…): a(); b(); endfor;` hangs its
            // statements off the for statement itself, likewise `declare`.
            K::ForStatement | K::DeclareStatement => self.child_token(node, K::Colon).is_some(),
            _ => false,
        }
    }

    fn parent(&self) -> Option<Parent> {
        self.parents.last().copied()
    }

    fn in_const_expression(&self) -> bool {
        self.const_frames.last().is_some_and(|f| !f.1)
    }

    fn enter_function(&mut self, depth: u32, name: String) {
        let index = self.plan.names.len() as u32;
        self.plan.names.push(name);
        self.function_frames.push((depth, index));
        // A closure's body may call functions even where its declaration
        // sits in a constant expression (PHP 8.5 allows static closures there).
        self.const_frames.push((depth, true));
    }

    fn field_text(&self, node: Node<'_>, field: std::num::NonZeroU16) -> String {
        node.child_by_field_id(field.get())
            .and_then(|n| self.source.get(n.byte_range()))
            .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
            .unwrap_or_default()
    }

    fn qualify(&self, name: &str) -> String {
        if self.namespace.is_empty() {
            name.to_string()
        } else {
            format!("{}\\{name}", self.namespace)
        }
    }

    fn child_token<'t>(&self, node: Node<'t>, kind: K) -> Option<Node<'t>> {
        let mut cursor = node.walk();
        node.children(&mut cursor)
            .find(|c| self.table.kind(*c) == kind)
    }

    /// Start of the token just before `child` among `node`'s children: the
    /// `)` of `while (…) body`.
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

    // ----- blocks and insertions -----

    fn block(&mut self, kind: BlockKind, anchor: usize) -> u32 {
        let function = self.function_frames.last().map(|f| f.1);
        let valid = self.frozen_frames.is_empty();
        self.plan.blocks.push(PlannedBlock {
            kind,
            anchor,
            function,
            span: None,
            valid,
        });
        (self.plan.blocks.len() - 1) as u32
    }

    /// A block whose insertions enclose `start..end` (wrapper or braces).
    fn enclosing_block(&mut self, kind: BlockKind, anchor: usize, start: usize, end: usize) -> u32 {
        let block = self.block(kind, anchor);
        self.plan.blocks[block as usize].span = Some((start, end));
        block
    }

    fn insert(&mut self, offset: usize, rank: u32, block: u32, piece: Piece) {
        self.plan.insertions.push(Insertion {
            offset,
            rank,
            block,
            piece,
        });
    }

    /// A counter right after the first token of `opener`, a `{…}` or `: …` block.
    fn counter_after_opening(&mut self, opener: Node<'_>, kind: BlockKind, depth: u32) {
        let expected = match self.table.kind(opener) {
            K::CompoundStatement => K::LBrace,
            K::ColonBlock => K::Colon,
            _ => return,
        };
        let Some(token) = opener.child(0).filter(|t| self.table.kind(*t) == expected) else {
            return;
        };
        let block = self.block(kind, token.start_byte());
        self.insert(
            token.end_byte(),
            Rank::open(2 * depth),
            block,
            Piece::Counter,
        );
    }

    /// Entry of a function, method or closure: after the body's `{`.
    fn entry(&mut self, node: Node<'_>, kind: BlockKind, depth: u32) {
        if let Some(body) = node.child_by_field_id(self.table.fields.body.get())
            && self.table.kind(body) == K::CompoundStatement
        {
            self.counter_after_opening(body, kind, depth + 1);
        }
    }

    /// try, catch, finally: after the `{` of their body.
    fn block_body(&mut self, node: Node<'_>, kind: BlockKind, depth: u32) {
        if let Some(body) = node.child_by_field_id(self.table.fields.body.get()) {
            self.counter_after_opening(body, kind, depth + 1);
        }
    }

    /// The body of a branch or a loop: a `{…}` block, an alternative-syntax
    /// `: …` block, or one statement that gets braces on its own lines.
    /// `before` is the token before a brace-less body, its anchor.
    fn body(&mut self, body: Node<'_>, kind: BlockKind, before: Option<usize>, depth: u32) {
        match self.table.kind(body) {
            K::CompoundStatement | K::ColonBlock => self.counter_after_opening(body, kind, depth),
            _ if self.keep_brace_less.contains(&body.id()) => {}
            _ => {
                // The `}` goes right after the statement, so the statement
                // must end in a token of its own: a `?>` standing in for its
                // `;` would also end the `if` before an `else`.
                let (Some(anchor), Some(end)) = (before, self.terminated_end(body)) else {
                    return;
                };
                let block = self.enclosing_block(kind, anchor, body.start_byte(), end);
                self.insert(
                    body.start_byte(),
                    Rank::open(2 * depth),
                    block,
                    Piece::BraceCounter,
                );
                self.insert(end, Rank::close(2 * depth), block, Piece::BraceClose);
            }
        }
    }

    /// The counter after a whole if, loop, switch or try: the code that
    /// follows it. Only where a statement may follow, in a statement list;
    /// a brace-less body (`while ($a) if ($b) x();`) has nothing after it
    /// inside the body, and its parent's own counter follows at once.
    fn after(&mut self, node: Node<'_>, kind: BlockKind, depth: u32) {
        if !self.parent().is_some_and(|p| p.is_list) {
            return;
        }
        let anchor = node.end_byte().saturating_sub(1);
        if let Some(end) = self.terminated_end(node) {
            let block = self.block(kind, anchor);
            self.insert(end, Rank::close(2 * depth), block, Piece::Counter);
        } else if self.close_tag_follows(node.end_byte()) {
            // `<?php endif ?>`: the `?>` is the statement's `;`. Adding one
            // leaves the `?>` as an empty statement, which is harmless here.
            // The `;` ranks with the counter (and goes first), after the
            // closing parentheses of wrappers inside the statement.
            let block = self.block(kind, anchor);
            let end = node.end_byte();
            self.insert(end, Rank::close(2 * depth), block, Piece::Terminator);
            self.insert(end, Rank::close(2 * depth), block, Piece::Counter);
        }
    }

    /// `node`'s end, if `node` ends with its own `;`, `}` or label `:`, and
    /// not with an expression (a closure's `}` in `$f = function () {} ?>`).
    fn terminated_end(&self, node: Node<'_>) -> Option<usize> {
        let mut current = node;
        loop {
            if !self.table.in_statement_chain(current) {
                return None;
            }
            let count = current.child_count();
            let last = current.child(count.checked_sub(1)?)?;
            if last.is_extra() {
                return None;
            }
            match self.table.kind(last) {
                K::Semicolon | K::RBrace => return Some(node.end_byte()),
                K::Colon if self.table.kind(current) == K::NamedLabelStatement => {
                    return Some(node.end_byte());
                }
                _ if last.child_count() > 0 => current = last,
                _ => return None,
            }
        }
    }

    fn close_tag_follows(&self, offset: usize) -> bool {
        let rest = self.source.get(offset..).unwrap_or_default();
        let skipped = rest.iter().take_while(|&&b| is_php_space(b)).count();
        rest[skipped..].starts_with(b"?>")
    }

    // ----- constructs -----

    fn file_entry(&mut self, program: Node<'_>) {
        let mut cursor = program.walk();
        let mut children = program.children(&mut cursor).filter(|c| !c.is_extra());
        // Inline HTML (or a `#!` line) may come before the first tag.
        let Some(tag) = children.by_ref().find(|c| self.table.kind(*c) != K::Text) else {
            return;
        };
        // Only a file that opens with `<?php` and whitespace gets a file
        // entry; one that opens with `<?=` or `<?` is a template.
        if self.table.kind(tag) != K::PhpTag
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
            match self.table.kind(statement) {
                // `declare(strict_types=1);` must stay the first statement,
                // and any declare may come before a namespace declaration.
                K::DeclareStatement => match self.terminated_end(statement) {
                    Some(end) => at = end,
                    None => return,
                },
                // PHP drops empty statements before it compiles anything.
                K::EmptyStatement => at = statement.end_byte(),
                // So must a namespace declaration.
                K::NamespaceDefinition => {
                    match statement.child_by_field_id(self.table.fields.body.get()) {
                        Some(body) => {
                            match body.child(0).filter(|t| self.table.kind(*t) == K::LBrace) {
                                Some(brace) => at = brace.end_byte(),
                                None => return,
                            }
                        }
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

    fn open_tag(&mut self, tag: Node<'_>, at_top: bool) {
        if at_top && self.parent().is_some_and(|p| p.kind == K::Program) && !self.saw_open_tag {
            self.saw_open_tag = true;
            self.forbidden.push((0, tag.end_byte()));
        }
        // `<?` is an open tag only when short_open_tag is on, and `<?php` only
        // when whitespace follows it; otherwise PHP reads on as HTML.
        let length = tag.end_byte() - tag.start_byte();
        let php_without_space = length == 5
            && self
                .source
                .get(tag.end_byte())
                .is_some_and(|&b| !is_php_space(b));
        if length == 2 || php_without_space {
            self.short_tags.push(tag.start_byte());
        }
    }

    fn text_interpolation(&mut self, node: Node<'_>) {
        // `?> html <?php`: nothing may go after the `?` of `?>` up to the end
        // of the opening tag (a `<?php` needs the whitespace after it, and a
        // `<?=` is followed by an expression).
        self.forbidden
            .push((node.start_byte() + 1, node.end_byte()));
        let between_statements = self.parent().is_some_and(|p| {
            matches!(
                p.kind,
                K::Program
                    | K::CompoundStatement
                    | K::ColonBlock
                    | K::CaseStatement
                    | K::DefaultStatement
                    | K::SwitchBlock
                    | K::IfStatement
                    | K::ElseIfClause
                    | K::ElseClause
                    | K::WhileStatement
                    | K::ForStatement
                    | K::ForeachStatement
                    | K::DoStatement
                    | K::DeclareStatement
                    | K::SwitchStatement
                    | K::TryStatement
                    | K::CatchClause
                    | K::FinallyClause
                    | K::NamespaceDefinition
            )
        });
        if !between_statements {
            self.misplaced_close_tags.push(node.start_byte());
        }
        let mut cursor = node.walk();
        for part in node.children(&mut cursor) {
            match self.table.kind(part) {
                K::PhpEndTag => self.close_tags.push(part.start_byte()),
                K::PhpTag => self.open_tag(part, false),
                _ => {}
            }
        }
    }

    fn namespace_definition(&mut self, node: Node<'_>, depth: u32) {
        let name = self.field_text(node, self.table.fields.name);
        if node
            .child_by_field_id(self.table.fields.body.get())
            .is_some()
        {
            let outer = std::mem::replace(&mut self.namespace, name);
            self.namespace_frames.push((depth, outer));
        } else {
            self.namespace = name;
        }
    }

    fn if_statement<'t>(&mut self, node: Node<'t>, depth: u32) {
        self.dangling_else(node);
        let f = &self.table.fields;
        // `else if (…)` is an if statement as the body of an else clause:
        // treat it like `elseif`, with no after-if of its own.
        let chained = self.parent().is_some_and(|p| p.kind == K::ElseClause);
        if let Some(body) = node.child_by_field_id(f.body.get()) {
            let before = node
                .child_by_field_id(f.condition.get())
                .map(|c| c.end_byte().saturating_sub(1));
            let kind = if chained {
                BlockKind::ElseIfBranch
            } else {
                BlockKind::IfBranch
            };
            self.body(body, kind, before, depth + 1);
        }
        let mut cursor = node.walk();
        let alternatives: Vec<Node<'t>> = node
            .children_by_field_id(f.alternative, &mut cursor)
            .collect();
        for alternative in alternatives {
            let Some(body) = alternative.child_by_field_id(f.body.get()) else {
                continue;
            };
            match self.table.kind(alternative) {
                K::ElseIfClause => {
                    let before = alternative
                        .child_by_field_id(f.condition.get())
                        .map(|c| c.end_byte().saturating_sub(1));
                    self.body(body, BlockKind::ElseIfBranch, before, depth + 2);
                }
                K::ElseClause if self.table.kind(body) != K::IfStatement => {
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

    /// In `if ($a) if ($b) x(); else y();` PHP gives the `else` to the
    /// innermost if without one, `if ($b)`; tree-sitter-php gives it to
    /// `if ($a)`. Braces around any body that holds `if ($b)` would close it
    /// before the `else` and make PHP agree with tree-sitter, so those
    /// bodies stay brace-less. (Their blocks are lost; the else body still
    /// gets its counter, which runs exactly when PHP runs that body.)
    fn dangling_else(&mut self, node: Node<'_>) {
        let f = &self.table.fields;
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
            current = match self.table.kind(statement) {
                K::IfStatement => {
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
                K::WhileStatement | K::ForStatement | K::ForeachStatement | K::DeclareStatement => {
                    statement.child_by_field_id(f.body.get())
                }
                _ => None,
            };
        }
        if let Some(end) = innermost_open_if {
            self.keep_brace_less.extend_from_slice(&spine[..end]);
        }
    }

    fn for_statement(&mut self, node: Node<'_>, depth: u32) {
        let mut cursor = node.walk();
        let mut close = None;
        let mut colon = None;
        for child in node.children(&mut cursor) {
            match self.table.kind(child) {
                K::RParen if colon.is_none() => close = Some(child),
                K::Colon if close.is_some() => {
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
        } else if let Some(body) = node.child_by_field_id(self.table.fields.body.get()) {
            self.body(
                body,
                BlockKind::LoopBody,
                close.map(|c| c.start_byte()),
                depth + 1,
            );
        }
        self.after(node, BlockKind::LoopExit, depth);
    }

    fn switch_case(&mut self, node: Node<'_>, depth: u32) {
        // `case 1:` or `case 1;`: the first `:`/`;` child after the value.
        let mut cursor = node.walk();
        let separator = node
            .children(&mut cursor)
            .skip(1)
            .find(|c| !c.is_named() && matches!(self.table.kind(*c), K::Colon | K::Semicolon));
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

    fn label(&mut self, node: Node<'_>, depth: u32) {
        if !self.parent().is_some_and(|p| p.is_list) {
            return;
        }
        if let Some(end) = self.terminated_end(node) {
            let block = self.block(BlockKind::GotoLabel, node.start_byte());
            self.insert(end, Rank::open(2 * depth), block, Piece::Counter);
        }
    }

    fn property_hook(&mut self, node: Node<'_>, depth: u32) {
        let class = self.class_frames.last().map(|c| c.1.as_str()).unwrap_or("");
        let mut cursor = node.walk();
        let hook = node
            .children(&mut cursor)
            .find(|c| self.table.kind(*c) == K::Name)
            .and_then(|n| self.source.get(n.byte_range()))
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        let name = format!("{class}::{}::{hook}", self.property);
        self.enter_function(depth, name);
        // Only `{ … }` hook bodies: an arrow-style `get => expr;` hook has
        // no statement to count and is left as it is.
        if let Some(body) = node.child_by_field_id(self.table.fields.body.get())
            && self.table.kind(body) == K::CompoundStatement
        {
            self.counter_after_opening(body, BlockKind::PropertyHook, depth + 1);
        }
    }

    fn arrow_function(&mut self, node: Node<'_>, depth: u32) {
        let Some(body) = node.child_by_field_id(self.table.fields.body.get()) else {
            return;
        };
        if node
            .child_by_field_id(self.table.fields.reference_modifier.get())
            .is_some()
        {
            // `fn&() => $x` returns a reference to $x; a call in between
            // would return a copy.
            self.by_reference.push(body.id());
            return;
        }
        if let Some(arrow) = self.child_token(node, K::FatArrow) {
            self.wrap(
                body,
                BlockKind::ArrowFunctionBody,
                arrow.start_byte(),
                depth + 1,
            );
        }
    }

    fn binary(&mut self, node: Node<'_>, depth: u32) {
        let f = &self.table.fields;
        let (Some(op), Some(right)) = (
            node.child_by_field_id(f.operator.get()),
            node.child_by_field_id(f.right.get()),
        ) else {
            return;
        };
        match self.table.kind(op) {
            K::AndAnd | K::OrOr | K::And | K::Or => {
                self.wrap_condition(right, op.start_byte(), depth + 1)
            }
            K::Coalesce => self.wrap(right, BlockKind::Coalesce, op.start_byte(), depth + 1),
            _ => {}
        }
    }

    /// The right operand of a short-circuit operator: only its truth
    /// matters, so it is recorded without a call (see `Piece::CloseCondition`).
    /// A `throw` or `exit` there never has a value: those keep `traceBlock`.
    fn wrap_condition(&mut self, expr: Node<'_>, anchor: usize, depth: u32) {
        let special = match self.table.kind(expr) {
            K::ThrowExpression => true,
            K::FunctionCallExpression => self.exit_call(expr).is_some(),
            K::Name => self.is_exit_keyword(expr),
            _ => false,
        };
        if special || self.in_const_expression() || self.by_reference.contains(&expr.id()) {
            return self.wrap(expr, BlockKind::ShortCircuit, anchor, depth);
        }
        let block = self.enclosing_block(
            BlockKind::ShortCircuit,
            anchor,
            expr.start_byte(),
            expr.end_byte(),
        );
        let depth2 = 2 * depth;
        self.insert(
            expr.start_byte(),
            Rank::open(depth2),
            block,
            Piece::OpenCondition,
        );
        self.insert(
            expr.end_byte(),
            Rank::close(depth2),
            block,
            Piece::CloseCondition,
        );
    }

    fn conditional(&mut self, node: Node<'_>, depth: u32) {
        let f = &self.table.fields;
        let (Some(question), Some(colon)) = (
            self.child_token(node, K::Question),
            self.child_token(node, K::Colon),
        ) else {
            return;
        };
        match node.child_by_field_id(f.body.get()) {
            Some(then) => self.wrap(
                then,
                BlockKind::TernaryThen,
                question.start_byte(),
                depth + 1,
            ),
            // `a ?: b` has no then-expression: `a` itself is the value.
            // traceTruthy() records the block only when `a` is truthy.
            None => {
                if let Some(condition) = node.child_by_field_id(f.condition.get())
                    && !self.in_const_expression()
                {
                    let block = self.enclosing_block(
                        BlockKind::TernaryThen,
                        question.start_byte(),
                        condition.start_byte(),
                        condition.end_byte(),
                    );
                    let depth2 = 2 * (depth + 1);
                    self.insert(
                        condition.start_byte(),
                        Rank::open(depth2),
                        block,
                        Piece::OpenTruthy,
                    );
                    self.insert(
                        condition.end_byte(),
                        Rank::close(depth2),
                        block,
                        Piece::Close,
                    );
                }
            }
        }
        if let Some(alternative) = node.child_by_field_id(f.alternative.get()) {
            self.wrap(
                alternative,
                BlockKind::TernaryElse,
                colon.start_byte(),
                depth + 1,
            );
        }
    }

    fn yield_expression(&mut self, node: Node<'_>, depth: u32) {
        if self.in_const_expression() || self.by_reference.contains(&node.id()) {
            return;
        }
        // Parenthesised, so the wrapper holds the value the generator
        // resumes with, and runs after it resumes.
        let block = self.enclosing_block(
            BlockKind::YieldResume,
            node.start_byte(),
            node.start_byte(),
            node.end_byte(),
        );
        let depth2 = 2 * depth + 1;
        self.insert(
            node.start_byte(),
            Rank::open(depth2),
            block,
            Piece::OpenYield,
        );
        self.insert(
            node.end_byte(),
            Rank::close(depth2),
            block,
            Piece::CloseYield,
        );
    }

    /// Wraps `expr` (at `depth`) in `traceBlock(ID, expr)`, which records the
    /// block once `expr` has its value and returns that value.
    fn wrap(&mut self, expr: Node<'_>, kind: BlockKind, anchor: usize, depth: u32) {
        if self.in_const_expression() || self.by_reference.contains(&expr.id()) {
            return;
        }
        // An expression that never produces a value would never be
        // recorded: wrap what `throw` throws, or the status `exit` gets.
        let (target, target_depth) = match self.table.kind(expr) {
            K::ThrowExpression => match expr.named_child(0) {
                Some(thrown) if !thrown.is_extra() => (thrown, depth + 1),
                _ => (expr, depth),
            },
            K::FunctionCallExpression => match self.exit_call(expr) {
                Some(Some(status)) => (status, depth + 3),
                // `exit()` with no plain status: a block around it could
                // never be recorded.
                Some(None) => return,
                None => (expr, depth),
            },
            K::Name if self.is_exit_keyword(expr) => return,
            _ => (expr, depth),
        };
        let block = self.enclosing_block(kind, anchor, target.start_byte(), target.end_byte());
        let depth2 = 2 * target_depth;
        self.insert(target.start_byte(), Rank::open(depth2), block, Piece::Open);
        self.insert(target.end_byte(), Rank::close(depth2), block, Piece::Close);
    }

    /// `assert(…)`, `\assert(…)`, `namespace\assert(…)`: PHP compiles
    /// these specially (and a user function named `Foo\assert` loses only
    /// its coverage).
    fn is_assert_call(&self, call: Node<'_>) -> bool {
        call.child_by_field_id(self.table.fields.function.get())
            .and_then(|f| self.source.get(f.byte_range()))
            .is_some_and(|name| {
                let last = name.rsplit(|&b| b == b'\\').next().unwrap_or(name);
                last.eq_ignore_ascii_case(b"assert")
            })
    }

    fn is_exit_keyword(&self, name: Node<'_>) -> bool {
        self.source
            .get(name.byte_range())
            .is_some_and(|n| n.eq_ignore_ascii_case(b"exit") || n.eq_ignore_ascii_case(b"die"))
    }

    /// For a call to `exit` / `die`: its status argument, if it has exactly
    /// one plain argument. `None` for any other call.
    fn exit_call<'t>(&self, call: Node<'t>) -> Option<Option<Node<'t>>> {
        let f = &self.table.fields;
        let function = call.child_by_field_id(f.function.get())?;
        if self.table.kind(function) != K::Name || !self.is_exit_keyword(function) {
            return None;
        }
        let arguments = call.child_by_field_id(f.arguments.get())?;
        let mut cursor = arguments.walk();
        let mut args = arguments
            .named_children(&mut cursor)
            .filter(|c| !c.is_extra());
        let Some(argument) = args.next() else {
            return Some(None);
        };
        let plain = args.next().is_none()
            && self.table.kind(argument) == K::Argument
            // Not a named argument (`exit(status: 1)`) nor an unpacking.
            && argument.child_by_field_id(f.name.get()).is_none()
            && argument.child_count() == 1;
        Some(if plain { argument.named_child(0) } else { None })
    }

    // ----- where PHP code is -----

    /// Drops every block with an insertion in inline HTML or inside a tag.
    fn invalidate_outside_php(&mut self) {
        if !self.saw_open_tag {
            for block in &mut self.plan.blocks {
                block.valid = false;
            }
            return;
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
        for insertion in &self.plan.insertions {
            let at = merged.partition_point(|r| r.1 < insertion.offset);
            if merged.get(at).is_some_and(|r| r.0 <= insertion.offset) {
                self.plan.blocks[insertion.block as usize].valid = false;
            }
        }
        if !self.misplaced_close_tags.is_empty() {
            let misplaced = &mut self.misplaced_close_tags;
            misplaced.sort_unstable();
            for block in &mut self.plan.blocks {
                if let Some((start, end)) = block.span {
                    let at = misplaced.partition_point(|&m| m < start);
                    if misplaced.get(at).is_some_and(|&m| m < end) {
                        block.valid = false;
                    }
                }
            }
        }
    }
}

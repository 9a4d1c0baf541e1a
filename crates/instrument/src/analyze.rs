//! Finds the blocks of a parsed file and plans the insertions that mark them.
//!
//! The walk is iterative (a tree cursor, no recursion), so no input, however
//! deeply nested, can overflow the stack. Each block is anchored at a token
//! of its own construct (the `)` closing an if condition, the `catch`
//! keyword, an operator…), so no two blocks share a source position.

use std::sync::OnceLock;

use tree_sitter::{Language, Node, TreeCursor};

use crate::BlockKind;
use crate::stub::Wrapper;

/// Syntax the walk reacts to; everything else is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Other,
    Program,
    PhpTag,
    TextInterpolation,
    Text,
    Comment,
    CompoundStatement,
    ColonBlock,
    FunctionDefinition,
    MethodDeclaration,
    AnonymousFunction,
    ArrowFunction,
    ClassLike,
    AnonymousClass,
    NamespaceDefinition,
    NamespaceUse,
    DeclareStatement,
    IfStatement,
    ElseIfClause,
    ElseClause,
    WhileStatement,
    DoStatement,
    ForStatement,
    ForeachStatement,
    SwitchStatement,
    CaseStatement,
    DefaultStatement,
    TryStatement,
    CatchClause,
    FinallyClause,
    NamedLabel,
    PropertyHook,
    BinaryExpression,
    AugmentedAssignment,
    ConditionalExpression,
    MatchArm,
    YieldExpression,
    ConstContext,
    ReferenceModifier,
    Name,
}

struct Grammar {
    kinds: Vec<Kind>,
    field_default_value: u16,
}

fn grammar(language: &Language) -> &'static Grammar {
    static GRAMMAR: OnceLock<Grammar> = OnceLock::new();
    GRAMMAR.get_or_init(|| {
        let count = language.node_kind_count();
        let mut kinds = vec![Kind::Other; count];
        for (id, slot) in kinds.iter_mut().enumerate() {
            let id = id as u16;
            let Some(name) = language.node_kind_for_id(id) else {
                continue;
            };
            if !language.node_kind_is_named(id) {
                continue;
            }
            *slot = match name {
                "program" => Kind::Program,
                "php_tag" => Kind::PhpTag,
                "text_interpolation" => Kind::TextInterpolation,
                "text" => Kind::Text,
                "comment" => Kind::Comment,
                "compound_statement" => Kind::CompoundStatement,
                "colon_block" => Kind::ColonBlock,
                "function_definition" => Kind::FunctionDefinition,
                "method_declaration" => Kind::MethodDeclaration,
                "anonymous_function" => Kind::AnonymousFunction,
                "arrow_function" => Kind::ArrowFunction,
                "class_declaration"
                | "interface_declaration"
                | "trait_declaration"
                | "enum_declaration" => Kind::ClassLike,
                "anonymous_class" => Kind::AnonymousClass,
                "namespace_definition" => Kind::NamespaceDefinition,
                "namespace_use_declaration" => Kind::NamespaceUse,
                "declare_statement" => Kind::DeclareStatement,
                "if_statement" => Kind::IfStatement,
                "else_if_clause" => Kind::ElseIfClause,
                "else_clause" => Kind::ElseClause,
                "while_statement" => Kind::WhileStatement,
                "do_statement" => Kind::DoStatement,
                "for_statement" => Kind::ForStatement,
                "foreach_statement" => Kind::ForeachStatement,
                "switch_statement" => Kind::SwitchStatement,
                "case_statement" => Kind::CaseStatement,
                "default_statement" => Kind::DefaultStatement,
                "try_statement" => Kind::TryStatement,
                "catch_clause" => Kind::CatchClause,
                "finally_clause" => Kind::FinallyClause,
                "named_label_statement" => Kind::NamedLabel,
                "property_hook" => Kind::PropertyHook,
                "binary_expression" => Kind::BinaryExpression,
                "augmented_assignment_expression" => Kind::AugmentedAssignment,
                "conditional_expression" => Kind::ConditionalExpression,
                "match_conditional_expression" | "match_default_expression" => Kind::MatchArm,
                "yield_expression" => Kind::YieldExpression,
                "const_declaration"
                | "static_variable_declaration"
                | "attribute_list"
                | "enum_case"
                | "declare_directive" => Kind::ConstContext,
                "reference_modifier" => Kind::ReferenceModifier,
                "name" => Kind::Name,
                _ => Kind::Other,
            };
        }
        let field = |name: &str| {
            language
                .field_id_for_name(name)
                .map(|f| f.get())
                .unwrap_or(u16::MAX)
        };
        Grammar {
            kinds,
            field_default_value: field("default_value"),
        }
    })
}

/// A block found in the file, before it has an id.
#[derive(Debug, Clone)]
pub(crate) struct PlannedBlock {
    pub kind: BlockKind,
    pub anchor: usize,
    pub function: Option<String>,
}

/// What to insert at an offset. `block` indexes `Plan::blocks`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Piece {
    /// ` <counter>`
    Counter {
        block: usize,
    },
    /// `; <counter>` after a statement that ends without `;` or `}` (`endif ?>`).
    CounterAfterBareStatement {
        block: usize,
    },
    /// `{ <counter> ` before a brace-less body.
    OpenBrace {
        block: usize,
    },
    /// ` }`, or `; }` after a statement ended by `?>`.
    CloseBrace {
        semicolon: bool,
    },
    WrapOpen {
        block: usize,
        wrapper: Wrapper,
        parenthesize: bool,
    },
    WrapClose {
        parenthesize: bool,
    },
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Insertion {
    pub offset: usize,
    /// Sort key at equal offsets: what closes comes before what opens;
    /// closings innermost first, openings outermost first.
    pub order: (u8, i64, u32),
    pub piece: Piece,
}

#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub blocks: Vec<PlannedBlock>,
    pub insertions: Vec<Insertion>,
}

/// A function or class the walk is inside; popped when its node is left.
struct Scope {
    node_id: usize,
    kind: ScopeKind,
    name: String,
}

#[derive(PartialEq, Eq)]
enum ScopeKind {
    Class,
    Function,
    ConstContext,
    Namespace,
}

struct Analyzer<'a> {
    source: &'a [u8],
    grammar: &'static Grammar,
    plan: Plan,
    scopes: Vec<Scope>,
    const_depth: usize,
    namespace: String,
    sequence: u32,
    /// Nothing at or after this offset is touched (`__halt_compiler()` data).
    limit: usize,
}

/// Plans the instrumentation of a parsed, error-free file. `limit` is where
/// `__halt_compiler();` ends, or the source length.
pub(crate) fn analyze(source: &[u8], root: Node<'_>, language: &Language, limit: usize) -> Plan {
    let mut analyzer = Analyzer {
        source,
        grammar: grammar(language),
        plan: Plan::default(),
        scopes: Vec::new(),
        const_depth: 0,
        namespace: String::new(),
        sequence: 0,
        limit,
    };
    analyzer.walk(root);
    analyzer.plan
}

/// End of the `__halt_compiler();` statement at the top level, if any.
pub(crate) fn halt_compiler_end(source: &[u8], root: Node<'_>) -> Option<usize> {
    let mut cursor = root.walk();
    for child in root.children(&mut cursor) {
        if child.kind() != "expression_statement" {
            continue;
        }
        let Some(call) = child
            .named_child(0)
            .filter(|c| c.kind() == "function_call_expression")
        else {
            continue;
        };
        let Some(function) = call.child_by_field_name("function") else {
            continue;
        };
        if source[function.byte_range()].eq_ignore_ascii_case(b"__halt_compiler") {
            return Some(child.end_byte());
        }
    }
    None
}

impl<'a> Analyzer<'a> {
    fn kind(&self, node: Node<'_>) -> Kind {
        self.grammar
            .kinds
            .get(node.kind_id() as usize)
            .copied()
            .unwrap_or(Kind::Other)
    }

    fn walk(&mut self, root: Node<'a>) {
        let mut cursor: TreeCursor<'a> = root.walk();
        let mut depth: i64 = 0;
        'outer: loop {
            let node = cursor.node();
            let field = cursor.field_id().map(|f| f.get());
            let descend = node.start_byte() < self.limit && self.enter(node, field, depth);
            if descend && cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            loop {
                self.leave(cursor.node());
                if cursor.goto_next_sibling() {
                    continue 'outer;
                }
                if !cursor.goto_parent() {
                    break 'outer;
                }
                depth -= 1;
            }
        }
    }

    fn leave(&mut self, node: Node<'_>) {
        while self.scopes.last().is_some_and(|s| s.node_id == node.id()) {
            let scope = self.scopes.pop().expect("checked");
            match scope.kind {
                ScopeKind::ConstContext => self.const_depth -= 1,
                ScopeKind::Namespace => self.namespace.clear(),
                ScopeKind::Class | ScopeKind::Function => {}
            }
        }
    }

    /// Reacts to entering `node`; returns whether to walk its children.
    fn enter(&mut self, node: Node<'a>, field: Option<u16>, depth: i64) -> bool {
        if field == Some(self.grammar.field_default_value) {
            self.push_scope(node, ScopeKind::ConstContext, String::new());
            self.const_depth += 1;
        }
        match self.kind(node) {
            Kind::Program => self.file_entry(node),
            Kind::NamespaceDefinition => self.namespace_definition(node),
            Kind::ClassLike => {
                let name = node
                    .child_by_field_name("name")
                    .map(|n| self.text(n))
                    .unwrap_or_default();
                let name = self.qualify(&name);
                self.push_scope(node, ScopeKind::Class, name);
            }
            Kind::AnonymousClass => {
                self.push_scope(node, ScopeKind::Class, "class@anonymous".into())
            }
            Kind::FunctionDefinition => {
                let name = node
                    .child_by_field_name("name")
                    .map(|n| self.text(n))
                    .unwrap_or_default();
                let name = self.qualify(&name);
                self.push_scope(node, ScopeKind::Function, name);
                self.function_body(node, BlockKind::FunctionEntry);
            }
            Kind::MethodDeclaration => {
                let method = node
                    .child_by_field_name("name")
                    .map(|n| self.text(n))
                    .unwrap_or_default();
                let name = match self.class_name() {
                    Some(class) => format!("{class}::{method}"),
                    None => method,
                };
                self.push_scope(node, ScopeKind::Function, name);
                self.function_body(node, BlockKind::MethodEntry);
            }
            Kind::AnonymousFunction => {
                self.push_scope(node, ScopeKind::Function, self.closure_name(node));
                self.function_body(node, BlockKind::ClosureEntry);
            }
            Kind::ArrowFunction => {
                self.push_scope(node, ScopeKind::Function, self.closure_name(node));
                self.arrow_function(node, depth);
            }
            Kind::ConstContext => {
                self.push_scope(node, ScopeKind::ConstContext, String::new());
                self.const_depth += 1;
            }
            Kind::IfStatement => self.if_statement(node, depth),
            Kind::WhileStatement => {
                if let Some(body) = node.child_by_field_name("body") {
                    let anchor = self.condition_close(node);
                    self.branch(body, BlockKind::LoopBody, anchor, depth + 1);
                }
                self.after(node, BlockKind::LoopExit, node.start_byte(), depth);
            }
            Kind::DoStatement => {
                if let Some(body) = node.child_by_field_name("body") {
                    self.branch(body, BlockKind::LoopBody, node.start_byte(), depth + 1);
                }
                let while_keyword = self
                    .token(node, "while")
                    .map(|t| t.start_byte())
                    .unwrap_or(node.end_byte() - 1);
                self.after(node, BlockKind::LoopExit, while_keyword, depth);
            }
            Kind::ForStatement => self.for_statement(node, depth),
            Kind::ForeachStatement => {
                if let Some(body) = node.child_by_field_name("body") {
                    let anchor = self
                        .token(node, ")")
                        .map(|t| t.start_byte())
                        .unwrap_or(body.start_byte());
                    self.branch(body, BlockKind::LoopBody, anchor, depth + 1);
                }
                self.after(node, BlockKind::LoopExit, node.start_byte(), depth);
            }
            Kind::SwitchStatement => {
                self.after(node, BlockKind::AfterSwitch, node.start_byte(), depth)
            }
            Kind::CaseStatement | Kind::DefaultStatement => self.case(node, depth),
            Kind::TryStatement => {
                if let Some(body) = node.child_by_field_name("body") {
                    self.after_open_token(body, BlockKind::TryBody, body.start_byte(), depth + 1);
                }
                self.after(node, BlockKind::AfterTry, node.start_byte(), depth);
            }
            Kind::CatchClause => {
                if let Some(body) = node.child_by_field_name("body") {
                    self.after_open_token(body, BlockKind::Catch, node.start_byte(), depth + 1);
                }
            }
            Kind::FinallyClause => {
                if let Some(body) = node.child_by_field_name("body") {
                    self.after_open_token(body, BlockKind::Finally, node.start_byte(), depth + 1);
                }
            }
            Kind::NamedLabel => {
                let anchor = node
                    .named_child(0)
                    .map(|n| n.start_byte())
                    .unwrap_or(node.start_byte());
                let block = self.block(BlockKind::GotoLabel, anchor);
                self.insert(node.end_byte(), true, depth, Piece::Counter { block });
            }
            Kind::PropertyHook => self.property_hook(node, depth),
            Kind::BinaryExpression => self.binary(node, depth),
            Kind::AugmentedAssignment => {
                let op = node.child_by_field_name("operator");
                if let (Some(op), Some(right)) = (op, node.child_by_field_name("right"))
                    && self.source[op.byte_range()] == *b"??="
                {
                    self.wrap(
                        right,
                        BlockKind::Coalesce,
                        op.start_byte(),
                        Wrapper::Block,
                        false,
                        depth + 1,
                    );
                }
            }
            Kind::ConditionalExpression => self.conditional(node, depth),
            Kind::MatchArm => {
                if let Some(expr) = node.child_by_field_name("return_expression") {
                    let anchor = self
                        .token(node, "=>")
                        .map(|t| t.start_byte())
                        .unwrap_or(expr.start_byte());
                    self.wrap(
                        expr,
                        BlockKind::MatchArm,
                        anchor,
                        Wrapper::Block,
                        false,
                        depth + 1,
                    );
                }
            }
            Kind::YieldExpression => {
                self.wrap(
                    node,
                    BlockKind::YieldResume,
                    node.start_byte(),
                    Wrapper::Block,
                    true,
                    depth,
                );
            }
            _ => {}
        }
        true
    }

    fn push_scope(&mut self, node: Node<'_>, kind: ScopeKind, name: String) {
        self.scopes.push(Scope {
            node_id: node.id(),
            kind,
            name,
        });
    }

    fn text(&self, node: Node<'_>) -> String {
        String::from_utf8_lossy(&self.source[node.byte_range()]).into_owned()
    }

    fn qualify(&self, name: &str) -> String {
        if self.namespace.is_empty() {
            name.to_string()
        } else {
            format!("{}\\{name}", self.namespace)
        }
    }

    fn class_name(&self) -> Option<&str> {
        self.scopes
            .iter()
            .rev()
            .find(|s| s.kind == ScopeKind::Class)
            .map(|s| s.name.as_str())
    }

    fn function_name(&self) -> Option<String> {
        self.scopes
            .iter()
            .rev()
            .find(|s| s.kind == ScopeKind::Function)
            .map(|s| s.name.clone())
    }

    /// Closures are named as PHP 8.4 names them: `{closure:LINE}`.
    fn closure_name(&self, node: Node<'_>) -> String {
        format!("{{closure:{}}}", node.start_position().row + 1)
    }

    fn block(&mut self, kind: BlockKind, anchor: usize) -> usize {
        let function = self.function_name();
        self.plan.blocks.push(PlannedBlock {
            kind,
            anchor,
            function,
        });
        self.plan.blocks.len() - 1
    }

    fn insert(&mut self, offset: usize, opening: bool, depth: i64, piece: Piece) {
        self.sequence += 1;
        let order = if opening {
            (1, depth, self.sequence)
        } else {
            (0, -depth, self.sequence)
        };
        self.plan.insertions.push(Insertion {
            offset,
            order,
            piece,
        });
    }

    /// The first child token of `node` spelled `text`.
    fn token(&self, node: Node<'a>, text: &str) -> Option<Node<'a>> {
        let mut cursor = node.walk();
        node.children(&mut cursor)
            .find(|c| !c.is_named() && c.kind().eq_ignore_ascii_case(text))
    }

    /// The `)` closing a statement's condition: the anchor of its first branch.
    fn condition_close(&self, node: Node<'_>) -> usize {
        node.child_by_field_name("condition")
            .map(|c| c.end_byte() - 1)
            .unwrap_or(node.start_byte())
    }

    fn file_entry(&mut self, program: Node<'a>) {
        let mut cursor = program.walk();
        let mut in_php = false;
        let mut tag_anchor = None;
        for child in program.children(&mut cursor) {
            if child.start_byte() >= self.limit {
                return;
            }
            match self.kind(child) {
                Kind::PhpTag => {
                    in_php = self.source[child.byte_range()].eq_ignore_ascii_case(b"<?php");
                    tag_anchor.get_or_insert(child.start_byte());
                }
                Kind::TextInterpolation => {
                    let mut inner = child.walk();
                    for part in child.children(&mut inner) {
                        if self.kind(part) == Kind::PhpTag {
                            in_php = self.source[part.byte_range()].eq_ignore_ascii_case(b"<?php");
                        }
                    }
                }
                Kind::Text | Kind::Comment | Kind::NamespaceUse | Kind::DeclareStatement => {}
                Kind::NamespaceDefinition => {
                    if child.child_by_field_name("body").is_some() {
                        return;
                    }
                }
                _ => {
                    if child.is_named() && in_php && halt_call(self.source, child).is_none() {
                        let block = self.block(
                            BlockKind::FileEntry,
                            tag_anchor.unwrap_or(child.start_byte()),
                        );
                        self.insert(child.start_byte(), true, 0, Piece::Counter { block });
                        return;
                    }
                }
            }
        }
    }

    fn namespace_definition(&mut self, node: Node<'a>) {
        let name = node
            .child_by_field_name("name")
            .map(|n| self.text(n))
            .unwrap_or_default();
        let Some(body) = node.child_by_field_name("body") else {
            self.namespace = name;
            return;
        };
        self.namespace = name;
        self.push_scope(node, ScopeKind::Namespace, String::new());
        let mut cursor = body.walk();
        let first_code = body.named_children(&mut cursor).find(|c| {
            !matches!(
                self.kind(*c),
                Kind::Comment
                    | Kind::NamespaceUse
                    | Kind::DeclareStatement
                    | Kind::TextInterpolation
            )
        });
        let offset = match first_code {
            Some(statement) => statement.start_byte(),
            None => body.end_byte() - 1,
        };
        let block = self.block(BlockKind::FileEntry, body.start_byte());
        self.insert(offset, true, 0, Piece::Counter { block });
    }

    fn function_body(&mut self, node: Node<'a>, kind: BlockKind) {
        if let Some(body) = node
            .child_by_field_name("body")
            .filter(|b| self.kind(*b) == Kind::CompoundStatement)
        {
            self.after_open_token(body, kind, body.start_byte(), 0);
        }
    }

    /// A counter right after the `{` (or `:`) that opens `body`.
    fn after_open_token(&mut self, body: Node<'_>, kind: BlockKind, anchor: usize, depth: i64) {
        let block = self.block(kind, anchor);
        self.insert(body.start_byte() + 1, true, depth, Piece::Counter { block });
    }

    /// The body of a branch or loop: braced, alternative syntax, or a single
    /// statement that gets braces on the same line.
    fn branch(&mut self, body: Node<'_>, kind: BlockKind, anchor: usize, depth: i64) {
        match self.kind(body) {
            Kind::CompoundStatement | Kind::ColonBlock => {
                self.after_open_token(body, kind, anchor, depth)
            }
            Kind::TextInterpolation | Kind::Text => {}
            _ => {
                let block = self.block(kind, anchor);
                self.insert(body.start_byte(), true, depth, Piece::OpenBrace { block });
                let last = self.source[body.end_byte() - 1];
                let semicolon = last != b';' && last != b'}';
                self.insert(
                    body.end_byte(),
                    false,
                    depth,
                    Piece::CloseBrace { semicolon },
                );
            }
        }
    }

    /// A counter after a whole statement: the code that follows an if, a
    /// loop, a switch or a try.
    fn after(&mut self, node: Node<'_>, kind: BlockKind, anchor: usize, depth: i64) {
        let block = self.block(kind, anchor);
        let last = self.source[node.end_byte() - 1];
        let piece = if last == b';' || last == b'}' {
            Piece::Counter { block }
        } else {
            Piece::CounterAfterBareStatement { block }
        };
        self.insert(node.end_byte(), false, depth, piece);
    }

    fn if_statement(&mut self, node: Node<'a>, depth: i64) {
        if let Some(body) = node.child_by_field_name("body") {
            let anchor = self.condition_close(node);
            self.branch(body, BlockKind::IfBranch, anchor, depth + 1);
        }
        let mut cursor = node.walk();
        let alternatives: Vec<Node<'a>> = node
            .children_by_field_name("alternative", &mut cursor)
            .collect();
        for alternative in alternatives {
            let Some(body) = alternative.child_by_field_name("body") else {
                continue;
            };
            match self.kind(alternative) {
                Kind::ElseIfClause => {
                    let anchor = self.condition_close(alternative);
                    self.branch(body, BlockKind::ElseIfBranch, anchor, depth + 2);
                }
                Kind::ElseClause => self.branch(
                    body,
                    BlockKind::ElseBranch,
                    alternative.start_byte(),
                    depth + 2,
                ),
                _ => {}
            }
        }
        self.after(node, BlockKind::AfterIf, node.start_byte(), depth);
    }

    fn for_statement(&mut self, node: Node<'a>, depth: i64) {
        let close = self.token(node, ")");
        let anchor = close.map(|c| c.start_byte()).unwrap_or(node.start_byte());
        let colon = close
            .and_then(|c| c.next_sibling())
            .filter(|n| !n.is_named() && n.kind() == ":");
        if let Some(colon) = colon {
            let block = self.block(BlockKind::LoopBody, anchor);
            self.insert(colon.end_byte(), true, depth + 1, Piece::Counter { block });
        } else if let Some(body) = node.child_by_field_name("body") {
            self.branch(body, BlockKind::LoopBody, anchor, depth + 1);
        }
        self.after(node, BlockKind::LoopExit, node.start_byte(), depth);
    }

    fn case(&mut self, node: Node<'a>, depth: i64) {
        let mut cursor = node.walk();
        let value_end = node
            .child_by_field_name("value")
            .map(|v| v.end_byte())
            .unwrap_or(node.start_byte());
        let separator = node.children(&mut cursor).find(|c| {
            !c.is_named() && (c.kind() == ":" || c.kind() == ";") && c.start_byte() >= value_end
        });
        if let Some(separator) = separator {
            let block = self.block(BlockKind::SwitchCase, node.start_byte());
            self.insert(separator.end_byte(), true, depth, Piece::Counter { block });
        }
    }

    fn property_hook(&mut self, node: Node<'a>, depth: i64) {
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        let anchor = node
            .named_children(&mut node.walk())
            .find(|c| self.kind(*c) == Kind::Name)
            .map(|n| n.start_byte());
        let anchor = anchor.unwrap_or(node.start_byte());
        if self.kind(body) == Kind::CompoundStatement {
            self.after_open_token(body, BlockKind::PropertyHook, anchor, depth + 1);
        } else if self.has_reference_modifier(node) {
            // Wrapping would break the reference `&get` returns.
        } else {
            self.wrap(
                body,
                BlockKind::PropertyHook,
                anchor,
                Wrapper::Block,
                false,
                depth + 1,
            );
        }
    }

    fn has_reference_modifier(&self, node: Node<'_>) -> bool {
        let mut cursor = node.walk();
        node.children(&mut cursor)
            .any(|c| self.kind(c) == Kind::ReferenceModifier)
    }

    fn arrow_function(&mut self, node: Node<'a>, depth: i64) {
        if self.has_reference_modifier(node) {
            return;
        }
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        let anchor = self
            .token(node, "=>")
            .map(|t| t.start_byte())
            .unwrap_or(body.start_byte());
        self.wrap(
            body,
            BlockKind::ArrowFunctionBody,
            anchor,
            Wrapper::Block,
            false,
            depth + 1,
        );
    }

    fn binary(&mut self, node: Node<'a>, depth: i64) {
        let (Some(op), Some(right)) = (
            node.child_by_field_name("operator"),
            node.child_by_field_name("right"),
        ) else {
            return;
        };
        let op_text = &self.source[op.byte_range()];
        let kind = if op_text == b"&&"
            || op_text == b"||"
            || op_text.eq_ignore_ascii_case(b"and")
            || op_text.eq_ignore_ascii_case(b"or")
        {
            BlockKind::ShortCircuit
        } else if op_text == b"??" {
            BlockKind::Coalesce
        } else {
            return;
        };
        self.wrap(
            right,
            kind,
            op.start_byte(),
            Wrapper::Block,
            false,
            depth + 1,
        );
    }

    fn conditional(&mut self, node: Node<'a>, depth: i64) {
        let question = self.token(node, "?");
        let colon = self.token(node, ":");
        let (Some(question), Some(colon)) = (question, colon) else {
            return;
        };
        match node.child_by_field_name("body") {
            Some(body) => self.wrap(
                body,
                BlockKind::TernaryThen,
                question.start_byte(),
                Wrapper::Block,
                false,
                depth + 1,
            ),
            None => {
                if let Some(condition) = node.child_by_field_name("condition") {
                    self.wrap(
                        condition,
                        BlockKind::TernaryThen,
                        question.start_byte(),
                        Wrapper::Truthy,
                        false,
                        depth + 1,
                    );
                }
            }
        }
        if let Some(alternative) = node.child_by_field_name("alternative") {
            self.wrap(
                alternative,
                BlockKind::TernaryElse,
                colon.start_byte(),
                Wrapper::Block,
                false,
                depth + 1,
            );
        }
    }

    /// Wraps `expr` in a runtime call that records the block and returns the
    /// value. Skipped in constant expressions, where calls are not allowed.
    fn wrap(
        &mut self,
        expr: Node<'_>,
        kind: BlockKind,
        anchor: usize,
        wrapper: Wrapper,
        parenthesize: bool,
        depth: i64,
    ) {
        if self.const_depth > 0 || expr.end_byte() > self.limit {
            return;
        }
        let block = self.block(kind, anchor);
        self.insert(
            expr.start_byte(),
            true,
            depth,
            Piece::WrapOpen {
                block,
                wrapper,
                parenthesize,
            },
        );
        self.insert(
            expr.end_byte(),
            false,
            depth,
            Piece::WrapClose { parenthesize },
        );
    }
}

/// The `__halt_compiler()` call a statement consists of, if it does.
fn halt_call<'t>(source: &[u8], statement: Node<'t>) -> Option<Node<'t>> {
    let call = statement
        .named_child(0)
        .filter(|c| c.kind() == "function_call_expression")?;
    let function = call.child_by_field_name("function")?;
    source[function.byte_range()]
        .eq_ignore_ascii_case(b"__halt_compiler")
        .then_some(call)
}

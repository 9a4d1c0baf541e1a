//! Expression-level blocks: wrappers around the operands and branches that
//! run only sometimes (`&&`, `??`, `?:`, match arms, arrow function bodies)
//! and around a `yield`, which records the generator's resumption.

use tree_sitter::Node;

use super::Analyzer;
use crate::BlockKind;
use crate::grammar::NodeKind;
use crate::stub::Piece;

impl Analyzer<'_> {
    pub(super) fn arrow_function(&mut self, node: Node<'_>, depth: u32) {
        let Some(body) = node.child_by_field_id(self.grammar.fields.body.get()) else {
            return;
        };
        if node
            .child_by_field_id(self.grammar.fields.reference_modifier.get())
            .is_some()
        {
            // `fn&() => $x` returns a reference to $x; a call in between
            // would return a copy.
            self.by_reference.push(body.id());
            return;
        }
        if let Some(arrow) = self.grammar.child_of_kind(node, NodeKind::FatArrow) {
            self.wrap(
                body,
                BlockKind::ArrowFunctionBody,
                arrow.start_byte(),
                depth + 1,
            );
        }
    }

    /// A `{ … }` hook body gets an entry counter like a method; the
    /// expression of `get => expr;` or `set => expr;` is wrapped like an
    /// arrow function's body (fields `body` and `reference_modifier` alike),
    /// except in a by-reference `&get` hook.
    pub(super) fn property_hook(&mut self, node: Node<'_>, depth: u32) {
        let Some(body) = node.child_by_field_id(self.grammar.fields.body.get()) else {
            return;
        };
        if self.grammar.kind(body) == NodeKind::CompoundStatement {
            self.body_entry(node, BlockKind::PropertyHook, depth);
        } else {
            self.arrow_function(node, depth);
        }
    }

    /// The right operand of `&&`, `||`, `and`, `or` and `??`.
    pub(super) fn binary(&mut self, node: Node<'_>, depth: u32) {
        let f = &self.grammar.fields;
        let (Some(op), Some(right)) = (
            node.child_by_field_id(f.operator.get()),
            node.child_by_field_id(f.right.get()),
        ) else {
            return;
        };
        match self.grammar.kind(op) {
            NodeKind::AndAnd | NodeKind::OrOr | NodeKind::And | NodeKind::Or => {
                self.wrap_condition(right, op.start_byte(), depth + 1)
            }
            NodeKind::Coalesce => self.wrap(right, BlockKind::Coalesce, op.start_byte(), depth + 1),
            _ => {}
        }
    }

    /// The value of `??=`.
    pub(super) fn augmented_assignment(&mut self, node: Node<'_>, depth: u32) {
        let f = &self.grammar.fields;
        if let (Some(op), Some(right)) = (
            node.child_by_field_id(f.operator.get()),
            node.child_by_field_id(f.right.get()),
        ) && self.grammar.kind(op) == NodeKind::CoalesceAssign
        {
            self.wrap(right, BlockKind::Coalesce, op.start_byte(), depth + 1);
        }
    }

    /// The value of a match arm, `default` included.
    pub(super) fn match_arm(&mut self, node: Node<'_>, depth: u32) {
        if let Some(value) = node.child_by_field_id(self.grammar.fields.return_expression.get())
            && let Some(arrow) = self.grammar.child_of_kind(node, NodeKind::FatArrow)
        {
            self.wrap(value, BlockKind::MatchArm, arrow.start_byte(), depth + 1);
        }
    }

    pub(super) fn conditional(&mut self, node: Node<'_>, depth: u32) {
        let f = &self.grammar.fields;
        let (Some(question), Some(colon)) = (
            self.grammar.child_of_kind(node, NodeKind::Question),
            self.grammar.child_of_kind(node, NodeKind::Colon),
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
                    && !self.scope.in_const_expression()
                {
                    self.enclose(
                        BlockKind::TernaryThen,
                        question.start_byte(),
                        (condition.start_byte(), condition.end_byte()),
                        2 * (depth + 1),
                        (Piece::OpenTruthy, Piece::Close),
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

    pub(super) fn yield_expression(&mut self, node: Node<'_>, depth: u32) {
        if self.scope.in_const_expression() || self.by_reference.contains(&node.id()) {
            return;
        }
        // Parenthesised, so the wrapper holds the value the generator
        // resumes with, and runs after it resumes.
        self.enclose(
            BlockKind::YieldResume,
            node.start_byte(),
            (node.start_byte(), node.end_byte()),
            2 * depth + 1,
            (Piece::OpenYield, Piece::CloseYield),
        );
    }

    /// The right operand of a short-circuit operator: only its truth
    /// matters, so it is recorded without a call (see `Piece::CloseCondition`).
    /// A `throw` or `exit` there never has a value: those keep `traceBlock`.
    fn wrap_condition(&mut self, expr: Node<'_>, anchor: usize, depth: u32) {
        let never_has_a_value = match self.grammar.kind(expr) {
            NodeKind::ThrowExpression => true,
            NodeKind::FunctionCallExpression => self.exit_call(expr).is_some(),
            NodeKind::Name => self.is_exit_keyword(expr),
            _ => false,
        };
        if never_has_a_value
            || self.scope.in_const_expression()
            || self.by_reference.contains(&expr.id())
        {
            return self.wrap(expr, BlockKind::ShortCircuit, anchor, depth);
        }
        self.enclose(
            BlockKind::ShortCircuit,
            anchor,
            (expr.start_byte(), expr.end_byte()),
            2 * depth,
            (Piece::OpenCondition, Piece::CloseCondition),
        );
    }

    /// Wraps `expr` (at `depth`) in `traceBlock(ID, expr)`, which records the
    /// block once `expr` has its value and returns that value.
    fn wrap(&mut self, expr: Node<'_>, kind: BlockKind, anchor: usize, depth: u32) {
        if self.scope.in_const_expression() || self.by_reference.contains(&expr.id()) {
            return;
        }
        // An expression that never produces a value would never be
        // recorded: wrap what `throw` throws, or the status `exit` gets.
        let (target, target_depth) = match self.grammar.kind(expr) {
            NodeKind::ThrowExpression => match expr.named_child(0) {
                Some(thrown) if !thrown.is_extra() => (thrown, depth + 1),
                _ => (expr, depth),
            },
            NodeKind::FunctionCallExpression => match self.exit_call(expr) {
                Some(Some(status)) => (status, depth + 3),
                // `exit()` with no plain status: a block around it could
                // never be recorded.
                Some(None) => return,
                None => (expr, depth),
            },
            NodeKind::Name if self.is_exit_keyword(expr) => return,
            _ => (expr, depth),
        };
        self.enclose(
            kind,
            anchor,
            (target.start_byte(), target.end_byte()),
            2 * target_depth,
            (Piece::Open, Piece::Close),
        );
    }

    pub(super) fn is_exit_keyword(&self, name: Node<'_>) -> bool {
        self.source
            .get(name.byte_range())
            .is_some_and(|n| n.eq_ignore_ascii_case(b"exit") || n.eq_ignore_ascii_case(b"die"))
    }

    /// For a call to `exit` / `die`: its status argument, if it has exactly
    /// one plain argument. `None` for any other call.
    fn exit_call<'t>(&self, call: Node<'t>) -> Option<Option<Node<'t>>> {
        let f = &self.grammar.fields;
        let function = call.child_by_field_id(f.function.get())?;
        if self.grammar.kind(function) != NodeKind::Name || !self.is_exit_keyword(function) {
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
            && self.grammar.kind(argument) == NodeKind::Argument
            // Not a named argument (`exit(status: 1)`) nor an unpacking.
            && argument.child_count() == 1
            && argument.child_by_field_id(f.name.get()).is_none();
        Some(if plain { argument.named_child(0) } else { None })
    }
}

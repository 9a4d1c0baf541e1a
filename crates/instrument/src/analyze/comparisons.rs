//! Comparisons: their literal operands become dictionary entries (in every
//! rendering, at no run-time cost), and each comparison whose operands can
//! be observed becomes a *site* that the `cmplog` rendering wraps in calls
//! to `\PhpFuzz\CmpLog`, which log the operands at run time.
//!
//! A wrapper is a call that takes one operand and returns it: the operands
//! are evaluated once, in their order, and the operator itself is untouched,
//! so the comparison keeps its result. What is compared:
//! - `===`, `==`, `!==`, `!=`, `<>`, `<`, `<=`, `>`, `>=`, `<=>`;
//! - a switch subject or match subject against its cases and conditions;
//! - the operands of `strcmp` and its relatives, `hash_equals`, `in_array`,
//!   `array_search`, `array_key_exists` (calls with named arguments or an
//!   unpacking are left alone);
//! - the key of a lookup in a class constant, `self::MAP[$key]`, against
//!   the constant's keys (the constant is read again: constants have no
//!   side effects; a variable would warn where `isset()` does not);
//! - for the dictionary only: the literal runs of `preg_*` patterns, the
//!   keys of array literals, and constants' literal values.

use tree_sitter::Node;

use super::literals::{self, Literal};
use super::{Analyzer, Rank};
use crate::grammar::NodeKind;
use crate::stub::{CmpCall, CmpPiece, cmp_kind};

/// What the comparison pass found in a file.
#[derive(Debug, Default)]
pub(crate) struct Comparisons {
    /// Dictionary entries, with repeats.
    pub tokens: Vec<Vec<u8>>,
    /// Per site: whether it may be rendered (cleared when an insertion
    /// would land outside PHP code).
    pub sites: Vec<bool>,
    pub insertions: Vec<CmpInsertion>,
    /// (site, start, end) of every operand a site wraps.
    pub spans: Vec<(u32, usize, usize)>,
    /// Source ranges of the literals `CmpPiece::CloseList` repeats.
    pub lists: Vec<(usize, usize)>,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct CmpInsertion {
    pub offset: usize,
    pub rank: u32,
    pub site: u32,
    pub piece: CmpPiece,
}

/// How a call compares its first two arguments.
enum Compares {
    Arguments(u8),
    /// `in_array`, `array_search`: the needle against the haystack's values.
    Elements,
    /// `array_key_exists`: the key against the array's keys.
    Keys,
    /// `preg_*`: the pattern's literal runs, for the dictionary only.
    Pattern,
}

fn comparing_function(name: &[u8]) -> Option<Compares> {
    use cmp_kind::*;
    let lower = name.to_ascii_lowercase();
    Some(match lower.as_slice() {
        b"strcmp" | b"hash_equals" => Compares::Arguments(EQUAL),
        b"strcasecmp" => Compares::Arguments(EQUAL | CASE),
        b"strncmp" | b"str_starts_with" => Compares::Arguments(PREFIX),
        b"strncasecmp" => Compares::Arguments(PREFIX | CASE),
        b"str_ends_with" => Compares::Arguments(SUFFIX),
        b"strpos" | b"strrpos" | b"str_contains" | b"substr_compare" | b"substr_count" => {
            Compares::Arguments(CONTAINS)
        }
        b"stripos" | b"strripos" => Compares::Arguments(CONTAINS | CASE),
        b"in_array" | b"array_search" => Compares::Elements,
        b"array_key_exists" | b"key_exists" => Compares::Keys,
        b"preg_match"
        | b"preg_match_all"
        | b"preg_replace"
        | b"preg_replace_callback"
        | b"preg_split"
        | b"preg_grep" => Compares::Pattern,
        _ => return None,
    })
}

/// An operand: its node and, if it is a literal, its value.
struct Operand<'t> {
    node: Node<'t>,
    literal: Option<Literal>,
}

impl Analyzer<'_> {
    /// Plans what `node` contributes to the dictionary and the comparison log.
    #[inline]
    pub(super) fn plan_comparisons(&mut self, node: Node<'_>, kind: NodeKind, depth: u32) {
        match kind {
            NodeKind::BinaryExpression => self.comparison_operator(node, depth),
            NodeKind::SwitchStatement => self.switch_comparisons(node, depth),
            NodeKind::MatchExpression => self.match_comparisons(node, depth),
            NodeKind::FunctionCallExpression => self.comparing_call(node, depth),
            NodeKind::ArrayCreationExpression => self.array_literal_keys(node),
            NodeKind::SubscriptExpression => self.constant_lookup(node, depth),
            NodeKind::ConstElement => self.constant_value(node),
            _ => {}
        }
    }

    fn comparison_operator(&mut self, node: Node<'_>, depth: u32) {
        let f = &self.grammar.fields;
        let (Some(left), Some(operator), Some(right)) = (
            node.child_by_field_id(f.left.get()),
            node.child_by_field_id(f.operator.get()),
            node.child_by_field_id(f.right.get()),
        ) else {
            return;
        };
        let kind = match self.grammar.kind(operator) {
            NodeKind::Identical
            | NodeKind::Equal
            | NodeKind::NotIdentical
            | NodeKind::NotEqual
            | NodeKind::NotEqualAlt => cmp_kind::EQUAL,
            NodeKind::Less
            | NodeKind::LessEqual
            | NodeKind::Greater
            | NodeKind::GreaterEqual
            | NodeKind::Spaceship => cmp_kind::ORDER,
            _ => return,
        };
        let left = self.operand(left);
        let right = self.operand(right);
        // `strcmp(…) === 0`, `strpos(…) !== false`: the call logs what it compares.
        if self.is_comparing_call(left.node) || self.is_comparing_call(right.node) {
            for operand in [&left, &right] {
                if let Some(literal) = &operand.literal {
                    literals::tokens(literal, &mut self.comparisons.tokens);
                }
            }
            return;
        }
        self.compare_pair(left, right, kind, depth + 1);
    }

    fn is_comparing_call(&self, node: Node<'_>) -> bool {
        self.grammar.kind(node) == NodeKind::FunctionCallExpression
            && node
                .child_by_field_id(self.grammar.fields.function.get())
                .and_then(|name| self.global_function_name(name))
                .and_then(comparing_function)
                .is_some()
    }

    /// Dictionary entries from the literals of a pair, and a site that logs
    /// them if at least one is not a literal. `depth` is the operands'.
    fn compare_pair(&mut self, left: Operand<'_>, right: Operand<'_>, kind: u8, depth: u32) {
        for operand in [&left, &right] {
            if let Some(literal) = &operand.literal {
                literals::tokens(literal, &mut self.comparisons.tokens);
            }
        }
        if !self.may_log() {
            return;
        }
        match (&left.literal, &right.literal) {
            // Two literals: a constant comparison. true/false/null: nothing to learn.
            (Some(_), Some(_)) | (Some(Literal::Constant), _) | (_, Some(Literal::Constant)) => {}
            (None, Some(_)) if self.repeatable(right.node) => {
                let site = self.new_site();
                let close = self.close_literal(right.node, kind);
                self.wrap_operand(site, left.node, depth, CmpCall::Literal, close);
            }
            (Some(_), None) if self.repeatable(left.node) => {
                let site = self.new_site();
                let close = self.close_literal(left.node, kind | cmp_kind::SWAPPED);
                self.wrap_operand(site, right.node, depth, CmpCall::Literal, close);
            }
            _ => {
                let site = self.new_site();
                self.wrap_operand(site, left.node, depth, CmpCall::Left, CmpPiece::Close);
                let close = CmpPiece::CloseKind(kind);
                self.wrap_operand(site, right.node, depth, CmpCall::Right, close);
            }
        }
    }

    /// A `switch`'s or `match`'s subject and body.
    fn condition_and_body<'t>(&self, node: Node<'t>) -> Option<(Node<'t>, Node<'t>)> {
        let f = &self.grammar.fields;
        Some((
            node.child_by_field_id(f.condition.get())?,
            node.child_by_field_id(f.body.get())?,
        ))
    }

    /// `switch (SUBJECT) { case …: }`: the subject against every case.
    fn switch_comparisons(&mut self, node: Node<'_>, depth: u32) {
        let Some((condition, body)) = self.condition_and_body(node) else {
            return;
        };
        let f = &self.grammar.fields;
        let mut cursor = body.walk();
        let values: Vec<(Node<'_>, u32)> = body
            .named_children(&mut cursor)
            .filter(|case| self.grammar.kind(*case) == NodeKind::CaseStatement)
            .filter_map(|case| case.child_by_field_id(f.value.get()))
            .map(|value| (value, depth + 3))
            .collect();
        self.subject_against(condition, depth + 1, &values);
    }

    /// `match (SUBJECT) { A, B => …, default => … }`: the subject against
    /// every condition.
    fn match_comparisons(&mut self, node: Node<'_>, depth: u32) {
        let Some((condition, body)) = self.condition_and_body(node) else {
            return;
        };
        let f = &self.grammar.fields;
        let mut values = Vec::new();
        let mut arms = body.walk();
        for arm in body.named_children(&mut arms) {
            let Some(list) = arm.child_by_field_id(f.conditional_expressions.get()) else {
                continue;
            };
            let mut cursor = list.walk();
            values.extend(
                list.named_children(&mut cursor)
                    .filter(|c| !c.is_extra())
                    .map(|c| (c, depth + 4)),
            );
        }
        self.subject_against(condition, depth + 1, &values);
    }

    /// A subject (in parentheses at `depth`) compared against `values`: the
    /// literal ones are listed after the subject, the others wrapped.
    fn subject_against(&mut self, condition: Node<'_>, depth: u32, values: &[(Node<'_>, u32)]) {
        let Some(subject) = self.parenthesized(condition) else {
            return;
        };
        let mut listed = Vec::new();
        let mut wrapped = Vec::new();
        for &(value, value_depth) in values {
            match self.operand(value).literal {
                Some(literal) => {
                    literals::tokens(&literal, &mut self.comparisons.tokens);
                    if literal != Literal::Constant && self.repeatable(value) {
                        listed.push(value.byte_range());
                    }
                }
                None => wrapped.push((value, value_depth)),
            }
        }
        if !self.may_log()
            || self.operand(subject).literal.is_some()
            || (listed.is_empty() && wrapped.is_empty())
        {
            return;
        }
        let site = self.new_site();
        let first = self.comparisons.lists.len() as u32;
        let count = listed.len() as u32;
        self.comparisons
            .lists
            .extend(listed.iter().map(|range| (range.start, range.end)));
        let close = CmpPiece::CloseList { first, count };
        self.wrap_operand(site, subject, depth + 1, CmpCall::Against, close);
        for (value, value_depth) in wrapped {
            self.wrap_operand(site, value, value_depth, CmpCall::Arm, CmpPiece::Close);
        }
    }

    fn comparing_call(&mut self, call: Node<'_>, depth: u32) {
        let f = &self.grammar.fields;
        let Some(compares) = call
            .child_by_field_id(f.function.get())
            .and_then(|name| self.global_function_name(name))
            .and_then(comparing_function)
        else {
            return;
        };
        let Some(arguments) = self.plain_arguments(call) else {
            return;
        };
        let argument_depth = depth + 3;
        match compares {
            Compares::Pattern => {
                if let Some(&pattern) = arguments.first()
                    && let Some(Literal::Bytes(bytes)) = self.operand(pattern).literal
                {
                    literals::regex_runs(&bytes, &mut self.comparisons.tokens);
                }
            }
            Compares::Arguments(kind) => {
                if let [first, second, ..] = arguments[..] {
                    let (first, second) = (self.operand(first), self.operand(second));
                    self.compare_pair(first, second, kind, argument_depth);
                }
            }
            Compares::Elements | Compares::Keys => {
                let [needle, haystack, ..] = arguments[..] else {
                    return;
                };
                let needle = self.operand(needle);
                if let Some(literal) = &needle.literal {
                    literals::tokens(literal, &mut self.comparisons.tokens);
                }
                let is_keys = matches!(compares, Compares::Keys);
                let literal_array =
                    self.grammar.kind(haystack) == NodeKind::ArrayCreationExpression;
                if literal_array {
                    self.array_literal_parts(haystack, !is_keys);
                }
                if needle.literal.is_some() || !self.may_log() {
                    return;
                }
                let site = self.new_site();
                let call = if is_keys {
                    CmpCall::Keys
                } else {
                    CmpCall::Elements
                };
                self.wrap_operand(
                    site,
                    needle.node,
                    argument_depth,
                    CmpCall::Left,
                    CmpPiece::Close,
                );
                self.wrap_operand(site, haystack, argument_depth, call, CmpPiece::Close);
            }
        }
    }

    /// `X::MAP[$key]`: the key against the constant map's keys.
    fn constant_lookup(&mut self, node: Node<'_>, depth: u32) {
        let mut cursor = node.walk();
        let parts: Vec<Node<'_>> = node
            .named_children(&mut cursor)
            .filter(|c| !c.is_extra())
            .collect();
        let [container, key] = parts[..] else {
            return;
        };
        if self.grammar.kind(container) != NodeKind::ClassConstantAccessExpression
            || !container.named_child(0).is_some_and(|class| {
                matches!(
                    self.grammar.kind(class),
                    NodeKind::RelativeScope | NodeKind::Name | NodeKind::QualifiedName
                )
            })
            || self.operand(key).literal.is_some()
            || !self.may_log()
            || !self.repeatable(container)
        {
            return;
        }
        let site = self.new_site();
        let close = self.close_literal(container, cmp_kind::EQUAL);
        self.wrap_operand(site, key, depth + 1, CmpCall::Key, close);
    }

    /// Keys of `[KEY => …]`: maps the input is looked up in.
    fn array_literal_keys(&mut self, array: Node<'_>) {
        self.array_literal_parts(array, false);
    }

    /// The literal keys (or values) of an array literal, for the dictionary.
    fn array_literal_parts(&mut self, array: Node<'_>, values: bool) {
        let mut cursor = array.walk();
        for element in array.named_children(&mut cursor) {
            if self.grammar.kind(element) != NodeKind::ArrayElementInitializer {
                continue;
            }
            let mut parts = element.walk();
            let named: Vec<Node<'_>> = element
                .named_children(&mut parts)
                .filter(|c| !c.is_extra())
                .collect();
            let part = match (named.len(), values) {
                (2, false) => named[0],
                (2, true) => named[1],
                (1, true) => named[0],
                _ => continue,
            };
            if let Some(literal) = self.operand(part).literal {
                literals::tokens(&literal, &mut self.comparisons.tokens);
            }
        }
    }

    /// `const NAME = LITERAL`: a named magic value, compared somewhere else.
    fn constant_value(&mut self, element: Node<'_>) {
        let mut cursor = element.walk();
        let value = element
            .named_children(&mut cursor)
            .filter(|c| !c.is_extra())
            .last();
        if let Some(value) = value
            && let Some(literal) = self.operand(value).literal
        {
            literals::tokens(&literal, &mut self.comparisons.tokens);
        }
    }

    // ----- helpers -----

    fn operand<'t>(&self, node: Node<'t>) -> Operand<'t> {
        Operand {
            node,
            literal: literals::literal(self.source, self.grammar, node),
        }
    }

    /// Calls may go here: not in a constant expression, not in `assert()`.
    fn may_log(&self) -> bool {
        !self.scope.in_const_expression() && !self.scope.in_assert()
    }

    /// A literal whose text may be repeated: one line, so no line moves.
    fn repeatable(&self, literal: Node<'_>) -> bool {
        self.source
            .get(literal.byte_range())
            .is_some_and(|text| !text.contains(&b'\n') && !text.contains(&b'\r'))
    }

    fn close_literal(&self, literal: Node<'_>, kind: u8) -> CmpPiece {
        CmpPiece::CloseLiteral {
            start: literal.start_byte(),
            end: literal.end_byte(),
            kind,
        }
    }

    fn new_site(&mut self) -> u32 {
        self.comparisons.sites.push(true);
        (self.comparisons.sites.len() - 1) as u32
    }

    /// Wraps `operand` (a node at `depth`) in `CmpLog::CALL(SITE, operand` … `close`.
    fn wrap_operand(
        &mut self,
        site: u32,
        operand: Node<'_>,
        depth: u32,
        call: CmpCall,
        close: CmpPiece,
    ) {
        let (start, end) = (operand.start_byte(), operand.end_byte());
        let comparisons = &mut self.comparisons;
        comparisons.spans.push((site, start, end));
        comparisons.insertions.push(CmpInsertion {
            offset: start,
            rank: Rank::open(2 * depth),
            site,
            piece: CmpPiece::Open(call),
        });
        comparisons.insertions.push(CmpInsertion {
            offset: end,
            rank: Rank::close(2 * depth),
            site,
            piece: close,
        });
    }

    /// The expression inside `( … )`.
    fn parenthesized<'t>(&self, node: Node<'t>) -> Option<Node<'t>> {
        if self.grammar.kind(node) != NodeKind::ParenthesizedExpression {
            return None;
        }
        let mut cursor = node.walk();
        let mut inner = node.named_children(&mut cursor).filter(|c| !c.is_extra());
        let expression = inner.next()?;
        inner.next().is_none().then_some(expression)
    }

    /// The name of a call to a global function: `strcmp`, `\strcmp`.
    pub(super) fn global_function_name<'a>(&'a self, function: Node<'_>) -> Option<&'a [u8]> {
        let text = self.source.get(function.byte_range())?;
        match self.grammar.kind(function) {
            NodeKind::Name => Some(text),
            NodeKind::QualifiedName => {
                let name = text.strip_prefix(b"\\")?;
                (!name.contains(&b'\\')).then_some(name)
            }
            _ => None,
        }
    }

    /// The argument expressions of a call with plain positional arguments
    /// only: no name, no `...`, no `&`, not `f(...)`.
    pub(super) fn plain_arguments<'t>(&self, call: Node<'t>) -> Option<Vec<Node<'t>>> {
        let f = &self.grammar.fields;
        let arguments = call.child_by_field_id(f.arguments.get())?;
        let mut cursor = arguments.walk();
        let mut plain = Vec::new();
        for argument in arguments.named_children(&mut cursor) {
            if argument.is_extra() {
                continue;
            }
            if self.grammar.kind(argument) != NodeKind::Argument
                || argument.child_by_field_id(f.name.get()).is_some()
                || argument
                    .child_by_field_id(f.reference_modifier.get())
                    .is_some()
            {
                return None;
            }
            let mut inner = argument.walk();
            let mut expressions = argument
                .named_children(&mut inner)
                .filter(|c| !c.is_extra());
            let expression = expressions.next()?;
            if expressions.next().is_some()
                || self.grammar.kind(expression) == NodeKind::VariadicUnpacking
            {
                return None;
            }
            plain.push(expression);
        }
        Some(plain)
    }
}

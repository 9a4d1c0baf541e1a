//! Side effects the renamed sink functions alone would miss
//! (docs/detectors.md, "Side effects"; issue #40):
//! - **callbacks**: a callable passed to a function that calls it
//!   (`array_map('exec', …)`, `usort`, `ob_start`, `Closure::fromCallable`…)
//!   goes through `\PhpFuzz\Sink\callback()`, which turns a name of a hooked
//!   function (`'exec'`, `'\System'`, `'FFI::cdef'`) into its hook and
//!   returns anything else unchanged (`call_user_func` and `$f(…)` go through
//!   `callee()`, which does the same);
//! - **classes**: `new ReflectionFunction(…)`, `new Phar(…)` and `new
//!   PharData(…)` make the hooks' subclasses (the callable mapped; the
//!   archive's writes refused outside the allowed folders), and
//!   `FFI::cdef()`, `FFI::load()` and `FFI::scope()` call the hook class.

use php_fuzz_detectors::Detector;
use tree_sitter::Node;

use super::sinks::SinkInsertion;
use super::{Analyzer, Rank};
use crate::grammar::NodeKind;
use crate::stub::{SinkCall, SinkPiece};

/// Functions that call a callable they are given: (name, which argument).
pub(super) fn callback_argument(lower: &[u8]) -> Option<(&'static str, usize)> {
    Some(match lower {
        b"array_map" => ("array_map", 0),
        b"forward_static_call" => ("forward_static_call", 0),
        b"forward_static_call_array" => ("forward_static_call_array", 0),
        b"register_shutdown_function" => ("register_shutdown_function", 0),
        b"register_tick_function" => ("register_tick_function", 0),
        b"ob_start" => ("ob_start", 0),
        b"set_error_handler" => ("set_error_handler", 0),
        b"set_exception_handler" => ("set_exception_handler", 0),
        b"header_register_callback" => ("header_register_callback", 0),
        b"spl_autoload_register" => ("spl_autoload_register", 0),
        b"array_filter" => ("array_filter", 1),
        b"array_walk" => ("array_walk", 1),
        b"array_walk_recursive" => ("array_walk_recursive", 1),
        b"usort" => ("usort", 1),
        b"uasort" => ("uasort", 1),
        b"uksort" => ("uksort", 1),
        b"array_reduce" => ("array_reduce", 1),
        b"iterator_apply" => ("iterator_apply", 1),
        _ => return None,
    })
}

/// Global classes whose objects the hooks replace, lower case, with the
/// detector whose dictionary words they bring.
const CLASSES: [(&[u8], Detector); 3] = [
    (b"reflectionfunction", Detector::CommandInjection),
    (b"phar", Detector::PathTraversal),
    (b"phardata", Detector::PathTraversal),
];

impl Analyzer<'_> {
    /// `array_map(CALLBACK, …)` and its kin: the callable goes through
    /// `callback()` (dropped where `name` is not the global function).
    pub(super) fn callback_call(
        &mut self,
        call: Node<'_>,
        depth: u32,
        name: &'static str,
        at: usize,
    ) {
        let Some(callable) = self.plain_arguments(call).and_then(|a| a.get(at).copied()) else {
            return;
        };
        self.sinks.seen.insert(Detector::CommandInjection);
        let (open, close) = self.callback_wrap(callable, depth + 3);
        self.sinks.pending.push((name, open));
        self.sinks.pending.push((name, close));
    }

    /// `new ReflectionFunction(…)`, `new Phar(…)`, `new PharData(…)` →
    /// `new \PhpFuzz\Sink\…(…)`.
    pub(super) fn side_effect_class(&mut self, node: Node<'_>, depth: u32) {
        let mut cursor = node.walk();
        let Some(class) = node
            .named_children(&mut cursor)
            .find(|c| !c.is_extra() && self.grammar.kind(*c) != NodeKind::Arguments)
        else {
            return;
        };
        let Some(lower) = self.global_class(class) else {
            return;
        };
        let Some(&(_, detector)) = CLASSES.iter().find(|(c, _)| *c == lower.as_slice()) else {
            return;
        };
        self.sinks.seen.insert(detector);
        self.rename_class(class, depth);
    }

    /// `Closure::fromCallable(CALLBACK)`: the callable goes through
    /// `callback()`; `FFI::cdef(…)`, `FFI::load(…)`, `FFI::scope(…)` →
    /// `\PhpFuzz\Sink\FFI::…(…)`.
    pub(super) fn static_side_effect(&mut self, node: Node<'_>, depth: u32) {
        let Some(scope) = node.named_child(0).filter(|c| !c.is_extra()) else {
            return;
        };
        let Some(method) = node.child_by_field_id(self.grammar.fields.name.get()) else {
            return;
        };
        let method = self.source[method.byte_range()].to_ascii_lowercase();
        match (self.global_class(scope).as_deref(), method.as_slice()) {
            (Some(b"closure"), b"fromcallable") => {
                if let Some(callable) = self.plain_arguments(node).and_then(|a| a.first().copied())
                {
                    self.sinks.seen.insert(Detector::CommandInjection);
                    let (open, close) = self.callback_wrap(callable, depth + 3);
                    self.sinks.insertions.push(open);
                    self.sinks.insertions.push(close);
                }
            }
            (Some(b"ffi"), b"cdef" | b"load" | b"scope") => {
                self.sinks.seen.insert(Detector::CommandInjection);
                self.rename_class(scope, depth);
            }
            _ => {}
        }
    }

    /// `\PhpFuzz\Sink\callback(` … `)` around `node`.
    fn callback_wrap(&self, node: Node<'_>, depth: u32) -> (SinkInsertion, SinkInsertion) {
        let open = SinkInsertion {
            offset: node.start_byte(),
            rank: Rank::open(2 * depth + 1),
            piece: SinkPiece::Open(SinkCall::Callback),
            guide: false,
        };
        let close = SinkInsertion {
            offset: node.end_byte(),
            rank: Rank::close(2 * depth + 1),
            piece: SinkPiece::Close,
            guide: false,
        };
        (open, close)
    }

    /// `\PhpFuzz\Sink\` (or `…\Strict\`) before a class name.
    fn rename_class(&mut self, class: Node<'_>, depth: u32) {
        let qualified = self.source[class.start_byte()] == b'\\';
        let piece = SinkPiece::Namespace {
            strict: self.sinks.strict,
            qualified,
        };
        self.sinks.insertions.push(SinkInsertion {
            offset: class.start_byte(),
            rank: Rank::open(2 * (depth + 1) + 1),
            piece,
            guide: false,
        });
    }

    /// The global class a class name means here, lower case: `\X`, `X`
    /// outside a namespace, or `X` a `use X;` imports under its own name
    /// (renaming another alias would name no class).
    fn global_class(&self, class: Node<'_>) -> Option<Vec<u8>> {
        if !matches!(
            self.grammar.kind(class),
            NodeKind::Name | NodeKind::QualifiedName
        ) {
            return None;
        }
        let lower = self.source[class.byte_range()].to_ascii_lowercase();
        if let Some(global) = lower.strip_prefix(b"\\") {
            return (!global.contains(&b'\\')).then(|| global.to_vec());
        }
        if lower.contains(&b'\\') {
            return None;
        }
        if !self.scope.in_namespace() || self.sinks.imported.contains(&lower) {
            return Some(lower);
        }
        None
    }
}

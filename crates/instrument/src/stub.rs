//! Every piece of text the instrumenter inserts comes from here, so the
//! stub's cost can be tuned in one place (docs/instrumentation.md).

use std::io::Write;

use crate::StubStyle;

/// Writes the statement that records block `id`, preceded by a space (it
/// may follow `<?php` or a `:`). Contains no newline.
pub(crate) fn counter(out: &mut Vec<u8>, style: StubStyle, id: u32) {
    match style {
        StubStyle::Trace => {
            let _ = write!(out, " \\PhpFuzz\\FuzzingContext::$trace[] = {id};");
        }
        StubStyle::EdgeMap => {
            let _ = write!(
                out,
                " \\PhpFuzz\\FuzzingContext::$edges[(\\PhpFuzz\\FuzzingContext::$prev << 28) | {id}] = \
                 (\\PhpFuzz\\FuzzingContext::$edges[(\\PhpFuzz\\FuzzingContext::$prev << 28) | {id}] ?? 0) + 1; \
                 \\PhpFuzz\\FuzzingContext::$prev = {id};"
            );
        }
    }
}

/// Which runtime function wraps an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wrapper {
    /// `traceBlock(id, expr)`: records the block, returns expr.
    Block,
    /// `traceTruthy(id, expr)`: records the block if expr is truthy, returns
    /// expr. The then-branch of `a ?: b`, which has no expression of its own.
    Truthy,
}

/// Writes the opening of an expression wrapper: `\PhpFuzz\traceBlock(<id>, `.
pub(crate) fn wrapper_open(out: &mut Vec<u8>, style: StubStyle, wrapper: Wrapper, id: u32) {
    out.extend_from_slice(match (style, wrapper) {
        (StubStyle::Trace, Wrapper::Block) => b"\\PhpFuzz\\traceBlock(",
        (StubStyle::Trace, Wrapper::Truthy) => b"\\PhpFuzz\\traceTruthy(",
        (StubStyle::EdgeMap, Wrapper::Block) => b"\\PhpFuzz\\countEdge(",
        (StubStyle::EdgeMap, Wrapper::Truthy) => b"\\PhpFuzz\\countEdgeIfTruthy(",
    });
    let _ = write!(out, "{id}, ");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_counter_appends_the_id() {
        let mut out = Vec::new();
        counter(&mut out, StubStyle::Trace, 0x0102_03ff);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#" \PhpFuzz\FuzzingContext::$trace[] = 16909311;"#
        );
    }

    #[test]
    fn edge_map_counter_counts_the_edge() {
        let mut out = Vec::new();
        counter(&mut out, StubStyle::EdgeMap, 7);
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("$edges[(\\PhpFuzz\\FuzzingContext::$prev << 28) | 7] = "));
        assert!(text.ends_with("\\PhpFuzz\\FuzzingContext::$prev = 7;"));
        assert!(!text.contains('\n'));
    }

    #[test]
    fn wrappers() {
        let mut out = Vec::new();
        wrapper_open(&mut out, StubStyle::Trace, Wrapper::Truthy, 1);
        wrapper_open(&mut out, StubStyle::EdgeMap, Wrapper::Block, 9);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"\PhpFuzz\traceTruthy(1, \PhpFuzz\countEdge(9, "#
        );
    }
}

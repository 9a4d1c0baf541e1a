//! Parsing with tree-sitter-php, and what counts as a parse the instrumenter
//! can trust.

use std::cell::RefCell;

use tree_sitter::{Node, Parser, Tree};

use crate::grammar::{Grammar, NodeKind};
use crate::lexical::{close_tag_after, skip_php_space};

/// A parse without ERROR or MISSING nodes of the code part of a file.
pub(crate) struct Parsed {
    pub tree: Tree,
    /// Where the code ends: the end of `__halt_compiler();` (after which PHP
    /// reads nothing), or the length of the source.
    pub code_end: usize,
}

/// How many `__halt_compiler` spellings to try in a file tree-sitter cannot
/// parse whole (each costs a parse of the code before it).
const MAX_HALT_CANDIDATES: usize = 4;

/// Parses `source`; on failure, the 1-based line of the first error.
pub(crate) fn parse(source: &[u8]) -> Result<Parsed, u32> {
    let tree = parse_bytes(source).ok_or(1u32)?;
    let root = tree.root_node();
    if !root.has_error() {
        if let Some(end) = top_level_halt(source, root)
            && end < source.len()
        {
            // The bytes after `__halt_compiler();` are data, which
            // tree-sitter parsed as PHP; parse the code without them.
            let code = parse_bytes(&source[..end]).ok_or(1u32)?;
            if !code.root_node().has_error() {
                return Ok(Parsed {
                    tree: code,
                    code_end: end,
                });
            }
            return Err(first_error_line(code.root_node()));
        }
        return Ok(Parsed {
            tree,
            code_end: source.len(),
        });
    }
    // The data after a `__halt_compiler();` may be anything, and ruin the
    // parse of the whole file; try the code before it on its own.
    for end in halt_candidates(source).take(MAX_HALT_CANDIDATES) {
        let Some(code) = parse_bytes(&source[..end]) else {
            continue;
        };
        let code_root = code.root_node();
        if !code_root.has_error() && top_level_halt(source, code_root) == Some(end) {
            return Ok(Parsed {
                tree: code,
                code_end: end,
            });
        }
    }
    Err(first_error_line(root))
}

fn parse_bytes(source: &[u8]) -> Option<Tree> {
    thread_local! {
        static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
    }
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let parser = match slot.as_mut() {
            Some(parser) => parser,
            None => {
                let mut parser = Parser::new();
                parser.set_language(&Grammar::get().language).ok()?;
                slot.insert(parser)
            }
        };
        let tree = parser.parse(source, None);
        if tree.is_none() {
            // A parse that stopped half-way leaves state behind.
            parser.reset();
        }
        tree
    })
}

/// 1-based line of the first ERROR or MISSING node.
fn first_error_line(root: Node<'_>) -> u32 {
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            return row_to_line(node.start_position().row);
        }
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    row_to_line(root.start_position().row)
}

fn row_to_line(row: usize) -> u32 {
    u32::try_from(row).unwrap_or(u32::MAX - 1) + 1
}

/// End of a top-level `__halt_compiler();` statement (or of the `?>` that
/// ends it), if the file has one.
fn top_level_halt(source: &[u8], root: Node<'_>) -> Option<usize> {
    let grammar = Grammar::get();
    let mut cursor = root.walk();
    for statement in root.children(&mut cursor) {
        if grammar.kind(statement) != NodeKind::ExpressionStatement {
            continue;
        }
        let Some(call) = statement
            .named_child(0)
            .filter(|c| grammar.kind(*c) == NodeKind::FunctionCallExpression)
        else {
            continue;
        };
        let Some(function) = call.child_by_field_id(grammar.fields.function.get()) else {
            continue;
        };
        if source
            .get(function.byte_range())
            .is_some_and(|name| name.eq_ignore_ascii_case(b"__halt_compiler"))
        {
            let end = statement.end_byte();
            if source[..end].ends_with(b";") {
                return Some(end);
            }
            // `__halt_compiler() ?>`: the code ends with the `?>`.
            return close_tag_after(source, end);
        }
    }
    None
}

/// Ends of the statements that every `__halt_compiler ( ) ;` spelling in
/// `source` would make, whether in code, a string or a comment.
fn halt_candidates(source: &[u8]) -> impl Iterator<Item = usize> + '_ {
    const NAME: &[u8] = b"__halt_compiler";
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(found) = memchr::memmem::find(&source[from..], b"__").map(|i| from + i) {
            from = found + 2;
            let name = source.get(found..found + NAME.len())?;
            if !name.eq_ignore_ascii_case(NAME) {
                continue;
            }
            let open = skip_php_space(source, found + NAME.len());
            if source.get(open) != Some(&b'(') {
                continue;
            }
            let close = skip_php_space(source, open + 1);
            if source.get(close) != Some(&b')') {
                continue;
            }
            let end = skip_php_space(source, close + 1);
            if source.get(end) == Some(&b';') {
                return Some(end + 1);
            }
            if source.get(end..end + 2) == Some(b"?>") {
                return Some(end + 2);
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halt_candidates_find_every_spelling_with_its_statement_end() {
        let source = b"<?php // __halt_compiler(); in a comment\n__HALT_COMPILER ( ) ;data __halt_compiler() ?>x";
        let ends: Vec<usize> = halt_candidates(source).collect();
        let first = source.windows(2).position(|w| w == b";d").unwrap() + 1;
        let second = source.len() - 1;
        assert_eq!(ends, vec![27, first, second]);
    }

    #[test]
    fn data_after_halt_compiler_is_not_parsed() {
        let source = b"<?php\necho 1;\n__halt_compiler();\x00\xff{{{ <?php if ( ";
        let parsed = parse(source).unwrap_or_else(|line| panic!("parse error on line {line}"));
        assert_eq!(
            parsed.code_end,
            source.iter().position(|&b| b == 0).unwrap()
        );
    }

    #[test]
    fn errors_are_reported_at_their_first_line() {
        assert_eq!(parse(b"<?php\n\nfoo(;\n").err(), Some(3));
        // A missing `}` is reported where the block ends: after its last token.
        assert_eq!(parse(b"<?php\nif ($a) {\n").err(), Some(2));
    }
}

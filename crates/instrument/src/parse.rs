//! Parsing with tree-sitter-php, and what counts as a parse the instrumenter
//! can trust.

use std::cell::RefCell;

use tree_sitter::{Node, ParseOptions, ParseState, Parser, Tree};

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

/// How far past its first error a file is parsed. A file with an error is
/// rejected anyway, and its parse only goes on to find where that first error
/// is; but tree-sitter's error recovery over garbage takes seconds and
/// hundreds of MB per MB (5 MB of random bytes: 15 s, 1.3 GB). A file whose
/// parse is stopped here reports its error at the line where it was seen.
const PARSE_PAST_ERROR_BYTES: usize = 256 * 1024;

/// Parses `source`; on failure, the 1-based line of the first error.
///
/// A file tree-sitter-php cannot parse is tried once more with stand-ins
/// for the PHP 8.5 forms it does not know (see `newer_syntax`); the tree
/// then describes the original's bytes as well.
pub(crate) fn parse(source: &[u8]) -> Result<Parsed, u32> {
    parse_as_written(source).or_else(|first_error| {
        crate::newer_syntax::stand_ins(source)
            .and_then(|copy| parse_as_written(&copy).ok())
            .ok_or(first_error)
    })
}

fn parse_as_written(source: &[u8]) -> Result<Parsed, u32> {
    let tree = match parse_bytes(source) {
        Parse::Tree(tree) => tree,
        Parse::Failed => return Err(1),
        Parse::Stopped { error_at } => {
            return parse_code_before_halt(source).ok_or_else(|| line_of_byte(source, error_at));
        }
    };
    let root = tree.root_node();
    if !root.has_error() {
        if let Some(end) = top_level_halt(source, root)
            && end < source.len()
        {
            // The bytes after `__halt_compiler();` are data, which
            // tree-sitter parsed as PHP; parse the code without them.
            return match parse_bytes(&source[..end]) {
                Parse::Tree(code) if !code.root_node().has_error() => Ok(Parsed {
                    tree: code,
                    code_end: end,
                }),
                Parse::Tree(code) => Err(first_error_line(code.root_node())),
                Parse::Stopped { error_at } => Err(line_of_byte(source, error_at)),
                Parse::Failed => Err(1),
            };
        }
        return Ok(Parsed {
            tree,
            code_end: source.len(),
        });
    }
    parse_code_before_halt(source).ok_or_else(|| first_error_line(root))
}

/// The data after a `__halt_compiler();` may be anything, and ruin the
/// parse of the whole file; tries the code before it on its own.
fn parse_code_before_halt(source: &[u8]) -> Option<Parsed> {
    halt_candidates(source)
        .take(MAX_HALT_CANDIDATES)
        .find_map(|end| match parse_bytes(&source[..end]) {
            Parse::Tree(code)
                if !code.root_node().has_error()
                    && top_level_halt(source, code.root_node()) == Some(end) =>
            {
                Some(Parsed {
                    tree: code,
                    code_end: end,
                })
            }
            _ => None,
        })
}

fn line_of_byte(source: &[u8], at: usize) -> u32 {
    let newlines = memchr::memchr_iter(b'\n', &source[..at.min(source.len())]).count();
    row_to_line(newlines)
}

/// The result of one tree-sitter parse.
enum Parse {
    Tree(Tree),
    /// Stopped [`PARSE_PAST_ERROR_BYTES`] past an error seen near `error_at`.
    Stopped {
        error_at: usize,
    },
    /// tree-sitter gave up.
    Failed,
}

fn parse_bytes(source: &[u8]) -> Parse {
    thread_local! {
        static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
    }
    let mut error_at = None;
    let tree = PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let parser = match slot.as_mut() {
            Some(parser) => parser,
            None => {
                let mut parser = Parser::new();
                parser.set_language(&Grammar::get().language).ok()?;
                slot.insert(parser)
            }
        };
        // Called every hundred or so parser operations; true stops the parse.
        let mut far_past_an_error = |state: &ParseState| {
            if !state.has_error() {
                return false;
            }
            let at = *error_at.get_or_insert(state.current_byte_offset());
            state.current_byte_offset() > at.saturating_add(PARSE_PAST_ERROR_BYTES)
        };
        let tree = parser.parse_with_options(
            &mut |offset, _| source.get(offset..).unwrap_or_default(),
            None,
            Some(ParseOptions::new().progress_callback(&mut far_past_an_error)),
        );
        if tree.is_none() {
            // A parse that stopped half-way leaves state behind.
            parser.reset();
        }
        tree
    });
    match (tree, error_at) {
        (Some(tree), _) => Parse::Tree(tree),
        (None, Some(error_at)) => Parse::Stopped { error_at },
        (None, None) => Parse::Failed,
    }
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
    fn garbage_is_rejected_quickly_and_near_its_first_error() {
        // Random bytes after an opening tag; before the bound, this took
        // about 3 s and 250 MB per MB.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut source = b"<?php\n\n".to_vec();
        source.extend((0..4 << 20).map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        }));
        let started = std::time::Instant::now();
        let line = parse(&source).err().expect("garbage does not parse");
        assert!(line >= 3, "{line}");
        let newlines_in_first_mb = source[..1 << 20].iter().filter(|&&b| b == b'\n').count();
        assert!(
            (line as usize) < newlines_in_first_mb,
            "reported near the start, not the end: line {line}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "catches a hang only: {:?}",
            started.elapsed()
        );
    }

    #[test]
    fn errors_are_reported_at_their_first_line() {
        assert_eq!(parse(b"<?php\n\nfoo(;\n").err(), Some(3));
        // A missing `}` is reported where the block ends: after its last token.
        assert_eq!(parse(b"<?php\nif ($a) {\n").err(), Some(2));
    }
}

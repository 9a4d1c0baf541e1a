//! Parsing an input once into a flat, thread-safe tree that the mutators
//! read without touching tree-sitter again.

use tree_sitter::Parser;

use crate::Grammar;

/// "No node" in [`Node`]'s links.
pub(crate) const NONE: u32 = u32::MAX;

const NAMED: u8 = 1;
/// The node is, or contains, an ERROR or MISSING node.
const ERROR: u8 = 2;
/// Comments and the like, which may appear anywhere.
const EXTRA: u8 = 4;
const IDENTIFIER: u8 = 8;
const SCOPE: u8 = 16;
/// The node's text parses only where it is, so it is neither pooled nor
/// copied elsewhere: it ends in a zero-width token, or right before an
/// extra (PHP's `?>`, a comment) without a `;` or `}` of its own, as a PHP
/// statement closed by `?>` does.
const CONTEXTUAL: u8 = 32;

/// One syntax node. Nodes are stored in pre-order, so a node's subtree is
/// the index range `index..subtree_end`. Anonymous tokens without children
/// are not stored: they are the bytes between stored nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    pub start: u32,
    pub end: u32,
    pub parent: u32,
    pub next_sibling: u32,
    pub subtree_end: u32,
    pub kind: u16,
    /// The field the node fills in its parent (tree-sitter's field id), 0 if none.
    pub field: u16,
    flags: u8,
}

impl Node {
    pub fn is_named(&self) -> bool {
        self.flags & NAMED != 0
    }

    /// True if the node is or contains an ERROR or MISSING node.
    pub fn has_error(&self) -> bool {
        self.flags & ERROR != 0
    }

    pub fn is_extra(&self) -> bool {
        self.flags & EXTRA != 0
    }

    pub fn is_identifier(&self) -> bool {
        self.flags & IDENTIFIER != 0
    }

    pub fn is_scope(&self) -> bool {
        self.flags & SCOPE != 0
    }

    /// Its text parses only in its context (it ends in a zero-width token).
    pub fn is_contextual(&self) -> bool {
        self.flags & CONTEXTUAL != 0
    }

    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }

    /// A place a mutation may change: a named, error-free, non-empty node
    /// that is not a comment.
    fn is_site(&self) -> bool {
        self.flags & (NAMED | ERROR | EXTRA) == NAMED && self.end > self.start
    }
}

/// An input parsed once: its bytes and a flat arena of its syntax nodes.
/// Built by [`InputParser::parse`]; `Send + Sync`, so the engine can keep
/// one per corpus entry and share it between workers.
#[derive(Debug, Clone, Default)]
pub struct ParsedInput {
    data: Box<[u8]>,
    nodes: Vec<Node>,
    /// Indices of the nodes mutations may change, the root excepted,
    /// ordered by (kind, index): each kind's sites are a run.
    sites: Vec<u32>,
    /// Indices of error-free identifier nodes, in pre-order.
    identifiers: Vec<u32>,
}

impl ParsedInput {
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn node(&self, index: u32) -> &Node {
        &self.nodes[index as usize]
    }

    /// Bytes this input holds on the heap (its copy of the data included),
    /// for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.data.len()
            + self.nodes.capacity() * size_of::<Node>()
            + (self.sites.capacity() + self.identifiers.capacity()) * size_of::<u32>()
    }

    /// True if tree-sitter found a syntax error anywhere in the input.
    pub fn has_error(&self) -> bool {
        self.nodes.first().is_none_or(Node::has_error)
    }

    /// The nodes mutations may change: named, error-free, non-empty, not
    /// comments, not the root, ordered by kind. Empty for an input with no
    /// valid subtree.
    pub fn sites(&self) -> &[u32] {
        &self.sites
    }

    /// The sites of one node kind, in input order.
    pub fn sites_of_kind(&self, kind: u16) -> &[u32] {
        let nodes = &self.nodes;
        let from = self
            .sites
            .partition_point(|&i| nodes[i as usize].kind < kind);
        let to = self
            .sites
            .partition_point(|&i| nodes[i as usize].kind <= kind);
        &self.sites[from..to]
    }

    /// Error-free identifier nodes, in input order.
    pub fn identifiers(&self) -> &[u32] {
        &self.identifiers
    }

    pub fn text(&self, index: u32) -> &[u8] {
        let node = &self.nodes[index as usize];
        &self.data[node.start as usize..node.end as usize]
    }

    /// The next named, non-extra sibling of `index`, if any.
    pub(crate) fn next_named_sibling(&self, index: u32) -> Option<u32> {
        let mut at = self.nodes[index as usize].next_sibling;
        while at != NONE {
            let node = &self.nodes[at as usize];
            if node.is_named() && !node.is_extra() {
                return Some(at);
            }
            at = node.next_sibling;
        }
        None
    }

    /// The previous named, non-extra sibling of `index`, if any.
    pub(crate) fn previous_named_sibling(&self, index: u32) -> Option<u32> {
        let parent = self.nodes[index as usize].parent;
        if parent == NONE {
            return None;
        }
        let mut at = parent + 1;
        let mut previous = None;
        while at != index && at != NONE {
            let node = &self.nodes[at as usize];
            if node.is_named() && !node.is_extra() {
                previous = Some(at);
            }
            at = node.next_sibling;
        }
        previous
    }

    /// The next sibling of `index` that forms a list with it: the next
    /// named, non-comment sibling, if it has the same kind and field, is
    /// error-free, and only a list separator lies between them.
    pub(crate) fn next_in_list(&self, index: u32) -> Option<u32> {
        let next = self.next_named_sibling(index)?;
        self.in_one_list(index, next).then_some(next)
    }

    /// The previous sibling of `index` that forms a list with it.
    pub(crate) fn previous_in_list(&self, index: u32) -> Option<u32> {
        let previous = self.previous_named_sibling(index)?;
        self.in_one_list(previous, index).then_some(previous)
    }

    fn in_one_list(&self, first: u32, second: u32) -> bool {
        let (a, b) = (self.node(first), self.node(second));
        a.kind == b.kind
            && a.field == b.field
            && !a.has_error()
            && !b.has_error()
            && is_list_separator(&self.data[a.end as usize..b.start as usize])
    }

    /// The nearest ancestor of `index` that opens a scope, or the root.
    pub(crate) fn scope_of(&self, index: u32) -> u32 {
        let mut at = self.nodes[index as usize].parent;
        while at != NONE {
            let node = &self.nodes[at as usize];
            if node.is_scope() || node.parent == NONE {
                return at;
            }
            at = node.parent;
        }
        0
    }

    /// Is `inner` inside the subtree of `outer` (or `outer` itself)?
    pub(crate) fn contains(&self, outer: u32, inner: u32) -> bool {
        outer <= inner && inner < self.nodes[outer as usize].subtree_end
    }
}

/// Flags the nodes that end right before an extra without a `;` or `}`,
/// and every descendant that ends with them.
fn mark_unterminated(parsed: &mut ParsedInput) {
    let nodes = &mut parsed.nodes;
    let data = &parsed.data;
    for index in 0..nodes.len() {
        let node = nodes[index];
        if node.next_sibling == NONE || node.is_extra() || node.is_empty() {
            continue;
        }
        let next = &nodes[node.next_sibling as usize];
        let terminated = matches!(data[node.end as usize - 1], b';' | b'}');
        if terminated
            || !next.is_extra()
            || !data[node.end as usize..next.start as usize]
                .trim_ascii()
                .is_empty()
        {
            continue;
        }
        for inner in &mut nodes[index..node.subtree_end as usize] {
            if inner.end == node.end {
                inner.flags |= CONTEXTUAL;
            }
        }
    }
}

/// Whitespace, optionally around one `,`, `;` or `|`: what separates the
/// elements of a list (arguments, array elements, statements, union
/// types), unlike the tokens between other repeated kinds (`$a[$b]`,
/// `$k => $v`, `foreach ($a as $b)`).
pub(crate) fn is_list_separator(gap: &[u8]) -> bool {
    matches!(gap.trim_ascii(), [] | [b',' | b';' | b'|'])
}

/// The arena keeps named nodes and anything with children; anonymous
/// tokens (punctuation, keywords) are only bytes between them.
fn is_stored(node: tree_sitter::Node<'_>) -> bool {
    node.is_named() || node.child_count() > 0
}

fn field(cursor: &tree_sitter::TreeCursor<'_>) -> u16 {
    cursor.field_id().map_or(0, |id| id.get())
}

/// Parses inputs with one grammar. Holds a tree-sitter parser, so it is not
/// `Sync`: keep one per thread.
pub struct InputParser {
    grammar: Grammar,
    parser: Parser,
    /// (node index, its last child so far) along the current path.
    stack: Vec<(u32, u32)>,
    /// Whether the last leaf the walk visited was zero-width.
    last_leaf_empty: bool,
}

impl InputParser {
    pub fn new(grammar: &Grammar) -> InputParser {
        let mut parser = Parser::new();
        parser
            .set_language(grammar.language())
            .expect("Grammar::from_info checked the language loads");
        InputParser {
            grammar: grammar.clone(),
            parser,
            stack: Vec::new(),
            last_leaf_empty: false,
        }
    }

    pub fn grammar(&self) -> &Grammar {
        &self.grammar
    }

    /// Parses `data`. Never fails: an input tree-sitter cannot parse keeps
    /// its valid subtrees as sites, and one too large for 32-bit offsets
    /// (or that tree-sitter gives up on) has none.
    pub fn parse(&mut self, data: &[u8]) -> ParsedInput {
        let mut parsed = ParsedInput {
            data: data.into(),
            ..ParsedInput::default()
        };
        if u32::try_from(data.len()).is_err() {
            return parsed;
        }
        self.parser.reset();
        let Some(tree) = self.parser.parse(data, None) else {
            return parsed;
        };
        self.flatten(&tree, &mut parsed);
        parsed
    }

    fn flatten(&mut self, tree: &tree_sitter::Tree, parsed: &mut ParsedInput) {
        let mut cursor = tree.walk();
        self.stack.clear();
        self.visit(&cursor, parsed);
        'walk: loop {
            if cursor.goto_first_child() {
                self.visit(&cursor, parsed);
                continue;
            }
            loop {
                self.leave(&cursor, parsed);
                if cursor.goto_next_sibling() {
                    self.visit(&cursor, parsed);
                    break;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
        mark_unterminated(parsed);
        let nodes = &parsed.nodes;
        parsed
            .sites
            .sort_unstable_by_key(|&i| (nodes[i as usize].kind, i));
        parsed.nodes.shrink_to_fit();
        parsed.sites.shrink_to_fit();
        parsed.identifiers.shrink_to_fit();
    }

    fn visit(&mut self, cursor: &tree_sitter::TreeCursor<'_>, parsed: &mut ParsedInput) {
        let node = cursor.node();
        if node.child_count() == 0 {
            self.last_leaf_empty = node.start_byte() == node.end_byte();
        }
        if is_stored(node) {
            self.push(node, field(cursor), parsed);
        }
    }

    fn leave(&mut self, cursor: &tree_sitter::TreeCursor<'_>, parsed: &mut ParsedInput) {
        let node = cursor.node();
        if !is_stored(node) {
            return;
        }
        let (done, _) = self.stack.pop().expect("the path holds the stored nodes");
        let end = parsed.nodes.len() as u32;
        let record = &mut parsed.nodes[done as usize];
        record.subtree_end = end;
        if node.child_count() > 0 && self.last_leaf_empty {
            record.flags |= CONTEXTUAL;
        }
    }

    fn push(&mut self, node: tree_sitter::Node<'_>, field: u16, parsed: &mut ParsedInput) {
        let index = parsed.nodes.len() as u32;
        let kind = node.kind_id();
        let mut flags = 0;
        if node.is_named() {
            flags |= NAMED;
        }
        if node.has_error() {
            flags |= ERROR;
        }
        if node.is_extra() {
            flags |= EXTRA;
        }
        if self.grammar.is_identifier(kind) {
            flags |= IDENTIFIER;
        }
        if self.grammar.is_scope(kind) {
            flags |= SCOPE;
        }
        let parent = match self.stack.last_mut() {
            Some((parent, last_child)) => {
                if *last_child != NONE {
                    parsed.nodes[*last_child as usize].next_sibling = index;
                }
                *last_child = index;
                *parent
            }
            None => NONE,
        };
        let record = Node {
            start: node.start_byte() as u32,
            end: node.end_byte() as u32,
            parent,
            next_sibling: NONE,
            subtree_end: index + 1,
            kind,
            field,
            flags,
        };
        parsed.nodes.push(record);
        if parent != NONE && record.is_site() && !self.grammar.is_frozen(kind) {
            parsed.sites.push(index);
            if record.is_identifier() {
                parsed.identifiers.push(index);
            }
        }
        self.stack.push((index, NONE));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(grammar: &str, text: &str) -> (Grammar, ParsedInput) {
        let grammar = Grammar::load(grammar).unwrap();
        let parsed = InputParser::new(&grammar).parse(text.as_bytes());
        (grammar, parsed)
    }

    #[test]
    fn the_arena_links_match_tree_sitters_tree() {
        let text = r#"{"a": [1, {"b": null}], "c": "d"}"#;
        let (grammar, parsed) = parse("json", text);
        let mut parser = Parser::new();
        parser.set_language(grammar.language()).unwrap();
        let tree = parser.parse(text, None).unwrap();
        // Walk tree-sitter's tree in pre-order beside the arena, skipping
        // anonymous leaves as the arena does.
        let mut expected = Vec::new();
        let mut stack = vec![tree.root_node()];
        while let Some(node) = stack.pop() {
            let mut cursor = node.walk();
            let children: Vec<_> = node
                .children(&mut cursor)
                .filter(|&c| is_stored(c))
                .collect();
            expected.push((
                node.kind_id(),
                node.start_byte() as u32,
                node.end_byte() as u32,
                children.len(),
            ));
            stack.extend(children.into_iter().rev());
        }
        assert!(expected.len() < tree.root_node().descendant_count());
        assert_eq!(parsed.nodes().len(), expected.len());
        for (index, (node, &(kind, start, end, children))) in
            parsed.nodes().iter().zip(&expected).enumerate()
        {
            assert_eq!((node.kind, node.start, node.end), (kind, start, end));
            let index = index as u32;
            let mut count = 0;
            let mut child = if node.subtree_end > index + 1 {
                index + 1
            } else {
                NONE
            };
            while child != NONE {
                assert_eq!(parsed.node(child).parent, index);
                assert!(parsed.contains(index, child) && child != index);
                count += 1;
                child = parsed.node(child).next_sibling;
            }
            assert_eq!(count, children);
        }
    }

    #[test]
    fn sites_skip_the_root_anonymous_tokens_and_broken_subtrees() {
        let (grammar, parsed) = parse("json", r#"[1, {"a": ]}, 2]"#);
        assert!(parsed.has_error());
        let texts: Vec<_> = parsed
            .sites()
            .iter()
            .map(|&s| {
                (
                    grammar.kind_name(parsed.node(s).kind),
                    String::from_utf8_lossy(parsed.text(s)).into_owned(),
                )
            })
            .collect();
        assert!(
            texts.contains(&("number", "1".into())) && texts.contains(&("number", "2".into())),
            "{texts:?}"
        );
        for &site in parsed.sites() {
            let node = parsed.node(site);
            assert!(
                node.is_named() && !node.has_error() && node.parent != NONE,
                "{texts:?}"
            );
        }
        let numbers = parsed.sites_of_kind(grammar.language().id_for_node_kind("number", true));
        assert_eq!(numbers.len(), 2);
    }

    #[test]
    fn list_separators_are_commas_semicolons_bars_or_space() {
        for gap in ["", " ", ", ", "\n  ;", " | "] {
            assert!(is_list_separator(gap.as_bytes()), "{gap:?}");
        }
        for gap in ["[", " => ", " as ", ",,", ": "] {
            assert!(!is_list_separator(gap.as_bytes()), "{gap:?}");
        }
    }

    #[test]
    fn php_statements_closed_by_the_end_tag_are_contextual() {
        let (grammar, parsed) = parse("php", "<?php $a = 1; $b = 2 ?>x<?php if ($a) { } ?>");
        let contextual: Vec<_> = parsed
            .nodes()
            .iter()
            .enumerate()
            .filter(|(_, n)| n.is_contextual() && n.is_named())
            .map(|(i, n)| {
                (
                    grammar.kind_name(n.kind),
                    String::from_utf8_lossy(parsed.text(i as u32)).into_owned(),
                )
            })
            .collect();
        assert_eq!(
            contextual,
            [
                ("expression_statement", "$b = 2".to_string()),
                ("assignment_expression", "$b = 2".into()),
                ("integer", "2".into()),
            ]
        );
    }
}

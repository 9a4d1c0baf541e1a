//! Stand-ins for the PHP forms tree-sitter-php 0.25 cannot parse.
//!
//! tree-sitter-php 0.25.1 (the newest release) parses everything PHP 8.4
//! and most of 8.5 has, but not these three forms:
//!
//! - the PHP 8.5 `(void)` cast (`(void) $object->mustUse();`), which it
//!   reads as a parenthesized constant with a `;` missing after it;
//! - PHP 8.5's `final` on a promoted constructor parameter
//!   (`final public int $x`, `final int $x`), where it expects a
//!   visibility or `readonly`;
//! - PHP 8.1's promoted parameter whose only modifier is `readonly`
//!   (`readonly int $x`, which implies `public`).
//!
//! A file that fails to parse is parsed again from a copy with stand-ins of
//! the same length in their place: `(int )` for `(void)`; for `final`,
//! spaces, or `public` over it and its type where it is the parameter's
//! only modifier; `public  ` for a `readonly` with no visibility beside it.
//! Newlines are kept, so every node of the copy's tree sits at the same
//! bytes and rows as the original's; the instrumenter reads that tree and
//! renders the original's bytes. No stand-in changes what gets
//! instrumented: they replace modifiers and a cast, around code whose
//! blocks and comparisons are the same with or without them.

use crate::lexical::{is_name_byte, is_php_space};

/// A copy of `source` with stand-ins for the forms above, if it has any.
pub(crate) fn stand_ins(source: &[u8]) -> Option<Vec<u8>> {
    let mut copy = source.to_vec();
    let casts = replace_void_casts(&mut copy);
    let modifiers = replace_parameter_modifiers(&mut copy);
    (casts + modifiers > 0).then_some(copy)
}

/// `(void)`, with any spaces or tabs inside the parentheses and in any
/// case, as PHP 8.5's lexer reads it: a cast token wherever it appears.
/// Copies in strings and comments are replaced too, which changes nothing
/// the parse sees. Returns how many were replaced.
fn replace_void_casts(source: &mut [u8]) -> usize {
    let mut count = 0;
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'(', &source[at..]).map(|i| at + i) {
        at = found + 1;
        let Some(end) = void_cast_end(source, found) else {
            continue;
        };
        let stand_in = &mut source[found..end];
        stand_in.fill(b' ');
        stand_in[..4].copy_from_slice(b"(int");
        stand_in[stand_in.len() - 1] = b')';
        count += 1;
        at = end;
    }
    count
}

/// The end of the `(void)` cast token that starts at `open`, if one does.
fn void_cast_end(source: &[u8], open: usize) -> Option<usize> {
    let tabs_and_spaces = |from: usize| {
        from + source[from..]
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count()
    };
    let word = tabs_and_spaces(open + 1);
    let word_end = word + 4;
    if !source.get(word..word_end)?.eq_ignore_ascii_case(b"void") {
        return None;
    }
    let close = tabs_and_spaces(word_end);
    (source.get(close) == Some(&b')')).then_some(close + 1)
}

/// The modifiers of promoted parameters that tree-sitter-php 0.25 rejects:
/// `final` (PHP 8.5), and `readonly` with no visibility (PHP 8.1, which
/// implies `public`). A run of modifiers counts when the byte before it,
/// past whitespace, is the `(` or `,` of a parameter list or the `]` of an
/// attribute, and what follows it is not `class`, `function` or `const` (a
/// declaration after an attribute) nor `:` or `(` (a named argument, a call
/// of a function named `readonly`). Returns how many runs were changed.
fn replace_parameter_modifiers(source: &mut [u8]) -> usize {
    let mut count = 0;
    let mut at = 0;
    while let Some(found) = next_keyword(source, at) {
        let start = run_start(source, found);
        let words = run_words(source, start);
        at = words.last().map_or(found + 1, |w| w.end).max(found + 1);
        if is_parameter_run(source, start, at) && stand_in_run(source, &words) {
            count += 1;
        }
    }
    count
}

/// One modifier of a run: `final`, `readonly`, or a visibility with its
/// optional `(set)`.
#[derive(Clone, Copy)]
struct Word {
    start: usize,
    /// End of the word itself, before any `(set)`.
    word_end: usize,
    /// End of the modifier, after any `(set)`.
    end: usize,
    kind: Modifier,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Modifier {
    Visibility,
    Readonly,
    Final,
}

fn modifier(word: &[u8]) -> Option<Modifier> {
    let is = |name: &[u8]| word.eq_ignore_ascii_case(name);
    if is(b"public") || is(b"protected") || is(b"private") {
        Some(Modifier::Visibility)
    } else if is(b"readonly") {
        Some(Modifier::Readonly)
    } else if is(b"final") {
        Some(Modifier::Final)
    } else {
        None
    }
}

/// The next `final` or `readonly` keyword from `from` on: a whole name that
/// is not a variable, a namespaced name or a member (`->final`, `::final`).
fn next_keyword(source: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while at < source.len() {
        if !is_name_byte(source[at]) {
            at += 1;
            continue;
        }
        let end = at + name_length(source, at);
        let word = &source[at..end];
        let is_keyword = matches!(modifier(word), Some(Modifier::Final | Modifier::Readonly));
        let before = at.checked_sub(1).map(|i| source[i]);
        let is_member = matches!(before, Some(b'$' | b'\\' | b'>' | b':'));
        if is_keyword && !is_member {
            return Some(at);
        }
        at = end;
    }
    None
}

/// Where the run of modifiers that `keyword` is part of starts.
fn run_start(source: &[u8], keyword: usize) -> usize {
    let mut start = keyword;
    while let Some(previous) = modifier_before(source, start) {
        start = previous;
    }
    start
}

/// The start of a modifier that ends, past whitespace, right before `at`.
fn modifier_before(source: &[u8], at: usize) -> Option<usize> {
    let mut end = source[..at].iter().rposition(|&b| !is_php_space(b))? + 1;
    let mut has_set = false;
    if source[end - 1] == b')' {
        // A visibility's `(set)`.
        let open = source[..end].iter().rposition(|&b| b == b'(')?;
        let inside = source[open + 1..end - 1].trim_ascii();
        if !inside.eq_ignore_ascii_case(b"set") {
            return None;
        }
        end = source[..open].iter().rposition(|&b| !is_php_space(b))? + 1;
        has_set = true;
    }
    let start = source[..end]
        .iter()
        .rposition(|&b| !is_name_byte(b))
        .map_or(0, |i| i + 1);
    match modifier(&source[start..end]) {
        Some(Modifier::Visibility) => Some(start),
        Some(_) if !has_set => Some(start),
        _ => None,
    }
}

/// The modifiers from `start` on, up to the first other token.
fn run_words(source: &[u8], start: usize) -> Vec<Word> {
    let mut words = Vec::new();
    let mut at = start;
    loop {
        let word_end = at + name_length(source, at);
        let Some(kind) = modifier(&source[at..word_end]) else {
            return words;
        };
        let end = if kind == Modifier::Visibility {
            set_suffix_end(source, word_end).unwrap_or(word_end)
        } else {
            word_end
        };
        words.push(Word {
            start: at,
            word_end,
            end,
            kind,
        });
        at = next_non_space(source, end);
    }
}

/// The end of a `(set)` right after a visibility at `at`.
fn set_suffix_end(source: &[u8], at: usize) -> Option<usize> {
    let open = next_non_space(source, at);
    (source.get(open) == Some(&b'(')).then_some(())?;
    let word = next_non_space(source, open + 1);
    source
        .get(word..word + 3)?
        .eq_ignore_ascii_case(b"set")
        .then_some(())?;
    let close = next_non_space(source, word + 3);
    (source.get(close) == Some(&b')')).then_some(close + 1)
}

fn is_parameter_run(source: &[u8], start: usize, end: usize) -> bool {
    let before = source[..start].iter().rposition(|&b| !is_php_space(b));
    if !before.is_some_and(|i| matches!(source[i], b'(' | b',' | b']')) {
        return false;
    }
    let next = next_non_space(source, end);
    if matches!(source.get(next), Some(b':' | b'(')) {
        return false;
    }
    let word = &source[next..next + name_length(source, next)];
    ![
        b"class".as_slice(),
        b"function",
        b"const",
        b"enum",
        b"interface",
        b"trait",
    ]
    .iter()
    .any(|w| word.eq_ignore_ascii_case(w))
}

/// Puts the stand-ins in the run `words`; returns whether it changed any.
fn stand_in_run(source: &mut [u8], words: &[Word]) -> bool {
    let finals: Vec<Word> = words
        .iter()
        .copied()
        .filter(|w| w.kind == Modifier::Final)
        .collect();
    let has = |kind| words.iter().any(|w| w.kind == kind);
    if has(Modifier::Visibility) {
        finals
            .iter()
            .for_each(|w| blank_keeping_newlines(&mut source[w.start..w.word_end]));
        return !finals.is_empty();
    }
    if let Some(readonly) = words.iter().find(|w| w.kind == Modifier::Readonly) {
        source[readonly.start..readonly.word_end].copy_from_slice(b"public  ");
        finals
            .iter()
            .for_each(|w| blank_keeping_newlines(&mut source[w.start..w.word_end]));
        return true;
    }
    let Some(last) = finals.last() else {
        return false;
    };
    let after = next_non_space(source, last.end);
    let public_over_type = lone_final_region_end(source, last.start, after);
    finals
        .iter()
        .for_each(|w| blank_keeping_newlines(&mut source[w.start..w.word_end]));
    if let Some(end) = public_over_type {
        let region = &mut source[last.start..end];
        region.fill(b' ');
        region[..6].copy_from_slice(b"public");
    }
    true
}

/// Where the type after a lone `final` at `at` ends (before `&` and the
/// variable), if `public` and a space fit in `final` and the type, on one
/// line.
fn lone_final_region_end(source: &[u8], at: usize, type_start: usize) -> Option<usize> {
    let is_type_byte = |b: u8| {
        is_name_byte(b) || is_php_space(b) || matches!(b, b'\\' | b'?' | b'|' | b'&' | b'(' | b')')
    };
    let variable = type_start
        + source[type_start..]
            .iter()
            .take_while(|&&b| is_type_byte(b))
            .count();
    if source.get(variable) != Some(&b'$') {
        return None;
    }
    let mut end = variable;
    while end > type_start && (is_php_space(source[end - 1]) || source[end - 1] == b'&') {
        end -= 1;
    }
    let region = &source[at..end];
    let fits = region.len() >= "public ".len() && !region.iter().any(|&b| b == b'\n' || b == b'\r');
    fits.then_some(end)
}

fn next_non_space(source: &[u8], from: usize) -> usize {
    from + source[from..]
        .iter()
        .take_while(|&&b| is_php_space(b))
        .count()
}

fn name_length(source: &[u8], at: usize) -> usize {
    source[at..]
        .iter()
        .take_while(|&&b| is_name_byte(b))
        .count()
}

fn blank_keeping_newlines(region: &mut [u8]) {
    for b in region {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stand_in(source: &str) -> String {
        String::from_utf8(stand_ins(source.as_bytes()).expect("has stand-ins")).unwrap()
    }

    #[test]
    fn void_casts_become_int_casts_of_the_same_length() {
        assert_eq!(stand_in("(void) f();"), "(int ) f();");
        assert_eq!(stand_in("(VOID)f();"), "(int )f();");
        assert_eq!(stand_in("( \tvoid )  f();"), "(int    )  f();");
        assert_eq!(stand_ins(b"(voids) f(); (void_) g();"), None);
    }

    #[test]
    fn final_beside_a_modifier_becomes_spaces() {
        assert_eq!(
            stand_in(
                "function __construct(final public int $x, #[A] final private readonly int $y) {}"
            ),
            "function __construct(      public int $x, #[A]       private readonly int $y) {}"
        );
        assert_eq!(
            stand_in("function __construct(public final int $x, public(set) final int $y) {}"),
            "function __construct(public       int $x, public(set)       int $y) {}"
        );
        assert_eq!(
            stand_in("function __construct(\n    final\n    protected(set) int $x,\n) {}"),
            "function __construct(\n         \n    protected(set) int $x,\n) {}"
        );
    }

    #[test]
    fn a_lone_final_becomes_public_over_its_type() {
        assert_eq!(
            stand_in("function __construct(final int $a, FINAL ?\\A\\B &$b, final A&B $c) {}"),
            "function __construct(public    $a, public      &$b, public    $c) {}"
        );
        // `public` does not fit: the parameter loses its promotion in the
        // copy, which only matters to hooks on it.
        assert_eq!(
            stand_in("function __construct(final $a) {}"),
            "function __construct(      $a) {}"
        );
    }

    #[test]
    fn readonly_without_a_visibility_becomes_public() {
        assert_eq!(
            stand_in("function __construct(readonly int $a, final readonly B $b) {}"),
            "function __construct(public   int $a,       public   B $b) {}"
        );
    }

    #[test]
    fn other_finals_are_left_alone() {
        for source in [
            "final class A { final public function f() {} final const X = 1; }",
            "$a->final(); A::final(); $final; \\final(); f(final: 1);",
            "class A { use T { f as final; } }",
            "#[A] final class B {} #[A] readonly class C {} #[A] final readonly class D {}",
            "class E { #[A] final public function f() {} #[A] final const X = 1; }",
            "readonly($x); f(readonly: 1); $o->readonly; function __construct(public readonly int $x) {}",
        ] {
            assert_eq!(stand_ins(source.as_bytes()), None, "{source}");
        }
    }
}

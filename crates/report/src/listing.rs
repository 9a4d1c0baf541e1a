//! The source listing of a file page: lines of plain text, visible control
//! characters and block markers. Nothing here is HTML; the template escapes
//! every string when it renders.

use std::borrow::Cow;
use std::fmt::Write;
use std::ops::Range;

use crate::analysis::{FileReport, Placed};

pub(crate) struct Line<'a> {
    /// 1-based.
    pub number: usize,
    /// The gutter's colour: `covered`, `uncovered`, `partial`, or empty for
    /// a line without blocks.
    pub class: &'static str,
    /// The line's hit count (its blocks' highest), compact; empty without blocks.
    pub count: String,
    pub segments: Vec<Segment<'a>>,
}

pub(crate) enum Segment<'a> {
    /// Plain text, borrowed from the source where it can be.
    Text(Cow<'a, str>),
    /// A control, invisible or undecodable character, shown as `shown`.
    Special {
        shown: String,
        title: String,
    },
    Marker(Marker),
}

/// One or more blocks at the same position, wrapped around the token there.
pub(crate) struct Marker {
    /// Outermost first; one per block, so every block is one element.
    pub layers: Vec<Layer>,
    /// The token the marker highlights; empty at the end of a line.
    pub text: String,
    /// For an uncovered block, the link to the next uncovered run (`#u3`).
    pub href: Option<String>,
}

pub(crate) struct Layer {
    /// `c` (covered) or `u` (uncovered).
    pub class: &'static str,
    /// `u<run>` when the block starts an uncovered run: the jump target.
    pub id: Option<String>,
    pub title: String,
}

/// A piece of a line: a decoded character, or bytes that are not UTF-8.
#[derive(Clone, Copy)]
enum Unit<'a> {
    Char(char),
    Invalid(&'a [u8]),
}

pub(crate) fn lines<'a>(file: &FileReport<'a>) -> Vec<Line<'a>> {
    let source: &'a [u8] = &file.file.source;
    let mut out = Vec::with_capacity(file.lines.len());
    let mut next = 0;
    let mut line_hits = file.line_hits.iter().peekable();
    for (index, range) in file.lines.iter().enumerate() {
        let first = next;
        while next < file.placed.len() && file.placed[next].line == index {
            next += 1;
        }
        let blocks = &file.placed[first..next];
        let (class, count) = match line_hits.next_if(|l| l.line == index + 1) {
            None => ("", String::new()),
            Some(l) if l.covered == l.blocks => ("covered", compact(l.hits)),
            Some(l) if l.covered == 0 => ("uncovered", compact(l.hits)),
            Some(l) => ("partial", compact(l.hits)),
        };
        let segments = segments(&source[range.clone()], range.start, blocks);
        out.push(Line {
            number: index + 1,
            class,
            count,
            segments,
        });
    }
    out
}

/// Decodes one line into units with their absolute byte offsets.
fn units(bytes: &[u8], start: usize) -> Vec<(usize, Unit<'_>)> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = start;
    for chunk in bytes.utf8_chunks() {
        for (i, c) in chunk.valid().char_indices() {
            out.push((at + i, Unit::Char(c)));
        }
        at += chunk.valid().len();
        if !chunk.invalid().is_empty() {
            out.push((at, Unit::Invalid(chunk.invalid())));
            at += chunk.invalid().len();
        }
    }
    out
}

fn segments<'a>(bytes: &'a [u8], start: usize, blocks: &[Placed<'_>]) -> Vec<Segment<'a>> {
    if blocks.is_empty() {
        plain(bytes)
    } else {
        with_markers(bytes, start, blocks)
    }
}

/// A line with blocks, decoded character by character to find each
/// block's token.
fn with_markers<'a>(bytes: &'a [u8], start: usize, blocks: &[Placed<'_>]) -> Vec<Segment<'a>> {
    let units = units(bytes, start);
    let mut out = Vec::new();
    // The plain characters not yet pushed: a byte range of `bytes`.
    let mut text = 0..0;
    let mut b = 0;
    let mut u = 0;
    while u < units.len() || b < blocks.len() {
        let at = units.get(u).map_or(usize::MAX, |&(offset, _)| offset);
        if b < blocks.len() && blocks[b].offset <= at {
            // Every block at or before this unit (an offset inside a
            // multi-byte character moves to the next character).
            let group_end = b + blocks[b..].iter().take_while(|p| p.offset <= at).count();
            let group = &blocks[b..group_end];
            b = group_end;
            let stop = blocks.get(b).map_or(usize::MAX, |p| p.offset);
            let len = token_len(&units[u..], stop);
            let mut token = String::new();
            for &(_, unit) in &units[u..u + len] {
                match unit {
                    Unit::Char(c) => push_plain(&mut token, c),
                    Unit::Invalid(_) => token.push('\u{fffd}'),
                }
            }
            u += len;
            flush(&mut out, bytes, &mut text);
            out.push(Segment::Marker(marker(group, token)));
            continue;
        }
        let (offset, unit) = units[u];
        match unit {
            Unit::Char(c) => match special(c) {
                None => {
                    let at = offset - start;
                    if text.start == text.end {
                        text = at..at;
                    }
                    text.end = at + c.len_utf8();
                }
                Some((shown, title)) => {
                    flush(&mut out, bytes, &mut text);
                    out.push(Segment::Special { shown, title });
                }
            },
            Unit::Invalid(bad) => {
                flush(&mut out, bytes, &mut text);
                out.push(invalid(bad));
            }
        }
        u += 1;
    }
    flush(&mut out, bytes, &mut text);
    out
}

/// A line without blocks, most of a file: runs of plain text borrowed from
/// the source, with the special characters and invalid bytes between them.
fn plain(bytes: &[u8]) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        let mut from = 0;
        for (i, c) in valid.char_indices() {
            if let Some((shown, title)) = special(c) {
                if from < i {
                    out.push(Segment::Text(Cow::Borrowed(&valid[from..i])));
                }
                out.push(Segment::Special { shown, title });
                from = i + c.len_utf8();
            }
        }
        if from < valid.len() {
            out.push(Segment::Text(Cow::Borrowed(&valid[from..])));
        }
        if !chunk.invalid().is_empty() {
            out.push(invalid(chunk.invalid()));
        }
    }
    out
}

fn invalid(bad: &[u8]) -> Segment<'static> {
    let mut title = String::from("not UTF-8:");
    for byte in bad {
        let _ = write!(title, " {byte:02X}");
    }
    Segment::Special {
        shown: "\u{fffd}".to_string(),
        title,
    }
}

/// Pushes the pending plain text, `bytes[text]`: whole decoded characters,
/// so always UTF-8 (decoded again rather than trusted, to stay safe code).
fn flush<'a>(out: &mut Vec<Segment<'a>>, bytes: &'a [u8], text: &mut Range<usize>) {
    if text.start < text.end {
        out.push(Segment::Text(String::from_utf8_lossy(&bytes[text.clone()])));
        *text = 0..0;
    }
}

/// How many units the marker highlights: a name (`$x`, `case`, `\Foo\Bar`),
/// an operator such as `||`, `??` or `=>`, the open tag, or one character,
/// never reaching the next block's offset `stop`.
fn token_len(units: &[(usize, Unit<'_>)], stop: usize) -> usize {
    let char_at = |i: usize| match units.get(i) {
        Some(&(offset, Unit::Char(c))) if offset < stop => Some(c),
        _ => None,
    };
    let Some(first) = char_at(0) else {
        return usize::from(!units.is_empty() && units[0].0 < stop);
    };
    if first == '<' {
        // The open tag, where a file's entry block sits.
        let tag: String = (0..5).map_while(char_at).collect();
        if tag.eq_ignore_ascii_case("<?php") {
            return 5;
        }
        return if tag.starts_with("<?=") { 3 } else { 1 };
    }
    let is_name = |c: char| c.is_alphanumeric() || c == '_' || c == '\\';
    let is_operator = |c: char| matches!(c, '|' | '&' | '?' | '=' | '>');
    let name = is_name(first) || first == '$';
    if !name && !matches!(first, '|' | '&' | '?' | '=') {
        return 1;
    }
    let continues = |c: char| if name { is_name(c) } else { is_operator(c) };
    let mut len = 1;
    while len < 64 && char_at(len).is_some_and(continues) {
        len += 1;
    }
    len
}

fn marker(group: &[Placed<'_>], text: String) -> Marker {
    let descriptions: Vec<String> = group.iter().map(describe).collect();
    let layers = group
        .iter()
        .enumerate()
        .map(|(i, p)| {
            // The innermost element is the one a pointer hovers: it lists all.
            let mut title = descriptions[i].clone();
            if i + 1 == group.len() {
                for (j, other) in descriptions.iter().enumerate() {
                    if j != i {
                        title.push('\n');
                        title.push_str(other);
                    }
                }
            }
            Layer {
                class: if p.covered() { "c" } else { "u" },
                id: p.starts_run.map(|run| format!("u{run}")),
                title,
            }
        })
        .collect();
    let href = group
        .iter()
        .find(|p| !p.covered())
        .map(|p| format!("#u{}", p.next_run));
    Marker { layers, text, href }
}

/// `IfBranch · hit 3 times · block 17 in Parser::parse`.
fn describe(p: &Placed<'_>) -> String {
    let b = &p.hits.block;
    let mut out = format!("{:?} · ", b.kind);
    match p.hits.hits {
        0 => out.push_str("never ran"),
        1 => out.push_str("hit 1 time"),
        n => {
            let _ = write!(out, "hit {n} times");
        }
    }
    let _ = write!(out, " · block {}", b.id.0);
    if let Some(function) = &b.function {
        let _ = write!(out, " in {function}");
    }
    out
}

/// Pushes a character of a token, control characters as their pictures.
fn push_plain(out: &mut String, c: char) {
    match special(c) {
        Some((shown, _)) => out.push_str(&shown),
        None => out.push(c),
    }
}

/// How a character that would be invisible, or would move text around, is
/// shown: C0 controls as their Unicode pictures (␀), the others (C1
/// controls, bidirectional overrides, zero-width characters, BOM) as
/// `\u{…}`. Tabs stay tabs.
fn special(c: char) -> Option<(String, String)> {
    let code = u32::from(c);
    if (0x20..0x7f).contains(&code) {
        return None;
    }
    let shown = match code {
        0x09 => return None,
        0x00..=0x1f => char::from_u32(0x2400 + code)?.to_string(),
        0x7f => '\u{2421}'.to_string(),
        0x80..=0x9f
        | 0x061c
        | 0x200b..=0x200f
        | 0x2028..=0x202e
        | 0x2060..=0x2064
        | 0x2066..=0x2069
        | 0xfeff
        | 0xfff9..=0xfffb
        | 0xfffe
        | 0xffff => format!("\\u{{{code:X}}}"),
        _ => return None,
    };
    Some((shown, format!("U+{code:04X}")))
}

/// 7, 1234, 12.3k, 4.5M: short enough for the gutter.
pub(crate) fn compact(n: u64) -> String {
    match n {
        0..10_000 => n.to_string(),
        10_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1}M", n as f64 / 1e6),
        _ => format!("{:.1}G", n as f64 / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_chars(s: &str) -> Vec<(usize, Unit<'_>)> {
        units(s.as_bytes(), 0)
    }

    #[test]
    fn tokens_are_names_operators_or_one_character() {
        assert_eq!(token_len(&unit_chars("$this->x"), usize::MAX), 5);
        assert_eq!(token_len(&unit_chars("case 'a':"), usize::MAX), 4);
        assert_eq!(token_len(&unit_chars("|| $b"), usize::MAX), 2);
        assert_eq!(token_len(&unit_chars("=> 1"), usize::MAX), 2);
        assert_eq!(token_len(&unit_chars("{ x"), usize::MAX), 1);
        assert_eq!(token_len(&unit_chars("<?php echo"), usize::MAX), 5);
        assert_eq!(token_len(&unit_chars("<?= $x ?>"), usize::MAX), 3);
        assert_eq!(token_len(&unit_chars("<b>"), usize::MAX), 1);
        assert_eq!(token_len(&unit_chars("\\Foo\\Bar()"), usize::MAX), 8);
        assert_eq!(
            token_len(&unit_chars("abcdef"), 3),
            3,
            "stops at the next block"
        );
        assert_eq!(token_len(&unit_chars(""), usize::MAX), 0);
        assert_eq!(token_len(&units(b"\xff\xfex", 0), usize::MAX), 1);
    }

    fn shown(segments: &[Segment<'_>]) -> Vec<String> {
        segments
            .iter()
            .map(|s| match s {
                Segment::Text(t) => t.to_string(),
                Segment::Special { shown, title } => format!("[{shown}|{title}]"),
                Segment::Marker(_) => unreachable!(),
            })
            .collect()
    }

    #[test]
    fn lines_without_blocks_take_the_short_way_to_the_same_segments() {
        let mut cases: Vec<Vec<u8>> = [
            &b""[..],
            b"plain ascii",
            b"a\x00b\xffc\xe2\x80\xaed\te",
            b"\xff\xfe",
            b"\xe2\x80",
            b"caf\xc3\xa9 \xef\xbb\xbf\x7f\xc2\x85 </script>",
        ]
        .iter()
        .map(|c| c.to_vec())
        .collect();
        // Random bytes, weighted toward the interesting ones.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..500 {
            let mut case = Vec::new();
            for _ in 0..(x % 24) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let pick = [b'a', b' ', 0x00, 0x1b, 0x7f, 0x80, 0xc3, 0xa9, 0xe2, 0xff];
                case.push(pick[(x % pick.len() as u64) as usize]);
            }
            cases.push(case);
        }
        for case in &cases {
            let short = plain(case);
            let long = with_markers(case, 0, &[]);
            assert_eq!(shown(&short), shown(&long), "{case:?}");
            assert!(
                short
                    .windows(2)
                    .all(|w| !matches!(w, [Segment::Text(_), Segment::Text(_)])),
                "text runs are merged: {case:?}"
            );
        }
    }

    #[test]
    fn invalid_bytes_and_controls_are_visible() {
        let segments = segments(b"a\x00b\xffc\xe2\x80\xaed\te", 0, &[]);
        let shown = shown(&segments);
        assert_eq!(
            shown,
            vec![
                "a",
                "[\u{2400}|U+0000]",
                "b",
                "[\u{fffd}|not UTF-8: FF]",
                "c",
                "[\\u{202E}|U+202E]",
                "d\te"
            ]
        );
    }

    #[test]
    fn compact_counts() {
        assert_eq!(compact(0), "0");
        assert_eq!(compact(9999), "9999");
        assert_eq!(compact(12_345), "12.3k");
        assert_eq!(compact(4_500_000), "4.5M");
        assert_eq!(compact(u64::MAX), "18446744073.7G");
    }
}

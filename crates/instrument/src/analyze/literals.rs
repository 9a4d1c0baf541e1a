//! PHP literals as values, and the byte strings a parser would read them
//! from: the entries of the dictionary taken from the source.

use tree_sitter::Node;

use crate::grammar::{Grammar, NodeKind};

/// Dictionary entries are at most this long (libFuzzer's longest word).
pub(crate) const MAX_TOKEN_LEN: usize = 64;
/// Shorter entries are left to the byte-level mutators.
pub(crate) const MIN_TOKEN_LEN: usize = 2;

/// A literal operand, as PHP evaluates it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Literal {
    Bytes(Vec<u8>),
    Int(i64),
    /// The value and its source text (underscores removed).
    Float(f64, Vec<u8>),
    /// `true`, `false`, `null`: nothing worth comparing against.
    Constant,
}

/// The literal `node` is, if it is one: a string without interpolation, an
/// integer or a float (either with a sign), `true`, `false` or `null`.
pub(crate) fn literal(source: &[u8], grammar: &Grammar, node: Node<'_>) -> Option<Literal> {
    let text = source.get(node.byte_range())?;
    match grammar.kind(node) {
        NodeKind::String => single_quoted(text).map(Literal::Bytes),
        NodeKind::EncapsedString => {
            let mut cursor = node.walk();
            let plain = node.named_children(&mut cursor).all(|part| {
                matches!(
                    grammar.kind(part),
                    NodeKind::StringContent | NodeKind::EscapeSequence
                )
            });
            if plain {
                double_quoted(text).map(Literal::Bytes)
            } else {
                None
            }
        }
        NodeKind::Integer => integer(text).map(Literal::Int),
        NodeKind::Float => float(text),
        NodeKind::Boolean | NodeKind::Null => Some(Literal::Constant),
        NodeKind::UnaryOpExpression => {
            let operator = node.child_by_field_id(grammar.fields.operator.get())?;
            let negative = match grammar.kind(operator) {
                NodeKind::Minus => true,
                NodeKind::Plus => false,
                _ => return None,
            };
            let operand = node
                .child_by_field_id(grammar.fields.argument.get())
                .or_else(|| node.named_child(0))?;
            match literal(source, grammar, operand)? {
                Literal::Int(v) if negative => v.checked_neg().map(Literal::Int),
                Literal::Float(v, text) if negative => {
                    let mut signed = b"-".to_vec();
                    signed.extend_from_slice(&text);
                    Some(Literal::Float(-v, signed))
                }
                value @ (Literal::Int(_) | Literal::Float(..)) => Some(value),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `'…'` (or `b'…'`): only `\\` and `\'` are escapes.
fn single_quoted(text: &[u8]) -> Option<Vec<u8>> {
    let text = text
        .strip_prefix(b"b")
        .or(text.strip_prefix(b"B"))
        .unwrap_or(text);
    let body = text.strip_prefix(b"'")?.strip_suffix(b"'")?;
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        if body[i] == b'\\' && matches!(body.get(i + 1), Some(b'\\' | b'\'')) {
            out.push(body[i + 1]);
            i += 2;
        } else {
            out.push(body[i]);
            i += 1;
        }
    }
    Some(out)
}

/// `"…"` without interpolation, escapes resolved as PHP resolves them.
fn double_quoted(text: &[u8]) -> Option<Vec<u8>> {
    let text = text
        .strip_prefix(b"b")
        .or(text.strip_prefix(b"B"))
        .unwrap_or(text);
    let body = text.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let byte = body[i];
        i += 1;
        if byte != b'\\' || i == body.len() {
            out.push(byte);
            continue;
        }
        let escaped = body[i];
        i += 1;
        let simple = match escaped {
            b'n' => Some(b'\n'),
            b't' => Some(b'\t'),
            b'r' => Some(b'\r'),
            b'v' => Some(0x0b),
            b'e' => Some(0x1b),
            b'f' => Some(0x0c),
            b'\\' | b'$' | b'"' => Some(escaped),
            _ => None,
        };
        if let Some(simple) = simple {
            out.push(simple);
            continue;
        }
        match escaped {
            b'0'..=b'7' => {
                let mut value = u32::from(escaped - b'0');
                for _ in 0..2 {
                    match body.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push(value as u8);
            }
            b'x' if body.get(i).is_some_and(u8::is_ascii_hexdigit) => {
                let mut value = 0u32;
                for _ in 0..2 {
                    match body.get(i).and_then(|&d| (d as char).to_digit(16)) {
                        Some(d) => {
                            value = value * 16 + d;
                            i += 1;
                        }
                        None => break,
                    }
                }
                out.push(value as u8);
            }
            b'u' if body.get(i) == Some(&b'{') => {
                let close = body[i..].iter().position(|&b| b == b'}')? + i;
                let hex = std::str::from_utf8(&body[i + 1..close]).ok()?;
                let ch = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                i = close + 1;
            }
            _ => {
                out.push(b'\\');
                out.push(escaped);
            }
        }
    }
    Some(out)
}

/// A PHP integer literal: decimal, `0x`, `0o` / leading `0`, `0b`, with
/// `_` separators. `None` past `i64` (PHP makes those floats).
fn integer(text: &[u8]) -> Option<i64> {
    let digits: Vec<u8> = text.iter().copied().filter(|&b| b != b'_').collect();
    let text = std::str::from_utf8(&digits).ok()?;
    let (radix, body) = match text.as_bytes() {
        [b'0', b'x' | b'X', ..] => (16, &text[2..]),
        [b'0', b'b' | b'B', ..] => (2, &text[2..]),
        [b'0', b'o' | b'O', ..] => (8, &text[2..]),
        [b'0', _, ..] => (8, &text[1..]),
        _ => (10, text),
    };
    i64::from_str_radix(body, radix).ok()
}

fn float(text: &[u8]) -> Option<Literal> {
    let digits: Vec<u8> = text.iter().copied().filter(|&b| b != b'_').collect();
    let value: f64 = std::str::from_utf8(&digits).ok()?.parse().ok()?;
    Some(Literal::Float(value, digits))
}

/// The dictionary entries a literal contributes: a string as it is; an
/// integer as decimal and hex text and, outside -128..=255 (where they are
/// mostly zero bytes), as 2-, 4- and 8-byte little- and big-endian values
/// when it fits (8 bytes only past 4); a float as written and, when whole,
/// as an integer's text.
pub(crate) fn tokens(literal: &Literal, out: &mut Vec<Vec<u8>>) {
    match literal {
        Literal::Bytes(bytes) => push_token(out, bytes.clone()),
        Literal::Int(v) => int_tokens(*v, out),
        Literal::Float(v, text) => {
            push_token(out, text.clone());
            if v.fract() == 0.0 && v.abs() < 1e18 {
                push_token(out, (*v as i64).to_string().into_bytes());
            }
        }
        Literal::Constant => {}
    }
}

pub(crate) fn int_tokens(v: i64, out: &mut Vec<Vec<u8>>) {
    push_token(out, v.to_string().into_bytes());
    if v >= 0 {
        push_token(out, format!("{v:x}").into_bytes());
        push_token(out, format!("{v:X}").into_bytes());
    }
    if (-128..=255).contains(&v) {
        return;
    }
    for width in [2usize, 4, 8] {
        let fits = fits_in(v, width);
        if !fits || (width == 8 && fits_in(v, 4)) {
            continue;
        }
        push_token(out, v.to_le_bytes()[..width].to_vec());
        push_token(out, v.to_be_bytes()[8 - width..].to_vec());
    }
}

/// Whether `v` is a `width`-byte unsigned or two's complement value.
fn fits_in(v: i64, width: usize) -> bool {
    if width >= 8 {
        return true;
    }
    let bits = 8 * width as u32;
    (v >= 0 && (v as u64) < (1u64 << bits)) || (v < 0 && v >= -(1i64 << (bits - 1)))
}

pub(crate) fn push_token(out: &mut Vec<Vec<u8>>, token: Vec<u8>) {
    if (MIN_TOKEN_LEN..=MAX_TOKEN_LEN).contains(&token.len()) {
        out.push(token);
    }
}

/// The literal runs of a PCRE pattern with its delimiters and flags
/// (`'/^GIF8[79]a/i'`): text between metacharacters, two bytes or more,
/// simple escapes resolved. A character a quantifier applies to ends the
/// run before it.
pub(crate) fn regex_runs(pattern: &[u8], out: &mut Vec<Vec<u8>>) {
    let Some(body) = regex_body(pattern) else {
        return;
    };
    let mut run: Vec<u8> = Vec::new();
    let flush = |run: &mut Vec<u8>, out: &mut Vec<Vec<u8>>| {
        push_token(out, std::mem::take(run));
    };
    let mut i = 0;
    while i < body.len() {
        let byte = body[i];
        match byte {
            b'\\' => {
                let Some(&next) = body.get(i + 1) else {
                    break;
                };
                i += 2;
                let literal = match next {
                    b'n' => Some(b'\n'),
                    b'r' => Some(b'\r'),
                    b't' => Some(b'\t'),
                    b'0' => Some(0),
                    b if !b.is_ascii_alphanumeric() => Some(b),
                    _ => None,
                };
                match literal {
                    Some(b) => {
                        if quantified(body, i) {
                            flush(&mut run, out);
                        } else {
                            run.push(b);
                        }
                    }
                    None => flush(&mut run, out),
                }
                continue;
            }
            b'[' => {
                flush(&mut run, out);
                i = class_end(body, i);
                continue;
            }
            b'(' => {
                flush(&mut run, out);
                // `(?:`, `(?i)`, `(?P<name>`: skip the group's header.
                i += 1;
                if body.get(i) == Some(&b'?') {
                    while i < body.len() && !matches!(body[i], b':' | b')' | b'>') {
                        i += 1;
                    }
                    i += 1;
                }
                continue;
            }
            b'{' => {
                // A quantifier `{n,m}`: the character before it was dropped.
                flush(&mut run, out);
                while i < body.len() && body[i] != b'}' {
                    i += 1;
                }
                i += 1;
                continue;
            }
            b'^' | b'$' | b'.' | b'|' | b')' | b'?' | b'*' | b'+' | b']' | b'}' => {
                flush(&mut run, out);
            }
            _ => {
                if quantified(body, i + 1) {
                    flush(&mut run, out);
                } else {
                    run.push(byte);
                }
            }
        }
        i += 1;
    }
    flush(&mut run, out);
}

/// Whether a quantifier follows at `at` (so the character before it may
/// be absent or repeated).
fn quantified(body: &[u8], at: usize) -> bool {
    matches!(body.get(at), Some(b'?' | b'*' | b'+' | b'{'))
}

/// The index after the `]` closing the class opened at `open`.
fn class_end(body: &[u8], open: usize) -> usize {
    let mut i = open + 1;
    if body.get(i) == Some(&b'^') {
        i += 1;
    }
    // A `]` first in the class is a literal.
    if body.get(i) == Some(&b']') {
        i += 1;
    }
    while i < body.len() {
        match body[i] {
            b'\\' => i += 2,
            b']' => return i + 1,
            _ => i += 1,
        }
    }
    body.len()
}

/// The pattern between its delimiters.
fn regex_body(pattern: &[u8]) -> Option<&[u8]> {
    let pattern = pattern.trim_ascii_start();
    let (&open, rest) = pattern.split_first()?;
    if open.is_ascii_alphanumeric() || open == b'\\' {
        return None;
    }
    let close = match open {
        b'(' => b')',
        b'{' => b'}',
        b'[' => b']',
        b'<' => b'>',
        other => other,
    };
    let end = rest.iter().rposition(|&b| b == close)?;
    Some(&rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(literal: Literal) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        tokens(&literal, &mut out);
        out
    }

    fn runs(pattern: &str) -> Vec<String> {
        let mut out = Vec::new();
        regex_runs(pattern.as_bytes(), &mut out);
        out.into_iter()
            .map(|r| String::from_utf8(r).unwrap())
            .collect()
    }

    #[test]
    fn strings_resolve_their_escapes() {
        assert_eq!(single_quoted(br"'a\'b\\c\n'"), Some(br"a'b\c\n".to_vec()));
        assert_eq!(single_quoted(b"b'x'"), Some(b"x".to_vec()));
        assert_eq!(
            double_quoted(br#""\x89PNG\r\n\032\n\u{e9}\$\q""#),
            Some(b"\x89PNG\r\n\x1a\n\xc3\xa9$\\q".to_vec())
        );
        assert_eq!(double_quoted(br#""\101\1012""#), Some(b"AA2".to_vec()));
    }

    #[test]
    fn integers_in_every_base() {
        assert_eq!(integer(b"1_000"), Some(1000));
        assert_eq!(integer(b"0x1F"), Some(31));
        assert_eq!(integer(b"0b101"), Some(5));
        assert_eq!(integer(b"0o17"), Some(15));
        assert_eq!(integer(b"017"), Some(15));
        assert_eq!(integer(b"0"), Some(0));
        assert_eq!(integer(b"99999999999999999999"), None);
    }

    #[test]
    fn an_integer_gives_its_text_and_binary_forms() {
        let tokens = all(Literal::Int(0x4948_4452));
        for expected in [&b"1229472850"[..], b"49484452", b"IHDR", b"RDHI"] {
            assert!(tokens.iter().any(|t| t == expected), "{expected:?} missing");
        }
        assert!(
            !tokens.contains(&0x4948_4452i64.to_le_bytes().to_vec()),
            "no 8-byte form below 2^32"
        );
        assert!(
            !tokens.iter().any(|t| t == b"DR"),
            "no 2-byte form past 2^16"
        );
        let negative = all(Literal::Int(-300));
        assert!(negative.contains(&b"-300".to_vec()));
        assert!(negative.contains(&vec![0xd4, 0xfe]));
        assert!(
            !negative.iter().any(|t| t.starts_with(b"ff")),
            "no hex of a negative"
        );
        let big = all(Literal::Int(0x0102_0304_0506));
        assert!(big.contains(&vec![6, 5, 4, 3, 2, 1, 0, 0]));
        assert!(big.contains(&vec![0, 0, 1, 2, 3, 4, 5, 6]));
        assert!(all(Literal::Int(7)).is_empty(), "one digit, no binary form");
        assert_eq!(all(Literal::Int(200)), [&b"200"[..], b"c8", b"C8"]);
    }

    #[test]
    fn regex_runs_stop_at_metacharacters_and_quantified_characters() {
        assert_eq!(runs("/^GIF8[79]a/"), ["GIF8"]);
        assert_eq!(runs("#<svg\\s+width=\"(\\d+)\"#i"), ["<svg", "width=\""]);
        assert_eq!(
            runs("/colou?r: (?:red|green)/"),
            ["colo", "r: ", "red", "green"]
        );
        assert_eq!(runs("/a\\.b\\/c{2,3}dd/"), ["a.b/", "dd"]);
        assert_eq!(runs("{BEGIN [A-Z]+ END}"), ["BEGIN ", " END"]);
        assert!(runs("no delimiters").is_empty());
        assert!(runs("").is_empty());
    }
}

//! Input-to-state replacement (Redqueen): where one operand of a logged
//! comparison appears in the input in some encoding, the input with that
//! occurrence replaced by the other operand, in the same encoding, is a
//! candidate likely to pass the comparison.
//!
//! Encodings: raw bytes; little- and big-endian integers of width 1 to 8;
//! decimal and hex text; lower-, upper- and case-insensitive matches. A
//! decimal number in the input that the comparison saw after simple
//! arithmetic (`m × n + c`, m up to 16) is solved for too.

use std::collections::HashSet;

use crate::cmp::{Operand, Record, kind};

/// A new input, and the bytes it got from the comparison (the token that
/// joins the persistent auto-dictionary if the input finds new coverage).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub data: Vec<u8>,
    pub token: Vec<u8>,
}

/// Occurrences of one pattern that are replaced, at most.
const MAX_OCCURRENCES: usize = 4;
/// Decimal numbers of the input tried for arithmetic, at most.
const MAX_NUMBERS: usize = 8;
/// Largest multiplier tried for arithmetic.
const MAX_FACTOR: i64 = 16;

/// Collects candidates, each once, up to a limit.
pub struct Candidates<'i> {
    input: &'i [u8],
    max_len: usize,
    limit: usize,
    seen: HashSet<Vec<u8>>,
    out: Vec<Candidate>,
}

impl<'i> Candidates<'i> {
    /// Candidates derived from `input`, at most `limit` of them, none longer
    /// than `max_len`.
    pub fn new(input: &'i [u8], max_len: usize, limit: usize) -> Candidates<'i> {
        Candidates {
            input,
            max_len,
            limit,
            seen: HashSet::new(),
            out: Vec::new(),
        }
    }

    pub fn is_full(&self) -> bool {
        self.out.len() >= self.limit
    }

    pub fn into_vec(self) -> Vec<Candidate> {
        self.out
    }

    fn push(&mut self, at: usize, len: usize, replacement: &[u8]) {
        if self.is_full() || self.input.len() - len + replacement.len() > self.max_len {
            return;
        }
        if self.input[at..at + len] == *replacement {
            return;
        }
        let mut data = Vec::with_capacity(self.input.len() - len + replacement.len());
        data.extend_from_slice(&self.input[..at]);
        data.extend_from_slice(replacement);
        data.extend_from_slice(&self.input[at + len..]);
        if self.seen.insert(data.clone()) {
            self.out.push(Candidate {
                data,
                token: replacement.to_vec(),
            });
        }
    }

    /// Replaces up to `MAX_OCCURRENCES` occurrences of `pattern` (matched
    /// case-insensitively with `fold`) by `replacement`. Returns whether
    /// the pattern occurs at all.
    fn replace(&mut self, pattern: &[u8], replacement: &[u8], fold: bool) -> bool {
        self.replace_spanning(pattern, 0, replacement, fold)
    }

    /// As `replace`, where an occurrence stands for `pattern` followed by
    /// `extra` more bytes (an operand the log cut short).
    fn replace_spanning(
        &mut self,
        pattern: &[u8],
        extra: usize,
        replacement: &[u8],
        fold: bool,
    ) -> bool {
        if pattern.is_empty() || pattern.len() > self.input.len() {
            return false;
        }
        let mut found = 0;
        let mut from = 0;
        while found < MAX_OCCURRENCES
            && let Some(at) = find(&self.input[from..], pattern, fold).map(|i| from + i)
        {
            found += 1;
            let len = (pattern.len() + extra).min(self.input.len() - at);
            self.push(at, len, replacement);
            from = at + 1;
        }
        found > 0
    }

    /// Adds the candidates one record suggests.
    pub fn add_record(&mut self, record: &Record<'_>) {
        if record.is_equal() {
            return;
        }
        let fold = record.kind & kind::CASE != 0;
        if record.kind & 7 == kind::CONTAINS {
            // The haystack should hold the needle: put it at either end.
            if let Some(needle) = text(record.b) {
                self.push(0, 0, &needle);
                self.push(self.input.len(), 0, &needle);
            }
            return;
        }
        for (from, to) in [(record.a, record.b), (record.b, record.a)] {
            if self.is_full() {
                return;
            }
            match (from, to) {
                (Operand::Int(x), Operand::Int(y)) => {
                    let order = record.kind & 7 == kind::ORDER;
                    let targets: &[i64] = if order {
                        &[y, y.wrapping_add(1), y.wrapping_sub(1)]
                    } else {
                        &[y]
                    };
                    for &target in targets {
                        self.integer(x, target);
                    }
                }
                (from, to) => self.bytes(from, to, fold),
            }
        }
    }

    /// `x` as a binary integer of any width and either endianness, or as
    /// decimal or hex text, replaced by `y` in the same form.
    fn integer(&mut self, x: i64, y: i64) {
        let mut found = false;
        for width in (1..=8usize).rev() {
            let (Some(le_x), Some(le_y)) = (fitting_le(x, width), fitting_le(y, width)) else {
                continue;
            };
            // One-byte patterns match almost anywhere: only when nothing wider did.
            if width == 1 && found {
                break;
            }
            found |= self.replace(&le_x, &le_y, false);
            let (be_x, be_y): (Vec<u8>, Vec<u8>) = (
                le_x.iter().rev().copied().collect(),
                le_y.iter().rev().copied().collect(),
            );
            if width > 1 {
                found |= self.replace(&be_x, &be_y, false);
            }
        }
        let (dx, dy) = (x.to_string(), y.to_string());
        found |= self.replace(dx.as_bytes(), dy.as_bytes(), false);
        if x >= 0 && y >= 0 {
            let (hx, hy) = (format!("{x:x}"), format!("{y:x}"));
            if hx.len() >= 2 && hx != dx {
                found |= self.replace(hx.as_bytes(), hy.as_bytes(), false);
                let (ux, uy) = (hx.to_ascii_uppercase(), hy.to_ascii_uppercase());
                if ux != hx {
                    found |= self.replace(ux.as_bytes(), uy.as_bytes(), false);
                }
            }
        }
        if !found {
            self.arithmetic(x, y);
        }
    }

    /// The comparison saw `x = m × n + c` for a decimal number `n` of the
    /// input: the `n'` with `m × n' + c = y`.
    fn arithmetic(&mut self, x: i64, y: i64) {
        for (at, len, n) in decimal_numbers(self.input).take(MAX_NUMBERS) {
            for m in 1..=MAX_FACTOR {
                if self.is_full() {
                    return;
                }
                let Some(c) = m.checked_mul(n).and_then(|mn| x.checked_sub(mn)) else {
                    continue;
                };
                let Some(target) = y.checked_sub(c) else {
                    continue;
                };
                if target % m != 0 {
                    continue;
                }
                let solved = target / m;
                if solved >= 0 {
                    self.push(at, len, solved.to_string().as_bytes());
                }
            }
        }
    }

    /// A string (or a number as text) replaced by the other operand.
    fn bytes(&mut self, from: Operand<'_>, to: Operand<'_>, fold: bool) {
        let (Some(pattern), Some(replacement)) = (text(from), text(to)) else {
            return;
        };
        if pattern.is_empty() {
            // An empty operand: the part compared was empty, most likely
            // because the input ended before it. Extend the input.
            self.push(self.input.len(), 0, &replacement);
            return;
        }
        let extra = match from {
            Operand::Bytes(bytes, len) => len as usize - bytes.len(),
            _ => 0,
        };
        if fold {
            self.replace_spanning(&pattern, extra, &replacement, true);
            return;
        }
        self.replace_spanning(&pattern, extra, &replacement, false);
        // Case variants: the input may hold the operand lowered or raised.
        let (lower, upper) = (pattern.to_ascii_lowercase(), pattern.to_ascii_uppercase());
        if lower != pattern {
            self.replace(&lower, &replacement.to_ascii_lowercase(), false);
        }
        if upper != pattern {
            self.replace(&upper, &replacement.to_ascii_uppercase(), false);
        }
    }
}

/// An operand as the text a parser would have read it from.
fn text(operand: Operand<'_>) -> Option<Vec<u8>> {
    match operand {
        Operand::Bytes(bytes, _) => Some(bytes.to_vec()),
        Operand::Int(v) => Some(v.to_string().into_bytes()),
        Operand::Float(v) if v.is_finite() => Some(format!("{v}").into_bytes()),
        Operand::Float(_) => None,
    }
}

/// `v`'s `width` low bytes, little-endian, if that holds all of `v`
/// (unsigned, or two's complement when negative).
fn fitting_le(v: i64, width: usize) -> Option<Vec<u8>> {
    let fits = width == 8 || {
        let bits = 8 * width as u32;
        (v >= 0 && (v as u64) < (1u64 << bits)) || (v < 0 && v >= -(1i64 << (bits - 1)))
    };
    fits.then(|| v.to_le_bytes()[..width].to_vec())
}

fn find(haystack: &[u8], needle: &[u8], fold: bool) -> Option<usize> {
    if fold {
        haystack
            .windows(needle.len())
            .position(|w| w.eq_ignore_ascii_case(needle))
    } else {
        memchr::memmem::find(haystack, needle)
    }
}

/// (offset, length, value) of each run of ASCII digits that fits an `i64`.
fn decimal_numbers(input: &[u8]) -> impl Iterator<Item = (usize, usize, i64)> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < input.len() {
            if !input[at].is_ascii_digit() {
                at += 1;
                continue;
            }
            let start = at;
            while at < input.len() && input[at].is_ascii_digit() {
                at += 1;
            }
            if let Some(n) = std::str::from_utf8(&input[start..at])
                .ok()
                .and_then(|t| t.parse::<i64>().ok())
            {
                return Some((start, at - start, n));
            }
        }
        None
    })
}

/// The sites of the bug detectors' guides (`Detectors::guide` in the PHP
/// runtime): a value that reached a sink, paired with the canary that would
/// make it a finding.
pub const GUIDE_SITES: u32 = 0xF000_0000;

/// Whether the record is a bug detector's guide, not a comparison.
pub fn is_guide(record: &Record<'_>) -> bool {
    record.site & GUIDE_SITES == GUIDE_SITES
}

/// Candidates for `input` from the comparisons its run logged. The bug
/// detectors' guides come first: a sink is usually reached late in a run,
/// after the parser's comparisons have used up the limit.
pub fn input_to_state<'r>(
    input: &[u8],
    records: impl IntoIterator<Item = Record<'r>>,
    max_len: usize,
    limit: usize,
) -> Vec<Candidate> {
    let mut candidates = Candidates::new(input, max_len, limit);
    let (guides, comparisons): (Vec<_>, Vec<_>) = records.into_iter().partition(is_guide);
    for record in guides.iter().chain(&comparisons) {
        if candidates.is_full() {
            break;
        }
        candidates.add_record(record);
    }
    candidates.into_vec()
}

/// Repairs a candidate that broke comparisons its parent passed (a checksum
/// over bytes the candidate changed): for each site where the parent's run
/// saw equal operands and the candidate's run saw them differ, the
/// candidate's operands are made equal again by replacement. `None` if
/// nothing needed repair or no repair applied.
pub fn repair<'r>(
    parent: &[Record<'r>],
    candidate: &[u8],
    candidate_records: &[Record<'r>],
    max_len: usize,
) -> Option<Vec<u8>> {
    const MAX_REPAIRS: usize = 4;
    let mut repaired = candidate.to_vec();
    let mut changed = false;
    let mut repairs = 0;
    for record in candidate_records {
        if repairs == MAX_REPAIRS {
            break;
        }
        if record.is_equal() || !parent.iter().any(|p| p.site == record.site && p.is_equal()) {
            continue;
        }
        let mut one = Candidates::new(&repaired, max_len, 1);
        for (from, to) in [(record.b, record.a), (record.a, record.b)] {
            let single = Record {
                a: from,
                b: to,
                ..*record
            };
            one.add_record_one_way(&single);
            if one.is_full() {
                break;
            }
        }
        if let Some(fixed) = one.into_vec().pop() {
            repaired = fixed.data;
            changed = true;
            repairs += 1;
        }
    }
    changed.then_some(repaired)
}

impl Candidates<'_> {
    /// `add_record` in one direction only: `a` replaced by `b`.
    fn add_record_one_way(&mut self, record: &Record<'_>) {
        match (record.a, record.b) {
            (Operand::Int(x), Operand::Int(y)) => self.integer(x, y),
            (from, to) => self.bytes(from, to, record.kind & kind::CASE != 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmp::tests::{bytes, encode};
    use crate::cmp::{Value, records};

    fn candidates(input: &[u8], log: &[(u32, u8, Value, Value)]) -> Vec<Vec<u8>> {
        let log = encode(log);
        input_to_state(input, records(&log), 1024, 100)
            .into_iter()
            .map(|c| c.data)
            .collect()
    }

    #[test]
    fn raw_bytes_are_replaced_where_they_occur() {
        let out = candidates(
            b"xxabcdyy",
            &[(1, kind::EQUAL, bytes("abcd"), bytes("IHDR"))],
        );
        assert_eq!(out, [b"xxIHDRyy".to_vec()]);
        let both_ways = candidates(b"IHDR?", &[(1, kind::EQUAL, bytes("PLTE"), bytes("IHDR"))]);
        assert_eq!(both_ways, [b"PLTE?".to_vec()]);
    }

    #[test]
    fn a_detectors_guide_comes_before_the_comparisons_that_filled_the_limit() {
        let log = encode(&[
            (1, kind::EQUAL, bytes("abcd"), bytes("IHDR")),
            (
                GUIDE_SITES | 7,
                kind::EQUAL,
                bytes("(n)"),
                bytes("canary()"),
            ),
        ]);
        let out: Vec<_> = input_to_state(b"abcd=(n);", records(&log), 1024, 1)
            .into_iter()
            .map(|c| c.data)
            .collect();
        assert_eq!(out, [b"abcd=canary();".to_vec()]);
    }

    #[test]
    fn equal_operands_suggest_nothing() {
        assert!(candidates(b"abcd", &[(1, kind::EQUAL, bytes("abcd"), bytes("abcd"))]).is_empty());
    }

    #[test]
    fn integers_in_every_width_endianness_and_text() {
        let le = candidates(
            b"\x01\x00\x00\x00rest",
            &[(1, kind::EQUAL, Value::Int(1), Value::Int(0x1234_5678))],
        );
        assert!(le.contains(&b"\x78\x56\x34\x12rest".to_vec()), "{le:?}");
        let be = candidates(
            b"\x00\x00\x00\x07",
            &[(1, kind::EQUAL, Value::Int(7), Value::Int(0x0102_0304))],
        );
        assert!(be.contains(&b"\x01\x02\x03\x04".to_vec()), "{be:?}");
        let decimal = candidates(
            b"n=123;",
            &[(1, kind::EQUAL, Value::Int(123), Value::Int(98765))],
        );
        assert!(decimal.contains(&b"n=98765;".to_vec()));
        let hex = candidates(
            b"#ff00",
            &[(1, kind::EQUAL, Value::Int(0xff00), Value::Int(0xabcd))],
        );
        assert!(hex.contains(&b"#abcd".to_vec()), "{hex:?}");
    }

    #[test]
    fn order_comparisons_try_the_neighbours() {
        let out = candidates(b"5", &[(1, kind::ORDER, Value::Int(5), Value::Int(100))]);
        for expected in [&b"100"[..], b"101", b"99"] {
            assert!(out.contains(&expected.to_vec()), "{expected:?} in {out:?}");
        }
    }

    #[test]
    fn arithmetic_on_a_decimal_number_is_solved() {
        // The target computes 3 × n + 51 and compares it with 1_000_005.
        let out = candidates(
            b"n=4",
            &[(1, kind::EQUAL, Value::Int(63), Value::Int(1_000_005))],
        );
        assert!(out.contains(&b"n=333318".to_vec()), "{out:?}");
    }

    #[test]
    fn case_variants_and_case_insensitive_comparisons() {
        let lowered = candidates(b"<html>", &[(1, kind::EQUAL, bytes("HTML"), bytes("BODY"))]);
        assert!(lowered.contains(&b"<body>".to_vec()), "{lowered:?}");
        let folded = candidates(
            b"KeY=1",
            &[(1, kind::EQUAL | kind::CASE, bytes("key"), bytes("name"))],
        );
        assert!(folded.contains(&b"name=1".to_vec()), "{folded:?}");
    }

    #[test]
    fn a_truncated_operand_replaces_its_whole_length() {
        let input: Vec<u8> = (0..100u8).map(|i| b'a' + i % 26).collect();
        let log = encode(&[(1, kind::EQUAL, Value::Bytes(input.clone()), bytes("MAGIC"))]);
        let out: Vec<Vec<u8>> = input_to_state(&input, records(&log), 1024, 10)
            .into_iter()
            .map(|c| c.data)
            .collect();
        assert!(out.contains(&b"MAGIC".to_vec()), "{out:?}");
    }

    #[test]
    fn contains_puts_the_needle_at_either_end_and_empty_inputs_get_the_operand() {
        let out = candidates(
            b"body",
            &[(1, kind::CONTAINS, bytes("body"), bytes("<?xml"))],
        );
        assert_eq!(out, [b"<?xmlbody".to_vec(), b"body<?xml".to_vec()]);
        let empty = candidates(b"", &[(1, kind::EQUAL, bytes(""), bytes("MAGIC"))]);
        assert_eq!(empty, [b"MAGIC".to_vec()]);
    }

    #[test]
    fn candidates_respect_the_limit_and_max_len_and_repeat_nothing() {
        let log = encode(&[
            (1, kind::EQUAL, bytes("ab"), bytes("XYZW")),
            (2, kind::EQUAL, bytes("ab"), bytes("XYZW")),
        ]);
        let all = input_to_state(b"ab ab ab", records(&log), 1024, 100);
        assert_eq!(all.len(), 3, "three occurrences, one candidate each");
        assert!(all.iter().all(|c| c.token == b"XYZW"));
        assert_eq!(input_to_state(b"ab ab ab", records(&log), 1024, 2).len(), 2);
        assert!(input_to_state(b"ab ab ab", records(&log), 9, 100).is_empty());
    }

    #[test]
    fn repair_restores_a_comparison_the_parent_passed() {
        // The parent's checksum (site 1) matched; the candidate changed the
        // data, so the stored sum (big-endian in the input) no longer does.
        let parent_log = encode(&[(
            1,
            kind::EQUAL,
            Value::Int(0x0a0b_0c0d),
            Value::Int(0x0a0b_0c0d),
        )]);
        let child_log = encode(&[
            (
                1,
                kind::EQUAL,
                Value::Int(0x1122_3344),
                Value::Int(0x0a0b_0c0d),
            ),
            (2, kind::EQUAL, bytes("DATA"), bytes("IHDR")),
        ]);
        let parent: Vec<Record<'_>> = records(&parent_log).collect();
        let child: Vec<Record<'_>> = records(&child_log).collect();
        let repaired = repair(&parent, b"IHDR\x0a\x0b\x0c\x0d", &child, 1024);
        assert_eq!(repaired, Some(b"IHDR\x11\x22\x33\x44".to_vec()));
        assert_eq!(
            repair(&child, b"IHDR", &child, 1024),
            None,
            "nothing the parent passed"
        );
    }
}

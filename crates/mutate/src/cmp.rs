//! Comparison records, as `php-runtime/CmpLog.php` logs them for one run of
//! code in the `cmplog` rendering (layout in docs/protocol.md):
//!
//! ```text
//! record  = u32 site, u8 kind, operand, operand
//! operand = 1, i64 | 2, f64 | 3, u32 full length, u8 n, n bytes (at most 64)
//! ```

/// What a comparison tests (`kind & 7`), plus the `CASE` flag: the
/// instrumenter writes these into the `cmplog` rendering, and the runtime
/// records them as they are.
pub mod kind {
    /// `===`, `==`, `!==`, `!=`, switch, match, `strcmp`, `in_array`…
    pub const EQUAL: u8 = 0;
    /// `<`, `<=`, `>`, `>=`, `<=>`.
    pub const ORDER: u8 = 1;
    /// The first operand starts with the second (`str_starts_with`, `strncmp`).
    pub const PREFIX: u8 = 2;
    /// The first operand ends with the second (`str_ends_with`).
    pub const SUFFIX: u8 = 3;
    /// The first operand contains the second (`strpos`, `str_contains`).
    pub const CONTAINS: u8 = 4;
    /// Flag: compared case-insensitively.
    pub const CASE: u8 = 8;
}

/// One operand as logged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Operand<'a> {
    Int(i64),
    Float(f64),
    /// A string's first bytes (at most 64) and its full length.
    Bytes(&'a [u8], u32),
}

/// One logged comparison of `a` and `b` at comparison site `site`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Record<'a> {
    pub site: u32,
    pub kind: u8,
    pub a: Operand<'a>,
    pub b: Operand<'a>,
}

/// An operand that outlives its log.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Float(f64),
    Bytes(Vec<u8>),
}

impl Operand<'_> {
    pub fn to_value(self) -> Value {
        match self {
            Operand::Int(v) => Value::Int(v),
            Operand::Float(v) => Value::Float(v),
            Operand::Bytes(bytes, _) => Value::Bytes(bytes.to_vec()),
        }
    }

    /// A string the log cut short.
    pub fn is_truncated(self) -> bool {
        matches!(self, Operand::Bytes(bytes, len) if bytes.len() < len as usize)
    }
}

impl Record<'_> {
    /// Whether the operands were the same value (as logged).
    pub fn is_equal(&self) -> bool {
        match (self.a, self.b) {
            (Operand::Bytes(a, _), Operand::Bytes(b, _)) if self.kind & kind::CASE != 0 => {
                a.eq_ignore_ascii_case(b)
            }
            (a, b) => a == b,
        }
    }
}

/// The records of one run's log. A malformed tail (which the harness never
/// sends) ends the iteration.
pub fn records(log: &[u8]) -> impl Iterator<Item = Record<'_>> {
    let mut rest = log;
    std::iter::from_fn(move || {
        let (record, tail) = decode(rest)?;
        rest = tail;
        Some(record)
    })
}

fn decode(log: &[u8]) -> Option<(Record<'_>, &[u8])> {
    let (site, rest) = split(log, 4)?;
    let (&kind, rest) = rest.split_first()?;
    let (a, rest) = operand(rest)?;
    let (b, rest) = operand(rest)?;
    let site = u32::from_le_bytes(site.try_into().ok()?);
    Some((Record { site, kind, a, b }, rest))
}

fn operand(log: &[u8]) -> Option<(Operand<'_>, &[u8])> {
    let (&tag, rest) = log.split_first()?;
    match tag {
        1 => {
            let (v, rest) = split(rest, 8)?;
            Some((Operand::Int(i64::from_le_bytes(v.try_into().ok()?)), rest))
        }
        2 => {
            let (v, rest) = split(rest, 8)?;
            Some((Operand::Float(f64::from_le_bytes(v.try_into().ok()?)), rest))
        }
        3 => {
            let (len, rest) = split(rest, 4)?;
            let (&n, rest) = rest.split_first()?;
            let (bytes, rest) = split(rest, n as usize)?;
            let len = u32::from_le_bytes(len.try_into().ok()?);
            Some((Operand::Bytes(bytes, len), rest))
        }
        _ => None,
    }
}

fn split(bytes: &[u8], n: usize) -> Option<(&[u8], &[u8])> {
    (bytes.len() >= n).then(|| bytes.split_at(n))
}

/// How close the operands of a comparison came, for libFuzzer's value
/// profile: strings by the length of their common prefix (case-folded for
/// a case-insensitive comparison), numbers by the number of differing
/// bits and by the magnitude of their difference. Each result is a small
/// number (below 128) that, with the site, makes a feature.
pub fn closeness(record: &Record<'_>) -> [Option<u8>; 2] {
    match (record.a, record.b) {
        (Operand::Bytes(a, _), Operand::Bytes(b, _)) => {
            let fold = record.kind & kind::CASE != 0;
            let common = a
                .iter()
                .zip(b)
                .take_while(|(x, y)| {
                    if fold {
                        x.eq_ignore_ascii_case(y)
                    } else {
                        x == y
                    }
                })
                .count();
            [Some(common.min(127) as u8), None]
        }
        (a, b) => {
            let (Some(a), Some(b)) = (as_i64(a), as_i64(b)) else {
                return [None, None];
            };
            let bits = (a ^ b).count_ones() as u8;
            let magnitude = 64 - a.wrapping_sub(b).unsigned_abs().leading_zeros() as u8;
            [Some(bits), Some(64 + magnitude)]
        }
    }
}

/// An integer view of a number operand (a float by its bits).
fn as_i64(operand: Operand<'_>) -> Option<i64> {
    match operand {
        Operand::Int(v) => Some(v),
        Operand::Float(v) => Some(v.to_bits() as i64),
        Operand::Bytes(..) => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A log holding `records`, encoded as CmpLog.php encodes them.
    pub(crate) fn encode(records: &[(u32, u8, Value, Value)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (site, kind, a, b) in records {
            out.extend_from_slice(&site.to_le_bytes());
            out.push(*kind);
            for operand in [a, b] {
                match operand {
                    Value::Int(v) => {
                        out.push(1);
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                    Value::Float(v) => {
                        out.push(2);
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                    Value::Bytes(bytes) => {
                        out.push(3);
                        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                        let n = bytes.len().min(64);
                        out.push(n as u8);
                        out.extend_from_slice(&bytes[..n]);
                    }
                }
            }
        }
        out
    }

    pub(crate) fn bytes(s: &str) -> Value {
        Value::Bytes(s.as_bytes().to_vec())
    }

    #[test]
    fn decodes_what_cmplog_writes_and_stops_at_a_malformed_tail() {
        let long = "x".repeat(100);
        let mut log = encode(&[
            (7, kind::EQUAL, bytes("IHDR"), bytes("abcd")),
            (8, kind::ORDER, Value::Int(-5), Value::Float(2.5)),
            (9, kind::EQUAL | kind::CASE, bytes(&long), bytes("")),
        ]);
        log.extend_from_slice(&[1, 2, 3]);
        let all: Vec<Record<'_>> = records(&log).collect();
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].site, 7);
        assert_eq!(all[0].a, Operand::Bytes(b"IHDR", 4));
        assert_eq!(all[1].a, Operand::Int(-5));
        assert_eq!(all[1].b, Operand::Float(2.5));
        assert_eq!(all[2].kind, kind::EQUAL | kind::CASE);
        assert!(all[2].a.is_truncated());
        assert_eq!(all[2].a, Operand::Bytes(&long.as_bytes()[..64], 100));
        assert!(!all[2].b.is_truncated());
    }

    #[test]
    fn equality_folds_case_only_when_the_comparison_did() {
        let log = encode(&[
            (1, kind::EQUAL, bytes("Key"), bytes("key")),
            (2, kind::EQUAL | kind::CASE, bytes("Key"), bytes("key")),
            (3, kind::EQUAL, Value::Int(3), Value::Int(3)),
        ]);
        let equal: Vec<bool> = records(&log).map(|r| r.is_equal()).collect();
        assert_eq!(equal, [false, true, true]);
    }

    #[test]
    fn closeness_grows_as_operands_approach() {
        let log = encode(&[
            (1, kind::EQUAL, bytes("MAGIC"), bytes("MAxxx")),
            (1, kind::EQUAL, bytes("MAGIC"), bytes("MAGxx")),
            (2, kind::EQUAL, Value::Int(0x100), Value::Int(0x1ff)),
            (2, kind::EQUAL, Value::Int(0x100), Value::Int(0x101)),
        ]);
        let all: Vec<[Option<u8>; 2]> = records(&log).map(|r| closeness(&r)).collect();
        assert_eq!(all[0], [Some(2), None]);
        assert_eq!(all[1], [Some(3), None]);
        assert_eq!(all[2], [Some(8), Some(64 + 8)]);
        assert_eq!(all[3], [Some(1), Some(64 + 1)]);
    }
}

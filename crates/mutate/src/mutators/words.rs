//! Word mutators: dictionary words and the operands of recent comparisons
//! (`CMP`), inserted or written over the input.

use rand::RngExt;

use super::{MAX_TOKENS_PER_SEQUENCE, Mutator};
use crate::cmp::Value;
use crate::{Dictionary, FuzzRng};

impl Mutator {
    /// libFuzzer's `CMP`: takes a recent comparison's operands; where one
    /// occurs in the input, replaces it by the other, else inserts or
    /// overwrites the other somewhere. Integers go in as decimal text or
    /// as little- or big-endian bytes, at random.
    pub(super) fn torc_word(&mut self, data: &mut Vec<u8>, max_len: usize) -> bool {
        if self.torc.is_empty() {
            return false;
        }
        let n = self.below(self.torc.len());
        let swap = self.rng.random::<bool>();
        let encoding = self.below(3);
        let (a, b) = self.torc.get(n);
        let (from, to) = if swap { (b, a) } else { (a, b) };
        let Some((from, to)) = encode_pair(from, to, encoding) else {
            return false;
        };
        let start = self.below(data.len() + 1);
        let found = memchr::memmem::find(&data[start..], &from)
            .map(|i| start + i)
            .or_else(|| memchr::memmem::find(&data[..start.min(data.len())], &from));
        let applied = match found {
            Some(at) if !from.is_empty() && data.len() - from.len() + to.len() <= max_len => {
                data.splice(at..at + from.len(), to.iter().copied());
                true
            }
            _ => insert_word(&mut self.rng, data, max_len, &to),
        };
        if applied && to.len() >= 2 && self.tokens.len() < MAX_TOKENS_PER_SEQUENCE {
            self.tokens.push(to);
        }
        applied
    }
}

/// A random word of `dictionary`, if it has any.
pub(super) fn pick<'d>(rng: &mut FuzzRng, dictionary: &'d Dictionary) -> Option<&'d Vec<u8>> {
    if dictionary.is_empty() {
        return None;
    }
    let index = rng.random_range(0..dictionary.len());
    Some(&dictionary.entries()[index])
}

/// Inserts `word` at a random place, or overwrites the input with it there.
pub(super) fn insert_word(
    rng: &mut FuzzRng,
    data: &mut Vec<u8>,
    max_len: usize,
    word: &[u8],
) -> bool {
    let insert = rng.random::<bool>();
    if insert && data.len() + word.len() <= max_len {
        let at = rng.random_range(0..=data.len());
        data.splice(at..at, word.iter().copied());
        true
    } else if word.len() <= data.len() {
        let at = rng.random_range(0..=data.len() - word.len());
        data[at..at + word.len()].copy_from_slice(word);
        true
    } else if data.len() + word.len() <= max_len {
        let at = rng.random_range(0..=data.len());
        data.splice(at..at, word.iter().copied());
        true
    } else {
        false
    }
}

/// Two comparison operands as bytes: strings as they are, integers as
/// decimal text (`encoding` 0), little-endian (1) or big-endian (2) bytes
/// of the narrowest width that holds both, floats as text.
fn encode_pair(a: &Value, b: &Value, encoding: usize) -> Option<(Vec<u8>, Vec<u8>)> {
    let text = |v: &Value| -> Option<Vec<u8>> {
        match v {
            Value::Bytes(bytes) => Some(bytes.clone()),
            Value::Int(i) => Some(i.to_string().into_bytes()),
            Value::Float(f) if f.is_finite() => Some(format!("{f}").into_bytes()),
            Value::Float(_) => None,
        }
    };
    match (a, b) {
        (Value::Int(x), Value::Int(y)) if encoding > 0 => {
            let width = (1..=8usize)
                .find(|&w| fits(*x, w) && fits(*y, w))
                .unwrap_or(8);
            let (mut x, mut y) = (
                x.to_le_bytes()[..width].to_vec(),
                y.to_le_bytes()[..width].to_vec(),
            );
            if encoding == 2 {
                x.reverse();
                y.reverse();
            }
            Some((x, y))
        }
        _ => Some((text(a)?, text(b)?)),
    }
}

/// Whether `v` is a `width`-byte unsigned or two's complement value.
fn fits(v: i64, width: usize) -> bool {
    if width >= 8 {
        return true;
    }
    let bits = 8 * width as u32;
    (v >= 0 && (v as u64) < (1u64 << bits)) || (v < 0 && v >= -(1i64 << (bits - 1)))
}

//! The mutators and their dispatcher, after libFuzzer's FuzzerMutate.cpp:
//! each mutator is a small function that changes the buffer in place and
//! says whether it could apply; the dispatcher picks at random and retries a
//! bounded number of times, so it never spins.

use std::fmt;

use rand::{RngExt, SeedableRng};

use crate::cmp::{Record, Value};
use crate::torc::Torc;
use crate::{Dictionary, FuzzRng};

/// libFuzzer's default MutationDepth.
pub const DEFAULT_DEPTH: usize = 5;
/// Attempts to find an applicable mutator before giving up on one step.
const ATTEMPTS_PER_STEP: usize = 16;
const MAX_SEQUENCE: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MutatorKind {
    EraseBytes,
    InsertByte,
    InsertRepeatedBytes,
    ChangeByte,
    ChangeBit,
    ShuffleBytes,
    ChangeAsciiInt,
    ChangeBinInt,
    CopyPart,
    CrossOver,
    ManualDict,
    /// A word from the dictionary taken from the target's source.
    SourceDict,
    /// A word that found new coverage before (the persistent auto-dictionary).
    PersAutoDict,
    /// An operand of a recent comparison, replacing the other operand or inserted.
    Cmp,
    /// Input-to-state replacement: made from a comparison log, not by `mutate()`.
    InputToState,
    /// The target's own mutator (`setCustomMutator()`); never picked by `mutate()`.
    Custom,
    /// The target's own crossover (`setCustomCrossOver()`); never picked by `mutate()`.
    CustomCrossOver,
}

impl MutatorKind {
    /// The mutators `mutate()` picks from (all but `InputToState`, `Custom`
    /// and `CustomCrossOver`).
    pub const ALL: [MutatorKind; 14] = [
        MutatorKind::EraseBytes,
        MutatorKind::InsertByte,
        MutatorKind::InsertRepeatedBytes,
        MutatorKind::ChangeByte,
        MutatorKind::ChangeBit,
        MutatorKind::ShuffleBytes,
        MutatorKind::ChangeAsciiInt,
        MutatorKind::ChangeBinInt,
        MutatorKind::CopyPart,
        MutatorKind::CrossOver,
        MutatorKind::ManualDict,
        MutatorKind::SourceDict,
        MutatorKind::PersAutoDict,
        MutatorKind::Cmp,
    ];

    /// The name libFuzzer prints in `MS:`.
    pub fn name(self) -> &'static str {
        match self {
            MutatorKind::EraseBytes => "EraseBytes",
            MutatorKind::InsertByte => "InsertByte",
            MutatorKind::InsertRepeatedBytes => "InsertRepeatedBytes",
            MutatorKind::ChangeByte => "ChangeByte",
            MutatorKind::ChangeBit => "ChangeBit",
            MutatorKind::ShuffleBytes => "ShuffleBytes",
            MutatorKind::ChangeAsciiInt => "ChangeASCIIInt",
            MutatorKind::ChangeBinInt => "ChangeBinInt",
            MutatorKind::CopyPart => "CopyPart",
            MutatorKind::CrossOver => "CrossOver",
            MutatorKind::ManualDict => "ManualDict",
            MutatorKind::SourceDict => "SourceDict",
            MutatorKind::PersAutoDict => "PersAutoDict",
            MutatorKind::Cmp => "CMP",
            MutatorKind::InputToState => "I2S",
            MutatorKind::Custom => "Custom",
            MutatorKind::CustomCrossOver => "CustomCrossOver",
        }
    }
}

/// The mutations of one `mutate()` call; displays as `2 InsertByte-CopyPart-`.
#[derive(Debug, Clone, Copy)]
pub struct Sequence {
    kinds: [MutatorKind; MAX_SEQUENCE],
    len: usize,
}

impl Sequence {
    /// The sequence of one mutation made outside `Mutator::mutate()` (an
    /// input-to-state candidate, a custom mutant).
    pub fn single(kind: MutatorKind) -> Sequence {
        let mut sequence = Sequence::new();
        sequence.push(kind);
        sequence
    }

    fn new() -> Sequence {
        Sequence {
            kinds: [MutatorKind::InsertByte; MAX_SEQUENCE],
            len: 0,
        }
    }

    fn push(&mut self, kind: MutatorKind) {
        if self.len < MAX_SEQUENCE {
            self.kinds[self.len] = kind;
            self.len += 1;
        }
    }

    pub fn kinds(&self) -> &[MutatorKind] {
        &self.kinds[..self.len]
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl fmt::Display for Sequence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ", self.len)?;
        for kind in self.kinds() {
            write!(f, "{}-", kind.name())?;
        }
        Ok(())
    }
}

pub struct Mutator {
    rng: FuzzRng,
    dictionary: Dictionary,
    source_dictionary: Dictionary,
    auto_dictionary: Dictionary,
    torc: Torc,
    depth: usize,
    sequence: Sequence,
    /// Words the last `mutate()` took from the source dictionary or the
    /// TORC: they join the auto-dictionary if the mutant finds coverage.
    tokens: Vec<Vec<u8>>,
    scratch: Vec<u8>,
}

/// Words of one mutation sequence remembered for the auto-dictionary, at most.
const MAX_TOKENS_PER_SEQUENCE: usize = 4;

impl Mutator {
    pub fn new(seed: u64, dictionary: Dictionary) -> Mutator {
        Mutator {
            rng: FuzzRng::seed_from_u64(seed),
            dictionary,
            source_dictionary: Dictionary::new(),
            auto_dictionary: Dictionary::new(),
            torc: Torc::new(),
            depth: DEFAULT_DEPTH,
            sequence: Sequence::new(),
            tokens: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// The dictionary taken from the target's source (`SourceDict`).
    pub fn set_source_dictionary(&mut self, dictionary: Dictionary) {
        self.source_dictionary = dictionary;
    }

    pub fn source_dictionary(&self) -> &Dictionary {
        &self.source_dictionary
    }

    /// The persistent auto-dictionary (`PersAutoDict`).
    pub fn set_auto_dictionary(&mut self, dictionary: Dictionary) {
        self.auto_dictionary = dictionary;
    }

    pub fn auto_dictionary(&self) -> &Dictionary {
        &self.auto_dictionary
    }

    /// Takes a comparison into the table of recent compares (`CMP`).
    pub fn observe_comparison(&mut self, record: &Record<'_>) {
        self.torc.insert(record);
    }

    pub fn torc(&self) -> &Torc {
        &self.torc
    }

    /// The words the last `mutate()` took from the source dictionary or
    /// the table of recent compares.
    pub fn last_tokens(&self) -> &[Vec<u8>] {
        &self.tokens
    }

    /// How many mutations `mutate()` stacks at most (at least 1).
    pub fn set_depth(&mut self, depth: usize) {
        self.depth = depth.clamp(1, MAX_SEQUENCE);
    }

    /// Restarts the generator, as `new(seed, …)` would, keeping the dictionary.
    pub fn reseed(&mut self, seed: u64) {
        self.rng = FuzzRng::seed_from_u64(seed);
    }

    pub fn rng_mut(&mut self) -> &mut FuzzRng {
        &mut self.rng
    }

    pub fn dictionary(&self) -> &Dictionary {
        &self.dictionary
    }

    /// The mutations the last `mutate()` applied.
    pub fn last_sequence(&self) -> &Sequence {
        &self.sequence
    }

    /// Mutates `data` in place with 1..=depth stacked mutations, never making
    /// it longer than `max_len` (a longer input is cut first). `partner` is
    /// another corpus entry for CrossOver. Returns the mutations applied: 0
    /// only when nothing can apply (e.g. `max_len` is 0).
    pub fn mutate(&mut self, data: &mut Vec<u8>, max_len: usize, partner: Option<&[u8]>) -> usize {
        self.sequence = Sequence::new();
        self.tokens.clear();
        data.truncate(max_len);
        let steps = self.rng.random_range(1..=self.depth);
        for _ in 0..steps {
            for _ in 0..ATTEMPTS_PER_STEP {
                let kind = MutatorKind::ALL[self.rng.random_range(0..MutatorKind::ALL.len())];
                if self.apply(kind, data, max_len, partner) {
                    self.sequence.push(kind);
                    break;
                }
            }
        }
        debug_assert!(data.len() <= max_len);
        self.sequence.len()
    }

    /// Applies one mutator; false if it cannot apply to this input.
    pub fn apply(
        &mut self,
        kind: MutatorKind,
        data: &mut Vec<u8>,
        max_len: usize,
        partner: Option<&[u8]>,
    ) -> bool {
        match kind {
            MutatorKind::EraseBytes => self.erase_bytes(data),
            MutatorKind::InsertByte => self.insert_byte(data, max_len),
            MutatorKind::InsertRepeatedBytes => self.insert_repeated_bytes(data, max_len),
            MutatorKind::ChangeByte => self.change_byte(data),
            MutatorKind::ChangeBit => self.change_bit(data),
            MutatorKind::ShuffleBytes => self.shuffle_bytes(data),
            MutatorKind::ChangeAsciiInt => self.change_ascii_int(data, max_len),
            MutatorKind::ChangeBinInt => self.change_bin_int(data),
            MutatorKind::CopyPart => self.copy_part(data, max_len),
            MutatorKind::CrossOver => match partner {
                Some(other) => self.cross_over(data, max_len, other),
                None => false,
            },
            MutatorKind::ManualDict => {
                let Some(word) = pick(&mut self.rng, &self.dictionary) else {
                    return false;
                };
                insert_word(&mut self.rng, data, max_len, word)
            }
            MutatorKind::SourceDict => {
                let Some(word) = pick(&mut self.rng, &self.source_dictionary) else {
                    return false;
                };
                let applied = insert_word(&mut self.rng, data, max_len, word);
                if applied && self.tokens.len() < MAX_TOKENS_PER_SEQUENCE {
                    self.tokens.push(word.clone());
                }
                applied
            }
            MutatorKind::PersAutoDict => {
                let Some(word) = pick(&mut self.rng, &self.auto_dictionary) else {
                    return false;
                };
                insert_word(&mut self.rng, data, max_len, word)
            }
            MutatorKind::Cmp => self.torc_word(data, max_len),
            MutatorKind::InputToState => false,
            // They run in PHP, not here.
            MutatorKind::Custom | MutatorKind::CustomCrossOver => false,
        }
    }

    fn below(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    fn erase_bytes(&mut self, data: &mut Vec<u8>) -> bool {
        if data.len() <= 1 {
            return false;
        }
        let n = self.rng.random_range(1..=data.len() / 2);
        let at = self.below(data.len() - n + 1);
        data.drain(at..at + n);
        true
    }

    fn insert_byte(&mut self, data: &mut Vec<u8>, max_len: usize) -> bool {
        if data.len() >= max_len {
            return false;
        }
        let at = self.below(data.len() + 1);
        let byte = self.rng.random::<u8>();
        data.insert(at, byte);
        true
    }

    fn insert_repeated_bytes(&mut self, data: &mut Vec<u8>, max_len: usize) -> bool {
        const MIN: usize = 3;
        if data.len() + MIN > max_len {
            return false;
        }
        let n = self.rng.random_range(MIN..=(max_len - data.len()).min(128));
        let byte = match self.below(3) {
            0 => 0,
            1 => 0xff,
            _ => self.rng.random::<u8>(),
        };
        let at = self.below(data.len() + 1);
        data.splice(at..at, std::iter::repeat_n(byte, n));
        true
    }

    fn change_byte(&mut self, data: &mut [u8]) -> bool {
        if data.is_empty() {
            return false;
        }
        let at = self.below(data.len());
        data[at] = self.rng.random::<u8>();
        true
    }

    fn change_bit(&mut self, data: &mut [u8]) -> bool {
        if data.is_empty() {
            return false;
        }
        let at = self.below(data.len());
        data[at] ^= 1 << self.below(8);
        true
    }

    fn shuffle_bytes(&mut self, data: &mut [u8]) -> bool {
        if data.len() < 2 {
            return false;
        }
        let n = self.rng.random_range(2..=data.len().min(8));
        let start = self.below(data.len() - n + 1);
        let part = &mut data[start..start + n];
        for i in (1..part.len()).rev() {
            let j = self.rng.random_range(0..=i);
            part.swap(i, j);
        }
        true
    }

    /// Finds a decimal number and replaces it with a nearby or related one.
    fn change_ascii_int(&mut self, data: &mut Vec<u8>, max_len: usize) -> bool {
        if data.is_empty() {
            return false;
        }
        let from = self.below(data.len());
        let Some(start) = (from..data.len())
            .chain(0..from)
            .find(|&i| data[i].is_ascii_digit())
        else {
            return false;
        };
        let mut begin = start;
        while begin > 0 && data[begin - 1].is_ascii_digit() {
            begin -= 1;
        }
        let mut end = start;
        while end < data.len() && data[end].is_ascii_digit() && end - begin < 19 {
            end += 1;
        }
        let value = data[begin..end].iter().fold(0u64, |v, d| {
            v.wrapping_mul(10).wrapping_add((d - b'0') as u64)
        });
        let new_value = match self.below(5) {
            0 => value.wrapping_add(1),
            1 => value.wrapping_sub(1),
            2 => value / 2,
            3 => value.wrapping_mul(2),
            _ => self
                .rng
                .random_range(0..=value.saturating_mul(value).max(1)),
        };
        let mut digits = [0u8; 20];
        let mut n = 0;
        let mut v = new_value;
        loop {
            digits[n] = b'0' + (v % 10) as u8;
            n += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        digits[..n].reverse();
        if data.len() - (end - begin) + n > max_len {
            return false;
        }
        data.splice(begin..end, digits[..n].iter().copied());
        true
    }

    /// Treats 1, 2, 4 or 8 bytes as an integer (either endianness) and
    /// nudges it, or sets it to the number of bytes after it (a length field).
    fn change_bin_int(&mut self, data: &mut [u8]) -> bool {
        let widths = [1usize, 2, 4, 8];
        let fitting = widths.iter().filter(|&&w| w <= data.len()).count();
        if fitting == 0 {
            return false;
        }
        let width = widths[self.below(fitting)];
        let at = self.below(data.len() - width + 1);
        let big_endian = self.rng.random::<bool>();
        let field = &mut data[at..at + width];
        let mut bytes = [0u8; 8];
        if big_endian {
            bytes[8 - width..].copy_from_slice(field);
        } else {
            bytes[..width].copy_from_slice(field);
        }
        let mut value = if big_endian {
            u64::from_be_bytes(bytes)
        } else {
            u64::from_le_bytes(bytes)
        };
        value = match self.below(4) {
            0 => (data.len() - at - width) as u64,
            1 => value.wrapping_neg(),
            _ => value.wrapping_add_signed(self.rng.random_range(-10i64..=10)),
        };
        let field = &mut data[at..at + width];
        if big_endian {
            field.copy_from_slice(&value.to_be_bytes()[8 - width..]);
        } else {
            field.copy_from_slice(&value.to_le_bytes()[..width]);
        }
        true
    }

    /// Copies a part of the input over another part, or inserts it elsewhere.
    fn copy_part(&mut self, data: &mut Vec<u8>, max_len: usize) -> bool {
        if data.is_empty() {
            return false;
        }
        if self.rng.random::<bool>() || data.len() >= max_len {
            if data.len() < 2 {
                return false;
            }
            let n = self.rng.random_range(1..=data.len() - 1);
            let from = self.below(data.len() - n + 1);
            let to = self.below(data.len() - n + 1);
            if from == to {
                return false;
            }
            data.copy_within(from..from + n, to);
        } else {
            let n = self
                .rng
                .random_range(1..=data.len().min(max_len - data.len()));
            let from = self.below(data.len() - n + 1);
            let to = self.below(data.len() + 1);
            self.scratch.clear();
            self.scratch.extend_from_slice(&data[from..from + n]);
            data.splice(to..to, self.scratch.iter().copied());
        }
        true
    }

    /// Combines the input with another corpus entry, one of three ways:
    /// interleaving chunks of both (libFuzzer's CrossOver), overwriting a
    /// part of the input with a part of the other, or inserting a part of
    /// the other.
    fn cross_over(&mut self, data: &mut Vec<u8>, max_len: usize, other: &[u8]) -> bool {
        if other.is_empty() || max_len == 0 {
            return false;
        }
        match self.below(3) {
            0 => self.interleave(data, max_len, other),
            1 => {
                if data.is_empty() {
                    return false;
                }
                let n = self.rng.random_range(1..=data.len().min(other.len()));
                let from = self.below(other.len() - n + 1);
                let to = self.below(data.len() - n + 1);
                data[to..to + n].copy_from_slice(&other[from..from + n]);
                true
            }
            _ => {
                if data.len() >= max_len {
                    return false;
                }
                let n = self
                    .rng
                    .random_range(1..=other.len().min(max_len - data.len()));
                let from = self.below(other.len() - n + 1);
                let to = self.below(data.len() + 1);
                data.splice(to..to, other[from..from + n].iter().copied());
                true
            }
        }
    }

    fn interleave(&mut self, data: &mut Vec<u8>, max_len: usize, other: &[u8]) -> bool {
        let target_len = self.rng.random_range(1..=max_len);
        self.scratch.clear();
        let (mut a, mut b) = (0usize, 0usize);
        let mut from_data = true;
        while self.scratch.len() < target_len && (a < data.len() || b < other.len()) {
            let (source, pos) = if from_data {
                (&data[..], &mut a)
            } else {
                (other, &mut b)
            };
            if *pos < source.len() {
                let left = source.len() - *pos;
                let room = target_len - self.scratch.len();
                let n = self.rng.random_range(1..=left.min(room));
                self.scratch.extend_from_slice(&source[*pos..*pos + n]);
                *pos += n;
            }
            from_data = !from_data;
        }
        if self.scratch == *data {
            return false;
        }
        std::mem::swap(data, &mut self.scratch);
        true
    }

    /// libFuzzer's `CMP`: takes a recent comparison's operands; where one
    /// occurs in the input, replaces it by the other, else inserts or
    /// overwrites the other somewhere. Integers go in as decimal text or
    /// as little- or big-endian bytes, at random.
    fn torc_word(&mut self, data: &mut Vec<u8>, max_len: usize) -> bool {
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
fn pick<'d>(rng: &mut FuzzRng, dictionary: &'d Dictionary) -> Option<&'d Vec<u8>> {
    if dictionary.is_empty() {
        return None;
    }
    let index = rng.random_range(0..dictionary.len());
    Some(&dictionary.entries()[index])
}

/// Inserts `word` at a random place, or overwrites the input with it there.
fn insert_word(rng: &mut FuzzRng, data: &mut Vec<u8>, max_len: usize, word: &[u8]) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn mutator(seed: u64) -> Mutator {
        Mutator::new(seed, Dictionary::new())
    }

    fn with_dict(words: &str) -> Mutator {
        let mut m = Mutator::new(
            7,
            Dictionary::parse(words.as_bytes(), Path::new("t")).unwrap(),
        );
        // Every mutator can apply: the comparison ones get words too.
        m.set_source_dictionary(Dictionary::parse(b"\"src\"", Path::new("s")).unwrap());
        m.set_auto_dictionary(Dictionary::parse(b"\"auto-word\"", Path::new("a")).unwrap());
        let log = crate::cmp::tests::encode(&[(
            1,
            crate::cmp::kind::EQUAL,
            Value::Int(7),
            Value::Int(300),
        )]);
        for record in crate::cmp::records(&log) {
            m.observe_comparison(&record);
        }
        m
    }

    /// Applies `kind` many times from `start`; returns the distinct results.
    fn outcomes(
        m: &mut Mutator,
        kind: MutatorKind,
        start: &[u8],
        max_len: usize,
        partner: Option<&[u8]>,
    ) -> Vec<Vec<u8>> {
        let mut seen = Vec::new();
        for _ in 0..2000 {
            let mut data = start.to_vec();
            if m.apply(kind, &mut data, max_len, partner) {
                assert!(
                    data.len() <= max_len,
                    "{kind:?} grew past max_len: {data:?}"
                );
                if !seen.contains(&data) {
                    seen.push(data);
                }
            }
        }
        seen
    }

    #[test]
    fn every_mutator_respects_max_len_and_never_panics_on_edge_sizes() {
        let mut m = with_dict("\"word\"\n\"longer-word\"");
        for kind in MutatorKind::ALL {
            for start in [
                &b""[..],
                b"x",
                b"ab",
                b"0123456789",
                b"\xff\x00\x01\x02\x03\x04\x05\x06\x07\x08",
            ] {
                for max_len in [start.len(), start.len() + 1, start.len() + 50] {
                    for partner in [None, Some(&b""[..]), Some(&b"partner data 42"[..])] {
                        outcomes(&mut m, kind, start, max_len, partner);
                    }
                }
            }
        }
    }

    #[test]
    fn inapplicable_mutators_say_so() {
        let mut m = mutator(1);
        let mut empty = Vec::new();
        assert!(!m.apply(MutatorKind::EraseBytes, &mut b"a".to_vec(), 10, None));
        assert!(!m.apply(MutatorKind::ChangeByte, &mut empty, 10, None));
        assert!(!m.apply(MutatorKind::InsertByte, &mut b"ab".to_vec(), 2, None));
        assert!(!m.apply(
            MutatorKind::InsertRepeatedBytes,
            &mut b"ab".to_vec(),
            4,
            None
        ));
        assert!(!m.apply(
            MutatorKind::ChangeAsciiInt,
            &mut b"no digits".to_vec(),
            20,
            None
        ));
        assert!(!m.apply(MutatorKind::CrossOver, &mut b"ab".to_vec(), 10, None));
        assert!(!m.apply(MutatorKind::ManualDict, &mut b"ab".to_vec(), 10, None));
        assert!(!m.apply(MutatorKind::ShuffleBytes, &mut b"a".to_vec(), 10, None));
    }

    #[test]
    fn the_dispatcher_gives_up_when_nothing_applies() {
        let mut m = mutator(3);
        let mut data = Vec::new();
        assert_eq!(m.mutate(&mut data, 0, None), 0);
        assert!(data.is_empty());
        assert!(m.last_sequence().is_empty());
        let mut data = b"too long".to_vec();
        m.mutate(&mut data, 3, None);
        assert!(data.len() <= 3, "cut to max_len first");
    }

    #[test]
    fn erase_and_insert_change_the_length_as_named() {
        let mut m = mutator(4);
        for out in outcomes(&mut m, MutatorKind::EraseBytes, b"abcdefgh", 8, None) {
            assert!(out.len() < 8 && out.len() >= 4);
        }
        for out in outcomes(&mut m, MutatorKind::InsertByte, b"abc", 8, None) {
            assert_eq!(out.len(), 4);
        }
        let repeated = outcomes(&mut m, MutatorKind::InsertRepeatedBytes, b"ab", 200, None);
        assert!(repeated.iter().all(|o| o.len() >= 5 && o.len() <= 130));
        assert!(
            repeated
                .iter()
                .any(|o| o.windows(3).any(|w| w == [0, 0, 0]))
        );
        assert!(
            repeated
                .iter()
                .any(|o| o.windows(3).any(|w| w == [0xff, 0xff, 0xff]))
        );
    }

    #[test]
    fn change_bit_flips_exactly_one_bit() {
        let mut m = mutator(5);
        for out in outcomes(&mut m, MutatorKind::ChangeBit, b"\x00\x00", 2, None) {
            let bits: u32 = out.iter().map(|b| b.count_ones()).sum();
            assert_eq!(bits, 1);
        }
    }

    #[test]
    fn shuffle_keeps_the_bytes() {
        let mut m = mutator(6);
        let results = outcomes(&mut m, MutatorKind::ShuffleBytes, b"abcdef", 6, None);
        assert!(results.len() > 10);
        for out in results {
            let mut sorted = out.clone();
            sorted.sort();
            assert_eq!(sorted, b"abcdef");
        }
    }

    #[test]
    fn change_ascii_int_rewrites_a_number() {
        let mut m = mutator(8);
        let results = outcomes(&mut m, MutatorKind::ChangeAsciiInt, b"x=41;", 20, None);
        let texts: Vec<String> = results
            .iter()
            .map(|o| String::from_utf8(o.clone()).unwrap())
            .collect();
        for expected in ["x=42;", "x=40;", "x=20;", "x=82;"] {
            assert!(
                texts.iter().any(|t| t == expected),
                "{expected} not in {texts:?}"
            );
        }
        for t in &texts {
            assert!(
                t.starts_with("x=") && t.ends_with(';') && t[2..t.len() - 1].parse::<u64>().is_ok(),
                "{t}"
            );
        }
    }

    #[test]
    fn change_bin_int_writes_both_endiannesses() {
        let mut m = mutator(9);
        let results = outcomes(
            &mut m,
            MutatorKind::ChangeBinInt,
            &[0, 0, 0, 0, 0, 0, 0, 10],
            8,
            None,
        );
        // A length field: the number of bytes after a 2-byte field at the start is 6.
        assert!(
            results.iter().any(|o| o[..2] == [0, 6]),
            "big-endian length"
        );
        assert!(
            results.iter().any(|o| o[..2] == [6, 0]),
            "little-endian length"
        );
    }

    #[test]
    fn copy_part_overwrites_and_inserts() {
        let mut m = mutator(10);
        let results = outcomes(&mut m, MutatorKind::CopyPart, b"abcd", 8, None);
        assert!(
            results.iter().any(|o| o.len() == 4 && o != b"abcd"),
            "overwrite"
        );
        assert!(results.iter().any(|o| o.len() > 4), "insert");
    }

    #[test]
    fn all_crossover_strategies_happen() {
        let mut m = mutator(11);
        let results = outcomes(
            &mut m,
            MutatorKind::CrossOver,
            b"aaaaaa",
            12,
            Some(b"BBBBBB"),
        );
        let has_b = |o: &Vec<u8>| o.contains(&b'B');
        assert!(
            results
                .iter()
                .any(|o| o.len() == 6 && o.contains(&b'a') && has_b(o)),
            "overwrite part"
        );
        assert!(
            results
                .iter()
                .any(|o| o.len() > 6 && o.starts_with(b"a") && o.ends_with(b"a") && has_b(o)),
            "insert part of the other"
        );
        assert!(
            results
                .iter()
                .any(|o| o.len() < 6 && has_b(o) && o.starts_with(b"a")),
            "interleave, cut short"
        );
    }

    #[test]
    fn dictionary_words_are_inserted_and_overwritten() {
        let mut m = with_dict("\"KEY\"");
        let results = outcomes(&mut m, MutatorKind::ManualDict, b"....", 10, None);
        assert!(
            results
                .iter()
                .any(|o| o.len() == 7 && o.windows(3).any(|w| w == b"KEY")),
            "insert"
        );
        assert!(
            results
                .iter()
                .any(|o| o.len() == 4 && o.windows(3).any(|w| w == b"KEY")),
            "overwrite"
        );
    }

    #[test]
    fn source_and_auto_dictionaries_feed_their_own_mutators() {
        let mut m = mutator(12);
        assert!(!m.apply(MutatorKind::SourceDict, &mut b"ab".to_vec(), 10, None));
        assert!(!m.apply(MutatorKind::PersAutoDict, &mut b"ab".to_vec(), 10, None));
        m.set_source_dictionary(Dictionary::parse(b"\"SRC\"", Path::new("s")).unwrap());
        m.set_auto_dictionary(Dictionary::parse(b"\"AUTO\"", Path::new("a")).unwrap());
        let source = outcomes(&mut m, MutatorKind::SourceDict, b"....", 10, None);
        assert!(source.iter().all(|o| o.windows(3).any(|w| w == b"SRC")));
        let auto = outcomes(&mut m, MutatorKind::PersAutoDict, b"....", 10, None);
        assert!(auto.iter().all(|o| o.windows(4).any(|w| w == b"AUTO")));
        // A source word that helped is remembered, an auto-dictionary word is not.
        let mut data = b"....".to_vec();
        m.sequence = Sequence::new();
        m.tokens.clear();
        assert!(m.apply(MutatorKind::SourceDict, &mut data, 10, None));
        assert!(m.apply(MutatorKind::PersAutoDict, &mut data, 10, None));
        assert_eq!(m.last_tokens(), [b"SRC".to_vec()]);
    }

    #[test]
    fn cmp_replaces_an_operand_with_the_other_or_inserts_it() {
        use crate::cmp::{
            kind, records,
            tests::{bytes, encode},
        };
        let mut m = mutator(13);
        assert!(
            !m.apply(MutatorKind::Cmp, &mut b"ab".to_vec(), 10, None),
            "empty TORC"
        );
        let log = encode(&[
            (1, kind::EQUAL, bytes("abcd"), bytes("IHDR")),
            (2, kind::EQUAL, Value::Int(0x0102), Value::Int(0x0a0b)),
        ]);
        for record in records(&log) {
            m.observe_comparison(&record);
        }
        let results = outcomes(&mut m, MutatorKind::Cmp, b"xxabcdyy\x02\x01", 16, None);
        assert!(
            results.contains(&b"xxIHDRyy\x02\x01".to_vec()),
            "raw replacement"
        );
        assert!(
            results.contains(&b"xxabcdyy\x0b\x0a".to_vec()),
            "little-endian replacement"
        );
        assert!(
            results
                .iter()
                .any(|o| o.len() > 10 && o.windows(4).any(|w| w == b"2571")),
            "decimal text inserted"
        );
        let mut data = b"xxabcdyy".to_vec();
        m.tokens.clear();
        while !m.apply(MutatorKind::Cmp, &mut data, 16, None) {}
        assert_eq!(m.last_tokens().len(), 1);
    }

    #[test]
    fn a_seed_reproduces_exactly() {
        let run = |seed| {
            let mut m = with_dict("\"w\"");
            m.rng = FuzzRng::seed_from_u64(seed);
            let mut data = b"seed input 123".to_vec();
            let mut history = Vec::new();
            for _ in 0..500 {
                m.mutate(&mut data, 64, Some(b"partner"));
                history.push((data.clone(), m.last_sequence().to_string()));
            }
            history
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }

    #[test]
    fn sequences_print_like_libfuzzer() {
        let mut s = Sequence::new();
        s.push(MutatorKind::InsertByte);
        s.push(MutatorKind::ChangeAsciiInt);
        assert_eq!(s.to_string(), "2 InsertByte-ChangeASCIIInt-");
    }

    proptest::proptest! {
        #[test]
        fn mutate_never_exceeds_max_len(
            input in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
            partner in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
            max_len in 0usize..80,
            seed in proptest::prelude::any::<u64>(),
            depth in 1usize..10,
        ) {
            let mut m = Mutator::new(seed, Dictionary::parse(b"\"tok\"\n\"\\x00\\xff\"", Path::new("t")).unwrap());
            m.set_depth(depth);
            let mut data = input;
            for _ in 0..20 {
                let applied = m.mutate(&mut data, max_len, Some(&partner));
                proptest::prop_assert!(data.len() <= max_len);
                proptest::prop_assert!(applied <= depth);
                proptest::prop_assert_eq!(applied, m.last_sequence().len());
            }
        }
    }
}

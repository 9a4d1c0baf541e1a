//! The mutators and their dispatcher, after libFuzzer's FuzzerMutate.cpp:
//! each mutator is a small function that changes the buffer in place and
//! says whether it could apply; the dispatcher picks at random and retries a
//! bounded number of times, so it never spins.

mod bytes;
mod crossover;
mod words;

use std::fmt;

use rand::{RngExt, SeedableRng};

use crate::cmp::Record;
use crate::torc::Torc;
use crate::{Dictionary, FuzzRng, Schedule};

use words::{insert_word, pick};

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
    /// Which byte mutators to draw (`--mutation-schedule`).
    schedule: Schedule,
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
            schedule: Schedule::Uniform,
        }
    }

    /// The mutation schedule (see [`crate::schedule`]).
    pub fn set_schedule(&mut self, schedule: Schedule) {
        self.schedule = schedule;
    }

    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    pub fn schedule_mut(&mut self) -> &mut Schedule {
        &mut self.schedule
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
                let kind = self.schedule.pick_kind(&mut self.rng);
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
}

#[cfg(test)]
mod tests;

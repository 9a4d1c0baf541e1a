//! Mutation: turning one input into a similar new one.
//!
//! [`Mutator`] stacks libFuzzer's mutators (EraseBytes, InsertByte, …,
//! CrossOver, ManualDict) on a buffer in place; [`Dictionary`] reads
//! AFL/libFuzzer dictionaries; [`LengthControl`] grows the length limit
//! when coverage stops growing, as libFuzzer's `-len_control` does.
//! Everything is driven by one seeded generator, so a seed reproduces.

mod dictionary;
mod length_control;
mod mutators;

pub use dictionary::{Dictionary, DictionaryError};
pub use length_control::LengthControl;
pub use mutators::{DEFAULT_DEPTH, Mutator, MutatorKind, Sequence};

/// The generator behind every random choice: portable across platforms and
/// releases, unlike `SmallRng`.
pub type FuzzRng = rand_xoshiro::Xoshiro256PlusPlus;

//! Mutation: turning one input into a similar new one.
//!
//! [`Mutator`] stacks libFuzzer's mutators (EraseBytes, InsertByte, …,
//! CrossOver, ManualDict, and the comparison-guided SourceDict,
//! PersAutoDict and CMP) on a buffer in place; [`Dictionary`] reads and
//! writes AFL/libFuzzer dictionaries; [`LengthControl`] grows the length
//! limit when coverage stops growing, as libFuzzer's `-len_control` does.
//! [`cmp`] reads the comparison logs of the `cmplog` rendering, [`Torc`]
//! keeps recent comparisons for `CMP`, and [`i2s`] turns a log into
//! input-to-state candidates. Everything is driven by one seeded
//! generator, so a seed reproduces.

pub mod cmp;
mod dictionary;
pub mod i2s;
mod length_control;
mod mutators;
pub mod schedule;
mod torc;

pub use dictionary::{Dictionary, DictionaryError};
pub use length_control::LengthControl;
pub use mutators::{DEFAULT_DEPTH, Mutator, MutatorKind, Sequence};
pub use schedule::{Mix, RUN_OVERHEAD_BLOCKS, Schedule, Source};
pub use torc::Torc;

/// The generator behind every random choice: portable across platforms and
/// releases, unlike `SmallRng`.
pub type FuzzRng = rand_xoshiro::Xoshiro256PlusPlus;

//! Grammar-aware mutation from tree-sitter grammars, after LangFuzz
//! ("Fuzzing with Code Fragments"): inputs are parsed once, their subtrees
//! fill fragment pools per node kind, and mutations swap subtrees for
//! others of the same kind, so a mutant of a valid input usually stays
//! valid and reaches the code behind the target's parser.
//!
//! The pieces, in the order the engine uses them:
//!
//! - [`Grammar::load`]`("json")` picks a grammar from the registry
//!   ([`grammars`] lists them for `php-fuzz grammars`).
//! - [`InputParser`] (one per thread) turns each corpus entry, once, into a
//!   [`ParsedInput`]: the bytes and a flat arena of nodes, `Send + Sync`,
//!   kept next to the entry. Inputs with syntax errors still parse; only
//!   their error-free subtrees are mutated.
//! - [`FragmentPool::add`] learns every parsed entry (and every
//!   `--fragments` file) as it arrives: deduplicated, bounded by
//!   [`PoolLimits`].
//! - [`choose`] says which grammar, if any, the seeds are written in
//!   (`--grammar auto`).
//! - [`GrammarMutator::enable_fusion`] adds Fusion (php only, opt-in):
//!   dataflow fusion of two corpus programs, after FlowFusion.
//! - [`GrammarMutator::mutate`] writes one mutant of an entry into the
//!   caller's buffer and names the [`GrammarMutation`] it applied (for
//!   `MS:`), or returns None so the caller falls back to byte mutation.
//!
//! Wiring it into the engine: keep an `Arc<ParsedInput>` in each corpus
//! entry (parsed when it is added or REDUCE-replaced) and one
//! `FragmentPool` in the shared state; in the batch builder, with some
//! probability, call `mutate` with the engine's RNG and fall back to the
//! byte mutator on None. `--fragments DIR` files go through
//! `pool.add(&parser.parse(bytes))`. docs/grammar.md has the details and
//! the measurements.
//!
//! ```
//! use php_fuzz_grammar::{FragmentPool, Grammar, GrammarMutator, InputParser, Sources};
//! use rand::SeedableRng;
//!
//! let grammar = Grammar::load("json").unwrap();
//! let mut parser = InputParser::new(&grammar);
//! let entry = parser.parse(br#"{"a": [1, 2], "b": {"c": true}}"#);
//! let mut pool = FragmentPool::default();
//! pool.add(&entry);
//! pool.add(&parser.parse(br#"[null, "x", {"d": 3.5}]"#));
//!
//! let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
//! let mut mutator = GrammarMutator::new(grammar.info().code);
//! let mut out = Vec::new();
//! let sources = Sources { input: &entry, partner: None, pool: &pool };
//! if let Some(applied) = mutator.mutate(&mut rng, sources, 4096, &mut out) {
//!     println!("{}: {}", applied.name(), String::from_utf8_lossy(&out));
//! }
//! ```

mod auto;
mod fusion;
mod mutate;
mod pool;
mod registry;
mod tree;

pub use auto::{
    AUTO_MAX_BYTES, AUTO_MAX_FILES, AUTO_MAX_SEED_BYTES, AUTO_THRESHOLD_PERCENT, AutoChoice,
    GrammarShare, choose,
};
pub use fusion::{
    MAX_INPUT as FUSION_MAX_INPUT, MAX_PARTNER as FUSION_MAX_PARTNER,
    MAX_SPLICE as FUSION_MAX_SPLICE, supports as fusion_supported,
};
pub use mutate::{GrammarMutation, GrammarMutator, Sources};
pub use pool::{Fragment, FragmentPool, PoolLimits, PoolStats, Span};
pub use registry::{Grammar, GrammarInfo, find, grammars};
pub use tree::{InputParser, Node, ParsedInput};

#[derive(Debug, thiserror::Error)]
pub enum GrammarError {
    #[error("unknown grammar '{name}' (known: {known})")]
    Unknown { name: String, known: String },
    #[error("grammar '{name}' does not load with this tree-sitter: {reason}")]
    Incompatible { name: &'static str, reason: String },
}

//! Typed targets (docs/autofuzz.md): a function or method whose inputs are
//! `php-fuzz arguments v1` entries. The harness describes the parameters in
//! its `Ready` event; the campaign then makes its first entries from the
//! types, mutates one argument at a time, and sends the tracer's
//! input-to-state candidates only when they still fit the types.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use php_fuzz_arguments::{ArgumentMutator, Limits, Schema};
use php_fuzz_mutate::FuzzRng;
use rand::SeedableRng;

use crate::EngineError;
use crate::output::Output;
use php_fuzz_storage::CorpusFile;

/// The class of the error the harness raises when PHP refused a generated
/// call at the call itself (a TypeError there): php-fuzz's bug, never the
/// library's finding.
pub const CALL_REJECTED: &str = "PhpFuzz\\Arguments\\CallRejected";

/// Entries made from the types when the corpus is empty.
const FIRST_ENTRIES: usize = 16;

/// A campaign's typed target: its parameters, shared by the workers.
pub(crate) struct TypedTarget {
    schema: Arc<Schema>,
    limits: Limits,
    /// Runs PHP refused at the call (`CALL_REJECTED`), not findings.
    pub rejected: AtomicU64,
}

impl TypedTarget {
    /// The target's schema as the harness sent it; `None` for bytes.
    /// `max_len` (`--max-len`, `setMaxLen()`, else the default 1024 bytes)
    /// bounds each string argument.
    pub fn from_ready(
        json: Option<&[u8]>,
        max_len: Option<usize>,
    ) -> Result<Option<TypedTarget>, EngineError> {
        let Some(json) = json else {
            return Ok(None);
        };
        let schema = Schema::from_json(json).map_err(|e| EngineError::Arguments(e.to_string()))?;
        let limits = Limits {
            max_string: max_len.unwrap_or(crate::DEFAULT_MAX_LEN),
            ..Limits::default()
        };
        Ok(Some(TypedTarget {
            schema: Arc::new(schema),
            limits,
            rejected: AtomicU64::new(0),
        }))
    }

    /// The longest entry the campaign makes: room for every argument at
    /// its limits, escaped.
    pub fn max_entry_len(&self) -> usize {
        let per_argument = self.limits.max_string * 4 * self.limits.max_items.max(1);
        (per_argument * self.parameters().max(1)).clamp(64 << 10, 16 << 20)
    }

    pub fn callee(&self) -> &str {
        &self.schema.callee
    }

    pub fn parameters(&self) -> usize {
        self.schema.parameters.len()
    }

    /// Whether `data` is an entry that fits the parameters: what the
    /// campaign sends, and what `run-single` checks a hand-written entry by.
    pub fn check(&self, data: &[u8]) -> Result<(), String> {
        let values = php_fuzz_arguments::parse_entry(data).map_err(|e| e.to_string())?;
        php_fuzz_arguments::check(&self.schema, &values).map_err(|e| e.to_string())
    }

    /// Leaves out the seeds that are no entry of this target, or do not fit
    /// its types (a corpus of another callee, an entry edited by hand), and
    /// says which and why. Their files stay.
    pub fn keep_fitting_seeds(&self, seeds: &mut Vec<CorpusFile>, out: &Output) {
        const SHOWN: usize = 10;
        let mut skipped = 0;
        seeds.retain(|seed| match self.check(&seed.data) {
            Ok(()) => true,
            Err(why) => {
                skipped += 1;
                if skipped <= SHOWN {
                    out.line(&format!(
                        "WARNING: corpus entry skipped: {}: {why}",
                        seed.path.display()
                    ));
                }
                false
            }
        });
        if skipped > SHOWN {
            out.line(&format!(
                "WARNING: {} more corpus entries skipped: they do not fit {}'s types",
                skipped - SHOWN,
                self.callee()
            ));
        }
    }

    /// The first entries of an empty corpus, from the types (the same ones
    /// for the same `--seed`).
    pub fn first_entries(&self, seed: u64) -> Vec<Vec<u8>> {
        let mut rng = FuzzRng::seed_from_u64(seed);
        let mut entries: Vec<Vec<u8>> = Vec::with_capacity(FIRST_ENTRIES);
        for _ in 0..FIRST_ENTRIES {
            let values = php_fuzz_arguments::generate_entry(&self.schema, &self.limits, &mut rng);
            let mut entry = Vec::new();
            php_fuzz_arguments::write_entry(&values, &mut entry);
            if !entries.contains(&entry) {
                entries.push(entry);
            }
        }
        entries
    }

    /// A worker's mutator of entries.
    pub fn mutator(&self) -> ArgumentMutator {
        ArgumentMutator::new(Arc::clone(&self.schema), self.limits)
    }

    /// Counts a run PHP refused at the call; true for the first one.
    pub fn count_rejected(&self) -> bool {
        self.rejected.fetch_add(1, Ordering::Relaxed) == 0
    }
}

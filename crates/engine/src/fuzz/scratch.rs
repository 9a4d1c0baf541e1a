//! One worker's batch: its inputs, where they came from, and what each run
//! reached. Reused batch after batch, so the loop does not allocate.

use std::ops::Range;
use std::path::PathBuf;

use php_fuzz_arguments::ArgumentMutator;
use php_fuzz_coverage::{
    EdgeCounter, Feature, FingerprintCache, fingerprint, value_profile_feature,
};
use php_fuzz_harness::{Batch, Coverage, Crash};
use php_fuzz_mutate::cmp::{closeness, records};
use php_fuzz_mutate::{Mutator, MutatorKind, Sequence, Source};

use super::FINGERPRINT_CACHE_BITS;
use crate::corpus::EntryId;
use crate::output::Mutations;

/// Blocks executed per batch that the adaptive batch size aims for.
const BLOCKS_PER_BATCH: u64 = 400_000;
const MAX_BATCH: usize = 4096;

/// An input made by mutating a corpus entry.
#[derive(Debug, Clone, Copy)]
pub(super) struct Mutant {
    pub parent: EntryId,
    /// The mutations that made it, shown in its NEW or REDUCE line.
    pub sequence: Mutations,
    /// Shorter than its parent when it was made, so it may REDUCE it.
    pub shorter: bool,
    /// Its words from the target's comparisons (`Scratch::tokens_of`):
    /// they join the auto-dictionary if it finds coverage.
    tokens: (u32, u32),
}

impl Mutant {
    /// The source that made it, as the mutation schedule counts sources;
    /// None for byte mutations (their own kinds are in `sequence.bytes`).
    pub fn source(&self) -> Option<Source> {
        if self.sequence.grammar.is_some() {
            return Some(Source::Grammar);
        }
        match self.sequence.bytes.as_ref()?.kinds().first()? {
            MutatorKind::InputToState => Some(Source::InputToState),
            MutatorKind::Custom | MutatorKind::CustomCrossOver => Some(Source::Custom),
            _ => None,
        }
    }
}

/// Where a batch's inputs come from, one entry per input.
#[derive(Debug)]
pub(super) enum Origin {
    /// Files of the corpus directory: the seeds, or entries other processes
    /// wrote (`--reload`). A new one keeps its file; `None` is the empty
    /// input run in place of an empty directory, saved like a mutant.
    CorpusFiles(Vec<Option<PathBuf>>),
    /// Mutants of corpus entries.
    Mutants(Vec<Mutant>),
}

impl Origin {
    fn clear(&mut self) {
        self.truncate(0);
    }

    fn truncate(&mut self, len: usize) {
        match self {
            Origin::CorpusFiles(paths) => paths.truncate(len),
            Origin::Mutants(mutants) => mutants.truncate(len),
        }
    }

    /// Whether run `index` must be judged even when its trace is one this
    /// worker already judged: a shorter mutant may REDUCE its parent, and a
    /// corpus file is always judged.
    fn judge_known_trace(&self, index: usize) -> bool {
        match self {
            Origin::CorpusFiles(_) => true,
            Origin::Mutants(mutants) => mutants[index].shorter,
        }
    }
}

/// Per-batch scratch of one worker.
pub(super) struct Scratch {
    pub batch: Batch,
    pub origin: Origin,
    /// The features of every run, one after the other.
    pub features: Vec<Feature>,
    feature_ends: Vec<usize>,
    pub fingerprints: Vec<u64>,
    /// Per input: its trace ran exactly like one this worker already judged.
    pub known: Vec<bool>,
    pub trace_hashes: Vec<u64>,
    /// Hashes of traces whose features held nothing new; worker-local.
    pub known_traces: FingerprintCache,
    pub crashes: Vec<(usize, Crash)>,
    /// Per input: how long its run took, in microseconds (0 for a crash).
    pub micros: Vec<u32>,
    /// The longest run without a crash this scratch collected, in
    /// microseconds (the seeds' sets the adaptive timeout).
    pub slowest_micros: u32,
    /// Crashes this batch saved as new findings: input index and signature.
    pub saved: Vec<(usize, String)>,
    pub crashed: Vec<bool>,
    counter: EdgeCounter,
    run_features: Vec<Feature>,
    pub new_features: Vec<Feature>,
    /// Corpus entries this batch added or shortened, with the index of the
    /// input they now hold: grammar mutation parses them.
    pub joined: Vec<(EntryId, usize)>,
    input: Vec<u8>,
    blocks: u64,
    pub batch_size: usize,
    /// Comparison words of the mutants, one after the other; `token_ends`
    /// holds where each ends.
    token_bytes: Vec<u8>,
    token_ends: Vec<usize>,
    /// Judge the closeness of compared operands too (`--use-value-profile`).
    pub value_profile: bool,
    /// Per input: the blocks its run executed (a known trace's as when it
    /// was last sent in full): what the mutation schedule counts as cost.
    pub run_blocks: Vec<u32>,
    /// Per input: the features it added to the campaign (0 unless NEW).
    pub new_feature_counts: Vec<u32>,
    /// The blocks of recent traces, by their hash (direct-mapped).
    trace_blocks: Vec<(u64, u32)>,
}

/// Slots of `Scratch::trace_blocks`.
const TRACE_BLOCK_SLOTS: usize = 1 << 14;

impl Scratch {
    pub fn new() -> Scratch {
        Scratch {
            batch: Batch::new(),
            origin: Origin::Mutants(Vec::new()),
            features: Vec::new(),
            feature_ends: Vec::new(),
            fingerprints: Vec::new(),
            known: Vec::new(),
            trace_hashes: Vec::new(),
            known_traces: FingerprintCache::new(FINGERPRINT_CACHE_BITS),
            crashes: Vec::new(),
            saved: Vec::new(),
            slowest_micros: 0,
            micros: Vec::new(),
            crashed: Vec::new(),
            counter: EdgeCounter::new(),
            run_features: Vec::new(),
            new_features: Vec::new(),
            joined: Vec::new(),
            input: Vec::new(),
            blocks: 0,
            batch_size: 16,
            token_bytes: Vec::new(),
            token_ends: Vec::new(),
            value_profile: false,
            run_blocks: Vec::new(),
            new_feature_counts: Vec::new(),
            trace_blocks: vec![(0, 0); TRACE_BLOCK_SLOTS],
        }
    }

    pub fn clear(&mut self) {
        self.batch.clear();
        self.origin.clear();
        self.features.clear();
        self.feature_ends.clear();
        self.fingerprints.clear();
        self.known.clear();
        self.trace_hashes.clear();
        self.micros.clear();
        self.crashes.clear();
        self.saved.clear();
        self.crashed.clear();
        self.joined.clear();
        self.blocks = 0;
        self.token_bytes.clear();
        self.token_ends.clear();
        self.run_blocks.clear();
        self.new_feature_counts.clear();
    }

    /// Blocks the batch executed, as far as the harness reported them.
    pub fn executed_blocks(&self) -> u64 {
        self.blocks
    }

    fn push_tokens<'t>(&mut self, tokens: impl IntoIterator<Item = &'t [u8]>) -> (u32, u32) {
        let first = self.token_ends.len() as u32;
        for token in tokens {
            self.token_bytes.extend_from_slice(token);
            self.token_ends.push(self.token_bytes.len());
        }
        (first, self.token_ends.len() as u32)
    }

    /// The comparison words `mutant` was made with.
    pub fn tokens_of(&self, mutant: &Mutant) -> impl Iterator<Item = &[u8]> {
        (mutant.tokens.0..mutant.tokens.1).map(|i| {
            let i = i as usize;
            let start = if i == 0 { 0 } else { self.token_ends[i - 1] };
            &self.token_bytes[start..self.token_ends[i]]
        })
    }

    fn push_origin(&mut self, mutant: Mutant) {
        match &mut self.origin {
            Origin::Mutants(mutants) => mutants.push(mutant),
            origin => {
                debug_assert_eq!(self.batch.len(), 1, "a batch has one origin");
                *origin = Origin::Mutants(vec![mutant]);
            }
        }
    }

    /// Queues an input-to-state candidate made from `parent` (`parent_len`
    /// bytes long); `token` is what the comparison gave it.
    pub fn push_candidate(
        &mut self,
        parent: EntryId,
        parent_len: usize,
        data: &[u8],
        token: &[u8],
    ) {
        self.batch.push(data);
        let tokens = self.push_tokens([token]);
        self.push_origin(Mutant {
            parent,
            sequence: Mutations {
                grammar: None,
                bytes: Some(Sequence::single(MutatorKind::InputToState)),
                typed: None,
            },
            shorter: data.len() < parent_len,
            tokens,
        });
    }

    /// Drops the inputs that got no result (a batch stopped early).
    pub fn keep_collected(&mut self) {
        let collected = self.feature_ends.len();
        self.batch.truncate(collected);
        self.origin.truncate(collected);
    }

    /// Queues a file of the corpus directory (`None`: the empty input).
    pub fn push_file(&mut self, data: &[u8], path: Option<PathBuf>) {
        self.batch.push(data);
        match &mut self.origin {
            Origin::CorpusFiles(paths) => paths.push(path),
            origin => {
                debug_assert_eq!(self.batch.len(), 1, "a batch has one origin");
                *origin = Origin::CorpusFiles(vec![path]);
            }
        }
    }

    /// Queues a mutant of `parent`, at most `max_len` bytes long; `partner`
    /// is the entry CrossOver takes from.
    pub fn push_mutant(
        &mut self,
        mutator: &mut Mutator,
        parent: EntryId,
        parent_data: &[u8],
        partner: &[u8],
        max_len: usize,
    ) {
        self.input.clear();
        self.input.extend_from_slice(parent_data);
        mutator.mutate(&mut self.input, max_len, Some(partner));
        let sequence = Mutations {
            grammar: None,
            bytes: Some(*mutator.last_sequence()),
            typed: None,
        };
        let tokens = self.push_tokens(mutator.last_tokens().iter().map(Vec::as_slice));
        self.queue_mutant(parent, parent_data.len(), sequence, tokens);
    }

    /// Queues a mutant of a typed entry: one argument changed
    /// (docs/autofuzz.md). The parent itself again if nothing could change.
    pub fn push_typed_mutant(
        &mut self,
        arguments: &mut ArgumentMutator,
        mutator: &mut Mutator,
        parent: EntryId,
        parent_data: &[u8],
        partner: &[u8],
    ) {
        let typed = arguments.mutate(mutator, parent_data, Some(partner), &mut self.input);
        if typed.is_none() {
            self.input.clear();
            self.input.extend_from_slice(parent_data);
        }
        let bytes = typed.and_then(|t| t.bytes());
        let sequence = Mutations {
            grammar: None,
            bytes,
            typed,
        };
        // The byte mutator's words are this mutant's only when it mutated a
        // string argument; otherwise they are an earlier mutant's.
        let words = bytes.map_or(&[][..], |_| mutator.last_tokens());
        let tokens = self.push_tokens(words.iter().map(Vec::as_slice));
        self.queue_mutant(parent, parent_data.len(), sequence, tokens);
    }

    /// Whether the batch already holds a mutant of `parent`.
    pub fn has_mutant_of(&self, parent: EntryId) -> bool {
        match &self.origin {
            Origin::Mutants(mutants) => mutants.iter().any(|m| m.parent == parent),
            Origin::CorpusFiles(_) => false,
        }
    }

    /// The buffer a mutant is built in before [`Scratch::push_built_mutant`].
    pub fn mutant_buffer(&mut self) -> &mut Vec<u8> {
        &mut self.input
    }

    /// Queues the mutant built in [`Scratch::mutant_buffer`].
    pub fn push_built_mutant(&mut self, parent: EntryId, parent_len: usize, sequence: Mutations) {
        let no_tokens = self.push_tokens(std::iter::empty());
        self.queue_mutant(parent, parent_len, sequence, no_tokens);
    }

    fn queue_mutant(
        &mut self,
        parent: EntryId,
        parent_len: usize,
        sequence: Mutations,
        tokens: (u32, u32),
    ) {
        self.batch.push(&self.input);
        let mutant = Mutant {
            parent,
            sequence,
            shorter: self.input.len() < parent_len,
            tokens,
        };
        self.push_origin(mutant);
    }

    /// Queues a mutant of `parent` made elsewhere (by the target's custom mutator).
    pub fn push_custom_mutant(
        &mut self,
        parent: EntryId,
        parent_len: usize,
        data: &[u8],
        sequence: Sequence,
    ) {
        self.input.clear();
        self.input.extend_from_slice(data);
        let no_tokens = self.push_tokens(std::iter::empty());
        let sequence = Mutations {
            grammar: None,
            bytes: Some(sequence),
            typed: None,
        };
        self.queue_mutant(parent, parent_len, sequence, no_tokens);
    }

    /// Records one run's result (called from the executor's callback).
    /// `cmp_log` is what the run's comparisons logged (value profile only).
    pub fn collect(
        &mut self,
        index: usize,
        crash: Option<Crash>,
        coverage: Coverage<'_>,
        trace_hash: u64,
        repeat: bool,
        cmp_log: &[u8],
    ) {
        debug_assert_eq!(index, self.feature_ends.len());
        self.crashed.push(crash.is_some());
        self.trace_hashes.push(trace_hash);
        // A repeat has no coverage to look at: the harness sent it in full
        // before, so it was judged then. A known trace needs no second look
        // unless the input might REDUCE its parent.
        let mut known = crash.is_none()
            && (repeat
                || (trace_hash != 0
                    && !self.origin.judge_known_trace(index)
                    && self.known_traces.contains(trace_hash)));
        let blocks = coverage.last.len() as u64 / 4;
        self.blocks += blocks;
        let run_blocks = self.blocks_of(trace_hash, repeat, blocks);
        self.run_blocks.push(run_blocks);
        self.new_feature_counts.push(0);
        self.run_features.clear();
        if let Some(crash) = crash {
            self.crashes.push((index, crash));
        } else {
            if !known {
                self.counter.clear();
                coverage.add_to(&mut self.counter);
                if coverage.earlier.is_some() {
                    self.blocks += self.counter.total_hits();
                }
                self.counter.features_into(&mut self.run_features);
            }
            if self.value_profile && !cmp_log.is_empty() {
                // A known path may still have compared closer than before.
                let before = self.run_features.len();
                for record in records(cmp_log) {
                    for value in closeness(&record).into_iter().flatten() {
                        self.run_features
                            .push(value_profile_feature(record.site, value));
                    }
                }
                if self.run_features.len() > before {
                    self.run_features.sort_unstable();
                    self.run_features.dedup();
                    known = false;
                }
            }
            self.features.extend_from_slice(&self.run_features);
        }
        self.known.push(known);
        self.fingerprints.push(fingerprint(&self.run_features));
        self.feature_ends.push(self.features.len());
    }

    /// The blocks a run executed: `blocks` if it sent its trace, else (a
    /// repeat) those its trace had when it was sent, if still remembered.
    fn blocks_of(&mut self, trace_hash: u64, repeat: bool, blocks: u64) -> u32 {
        let blocks = u32::try_from(blocks).unwrap_or(u32::MAX);
        if trace_hash == 0 {
            return blocks;
        }
        let slot = &mut self.trace_blocks[(trace_hash as usize) & (TRACE_BLOCK_SLOTS - 1)];
        if repeat {
            return if slot.0 == trace_hash { slot.1 } else { blocks };
        }
        *slot = (trace_hash, blocks);
        blocks
    }

    /// Where in `features` those of run `index` are (none if it crashed or
    /// its trace was known).
    pub fn features_range(&self, index: usize) -> Range<usize> {
        let start = if index == 0 {
            0
        } else {
            self.feature_ends[index - 1]
        };
        start..self.feature_ends[index]
    }

    /// Adapts the batch size to how much the last batch executed.
    pub fn adapt_batch_size(&mut self) {
        let n = self.batch.len().max(1) as u64;
        let per_input = (self.blocks / n).max(1);
        let ideal = (BLOCKS_PER_BATCH / per_input) as usize;
        // Grow gradually, shrink at once: a slow input must not stall a big batch.
        self.batch_size = ideal
            .clamp(1, MAX_BATCH)
            .min(self.batch_size.saturating_mul(2).max(1));
    }
}

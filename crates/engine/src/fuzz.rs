//! The fuzzing campaign: seeds, then workers that mutate, run and keep what
//! reaches new coverage, until a limit or Ctrl-C.
//!
//! [`fuzz`] walks through it in order: `setup` (target, seeds, crash store,
//! grammar, statistics), `seeds`, then `worker` (with `batch`, `collect`,
//! `feedback` and the `monitor` thread), and `summary`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

mod batch;
mod cmp;
mod collect;
mod confirm;
mod custom;
mod feedback;
mod grammar;
mod monitor;
mod scratch;
mod seeds;
mod setup;
mod stats;
mod summary;
mod timeout;
mod typed;
mod worker;

use php_fuzz_coverage::{FeatureSet, FingerprintCache};
use php_fuzz_grammar::Grammar;
use php_fuzz_harness::{HarnessConfig, SourceServer, StopWhen};
use php_fuzz_mutate::{Dictionary, LengthControl};
use php_fuzz_storage::{CorpusDir, CorpusFile};

use crate::auto_dictionary::AutoDictionary;
use crate::corpus::Corpus;
use crate::crashes::{CrashStore, KnownCrash};
use crate::output::{CampaignEvent, Event, Mutations, Output, StatusLine, own_rss_mb};
use crate::{EngineError, FuzzOptions};
use custom::CustomSetup;
pub use grammar::GrammarShare;
use grammar::{GrammarCorpus, GrammarWorker};
use scratch::Scratch;
use seeds::{after_seeds, run_seeds};
use setup::Campaign;
use stats::CampaignStats;
use typed::TypedTarget;
use worker::run_workers;

/// Slots (as a power of two) of the caches of runs known to hold no new
/// feature: 2^17 × 8 bytes = 1 MiB each, however long the campaign.
const FINGERPRINT_CACHE_BITS: u32 = 17;

/// How a campaign ended.
#[derive(Debug, Clone)]
pub struct FuzzSummary {
    pub runs: u64,
    pub elapsed: Duration,
    pub edges: usize,
    pub features: usize,
    pub corpus_entries: usize,
    pub corpus_bytes: usize,
    pub harness_starts: u64,
    /// Of the harness starts, those forked by the fork server.
    pub harness_forks: u64,
    pub memory_restarts: u64,
    /// Runs stopped at the known-hang limit, stuck where a known hang was.
    pub known_hang_stops: u64,
    pub harness_peak_rss_mb: u64,
    pub engine_peak_rss_mb: u64,
    /// Distinct crashes hit this session, new or saved by an earlier one.
    pub crashes: Vec<KnownCrash>,
    pub new_crashes: usize,
    /// Mutants that joined the corpus (NEW lines; seeds not counted).
    pub new_units: u64,
    pub stop_reason: StopReason,
    pub corpus_dir: PathBuf,
    pub seed: u64,
    /// What comparison feedback did; `None` with `--no-cmp`.
    pub cmp: Option<CmpSummary>,
    /// A typed target's calls PHP refused at the call itself (a TypeError
    /// there: php-fuzz's bug, never a finding); `None` for bytes.
    pub rejected_calls: Option<u64>,
}

/// What comparison feedback did in a campaign.
#[derive(Debug, Clone, Default)]
pub struct CmpSummary {
    /// Inputs the tracers ran (entries, samples, candidates to repair).
    pub traced: u64,
    /// Input-to-state candidates made.
    pub candidates: u64,
    /// Words of the dictionary taken from the target's source.
    pub source_words: usize,
    /// Words of the persistent auto-dictionary.
    pub auto_words: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    MaxRuns,
    MaxTime,
    MaxCrashes,
    Interrupted,
}

impl StopReason {
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::MaxRuns => "reached --max-runs",
            StopReason::MaxTime => "reached --max-time",
            StopReason::MaxCrashes => "reached --max-crashes",
            StopReason::Interrupted => "interrupted",
        }
    }
}

/// Everything workers share, behind one lock taken twice per batch.
struct State {
    corpus: Corpus,
    corpus_dir: CorpusDir,
    features: FeatureSet,
    /// Fingerprints of feature sets already checked against `features`.
    seen: FingerprintCache,
    crashes: CrashStore,
    length: LengthControl,
    max_len: usize,
    /// Words that found coverage (comparison feedback on).
    auto_dictionary: Option<AutoDictionary>,
    /// What the workers' comparison feedback did, added up as they end.
    cmp: CmpSummary,
    /// Set when a limit is reached or a worker fails.
    stop: Option<StopReason>,
    error: Option<EngineError>,
    last_status: Instant,
    last_status_runs: u64,
    /// Mutants that joined the corpus.
    new_units: u64,
    /// Parsed entries and the fragment pool, with a grammar.
    grammar: Option<GrammarCorpus>,
    /// The learned mutation schedule's draw, as a worker last left it.
    mix: Option<php_fuzz_mutate::Mix>,
}

struct Shared {
    state: Mutex<State>,
    /// Replaced once, after the seeds, by an adaptive timeout.
    harness: std::sync::RwLock<Arc<HarnessConfig>>,
    /// Re-runs new findings alone, each on a fresh harness (`confirm`).
    confirmer: Mutex<Option<php_fuzz_harness::Executor>>,
    /// New hangs for the hang checker's thread, while it runs (`confirm`).
    hang_checks: confirm::HangChecks,
    /// The main harness's source server (block map, the dictionary taken
    /// from the source).
    sources: Arc<SourceServer>,
    runs: AtomicU64,
    interrupted: Arc<AtomicBool>,
    /// Ctrl-C or --max-time, for every harness the campaign starts.
    stop: StopWhen,
    options: FuzzOptions,
    out: Arc<Output>,
    started: Instant,
    harness_rss: AtomicU64,
    harness_starts: AtomicU64,
    harness_forks: AtomicU64,
    memory_restarts: AtomicU64,
    known_hang_stops: AtomicU64,
    harness_peak_rss: AtomicU64,
    dictionary: Dictionary,
    /// Entries other php-fuzz processes wrote, found by --reload, to be run.
    reloaded: Mutex<Vec<CorpusFile>>,
    /// `--grammar`, else the target's `setGrammar()`.
    grammar: Option<Grammar>,
    /// Set when the target has a custom mutator or crossover.
    custom: Option<CustomSetup>,
    /// The statistics file, if any (`--stats`, or the corpus directory's).
    stats: Option<Mutex<CampaignStats>>,
    /// A typed target's parameters (docs/autofuzz.md); `None` for bytes.
    typed: Option<TypedTarget>,
}

impl State {
    /// Whether a crash with `signature` would be saved now: a new bug, and
    /// --max-crashes not reached yet.
    fn would_save(&self, shared: &Shared, signature: &str) -> bool {
        !self.crashes.knows_signature(signature)
            && shared
                .options
                .max_crashes
                .is_none_or(|max| self.crashes.new_count() < max)
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The harness configuration new harnesses start with.
    fn harness(&self) -> Arc<HarnessConfig> {
        Arc::clone(&self.harness.read().unwrap_or_else(|p| p.into_inner()))
    }

    fn stats(&self) -> Option<MutexGuard<'_, CampaignStats>> {
        self.stats
            .as_ref()
            .map(|stats| stats.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn should_stop(&self) -> bool {
        if self.interrupted.load(Ordering::Relaxed) {
            return true;
        }
        let mut state = self.lock();
        // Checked here too, not only by the monitor: a worker would
        // otherwise build batches the executor drops until it wakes.
        if self.max_time_reached() {
            state.stop.get_or_insert(StopReason::MaxTime);
        }
        state.stop.is_some()
    }

    fn max_time_reached(&self) -> bool {
        self.options
            .max_time
            .is_some_and(|max| self.started.elapsed() >= max)
    }

    /// Prints a status line, unless `--quiet`; `input` is a NEW or REDUCE
    /// input's length and the mutations that made it.
    fn print_status(&self, state: &mut State, event: Event, input: Option<(usize, Mutations)>) {
        if !self.out.shows_status() {
            return;
        }
        let runs = self.runs.load(Ordering::Relaxed);
        let now = Instant::now();
        let window = now.duration_since(state.last_status).as_secs_f64();
        let exec_per_sec = if window >= 0.5 {
            let rate = (runs - state.last_status_runs) as f64 / window;
            state.last_status = now;
            state.last_status_runs = runs;
            rate
        } else {
            runs as f64 / self.started.elapsed().as_secs_f64().max(1e-3)
        };
        let line = StatusLine {
            runs,
            event,
            edges: state.features.edges(),
            features: state.features.features(),
            corpus_entries: state.corpus.len(),
            corpus_bytes: state.corpus.total_bytes(),
            len_limit: state.length.limit(),
            exec_per_sec,
            engine_rss_mb: own_rss_mb(),
            harness_rss_mb: self.harness_rss.load(Ordering::Relaxed),
            new_crashes: state.crashes.new_count(),
            seconds: self.started.elapsed().as_secs(),
            dictionary: state.auto_dictionary.as_ref().map(AutoDictionary::len),
            mix: state.mix,
            input,
        };
        self.out.campaign(CampaignEvent::Status(&line));
    }
}

/// Runs a campaign. `interrupted` is set by the caller's Ctrl-C handler.
pub fn fuzz(
    harness: Arc<HarnessConfig>,
    sources: Arc<SourceServer>,
    corpus_dir: Option<&Path>,
    options: FuzzOptions,
    interrupted: Arc<AtomicBool>,
    out: Arc<Output>,
) -> Result<FuzzSummary, EngineError> {
    let given = setup::Given {
        harness,
        sources,
        corpus_dir,
        options,
        interrupted,
        out,
    };
    let Campaign {
        shared,
        mut first,
        seeds,
        feedbacks,
    } = setup::set_up(given)?;
    let mut scratch = Scratch::new();
    scratch.value_profile = shared.options.use_value_profile;
    let mut seed_parser =
        GrammarWorker::new(shared.grammar.as_ref(), false, GrammarShare::default());
    let seeds_run = run_seeds(&shared, &mut first, &mut scratch, &mut seed_parser, seeds)?;
    timeout::adapt_to_seeds(&shared, &mut first, scratch.slowest_micros);
    after_seeds(&shared, seeds_run);
    run_workers(&shared, first, scratch, feedbacks);
    summary::finish(&shared)
}

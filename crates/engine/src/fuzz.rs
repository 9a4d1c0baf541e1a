//! The fuzzing campaign: seeds, then workers that mutate, run and keep what
//! reaches new coverage, until a limit or Ctrl-C.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

mod cmp;
mod confirm;
mod custom;
mod feedback;
mod grammar;
mod scratch;
mod stats;

use php_fuzz_coverage::{FeatureSet, FingerprintCache};
use php_fuzz_grammar::Grammar;
use php_fuzz_harness::{Executor, HarnessConfig, SourceServer, StopWhen, TargetInfo};
use php_fuzz_mutate::{Dictionary, LengthControl, Mutator};
use php_fuzz_storage::{CorpusDir, CorpusFile, Loaded};

use crate::auto_dictionary::AutoDictionary;
use crate::corpus::{Corpus, Entry};
use crate::crashes::{CrashStore, KnownCrash, replay_flags};
use crate::output::{Event, Opening, Output, StatusLine, own_rss_mb};
use crate::{EngineError, FuzzOptions};
use cmp::{CmpFeedback, TracerSetup};
use confirm::confirm_new_crashes;
use custom::{CustomMutation, CustomSetup};
use feedback::absorb;
use grammar::{GrammarCorpus, GrammarWorker};
use scratch::Scratch;
use stats::{CampaignStats, Numbers, STATS_EVERY, stats_interval};

/// Without --max-len or setMaxLen(), at most this much of each corpus file
/// is read.
const MAX_SEED_BYTES: usize = 16 << 20;
/// Inputs bigger than this in total are split over several batches.
const MAX_BATCH_BYTES: usize = 8 << 20;
const PULSE_EVERY: Duration = Duration::from_secs(3);
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
    pub memory_restarts: u64,
    pub harness_peak_rss_mb: u64,
    pub engine_peak_rss_mb: u64,
    /// Distinct crashes hit this session, new or saved by an earlier one.
    pub crashes: Vec<KnownCrash>,
    pub new_crashes: usize,
    pub stop_reason: StopReason,
    pub corpus_dir: PathBuf,
    pub seed: u64,
    /// What comparison feedback did; `None` with `--no-cmp`.
    pub cmp: Option<CmpSummary>,
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
    /// Parsed entries and the fragment pool, with a grammar.
    grammar: Option<GrammarCorpus>,
}

struct Shared {
    state: Mutex<State>,
    harness: Arc<HarnessConfig>,
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
    memory_restarts: AtomicU64,
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
}

impl State {
    /// Whether `crash` would be saved now: a new bug, and --max-crashes not
    /// reached yet.
    fn would_save(&self, shared: &Shared, crash: &php_fuzz_harness::Crash) -> bool {
        !self.crashes.knows(crash)
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
    fn print_status(
        &self,
        state: &mut State,
        event: Event,
        input: Option<(usize, &dyn std::fmt::Display)>,
    ) {
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
            input,
        };
        self.out.status_line(&line);
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
    let started = Instant::now();
    let harness = Arc::new(HarnessConfig {
        dedup_traces: true,
        ..(*harness).clone()
    });
    // A batch in flight stops for Ctrl-C and --max-time too, not only between batches.
    let stop = StopWhen {
        flag: Some(Arc::clone(&interrupted)),
        deadline: options.max_time.map(|max| started + max),
    };
    let mut first = Executor::new(Arc::clone(&harness), Arc::clone(&sources));
    first.stop_when(stop.clone());
    let info = first.start()?.clone();
    report_target(&out, &info, &harness);

    let mut dictionary = Dictionary::default();
    for path in options.dictionaries.iter().chain(&info.dictionaries) {
        dictionary.extend(Dictionary::load(path)?);
    }
    let temporary;
    let corpus_dir = match corpus_dir {
        Some(dir) => dir,
        None => {
            temporary = tempfile::Builder::new()
                .prefix("php-fuzz-corpus-")
                .tempdir()
                .map_err(|source| EngineError::Input {
                    path: std::env::temp_dir(),
                    what: "cannot create a temporary corpus directory",
                    source,
                })?
                .keep();
            out.line(&format!(
                "INFO: no corpus directory given; using {}",
                temporary.display()
            ));
            temporary.as_path()
        }
    };
    let mut dir = CorpusDir::open(corpus_dir)?;
    let explicit_max_len = options.max_len.or(info.max_len);
    let read_limit = explicit_max_len.unwrap_or(MAX_SEED_BYTES);
    dir.set_read_limit(read_limit);
    let loaded = dir.load_all()?;
    report_load(&out, &loaded, explicit_max_len);
    let mut seeds = loaded.files;
    for extra in &options.seed_dirs {
        let mut extra = CorpusDir::open(extra)?;
        extra.set_read_limit(read_limit);
        let loaded = extra.load_all()?;
        report_load(&out, &loaded, explicit_max_len);
        seeds.extend(loaded.files);
    }
    let auto_dictionary = if options.cmp {
        Some(AutoDictionary::load(&dir)?)
    } else {
        None
    };
    if options.use_value_profile && !sources.logs_comparisons() {
        out.line("WARNING: --use-value-profile needs a source server in the cmplog rendering; no comparison is logged");
    }
    let seed_bytes: usize = seeds.iter().map(|s| s.data.len()).sum();
    let largest_seed = seeds.iter().map(|s| s.data.len()).max().unwrap_or(0);
    let max_len = explicit_max_len.unwrap_or_else(|| largest_seed.max(crate::DEFAULT_MAX_LEN));
    let target_name = harness.target_name();
    let crashes = CrashStore::open_named(
        &options.artifact_dir,
        options.artifact_naming.clone(),
        &target_name,
        &replay_flags(&harness, sources.style()),
    )?
    .with_findings_dir(options.findings_dir.clone());
    let grammar = load_grammar(&options, &info)?;
    let stats = options
        .stats
        .as_deref()
        .map(|path| CampaignStats::open(path, started))
        .transpose()?;
    let grammar_corpus = grammar
        .as_ref()
        .map(|g| GrammarCorpus::new(g, &options.fragments))
        .transpose()?;

    out.opening(&Opening {
        seed: options.seed,
        target: &target_name,
        php_version: &info.php_version,
        timeout_secs: harness.timeout.as_secs_f64(),
        rss_limit_mb: harness.rss_limit_mb,
        corpus_dir: dir.root(),
        seed_files: seeds.len(),
        seed_bytes,
        smallest_seed: seeds.iter().map(|s| s.data.len()).min().unwrap_or(0),
        largest_seed,
        artifact_dir: crashes.artifact_dir(),
        dictionary_entries: dictionary.len(),
        max_len,
        jobs: options.jobs,
        coverage: sources.coverage(),
    });
    if let Some(note) = crashes.copies_note() {
        out.status(&note);
    }
    if let Some(auto) = &auto_dictionary {
        out.status(&format!(
            "INFO: comparison feedback on: source dictionary, tracer (CMP, I2S), auto-dictionary of {} words{}",
            auto.len(),
            if options.use_value_profile {
                ", value profile"
            } else {
                ""
            }
        ));
    }
    // Each worker's tracer loads the target while the seeds run.
    let jobs = options.jobs.max(1);
    let setup = options.cmp.then(|| TracerSetup {
        config: Arc::new(HarnessConfig {
            dedup_traces: false,
            forward_output: false,
            ..(*harness).clone()
        }),
        sources: Arc::new(
            SourceServer::with_cmplog(sources.style()).with_coverage(sources.coverage()),
        ),
        stop: stop.clone(),
    });
    let feedbacks: Vec<Option<CmpFeedback>> = (0..jobs)
        .map(|worker| {
            let (worker, jobs) = (worker as u64, jobs as u64);
            let setup = setup.as_ref()?;
            Some(CmpFeedback::new(setup, Arc::clone(&sources), worker, jobs))
        })
        .collect();

    let length = LengthControl::new(max_len, options.len_control_factor);
    let mut corpus = Corpus::new();
    if let Some(entropic) = options.entropic {
        corpus.enable_entropic(entropic);
    }
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            corpus,
            corpus_dir: dir,
            features: FeatureSet::new(),
            seen: FingerprintCache::new(FINGERPRINT_CACHE_BITS),
            crashes,
            length,
            max_len,
            auto_dictionary,
            cmp: CmpSummary::default(),
            stop: None,
            error: None,
            last_status: Instant::now(),
            last_status_runs: 0,
            grammar: grammar_corpus,
        }),
        harness: Arc::clone(&harness),
        sources: Arc::clone(&sources),
        runs: AtomicU64::new(0),
        interrupted,
        stop: stop.clone(),
        options,
        out,
        started,
        harness_rss: AtomicU64::new(0),
        harness_starts: AtomicU64::new(0),
        memory_restarts: AtomicU64::new(0),
        harness_peak_rss: AtomicU64::new(0),
        dictionary,
        reloaded: Mutex::new(Vec::new()),
        grammar,
        custom: info.custom.any().then(|| CustomSetup {
            hooks: info.custom,
            harness: Arc::clone(&harness),
            sources: Arc::clone(&sources),
        }),
        stats: stats.map(Mutex::new),
    });
    if let Some(mut stats) = shared.stats() {
        // Announced first: a warning that the file cannot be written follows it.
        shared.out.status(&format!(
            "INFO: statistics appended to {} (every {} s after the first minute)",
            stats.path().display(),
            STATS_EVERY.as_secs()
        ));
        stats.start(
            &shared.out,
            shared.options.seed,
            shared.options.jobs,
            &target_name,
        );
    }
    if let Some(custom) = &shared.custom {
        shared.out.status(&format!(
            "INFO: custom mutator: {}  custom crossover: {}  (docs/structure-aware.md)",
            if custom.hooks.mutator {
                "every mutant"
            } else {
                "no"
            },
            if custom.hooks.crossover { "yes" } else { "no" },
        ));
    }

    let mut scratch = Scratch::new();
    scratch.value_profile = shared.options.use_value_profile;
    let mut seed_parser = GrammarWorker::new(shared.grammar.as_ref());
    let seeds_run = run_seeds(&shared, &mut first, &mut scratch, &mut seed_parser, seeds)?;
    {
        let mut state = shared.lock();
        let longest = state.corpus.max_len();
        state.length.at_least(longest);
        if state.corpus.is_empty() {
            if seeds_run.ran > 0 && seeds_run.crashed == seeds_run.ran {
                shared.out.line(&format!(
                    "INFO: every seed input crashes ({} of {}), so none joins the corpus; \
                     fuzzing from an empty input.",
                    seeds_run.crashed, seeds_run.ran
                ));
            } else {
                shared.out.line(
                    "WARNING: no input reached any instrumented code: is the target's code instrumented? \
                     (files tree-sitter cannot parse run without coverage). Fuzzing blindly from an empty input.",
                );
            }
            state.corpus.add(Entry {
                data: Vec::new(),
                path: None,
                unique: Vec::new(),
                trace_hash: 0,
            });
        }
        if let (Some(grammar), Some(corpus)) = (&shared.grammar, &state.grammar) {
            shared.out.status(&format!(
                "INFO: grammar: {}  {}",
                grammar.name(),
                corpus.describe()
            ));
        }
    }
    shared.print_status(&mut shared.lock(), Event::Inited, None);
    if shared.stats.is_some() {
        let numbers = Numbers::of(&shared.lock());
        if let Some(mut stats) = shared.stats() {
            stats.sample(&shared, numbers);
        }
    }

    let mut workers = Vec::new();
    let mut feedbacks = feedbacks.into_iter();
    let first_cmp = feedbacks.next().flatten();
    for (worker, cmp) in (1..jobs).zip(feedbacks) {
        let shared = Arc::clone(&shared);
        let mut executor = Executor::new(Arc::clone(&harness), Arc::clone(&sources));
        executor.stop_when(stop.clone());
        workers.push(
            std::thread::Builder::new()
                .name(format!("php-fuzz-worker-{worker}"))
                .spawn(move || worker_loop(&shared, executor, worker as u64, Scratch::new(), cmp))
                .expect("spawning a worker thread"),
        );
    }
    {
        let shared = Arc::clone(&shared);
        workers.push(
            std::thread::Builder::new()
                .name("php-fuzz-worker-0".into())
                .spawn(move || worker_loop(&shared, first, 0, scratch, first_cmp))
                .expect("spawning a worker thread"),
        );
    }
    monitor(&shared);
    for worker in workers {
        if worker.join().is_err() {
            shared
                .lock()
                .error
                .get_or_insert(EngineError::WorkerPanicked);
        }
    }

    if shared.stats.is_some() {
        let (numbers, reason) = {
            let state = shared.lock();
            let reason = match (&state.error, state.stop) {
                (Some(err), _) => format!("error: {err}"),
                (None, stop) => stop
                    .unwrap_or(StopReason::Interrupted)
                    .describe()
                    .to_string(),
            };
            (Numbers::of(&state), reason)
        };
        if let Some(mut stats) = shared.stats() {
            stats.end(&shared, numbers, &reason);
        }
    }
    let mut state = shared.lock();
    if let Err(err) = state.crashes.flush_hits() {
        let text = format!("WARNING: cannot update the hit counts of the crash reports: {err}");
        shared.out.line(&text);
    }
    if let Some(err) = state.error.take() {
        return Err(err);
    }
    for warning in sources.take_warnings() {
        shared.out.line(&format!("WARNING: {warning}"));
    }
    if let Some(corpus) = &state.grammar {
        shared.out.line(&format!(
            "INFO: grammar mutation: {}; {}",
            corpus.describe_use(),
            corpus.describe()
        ));
    }
    let runs = shared.runs.load(Ordering::Relaxed);
    let cmp = state.auto_dictionary.as_ref().map(|auto| CmpSummary {
        auto_words: auto.len(),
        source_words: sources.comparison_literals().1.len(),
        ..state.cmp.clone()
    });
    Ok(FuzzSummary {
        runs,
        elapsed: started.elapsed(),
        edges: state.features.edges(),
        features: state.features.features(),
        corpus_entries: state.corpus.len(),
        corpus_bytes: state.corpus.total_bytes(),
        harness_starts: shared.harness_starts.load(Ordering::Relaxed),
        memory_restarts: shared.memory_restarts.load(Ordering::Relaxed),
        harness_peak_rss_mb: shared.harness_peak_rss.load(Ordering::Relaxed),
        engine_peak_rss_mb: crate::output::own_peak_rss_mb(),
        crashes: state.crashes.hit_this_session().cloned().collect(),
        new_crashes: state.crashes.new_count(),
        stop_reason: state.stop.unwrap_or(StopReason::Interrupted),
        corpus_dir: state.corpus_dir.root().to_path_buf(),
        seed: shared.options.seed,
        cmp,
    })
}

/// The grammar of `--grammar`, else of the target's `setGrammar()`.
fn load_grammar(options: &FuzzOptions, info: &TargetInfo) -> Result<Option<Grammar>, EngineError> {
    let (name, origin) = match (&options.grammar, &info.grammar) {
        (Some(name), _) => (name, "--grammar"),
        (None, Some(name)) => (name, "$config->setGrammar() in the target"),
        (None, None) if !options.fragments.is_empty() => {
            return Err(EngineError::FragmentsWithoutGrammar);
        }
        (None, None) => return Ok(None),
    };
    Grammar::load(name)
        .map(Some)
        .map_err(|source| EngineError::Grammar { origin, source })
}

/// Corpus entries skipped or cut while loading, said once.
fn report_load(out: &Output, loaded: &Loaded, max_len: Option<usize>) {
    const SHOWN: usize = 10;
    for reason in loaded.skipped.iter().take(SHOWN) {
        out.line(&format!("WARNING: corpus entry skipped: {reason}"));
    }
    if loaded.skipped.len() > SHOWN {
        out.line(&format!(
            "WARNING: {} more corpus entries skipped",
            loaded.skipped.len() - SHOWN
        ));
    }
    if loaded.cut > 0 {
        let limit = max_len.map_or_else(
            || format!("{MAX_SEED_BYTES} bytes"),
            |len| format!("--max-len ({len} bytes)"),
        );
        out.line(&format!(
            "INFO: {} corpus entries are longer than {limit}: only their start is used",
            loaded.cut
        ));
    }
}

fn report_target(out: &Output, info: &TargetInfo, harness: &HarnessConfig) {
    for warning in &info.load_warnings {
        out.line(&format!(
            "WARNING: while loading the target: {}",
            warning.headline()
        ));
    }
    if !info.signals {
        out.line(&format!(
            "WARNING: {} has no pcntl/posix: timeouts are enforced from outside only, without a PHP stack trace",
            harness.php.path.display()
        ));
    }
}

/// How many corpus files ran, and how many of them crashed.
#[derive(Debug, Default, Clone, Copy)]
struct SeedsRun {
    ran: usize,
    crashed: usize,
}

/// Runs the corpus as found on disk; keeps what reaches new features.
fn run_seeds(
    shared: &Shared,
    executor: &mut Executor,
    scratch: &mut Scratch,
    grammar: &mut GrammarWorker,
    seeds: Vec<CorpusFile>,
) -> Result<SeedsRun, EngineError> {
    let mut counts = SeedsRun::default();
    let mut seeds = seeds;
    // Shortest first, as libFuzzer and php-fuzzer do: where two seeds reach
    // the same code, the short one joins the corpus and the long one adds
    // nothing, so mutants stay short and cheap to run (stable: equal
    // lengths keep their file-name order).
    seeds.sort_by_key(|seed| seed.data.len());
    if seeds.is_empty() {
        seeds.push(CorpusFile {
            path: PathBuf::new(),
            data: Vec::new(),
            owned: false,
        });
    }
    let max_len = shared.lock().max_len;
    let mut pending = seeds.into_iter().peekable();
    while pending.peek().is_some() {
        if shared.interrupted.load(Ordering::Relaxed) {
            break;
        }
        if shared.max_time_reached() {
            shared.lock().stop.get_or_insert(StopReason::MaxTime);
            break;
        }
        scratch.clear();
        let mut bytes = 0;
        while let Some(seed) = pending.next_if(|s| {
            scratch.batch.len() < scratch.batch_size && bytes + s.data.len() <= MAX_BATCH_BYTES
                || scratch.batch.is_empty()
        }) {
            let data = &seed.data[..seed.data.len().min(max_len)];
            bytes += data.len();
            let path = (!seed.path.as_os_str().is_empty()).then_some(seed.path);
            scratch.push_file(data, path);
        }
        run_and_collect(shared, executor, scratch)?;
        counts.ran += scratch.batch.len();
        counts.crashed += scratch.crashed.iter().filter(|&&c| c).count();
        confirm_new_crashes(shared, scratch);
        absorb(shared, &mut shared.lock(), scratch)?;
        grammar.learn(shared, scratch);
    }
    Ok(counts)
}

fn run_and_collect(
    shared: &Shared,
    executor: &mut Executor,
    scratch: &mut Scratch,
) -> Result<(), EngineError> {
    executor.submit(&scratch.batch)?;
    finish_and_collect(shared, executor, scratch)
}

/// Waits for `scratch`'s batch, submitted earlier, and records its results.
fn finish_and_collect(
    shared: &Shared,
    executor: &mut Executor,
    scratch: &mut Scratch,
) -> Result<(), EngineError> {
    let batch = std::mem::take(&mut scratch.batch);
    let result = executor.finish(&batch, |r| {
        scratch.collect(
            r.index,
            r.crash,
            r.coverage,
            r.trace_hash,
            r.repeat,
            r.cmp_log,
        )
    });
    scratch.batch = batch;
    result?;
    scratch.keep_collected();
    let stats = executor.stats();
    shared
        .runs
        .fetch_add(scratch.batch.len() as u64, Ordering::Relaxed);
    shared.harness_rss.store(stats.rss_mb, Ordering::Relaxed);
    shared
        .harness_peak_rss
        .fetch_max(stats.peak_rss_mb, Ordering::Relaxed);
    scratch.adapt_batch_size();
    Ok(())
}

/// Fuzzes until told to stop. Two batches are in flight: while PHP runs
/// one, this thread absorbs the results of the previous one and mutates the
/// next, so the engine's work hides behind the harness's.
fn worker_loop(
    shared: &Shared,
    mut executor: Executor,
    worker: u64,
    first: Scratch,
    mut cmp: Option<CmpFeedback>,
) {
    let seed = shared
        .options
        .seed
        .wrapping_add(worker.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut mutator = Mutator::new(seed, shared.dictionary.clone());
    let mut grammar = GrammarWorker::new(shared.grammar.as_ref());
    let mut custom = shared
        .custom
        .as_ref()
        .map(|setup| CustomMutation::new(setup, shared.dictionary.clone()));
    let (mut last_starts, mut last_restarts) = (0, 0);
    let mut current = first;
    let mut next = Scratch::new();
    next.batch_size = current.batch_size;
    next.value_profile = shared.options.use_value_profile;
    current.value_profile = shared.options.use_value_profile;
    let mut in_flight = false;
    let result = loop {
        let stopping = shared.should_stop();
        let reloaded = if stopping {
            Vec::new()
        } else {
            std::mem::take(&mut *shared.reloaded.lock().unwrap_or_else(|p| p.into_inner()))
        };
        let step = (|| -> Result<bool, EngineError> {
            // Queue the next batch before waiting for the current one.
            let queued_next = !stopping
                && reloaded.is_empty()
                && build_batch(
                    shared,
                    &mut mutator,
                    &mut grammar,
                    custom.as_mut(),
                    &mut next,
                    in_flight.then_some(&current),
                    cmp.as_mut(),
                )?;
            if queued_next {
                executor.submit(&next.batch)?;
            }
            if in_flight {
                finish_and_collect(shared, &mut executor, &mut current)?;
                confirm_new_crashes(shared, &mut current);
                absorb(shared, &mut shared.lock(), &mut current)?;
                grammar.learn(shared, &mut current);
                if let Some(cmp) = cmp.as_mut() {
                    save_auto_dictionary(&mut shared.lock())?;
                    cmp.after_batch(shared, &mut mutator, &current);
                }
            }
            if !reloaded.is_empty() {
                let count = reloaded.len();
                let before = shared.lock().corpus.len();
                run_seeds(shared, &mut executor, &mut current, &mut grammar, reloaded)?;
                let added = shared.lock().corpus.len() - before;
                shared.out.status(&format!("INFO: --reload: ran {count} new entries from the corpus directory, {added} added coverage"));
            }
            std::mem::swap(&mut current, &mut next);
            next.batch_size = current.batch_size;
            in_flight = queued_next;
            Ok(in_flight || (!stopping && !shared.should_stop()))
        })();
        let stats = executor.stats();
        shared
            .harness_starts
            .fetch_add(stats.harness_starts - last_starts, Ordering::Relaxed);
        shared
            .memory_restarts
            .fetch_add(stats.memory_restarts - last_restarts, Ordering::Relaxed);
        (last_starts, last_restarts) = (stats.harness_starts, stats.memory_restarts);
        match step {
            Ok(true) => {}
            Ok(false) => break Ok(()),
            Err(err) => break Err(err),
        }
    };
    if let Some(cmp) = cmp.as_mut() {
        cmp.finish(shared);
    }
    let mut state = shared.lock();
    if let Err(err) = result {
        state.error.get_or_insert(err);
        state.stop.get_or_insert(StopReason::Interrupted);
    }
    if let Some(cmp) = &cmp {
        state.cmp.traced += cmp.traced;
        state.cmp.candidates += cmp.candidates_made;
    }
    drop(state);
    executor.shutdown();
}

/// Writes the auto-dictionary beside the corpus if it learned words.
fn save_auto_dictionary(state: &mut State) -> Result<(), EngineError> {
    let State {
        auto_dictionary,
        corpus_dir,
        ..
    } = state;
    match auto_dictionary {
        Some(auto) => auto.save_if_changed(corpus_dir),
        None => Ok(()),
    }
}

/// Fills `scratch` with input-to-state candidates (up to half the batch),
/// then mutants of corpus entries. `in_flight` is a batch already queued,
/// counted against --max-runs. Returns false if there is nothing to run.
fn build_batch(
    shared: &Shared,
    mutator: &mut Mutator,
    grammar: &mut GrammarWorker,
    mut custom: Option<&mut CustomMutation>,
    scratch: &mut Scratch,
    in_flight: Option<&Scratch>,
    cmp: Option<&mut CmpFeedback>,
) -> Result<bool, EngineError> {
    scratch.clear();
    let mut guard = shared.lock();
    let state = &mut *guard;
    let queued = in_flight.map_or(0, |s| s.batch.len() as u64);
    let remaining = shared
        .options
        .max_runs
        .map(|max| max.saturating_sub(shared.runs.load(Ordering::Relaxed) + queued));
    let size = match remaining {
        Some(0) => {
            if queued == 0 {
                state.stop.get_or_insert(StopReason::MaxRuns);
            }
            return Ok(false);
        }
        Some(left) => scratch.batch_size.min(left as usize),
        None => scratch.batch_size,
    };
    let limit = state.length.limit();
    let candidates = match cmp {
        Some(cmp) => cmp.fill_batch(
            scratch,
            size.div_ceil(2),
            |id| state.corpus.get(id).data.len(),
            |parent_len| limit.max(parent_len).min(state.max_len),
        ),
        None => 0,
    };
    for _ in candidates..size {
        let Some(parent) = state.corpus.pick(mutator.rng_mut()) else {
            break;
        };
        let partner = state.corpus.pick(mutator.rng_mut()).unwrap_or(parent);
        let parent_data = &state.corpus.get(parent).data;
        // As libFuzzer: the limit never cuts the parent itself.
        let max_len = limit.max(parent_data.len()).min(state.max_len);
        if let Some(trees) = &mut state.grammar
            && grammar.push_mutant(
                trees,
                &state.corpus,
                mutator,
                scratch,
                parent,
                partner,
                max_len,
            )
        {
            continue;
        }
        let partner_data = &state.corpus.get(partner).data;
        if let Some(custom) = custom.as_deref_mut()
            && custom.plan(
                mutator.rng_mut(),
                parent,
                parent_data,
                partner_data,
                max_len,
            )
        {
            continue;
        }
        scratch.push_mutant(mutator, parent, parent_data, partner_data, max_len);
    }
    drop(guard);
    if let Some(custom) = custom {
        custom.run(scratch)?;
    }
    Ok(!scratch.batch.is_empty())
}

/// Watches the limits and prints a pulse line while nothing else happens.
fn monitor(shared: &Shared) {
    let mut last_pulse = Instant::now();
    let mut last_reload = Instant::now();
    let mut last_sample = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let mut state = shared.lock();
        if shared.interrupted.load(Ordering::Relaxed) {
            state.stop.get_or_insert(StopReason::Interrupted);
        }
        if shared.max_time_reached() {
            state.stop.get_or_insert(StopReason::MaxTime);
        }
        if shared
            .options
            .max_runs
            .is_some_and(|max| shared.runs.load(Ordering::Relaxed) >= max)
        {
            state.stop.get_or_insert(StopReason::MaxRuns);
        }
        if state.stop.is_some() {
            return;
        }
        if let Some(every) = shared.options.reload
            && last_reload.elapsed() >= every
        {
            last_reload = Instant::now();
            match state.corpus_dir.load_new() {
                Ok(loaded) => {
                    report_load(&shared.out, &loaded, Some(state.max_len));
                    let mut pending = shared.reloaded.lock().unwrap_or_else(|p| p.into_inner());
                    pending.extend(loaded.files);
                }
                Err(err) => shared.out.line(&format!("WARNING: --reload: {err}")),
            }
        }
        if last_pulse.elapsed() >= PULSE_EVERY && state.last_status.elapsed() >= PULSE_EVERY {
            last_pulse = Instant::now();
            shared.print_status(&mut state, Event::Pulse, None);
        }
        if shared.stats.is_some()
            && last_sample.elapsed() >= stats_interval(shared.started.elapsed())
        {
            last_sample = Instant::now();
            let numbers = Numbers::of(&state);
            drop(state);
            if let Some(mut stats) = shared.stats() {
                stats.sample(shared, numbers);
            }
        }
    }
}

//! The fuzzing campaign: seeds, then workers that mutate, run and keep what
//! reaches new coverage, until a limit or Ctrl-C.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

mod feedback;
mod scratch;

use php_fuzz_coverage::{FeatureSet, FingerprintCache};
use php_fuzz_harness::{Executor, HarnessConfig, SourceServer, StopWhen, TargetInfo};
use php_fuzz_mutate::{Dictionary, LengthControl, Mutator, Sequence};
use php_fuzz_storage::{CorpusDir, CorpusFile};

use crate::corpus::{Corpus, Entry};
use crate::crashes::{CrashStore, KnownCrash};
use crate::output::{Event, Output, StatusLine, own_rss_mb};
use crate::{EngineError, FuzzOptions};
use feedback::absorb;
use scratch::Scratch;

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
    /// Set when a limit is reached or a worker fails.
    stop: Option<StopReason>,
    error: Option<EngineError>,
    last_status: Instant,
    last_status_runs: u64,
}

struct Shared {
    state: Mutex<State>,
    runs: AtomicU64,
    interrupted: Arc<AtomicBool>,
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
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn should_stop(&self) -> bool {
        self.interrupted.load(Ordering::Relaxed) || self.lock().stop.is_some()
    }

    /// Prints a status line, unless `--quiet`; `input` is a NEW or REDUCE
    /// input's length and the mutations that made it.
    fn print_status(&self, state: &mut State, event: Event, input: Option<(usize, &Sequence)>) {
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
            input,
        };
        self.out.status(&line.to_string());
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
    let seeds = dir.load_all()?;
    let seed_bytes: usize = seeds.iter().map(|s| s.data.len()).sum();
    let largest_seed = seeds.iter().map(|s| s.data.len()).max().unwrap_or(0);
    let max_len = options
        .max_len
        .or(info.max_len)
        .unwrap_or_else(|| largest_seed.max(crate::DEFAULT_MAX_LEN));
    let target_name = harness.target.display().to_string();
    let crashes = CrashStore::open(&options.artifact_dir, &target_name)?;

    out.status(&format!(
        "INFO: seed: {}  target: {}  php: {}  timeout: {} s  rss limit: {} MB",
        options.seed,
        target_name,
        info.php_version,
        harness.timeout.as_secs_f64(),
        harness.rss_limit_mb
    ));
    out.status(&format!(
        "INFO: corpus: {} ({} files, {} bytes)  artifacts: {}  dictionary: {} entries  max len: {}  jobs: {}",
        dir.root().display(),
        seeds.len(),
        seed_bytes,
        options.artifact_dir.display(),
        dictionary.len(),
        max_len,
        options.jobs
    ));

    let length = LengthControl::new(max_len, options.len_control_factor);
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            corpus: Corpus::new(),
            corpus_dir: dir,
            features: FeatureSet::new(),
            seen: FingerprintCache::new(FINGERPRINT_CACHE_BITS),
            crashes,
            length,
            max_len,
            stop: None,
            error: None,
            last_status: Instant::now(),
            last_status_runs: 0,
        }),
        runs: AtomicU64::new(0),
        interrupted,
        options,
        out,
        started,
        harness_rss: AtomicU64::new(0),
        harness_starts: AtomicU64::new(0),
        memory_restarts: AtomicU64::new(0),
        harness_peak_rss: AtomicU64::new(0),
        dictionary,
        reloaded: Mutex::new(Vec::new()),
    });

    let mut scratch = Scratch::new();
    run_seeds(&shared, &mut first, &mut scratch, seeds)?;
    {
        let mut state = shared.lock();
        let longest = state.corpus.max_len();
        state.length.at_least(longest);
        if state.corpus.is_empty() {
            shared.out.line(
                "WARNING: no input reached any instrumented code: is the target's code instrumented? \
                 (files tree-sitter cannot parse run without coverage). Fuzzing blindly from an empty input.",
            );
            state.corpus.add(Entry {
                data: Vec::new(),
                path: None,
                unique: Vec::new(),
                trace_hash: 0,
            });
        }
    }
    shared.print_status(&mut shared.lock(), Event::Inited, None);

    let jobs = shared.options.jobs.max(1);
    let mut workers = Vec::new();
    for worker in 1..jobs {
        let shared = Arc::clone(&shared);
        let mut executor = Executor::new(Arc::clone(&harness), Arc::clone(&sources));
        executor.stop_when(stop.clone());
        workers.push(
            std::thread::Builder::new()
                .name(format!("php-fuzz-worker-{worker}"))
                .spawn(move || worker_loop(&shared, executor, worker as u64, Scratch::new()))
                .expect("spawning a worker thread"),
        );
    }
    {
        let shared = Arc::clone(&shared);
        workers.push(
            std::thread::Builder::new()
                .name("php-fuzz-worker-0".into())
                .spawn(move || worker_loop(&shared, first, 0, scratch))
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

    let mut state = shared.lock();
    if let Some(err) = state.error.take() {
        return Err(err);
    }
    for warning in sources.take_warnings() {
        shared.out.line(&format!("WARNING: {warning}"));
    }
    let runs = shared.runs.load(Ordering::Relaxed);
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
    })
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

/// Runs the corpus as found on disk; keeps what reaches new features.
fn run_seeds(
    shared: &Shared,
    executor: &mut Executor,
    scratch: &mut Scratch,
    seeds: Vec<CorpusFile>,
) -> Result<(), EngineError> {
    let mut seeds = seeds;
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
        if (shared.options.max_time).is_some_and(|max| shared.started.elapsed() >= max) {
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
        absorb(shared, &mut shared.lock(), scratch)?;
    }
    Ok(())
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
        scratch.collect(r.index, r.crash, r.coverage, r.trace_hash, r.repeat)
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
fn worker_loop(shared: &Shared, mut executor: Executor, worker: u64, first: Scratch) {
    let seed = shared
        .options
        .seed
        .wrapping_add(worker.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut mutator = Mutator::new(seed, shared.dictionary.clone());
    let (mut last_starts, mut last_restarts) = (0, 0);
    let mut current = first;
    let mut next = Scratch::new();
    next.batch_size = current.batch_size;
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
                    &mut next,
                    in_flight.then_some(&current),
                )?;
            if queued_next {
                executor.submit(&next.batch)?;
            }
            if in_flight {
                finish_and_collect(shared, &mut executor, &mut current)?;
                absorb(shared, &mut shared.lock(), &mut current)?;
            }
            if !reloaded.is_empty() {
                let count = reloaded.len();
                let before = shared.lock().corpus.len();
                run_seeds(shared, &mut executor, &mut current, reloaded)?;
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
    if let Err(err) = result {
        let mut state = shared.lock();
        state.error.get_or_insert(err);
        state.stop.get_or_insert(StopReason::Interrupted);
    }
    executor.shutdown();
}

/// Fills `scratch` with mutants of corpus entries. `in_flight` is a batch
/// already queued, counted against --max-runs. Returns false if there is
/// nothing to run.
fn build_batch(
    shared: &Shared,
    mutator: &mut Mutator,
    scratch: &mut Scratch,
    in_flight: Option<&Scratch>,
) -> Result<bool, EngineError> {
    scratch.clear();
    let mut state = shared.lock();
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
    for _ in 0..size {
        let Some(parent) = state.corpus.pick(mutator.rng_mut()) else {
            break;
        };
        let partner = state.corpus.pick(mutator.rng_mut()).unwrap_or(parent);
        let parent_data = &state.corpus.get(parent).data;
        // As libFuzzer: the limit never cuts the parent itself.
        let max_len = limit.max(parent_data.len()).min(state.max_len);
        let partner_data = &state.corpus.get(partner).data;
        scratch.push_mutant(mutator, parent, parent_data, partner_data, max_len);
    }
    Ok(!scratch.batch.is_empty())
}

/// Watches the limits and prints a pulse line while nothing else happens.
fn monitor(shared: &Shared) {
    let mut last_pulse = Instant::now();
    let mut last_reload = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let mut state = shared.lock();
        if shared.interrupted.load(Ordering::Relaxed) {
            state.stop.get_or_insert(StopReason::Interrupted);
        }
        if shared
            .options
            .max_time
            .is_some_and(|max| shared.started.elapsed() >= max)
        {
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
                Ok(files) if !files.is_empty() => {
                    let mut pending = shared.reloaded.lock().unwrap_or_else(|p| p.into_inner());
                    pending.extend(files);
                }
                Ok(_) => {}
                Err(err) => shared.out.line(&format!("WARNING: --reload: {err}")),
            }
        }
        if last_pulse.elapsed() >= PULSE_EVERY && state.last_status.elapsed() >= PULSE_EVERY {
            last_pulse = Instant::now();
            shared.print_status(&mut state, Event::Pulse, None);
        }
    }
}

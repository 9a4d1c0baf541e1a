//! Setting a campaign up: the target started once, the dictionary, the
//! corpus directory and the seeds, the crash store, the grammar, the
//! statistics file, each worker's comparison feedback, the opening lines,
//! and the state the workers share.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use php_fuzz_coverage::{FeatureSet, FingerprintCache};
use php_fuzz_grammar::Grammar;
use php_fuzz_harness::{DetectorSet, Executor, HarnessConfig, SourceServer, StopWhen, TargetInfo};
use php_fuzz_mutate::{Dictionary, LengthControl};
use php_fuzz_storage::{CorpusDir, CorpusFile, Loaded};

use super::cmp::{CmpFeedback, TracerSetup};
use super::custom::CustomSetup;
use super::grammar::{GrammarCorpus, choose_grammar};
use super::stats::{CampaignStats, STATS_EVERY};
use super::typed::TypedTarget;
use super::{CmpSummary, FINGERPRINT_CACHE_BITS, Shared, State};
use crate::auto_dictionary::AutoDictionary;
use crate::corpus::Corpus;
use crate::crashes::{CrashStore, replay_flags};
use crate::output::{CampaignEvent, Opening, Output, own_rss_mb};
use crate::{EngineError, FuzzOptions};

/// Without --max-len or setMaxLen(), at most this much of each corpus file
/// is read.
const MAX_SEED_BYTES: usize = 16 << 20;

/// A campaign ready to run its seeds.
pub(super) struct Campaign {
    pub shared: Arc<Shared>,
    /// The harness that started the target: it runs the seeds, then fuzzes
    /// as worker 0.
    pub first: Executor,
    pub seeds: Vec<CorpusFile>,
    /// Each worker's comparison feedback; `None`s with `--no-cmp`.
    pub feedbacks: Vec<Option<CmpFeedback>>,
}

/// What a campaign is made of before its workers share it.
struct Parts {
    started: Instant,
    harness: Arc<HarnessConfig>,
    sources: Arc<SourceServer>,
    stop: StopWhen,
    first: Executor,
    info: TargetInfo,
    options: FuzzOptions,
    interrupted: Arc<AtomicBool>,
    out: Arc<Output>,
    dictionary: Dictionary,
    dir: CorpusDir,
    seeds: Vec<CorpusFile>,
    auto_dictionary: Option<AutoDictionary>,
    max_len: usize,
    target_name: String,
    crashes: CrashStore,
    grammar: Option<Grammar>,
    /// How `--grammar auto` or `none` chose, for the opening lines.
    grammar_note: Option<String>,
    stats: Option<CampaignStats>,
    grammar_corpus: Option<GrammarCorpus>,
    typed: Option<TypedTarget>,
}

/// What the caller of [`fuzz`](super::fuzz) gave.
pub(super) struct Given<'a> {
    pub harness: Arc<HarnessConfig>,
    pub sources: Arc<SourceServer>,
    pub corpus_dir: Option<&'a Path>,
    pub options: FuzzOptions,
    pub interrupted: Arc<AtomicBool>,
    pub out: Arc<Output>,
}

/// Starts the target, loads what the campaign needs and says what it found.
pub(super) fn set_up(given: Given<'_>) -> Result<Campaign, EngineError> {
    let parts = gather(given)?;
    announce(&parts);
    // Each worker's tracer loads the target while the seeds run.
    let feedbacks = cmp_feedbacks(&parts);
    let target_name = parts.target_name.clone();
    let campaign = share(parts, feedbacks);
    announce_shared(&campaign.shared, &target_name);
    Ok(campaign)
}

fn gather(given: Given<'_>) -> Result<Parts, EngineError> {
    let started = Instant::now();
    let (harness, stop, first, info) = start_target(&given, started)?;
    let (options, sources, out) = (&given.options, &given.sources, &*given.out);

    let mut dictionary = Dictionary::default();
    for path in options.dictionaries.iter().chain(&info.dictionaries) {
        dictionary.extend(Dictionary::load(path)?);
    }
    let corpus_dir = corpus_dir_or_temporary(given.corpus_dir, out)?;
    let mut dir = CorpusDir::open(&corpus_dir)?;
    let explicit_max_len = options.max_len.or(info.max_len);
    let typed = TypedTarget::from_ready(info.arguments.as_deref(), explicit_max_len)?;
    // A typed entry is text that a cut would break: --max-len bounds each
    // string argument instead (docs/autofuzz.md).
    let seed_max_len = if typed.is_some() {
        None
    } else {
        explicit_max_len
    };
    let mut seeds = load_seeds(&mut dir, options, seed_max_len, out)?;
    if let Some(typed) = &typed {
        typed.keep_fitting_seeds(&mut seeds, out);
    }
    let auto_dictionary = if options.cmp {
        Some(AutoDictionary::load(&dir)?)
    } else {
        None
    };
    if options.use_value_profile && !sources.logs_comparisons() {
        out.line("WARNING: --use-value-profile needs a source server in the cmplog rendering; no comparison is logged");
    }
    let largest_seed = seeds.iter().map(|s| s.data.len()).max().unwrap_or(0);
    let max_len = match &typed {
        Some(typed) => largest_seed.max(typed.max_entry_len()),
        None => explicit_max_len.unwrap_or_else(|| largest_seed.max(crate::DEFAULT_MAX_LEN)),
    };
    let target_name = harness.target_name();
    let crashes = CrashStore::open_named(
        &options.artifact_dir,
        options.artifact_naming.clone(),
        &target_name,
        &replay_flags(&harness, sources.style()),
    )?
    .with_findings_dir(options.findings_dir.clone());
    let chosen = choose_grammar(options, &info, &seeds)?;
    let grammar = chosen.grammar;
    let stats = options
        .stats
        .as_deref()
        .map(|path| CampaignStats::open(path, started))
        .transpose()?;
    let grammar_corpus = grammar
        .as_ref()
        .map(|g| GrammarCorpus::new(g, &options.fragments, options.lexicon, options.fusion))
        .transpose()?;
    Ok(Parts {
        started,
        harness,
        sources: given.sources,
        stop,
        first,
        info,
        options: given.options,
        interrupted: given.interrupted,
        out: given.out,
        dictionary,
        dir,
        seeds,
        auto_dictionary,
        max_len,
        target_name,
        crashes,
        grammar,
        grammar_note: chosen.note,
        stats,
        grammar_corpus,
        typed,
    })
}

/// Starts the first harness, which stops for Ctrl-C and --max-time, and
/// reports what loading the target said.
fn start_target(
    given: &Given<'_>,
    started: Instant,
) -> Result<(Arc<HarnessConfig>, StopWhen, Executor, TargetInfo), EngineError> {
    let Given {
        sources,
        options,
        interrupted,
        out,
        ..
    } = given;
    let harness = Arc::new(HarnessConfig {
        dedup_traces: true,
        ..(*given.harness).clone()
    });
    // A batch in flight stops for Ctrl-C and --max-time too, not only between batches.
    let stop = StopWhen {
        flag: Some(Arc::clone(interrupted)),
        deadline: options.max_time.map(|max| started + max),
    };
    let mut first = Executor::new(Arc::clone(&harness), Arc::clone(sources));
    first.stop_when(stop.clone());
    let info = first.start()?.clone();
    report_target(out, &info, &harness);
    Ok((harness, stop, first, info))
}

/// The corpus directory given, else a new temporary one.
fn corpus_dir_or_temporary(
    corpus_dir: Option<&Path>,
    out: &Output,
) -> Result<PathBuf, EngineError> {
    Ok(match corpus_dir {
        Some(dir) => dir.to_path_buf(),
        None => {
            let temporary = tempfile::Builder::new()
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
            temporary
        }
    })
}

/// The corpus directory's files, then those of each --seed-dir.
fn load_seeds(
    dir: &mut CorpusDir,
    options: &FuzzOptions,
    explicit_max_len: Option<usize>,
    out: &Output,
) -> Result<Vec<CorpusFile>, EngineError> {
    let read_limit = explicit_max_len.unwrap_or(MAX_SEED_BYTES);
    dir.set_read_limit(read_limit);
    let loaded = dir.load_all()?;
    report_load(out, &loaded, explicit_max_len);
    let mut seeds = loaded.files;
    for extra in &options.seed_dirs {
        let mut extra = CorpusDir::open(extra)?;
        extra.set_read_limit(read_limit);
        let loaded = extra.load_all()?;
        report_load(out, &loaded, explicit_max_len);
        seeds.extend(loaded.files);
    }
    Ok(seeds)
}

/// The opening lines: the campaign's settings and its seeds.
fn announce(parts: &Parts) {
    let Parts { options, out, .. } = parts;
    let seeds = &parts.seeds;
    out.campaign(CampaignEvent::Opening(&Opening {
        seed: options.seed,
        target: &parts.target_name,
        php_version: &parts.info.php_version,
        timeout_secs: parts.harness.timeout.as_secs_f64(),
        adaptive_timeout: parts.options.adaptive_timeout,
        rss_limit_mb: parts.harness.rss_limit_mb,
        corpus_dir: parts.dir.root(),
        seed_files: seeds.len(),
        seed_bytes: seeds.iter().map(|s| s.data.len()).sum(),
        smallest_seed: seeds.iter().map(|s| s.data.len()).min().unwrap_or(0),
        largest_seed: seeds.iter().map(|s| s.data.len()).max().unwrap_or(0),
        artifact_dir: parts.crashes.artifact_dir(),
        dictionary_entries: parts.dictionary.len(),
        max_len: parts.max_len,
        jobs: options.jobs,
        coverage: parts.sources.coverage(),
        engine_rss_mb: own_rss_mb(),
    }));
    out.status(&detectors_line(&parts.info));
    out.status(&sandbox_line(&parts.info));
    if let Some(typed) = &parts.typed {
        out.status(&format!(
            "INFO: typed arguments: {} takes {} arguments; each input is a `php-fuzz arguments v1` entry, mutated one argument at a time (docs/autofuzz.md)",
            typed.callee(),
            typed.parameters()
        ));
    }
    if let Some(note) = &parts.grammar_note {
        out.status(note);
    }
    if let Some(note) = parts.crashes.copies_note() {
        out.status(&note);
    }
    if let Some(auto) = &parts.auto_dictionary {
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
}

/// One comparison feedback per worker, each with its own tracer harness;
/// `None`s with `--no-cmp`.
fn cmp_feedbacks(parts: &Parts) -> Vec<Option<CmpFeedback>> {
    let Parts {
        options,
        harness,
        sources,
        stop,
        ..
    } = parts;
    let jobs = options.jobs.max(1);
    let setup = options.cmp.then(|| TracerSetup {
        config: Arc::new(HarnessConfig {
            dedup_traces: false,
            forward_output: false,
            ..(**harness).clone()
        }),
        sources: Arc::new(
            SourceServer::with_cmplog(sources.style())
                .with_coverage(sources.coverage())
                .with_hooks(sources.hooks()),
        ),
        stop: stop.clone(),
    });
    (0..jobs)
        .map(|worker| {
            let (worker, jobs) = (worker as u64, jobs as u64);
            let setup = setup.as_ref()?;
            Some(CmpFeedback::new(setup, Arc::clone(sources), worker, jobs))
        })
        .collect()
}

/// Puts the parts behind the lock and the atomics the workers share.
fn share(parts: Parts, feedbacks: Vec<Option<CmpFeedback>>) -> Campaign {
    let length = LengthControl::new(parts.max_len, parts.options.len_control_factor);
    let mut corpus = Corpus::new();
    if let Some(entropic) = parts.options.entropic {
        corpus.enable_entropic(entropic);
    }
    if parts.options.scale_per_exec_time {
        corpus.scale_per_exec_time();
    }
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            corpus,
            corpus_dir: parts.dir,
            features: FeatureSet::new(),
            seen: FingerprintCache::new(FINGERPRINT_CACHE_BITS),
            crashes: parts.crashes,
            length,
            max_len: parts.max_len,
            auto_dictionary: parts.auto_dictionary,
            cmp: CmpSummary::default(),
            stop: None,
            error: None,
            last_status: Instant::now(),
            last_status_runs: 0,
            new_units: 0,
            grammar: parts.grammar_corpus,
            mix: None,
        }),
        harness: std::sync::RwLock::new(Arc::clone(&parts.harness)),
        confirmer: Mutex::new(None),
        hang_checks: Mutex::new(None),
        sources: Arc::clone(&parts.sources),
        runs: AtomicU64::new(0),
        interrupted: parts.interrupted,
        stop: parts.stop.clone(),
        options: parts.options,
        out: parts.out,
        started: parts.started,
        harness_rss: AtomicU64::new(0),
        harness_starts: AtomicU64::new(0),
        harness_forks: AtomicU64::new(0),
        known_hang_stops: AtomicU64::new(0),
        memory_restarts: AtomicU64::new(0),
        harness_peak_rss: AtomicU64::new(0),
        dictionary: parts.dictionary,
        reloaded: Mutex::new(Vec::new()),
        grammar: parts.grammar,
        custom: parts.info.custom.any().then(|| CustomSetup {
            hooks: parts.info.custom,
            harness: Arc::clone(&parts.harness),
            sources: Arc::clone(&parts.sources),
        }),
        stats: parts.stats.map(Mutex::new),
        typed: parts.typed,
    });
    Campaign {
        shared,
        first: parts.first,
        seeds: parts.seeds,
        feedbacks,
    }
}

/// Starts the statistics file and says whether a custom mutator is on.
fn announce_shared(shared: &Shared, target_name: &str) {
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
            target_name,
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
}

/// Corpus entries skipped or cut while loading, said once.
pub(super) fn report_load(out: &Output, loaded: &Loaded, max_len: Option<usize>) {
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

/// `INFO: sandbox: …` with the layers of the wall that hold, or a one-line
/// `WARNING: sandbox: …` naming those the machine refused (docs/sandbox.md).
pub fn sandbox_line(info: &TargetInfo) -> String {
    let layers = &info.sandbox;
    if layers.mode == php_fuzz_harness::SandboxMode::Off {
        let why = if info.writable.is_empty() {
            "--allow-side-effects"
        } else {
            "PHP_FUZZ_NO_WALL: the hooks alone refuse side effects"
        };
        return format!("INFO: sandbox: off ({why})");
    }
    let level = if layers.full() { "INFO" } else { "WARNING" };
    format!("{level}: sandbox: {}", layers.describe())
}

/// `INFO: detectors: …; side effects: …` (docs/detectors.md).
fn detectors_line(info: &TargetInfo) -> String {
    let detectors = match info.detectors {
        set if set.is_empty() => "none".to_string(),
        set if set == DetectorSet::ALL => "all".to_string(),
        set => set.names().join(", "),
    };
    let side_effects = if info.writable.is_empty() {
        "allowed (--allow-side-effects)".to_string()
    } else {
        let folders: Vec<String> = info
            .writable
            .iter()
            .map(|w| w.display().to_string())
            .collect();
        format!(
            "refused (no process, no connection, writes only in {})",
            folders.join(", ")
        )
    };
    format!("INFO: detectors: {detectors}; side effects: {side_effects}")
}

//! Running the scan's campaigns: a harness file per entry point, and
//! `--jobs` threads that each take the plan's next slice and fuzz it as
//! `php-fuzz fuzz` would, resuming the entry point's corpus, until the
//! budget is spent or Ctrl-C.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use php_fuzz_engine::{FuzzOptions, FuzzSummary, Output, fuzz};

use super::plan::{MIN_SLICE, Planner, Slice};
use super::{EntryPoint, Scan, file_stem};
use crate::harness_args::DEFAULT_COVERAGE;

/// The share of `--max-time` kept for the coverage report at the end.
const REPORT_SHARE: f64 = 0.1;
/// ...and at most this many seconds of it.
const MAX_REPORT_SECONDS: f64 = 30.0;

/// What fuzzing one entry point came to, over its slices.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub slices: u32,
    pub seconds: f64,
    pub runs: u64,
    pub edges: usize,
    pub features: usize,
    pub corpus_entries: usize,
    pub rejected_calls: u64,
    /// Why its campaign could not run, if it could not.
    pub error: Option<String>,
}

/// The files of one entry point under OUT.
pub struct Paths {
    pub harness: PathBuf,
    pub corpus: PathBuf,
}

pub fn paths(scan: &Scan<'_>, entry: &EntryPoint) -> Paths {
    let stem = file_stem(entry);
    Paths {
        harness: scan.out.join("harnesses").join(format!("{stem}.php")),
        corpus: scan.out.join("corpus").join(stem),
    }
}

/// The raw findings of every campaign, before deduplication.
pub fn artifacts(scan: &Scan<'_>) -> PathBuf {
    scan.out.join("artifacts")
}

/// Fuzzes the entry points within the budget; one outcome per entry point.
pub fn fuzz_entry_points(
    scan: &Scan<'_>,
    entries: &[EntryPoint],
    interrupted: &Arc<AtomicBool>,
) -> anyhow::Result<Vec<Outcome>> {
    for entry in entries {
        write_harness(scan, entry)?;
    }
    let budget = fuzzing_budget(scan.args.max_time);
    let scores: Vec<f64> = entries.iter().map(|e| e.score).collect();
    let planner = Mutex::new(Planner::new(&scores, budget));
    let outcomes = Mutex::new(vec![Outcome::default(); entries.len()]);
    std::thread::scope(|threads| {
        for _ in 0..scan.args.jobs {
            threads.spawn(|| worker(scan, entries, &planner, &outcomes, budget, interrupted));
        }
    });
    Ok(outcomes.into_inner().unwrap_or_else(|p| p.into_inner()))
}

/// The time for campaigns: `--max-time` less what the report needs.
fn fuzzing_budget(max_time: f64) -> f64 {
    max_time - (max_time * REPORT_SHARE).min(MAX_REPORT_SECONDS)
}

fn worker(
    scan: &Scan<'_>,
    entries: &[EntryPoint],
    planner: &Mutex<Planner>,
    outcomes: &Mutex<Vec<Outcome>>,
    budget: f64,
    interrupted: &Arc<AtomicBool>,
) {
    loop {
        if interrupted.load(Ordering::Relaxed) {
            return;
        }
        let left = budget - scan.started.elapsed().as_secs_f64();
        let slice = lock(planner).next(left);
        let Some(slice) = slice else {
            if left < MIN_SLICE {
                return;
            }
            // Every entry point is running on another thread.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        let began = Instant::now();
        let result = run_slice(scan, &entries[slice.entry], slice, interrupted);
        let seconds = began.elapsed().as_secs_f64();
        let mut outcomes = lock(outcomes);
        let outcome = &mut outcomes[slice.entry];
        outcome.slices += 1;
        outcome.seconds += seconds;
        match result {
            Ok(summary) => {
                report_slice(scan, &entries[slice.entry], &summary, seconds);
                absorb(outcome, &summary);
                lock(planner).finish(slice.entry, seconds, summary.new_units);
            }
            Err(err) => {
                eprintln!(
                    "WARNING: scan: {} cannot be fuzzed: {err:#}",
                    entries[slice.entry].callee
                );
                outcome.error = Some(format!("{err:#}"));
                lock(planner).retire(slice.entry);
            }
        }
    }
}

fn absorb(outcome: &mut Outcome, summary: &FuzzSummary) {
    outcome.runs += summary.runs;
    outcome.edges = summary.edges;
    outcome.features = summary.features;
    outcome.corpus_entries = summary.corpus_entries;
    outcome.rejected_calls += summary.rejected_calls.unwrap_or(0);
}

fn report_slice(scan: &Scan<'_>, entry: &EntryPoint, summary: &FuzzSummary, seconds: f64) {
    eprintln!(
        "scan [{:.0} s] #{} {}: {:.1} s, {} runs, cov: {} ft: {}, +{} corpus entries, {} crashes",
        scan.started.elapsed().as_secs_f64(),
        entry.rank,
        entry.callee,
        seconds,
        summary.runs,
        summary.edges,
        summary.features,
        summary.new_units,
        summary.crashes.len()
    );
}

/// One slice: `php-fuzz fuzz HARNESS CORPUS --max-time SECONDS`, quiet.
fn run_slice(
    scan: &Scan<'_>,
    entry: &EntryPoint,
    slice: Slice,
    interrupted: &Arc<AtomicBool>,
) -> anyhow::Result<FuzzSummary> {
    let paths = paths(scan, entry);
    let harness = &scan.args.harness;
    let mut session = harness.session_with(&paths.harness, DEFAULT_COVERAGE.mode())?;
    {
        // Findings name the entry point as `autofuzz` does, so their
        // reproduce commands replay it by name.
        let config = Arc::make_mut(&mut session.config);
        config.display_name = Some(entry.callee.clone());
        config.name_flags = format!(
            " --autoload {}",
            php_fuzz_engine::shell_quote(&scan.autoload.display().to_string())
        );
    }
    let adaptive_timeout = harness.timeout.is_none();
    if adaptive_timeout {
        session.time_seeds_for_adaptive_timeout();
    }
    let options = FuzzOptions {
        seed: scan.seed.wrapping_add(u64::from(entry.rank) * 7919),
        max_time: Some(Duration::from_secs_f64(slice.seconds)),
        artifact_dir: artifacts(scan),
        stats: Some(php_fuzz_storage::default_stats_path(&paths.corpus)),
        adaptive_timeout,
        ..FuzzOptions::default()
    };
    let out = Arc::new(Output::new(true));
    fuzz(
        session.config,
        session.sources,
        Some(&paths.corpus),
        options,
        Arc::clone(interrupted),
        out,
    )
    .with_context(|| format!("the campaign of {}", entry.callee))
}

/// OUT/harnesses/NNN-name.php: a php-fuzzer target file that `fuzz` and
/// `run-single` take, as `autofuzz` writes it.
fn write_harness(scan: &Scan<'_>, entry: &EntryPoint) -> anyhow::Result<()> {
    let paths = paths(scan, entry);
    let folder = paths.harness.parent().expect("OUT/harnesses");
    std::fs::create_dir_all(folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    // A function's file, which no autoloader loads, is loaded by hand (the
    // probe found the function there); a class's file is the autoloader's.
    let file = PathBuf::from(&entry.file);
    let includes: Vec<&std::path::Path> = match entry.kind.as_str() {
        "function" => vec![file.as_path()],
        _ => Vec::new(),
    };
    let source = crate::callee_target::target_source_with(
        &entry.callee,
        &scan.autoload,
        &includes,
        &scan.args.harness.allowed_exceptions,
    );
    std::fs::write(&paths.harness, source)
        .with_context(|| format!("cannot write {}", paths.harness.display()))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

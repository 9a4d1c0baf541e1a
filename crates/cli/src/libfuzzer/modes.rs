//! libFuzzer's modes on php-fuzz's engine: fuzzing, running given files,
//! merging, minimizing a crash.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use php_fuzz_engine::{
    EngineError, FuzzOptions, LibFuzzerVoice, MergeEvent, MinimizeOptions, Output, ReportContext,
    Voice, fuzz as run_campaign, libfuzzer_crash_report as crash_report, merge as merge_corpus,
    minimize, replay,
};
use php_fuzz_harness::{Crash, Executor};
use php_fuzz_storage::ArtifactNaming;

use super::Context;
use super::report::{FinalStats, loaded_line};

/// Fuzzes: the first directory gets new inputs, the others are seeds too.
pub(super) fn fuzz(cx: &Context<'_>, dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let flags = cx.flags;
    let mut session = cx.harness.session_with(cx.target, cx.coverage)?;
    let use_value_profile = flags.use_value_profile > 0;
    if use_value_profile {
        session.log_comparisons();
    }
    // libFuzzer without a corpus directory keeps its corpus in memory.
    let scratch_corpus;
    let (corpus, seed_dirs) = match dirs.split_first() {
        Some((first, rest)) => (first.clone(), rest.to_vec()),
        None => {
            scratch_corpus = tempfile::Builder::new()
                .prefix("php-fuzz-corpus-")
                .tempdir()
                .context("cannot create a temporary corpus directory")?;
            (scratch_corpus.path().to_path_buf(), Vec::new())
        }
    };
    let jobs = parallel_processes(flags);
    if jobs > 1 {
        eprintln!("Running {jobs} workers");
    }
    let seed = match flags.seed {
        0 => rand::random::<u32>() as u64,
        seed => seed as u64,
    };
    let prefix = cx.artifact_prefix();
    let options = FuzzOptions {
        max_len: (flags.max_len > 0).then_some(flags.max_len as usize),
        len_control_factor: flags.len_control.clamp(0, u32::MAX as i64) as u32,
        seed,
        max_runs: (flags.runs >= 0).then_some(flags.runs as u64),
        max_time: (flags.max_total_time > 0)
            .then(|| Duration::from_secs(flags.max_total_time as u64)),
        // libFuzzer stops at the first crash.
        max_crashes: Some(1),
        jobs,
        dictionaries: flags.dict.iter().map(PathBuf::from).collect(),
        artifact_naming: ArtifactNaming::LibFuzzer {
            prefix: prefix.clone(),
            exact: flags.exact_artifact_path.as_ref().map(PathBuf::from),
        },
        seed_dirs,
        use_value_profile,
        entropic: (flags.entropic > 0).then_some(php_fuzz_engine::EntropicOptions {
            number_of_rarest_features: flags.entropic_number_of_rarest_features.clamp(1, 1 << 20)
                as usize,
            feature_frequency_threshold: flags
                .entropic_feature_frequency_threshold
                .clamp(1, i64::from(u16::MAX)) as u16,
            scale_per_exec_time: flags.entropic_scale_per_exec_time > 0,
        }),
        adaptive_timeout: cx.harness.timeout.is_none(),
        ..FuzzOptions::default()
    };
    if options.adaptive_timeout {
        session.time_seeds_for_adaptive_timeout();
    }
    let out = Arc::new(Output::with_voice(Voice::LibFuzzer(LibFuzzerVoice {
        artifact_prefix: prefix,
        rss_limit_mb: session.config.rss_limit_mb,
        max_len_given: flags.max_len > 0,
        quiet: flags.verbosity == 0,
    })));
    let started = Instant::now();
    let sources = Arc::clone(&session.sources);
    let result = run_campaign(
        session.config,
        session.sources,
        Some(&corpus),
        options,
        Arc::clone(&cx.signals.stop),
        out,
    );
    let summary = match result {
        Ok(summary) => summary,
        Err(EngineError::Dictionary(php_fuzz_engine::DictionaryError::Syntax { line, .. })) => {
            eprintln!("ParseDictionaryFile: error in line {line}");
            return Ok(ExitCode::from(1));
        }
        Err(err) => return Err(err.into()),
    };
    eprintln!("{}", loaded_line(&sources.files()));
    let secs = started.elapsed().as_secs_f64();
    let stats = FinalStats {
        runs: summary.runs,
        exec_per_sec: (summary.runs as f64 / secs.max(1e-3)) as u64,
        new_units: summary.new_units,
        slowest_unit_secs: 0,
        peak_rss_mb: summary.engine_peak_rss_mb.max(summary.harness_peak_rss_mb),
    };
    // libFuzzer stops at the first crash: the only new one.
    if let Some(kind) = summary.crashes.iter().find(|c| c.new).map(|c| c.kind) {
        cx.print_stats(&stats);
        return Ok(cx.exit_code(kind));
    }
    if let Some(code) = cx.stopped_by_signal(&stats) {
        return Ok(code);
    }
    eprintln!(
        "Done {} runs in {} second(s)",
        summary.runs,
        summary.elapsed.as_secs()
    );
    cx.print_stats(&stats);
    Ok(ExitCode::SUCCESS)
}

/// libFuzzer's parallelism: `-fork=N`, or `-jobs=N` on `-workers=W`
/// processes (min(jobs, cores / 2) if not given), as workers of one campaign.
fn parallel_processes(flags: &super::flags::Flags) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as i64;
    let n = if flags.fork > 0 {
        flags.fork
    } else if flags.jobs > 0 && flags.workers > 0 {
        flags.workers
    } else if flags.jobs > 0 {
        flags.jobs.min(cores / 2)
    } else {
        1
    };
    n.clamp(1, 1024) as usize
}

/// Runs each file `-runs` times (at least once): `Running:` / `Executed`;
/// the first crash is reported and ends the run, as in libFuzzer.
pub(super) fn reproduce(cx: &Context<'_>, files: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let session = cx.harness.session(cx.target)?;
    let rss_limit_mb = session.config.rss_limit_mb;
    let mut executor = Executor::new(session.config, Arc::clone(&session.sources));
    executor.start()?;
    let runs = cx.flags.runs.max(1) as usize;
    eprintln!(
        "{}: Running {} inputs {runs} time(s) each.",
        cx.target.display(),
        files.len()
    );
    let started = Instant::now();
    let mut total_runs = 0u64;
    for file in files {
        eprintln!("Running: {}", file.display());
        let file_started = Instant::now();
        let mut done = 0;
        // One run alone first: a hang then costs one timeout, not a batch of them.
        let mut chunk = 1;
        while done < runs {
            let n = chunk.min(runs - done);
            let paths = vec![file.clone(); n];
            let mut crash: Option<Crash> = None;
            replay(&mut executor, &paths, false, |r| {
                if crash.is_none() {
                    crash = r.crash;
                }
            })?;
            total_runs += n as u64;
            done += n;
            chunk = 16;
            if let Some(crash) = crash {
                let context = ReportContext {
                    pid: std::process::id(),
                    artifact: None,
                    timeout_secs: cx.timeout_secs(),
                    rss_limit_mb,
                };
                eprintln!("{}", crash_report(&crash, &context));
                return Ok(cx.exit_code(crash.kind));
            }
            if cx.signals.stop.load(std::sync::atomic::Ordering::SeqCst) {
                let stats = stats_of(total_runs, started, &executor);
                return Ok(cx.stopped_by_signal(&stats).unwrap_or(ExitCode::SUCCESS));
            }
        }
        eprintln!(
            "Executed {} in {} ms",
            file.display(),
            file_started.elapsed().as_millis()
        );
    }
    executor.shutdown();
    eprintln!(
        "***\n*** NOTE: fuzzing was not performed, you have only\n\
         ***       executed the target code on a fixed set of inputs.\n***"
    );
    cx.print_stats(&stats_of(total_runs, started, &executor));
    Ok(ExitCode::SUCCESS)
}

fn stats_of(runs: u64, started: Instant, executor: &Executor) -> FinalStats {
    FinalStats {
        runs,
        exec_per_sec: (runs as f64 / started.elapsed().as_secs_f64().max(1e-3)) as u64,
        new_units: 0,
        slowest_unit_secs: 0,
        peak_rss_mb: executor
            .stats()
            .peak_rss_mb
            .max(php_fuzz_harness::own_peak_rss_mb()),
    }
}

/// `-merge=1 OUT IN...`: what the IN directories add, into OUT.
pub(super) fn merge(cx: &Context<'_>, dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let Some((out, ins)) = dirs.split_first().filter(|(_, ins)| !ins.is_empty()) else {
        eprintln!("INFO: Merge requires two or more corpus dirs");
        return Ok(ExitCode::SUCCESS);
    };
    let session = cx.harness.session_with(cx.target, cx.coverage)?;
    let mut executor = Executor::new(session.config, Arc::clone(&session.sources));
    executor.start()?;
    let control = cx.flags.merge_control_file.as_ref().map(PathBuf::from);
    let started = Instant::now();
    let mut last_pulse = Instant::now();
    let outcome = merge_corpus(
        &mut executor,
        out,
        ins,
        control.as_deref(),
        &cx.signals.stop,
        |event| match event {
            MergeEvent::Resumed { done, total } => eprintln!(
                "MERGE-OUTER: control file ok, {total} files total, first not processed file {done}"
            ),
            MergeEvent::Crashed { input, crash } => eprintln!(
                "MERGE-INNER: '{}' crashes the target and is skipped: {}",
                input.display(),
                crash.headline()
            ),
            MergeEvent::Unreadable { input, error } => eprintln!(
                "MERGE-INNER: '{}' cannot be read and is skipped: {error}",
                input.display()
            ),
            MergeEvent::Kept { .. } | MergeEvent::Duplicate { .. } => {}
            MergeEvent::Progress(p) => {
                if last_pulse.elapsed() >= Duration::from_secs(3) || p.done == p.total {
                    last_pulse = Instant::now();
                    eprintln!(
                        "#{}\tpulse  ft: {} exec/s: {:.0} rss: {}Mb",
                        p.done,
                        p.features,
                        p.done as f64 / p.elapsed.as_secs_f64().max(1e-3),
                        php_fuzz_harness::own_rss_mb()
                    );
                }
            }
        },
    )?;
    let stats = stats_of(
        (outcome.initial + outcome.candidates - outcome.resumed) as u64,
        started,
        &executor,
    );
    executor.shutdown();
    if outcome.interrupted
        && let Some(code) = cx.stopped_by_signal(&stats)
    {
        return Ok(code);
    }
    eprintln!(
        "MERGE-OUTER: {} files, {} in the initial corpus, {} processed earlier",
        outcome.initial + outcome.candidates,
        outcome.initial,
        outcome.resumed
    );
    eprintln!(
        "MERGE-OUTER: {} new files with {} new features added; {} new coverage edges",
        outcome.kept, outcome.new_features, outcome.new_blocks
    );
    Ok(ExitCode::SUCCESS)
}

/// `-minimize_crash=1 FILE`: the smallest input that crashes the same way,
/// written to `-exact_artifact_path` (else `<prefix>minimized-from-<sha1>`).
pub(super) fn minimize_crash(cx: &Context<'_>, files: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let [file] = files else {
        eprintln!("ERROR: -minimize_crash should be given one input file");
        return Ok(ExitCode::from(1));
    };
    let input = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let flags = cx.flags;
    let mut options = MinimizeOptions {
        max_runs: (flags.runs > 0).then_some(flags.runs as u64),
        max_time: (flags.max_total_time > 0)
            .then(|| Duration::from_secs(flags.max_total_time as u64)),
    };
    if options.max_runs.is_none() && options.max_time.is_none() {
        eprintln!(
            "INFO: you need to specify -runs=N or -max_total_time=N with -minimize_crash=1\n\
             INFO: defaulting to -max_total_time=600"
        );
        options.max_time = Some(Duration::from_secs(600));
    }
    let session = cx.harness.session(cx.target)?;
    let mut executor = Executor::new(session.config, Arc::clone(&session.sources));
    executor.start()?;
    eprintln!(
        "CRASH_MIN: minimizing crash input: '{}' ({} bytes)",
        file.display(),
        input.len()
    );
    let outcome = match minimize(&mut executor, &input, &options, |_, _| {}) {
        Ok(outcome) => outcome,
        Err(EngineError::NotACrash(_)) => {
            eprintln!("ERROR: the input {} did not crash", file.display());
            return Ok(ExitCode::from(1));
        }
        Err(err) => return Err(err.into()),
    };
    executor.shutdown();
    let path = match &flags.exact_artifact_path {
        Some(exact) => PathBuf::from(exact),
        None => PathBuf::from(format!(
            "{}minimized-from-{}",
            cx.artifact_prefix(),
            php_fuzz_storage::content_hash(&input)
        )),
    };
    write_artifact(&path, &outcome.input)?;
    eprintln!(
        "CRASH_MIN: '{}' ({} bytes) caused a crash; minimized to {} bytes in {} runs ({})",
        file.display(),
        input.len(),
        outcome.input.len(),
        outcome.runs,
        outcome.signature
    );
    eprintln!(
        "CRASH_MIN: failed to minimize beyond {} ({} bytes), exiting",
        path.display(),
        outcome.input.len()
    );
    Ok(ExitCode::SUCCESS)
}

fn write_artifact(path: &Path, data: &[u8]) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(path, data).with_context(|| format!("cannot write {}", path.display()))
}

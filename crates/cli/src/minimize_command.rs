use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use php_fuzz_engine::{EntryChecker, MinimizeOptions, TIMEOUT_MARGIN, minimize, preview};
use php_fuzz_harness::Executor;

use crate::harness_args::{HarnessArgs, positive_seconds};
use crate::stdout::Stdout;

/// Arguments of `php-fuzz minimize-crash`.
#[derive(clap::Args, Debug)]
pub struct MinimizeArgs {
    pub target: PathBuf,
    /// A crashing input, e.g. a crash-<sha1>.txt artifact.
    pub input: PathBuf,
    #[command(flatten)]
    pub harness: HarnessArgs,
    /// Stop after this many runs (the best input so far is still written).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_runs: Option<u64>,
    /// Stop after this many seconds (the best input so far is still written).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true, value_parser = positive_seconds)]
    pub max_time: Option<f64>,
    /// Where minimized-<sha1>.txt is written.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub artifact_dir: PathBuf,
}

pub fn run(args: &MinimizeArgs) -> anyhow::Result<ExitCode> {
    let input = std::fs::read(&args.input)
        .with_context(|| format!("cannot read input {}", args.input.display()))?;
    let session = args.harness.session(&args.target)?;
    let mut executor = Executor::new(session.config, Arc::clone(&session.sources));
    let info = executor.start()?;
    if let Some(checker) = EntryChecker::from_ready(info.arguments.as_deref())? {
        checker.check(&args.input, &input)?;
    }
    let options = MinimizeOptions {
        max_runs: args.max_runs,
        max_time: args.max_time.map(Duration::from_secs_f64),
    };
    let started = Instant::now();
    let mut last_print = Instant::now();
    let original = input.len();
    eprintln!("minimizing {} ({original} bytes)", args.input.display());
    let outcome = minimize(&mut executor, &input, &options, |size, runs| {
        if last_print.elapsed() >= Duration::from_millis(500) || size <= 16 {
            last_print = Instant::now();
            eprintln!(
                "  size {size}/{original} bytes after {runs} runs, {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
    })?;
    std::fs::create_dir_all(&args.artifact_dir)
        .with_context(|| format!("cannot create {}", args.artifact_dir.display()))?;
    let path = args.artifact_dir.join(format!(
        "minimized-{}.txt",
        php_fuzz_storage::content_hash(&outcome.input)
    ));
    std::fs::write(&path, &outcome.input)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let status = if outcome.one_minimal && outcome.typed {
        "1-minimal: making any one argument smaller loses the crash"
    } else if outcome.one_minimal {
        "1-minimal: removing or simplifying any single byte loses the crash"
    } else {
        "stopped by a limit before reaching a 1-minimal input"
    };
    let mut stdout = Stdout::lock();
    stdout.line(format_args!(
        "minimized {} -> {} bytes in {} runs, {:.2} s ({status})",
        outcome.original_len,
        outcome.input.len(),
        outcome.runs,
        outcome.elapsed.as_secs_f64()
    ))?;
    stdout.line(format_args!("same crash: {}", outcome.signature))?;
    if let Some(timeout) = outcome.timeout_at {
        stdout.line(format_args!(
            "  every kept input hung past {} s ({TIMEOUT_MARGIN} × --timeout), so the result hangs by a clear margin",
            timeout.as_secs_f64()
        ))?;
    }
    stdout.line(format_args!("  {}", outcome.crash.problem.headline()))?;
    for line in outcome.crash.problem.trace.lines() {
        stdout.line(format_args!("    {line}"))?;
    }
    stdout.line(format_args!("input: {}", preview(&outcome.input, 200)))?;
    stdout.line(format_args!("written to {}", path.display()))?;
    Ok(ExitCode::SUCCESS)
}

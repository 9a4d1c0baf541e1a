use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use php_fuzz_engine::{MergeEvent, merge};
use php_fuzz_harness::Executor;

use crate::harness_args::{CoverageArgs, HarnessArgs};
use crate::stdout::Stdout;

/// Arguments of `php-fuzz merge`.
#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    pub target: PathBuf,
    /// Corpus directory the new inputs go to (created if missing); its own inputs count first.
    pub out: PathBuf,
    /// Directories whose inputs are kept if they reach coverage OUT does not, smallest first.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub harness: HarnessArgs,
    #[command(flatten)]
    pub coverage: CoverageArgs,
    /// Record progress here; a merge run again with the same file resumes where it stopped.
    #[arg(long, value_name = "FILE")]
    pub control_file: Option<PathBuf>,
}

pub fn run(args: &MergeArgs) -> anyhow::Result<ExitCode> {
    let session = args
        .harness
        .session_with(&args.target, args.coverage.coverage.mode())?;
    let mut executor = Executor::new(session.config, Arc::clone(&session.sources));
    executor.start()?;
    let interrupted = crate::interrupt::install()?;
    let mut stdout = Stdout::lock();
    let mut write_error = None;
    let mut last_progress = Instant::now();
    let outcome = merge(
        &mut executor,
        &args.out,
        &args.inputs,
        args.control_file.as_deref(),
        &interrupted,
        |event| match event {
            MergeEvent::Resumed { done, total } => {
                eprintln!("resuming: {done} of {total} inputs done before");
            }
            MergeEvent::Kept {
                input,
                saved,
                new_features,
            } => {
                let line = format!(
                    "kept {} as {} (+{new_features} features)",
                    input.display(),
                    saved.display()
                );
                if let Err(err) = stdout.line(line) {
                    write_error.get_or_insert(err);
                }
            }
            MergeEvent::Crashed { input, crash } => {
                eprintln!("skipped {}: {}", input.display(), crash.headline());
            }
            MergeEvent::Duplicate { input } => {
                eprintln!(
                    "skipped {}: the same content as an input before it",
                    input.display()
                );
            }
            MergeEvent::Unreadable { input, error } => {
                eprintln!("skipped {}: cannot read it: {error}", input.display());
            }
            MergeEvent::Progress(p) => {
                if last_progress.elapsed() >= Duration::from_secs(3) {
                    last_progress = Instant::now();
                    eprintln!(
                        "{}/{} inputs, {} features, {:.1} s",
                        p.done,
                        p.total,
                        p.features,
                        p.elapsed.as_secs_f64()
                    );
                }
            }
        },
    )?;
    executor.shutdown();
    if let Some(err) = write_error {
        return Err(err);
    }
    stdout.line(format_args!(
        "== merged {} inputs into {} ({} there before): kept {}, {} new features, {} new edges; {} crashed and were skipped, {} duplicates{}",
        outcome.candidates,
        args.out.display(),
        outcome.initial,
        outcome.kept,
        outcome.new_features,
        outcome.new_edges,
        outcome.crashed,
        outcome.duplicates,
        if outcome.interrupted {
            "; interrupted: run it again with the same --control-file to go on"
        } else {
            ""
        }
    ))?;
    Ok(ExitCode::SUCCESS)
}

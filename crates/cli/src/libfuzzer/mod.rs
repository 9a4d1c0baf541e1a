//! `php-fuzz libfuzzer TARGET.php [libFuzzer arguments…]`: the target run as
//! a libFuzzer binary would run, so ClusterFuzzLite, OSS-Fuzz and scripts
//! written for libFuzzer can drive it (see docs/ci.md).
//!
//! The modes are libFuzzer's: fuzz the corpus directories, run the given
//! files (reproduce), `-merge=1`, `-minimize_crash=1`. Each drives the same
//! engine as the php-fuzz commands; only the words differ (the engine's
//! libFuzzer voice words a campaign, `report.rs` the rest), and the flags
//! come from one table (`flags.rs`).

mod flags;
mod modes;
mod report;
mod signals;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use php_fuzz_harness::CrashKind;

use crate::harness_args::{CoverageArgs, HarnessArgs};
use php_fuzz_instrument::Coverage;

/// Arguments of `php-fuzz libfuzzer`.
#[derive(clap::Args, Debug)]
pub struct LibFuzzerArgs {
    #[command(flatten)]
    pub harness: HarnessArgs,
    #[command(flatten)]
    pub coverage: CoverageArgs,
    /// The target file (php-fuzzer format: calls $config->setTarget()).
    pub target: PathBuf,
    /// libFuzzer's arguments: -flag=value anywhere, then corpus directories
    /// (the first gets new inputs) or input files to run; -help=1 lists the flags.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "LIBFUZZER ARGS"
    )]
    pub args: Vec<OsString>,
}

pub fn run(args: &LibFuzzerArgs) -> anyhow::Result<ExitCode> {
    let parsed = flags::parse(&args.args);
    for message in &parsed.messages {
        eprintln!("{message}");
    }
    let flags = &parsed.flags;
    if flags.help != 0 {
        print!("{}", flags::help(&args.target.display().to_string()));
        return Ok(ExitCode::SUCCESS);
    }
    for name in &parsed.accepted {
        eprintln!("INFO: -{name} is accepted and has no effect in php-fuzz");
    }
    let context = Context::new(args, flags)?;
    let inputs: Vec<PathBuf> = parsed.inputs.iter().map(PathBuf::from).collect();
    let all_files = !inputs.is_empty() && inputs.iter().all(|p| p.is_file());
    if flags.minimize_crash != 0 {
        return modes::minimize_crash(&context, &inputs);
    }
    if all_files {
        return modes::reproduce(&context, &inputs);
    }
    if let Some(file) = inputs.iter().find(|p| p.is_file()) {
        eprintln!(
            "ERROR: {} is a file: give only files (to run them) or only corpus directories",
            file.display()
        );
        return Ok(ExitCode::from(1));
    }
    for dir in &inputs {
        if let Some(code) = context.check_dir(dir) {
            return Ok(code);
        }
    }
    if flags.merge != 0 {
        return modes::merge(&context, &inputs);
    }
    modes::fuzz(&context, &inputs)
}

/// What every mode needs: the target's harness options with libFuzzer's
/// flags applied, and the flags.
struct Context<'a> {
    harness: HarnessArgs,
    /// For fuzzing and merging; reproducing and minimizing record every block.
    coverage: Coverage,
    target: &'a Path,
    flags: &'a flags::Flags,
    signals: signals::StopSignals,
}

impl<'a> Context<'a> {
    fn new(args: &'a LibFuzzerArgs, flags: &'a flags::Flags) -> anyhow::Result<Context<'a>> {
        let mut harness = args.harness.clone();
        match flags.timeout {
            // libFuzzer: 0 is no timeout; a day is as good.
            Some(secs) if secs <= 0 => harness.timeout = Some(86_400.0),
            Some(secs) => harness.timeout = Some(secs as f64),
            None => {}
        }
        match flags.rss_limit_mb {
            Some(mb) if mb <= 0 => harness.rss_limit_mb = 1 << 20,
            Some(mb) => harness.rss_limit_mb = mb as u64,
            None => {}
        }
        // libFuzzer: 0 (or none) is the RSS limit.
        harness.malloc_limit_mb = flags
            .malloc_limit_mb
            .filter(|&mb| mb > 0)
            .map(|mb| mb as u64)
            .or(harness.malloc_limit_mb);
        Ok(Context {
            harness,
            coverage: args.coverage.coverage.mode(),
            target: &args.target,
            flags,
            signals: signals::StopSignals::install()?,
        })
    }

    /// libFuzzer's check of a corpus directory: it must exist, unless
    /// `-create_missing_dirs=1` creates it. The exit code if it fails.
    fn check_dir(&self, dir: &Path) -> Option<ExitCode> {
        if dir.is_dir() {
            return None;
        }
        if self.flags.create_missing_dirs != 0 && std::fs::create_dir_all(dir).is_ok() {
            return None;
        }
        eprintln!(
            "ERROR: The required directory \"{}\" does not exist",
            dir.display()
        );
        Some(ExitCode::from(1))
    }

    fn timeout_secs(&self) -> u64 {
        self.harness.timeout_secs().ceil() as u64
    }

    /// `-artifact_prefix`, `./` if not given.
    fn artifact_prefix(&self) -> String {
        self.flags
            .artifact_prefix
            .clone()
            .unwrap_or_else(|| "./".into())
    }

    /// The exit code for a finding of `kind`.
    fn exit_code(&self, kind: CrashKind) -> ExitCode {
        let code = match kind {
            CrashKind::Timeout => self.flags.timeout_exitcode,
            CrashKind::OutOfMemory => 71,
            _ => self.flags.error_exitcode,
        };
        ExitCode::from(code.clamp(0, 255) as u8)
    }

    /// How a run that stopped early ends: libFuzzer's words for a SIGINT
    /// (`-interrupted_exitcode`) or a SIGTERM (exit 0), after the stats.
    fn stopped_by_signal(&self, stats: &report::FinalStats) -> Option<ExitCode> {
        let pid = std::process::id();
        if self.signals.interrupted() {
            eprintln!("=={pid}== libFuzzer: run interrupted; exiting");
            self.print_stats(stats);
            let code = self.flags.interrupted_exitcode.clamp(0, 255) as u8;
            return Some(ExitCode::from(code));
        }
        if self.signals.terminated() {
            eprintln!("INFO: signal received, trying to exit gracefully");
            eprintln!("=={pid}== INFO: libFuzzer: exiting as requested");
            self.print_stats(stats);
            return Some(ExitCode::SUCCESS);
        }
        None
    }

    fn print_stats(&self, stats: &report::FinalStats) {
        if self.flags.print_final_stats != 0 {
            eprintln!("{}", report::final_stats(stats));
        }
    }
}

//! The `php-fuzz` binary: parses the command line and wires the libraries together.

mod arguments_probe;
mod autofuzz_command;
mod callee_target;
mod detectors_command;
mod exit_codes;
mod fuzz_command;
mod fuzz_test_target;
mod grammars_command;
mod harness_args;
mod init_command;
mod init_fuzz_test;
mod instrument_command;
mod interrupt;
mod junit;
mod libfuzzer;
mod merge_command;
mod minimize_command;
mod report_command;
mod report_sarif_command;
mod run_single_command;
mod scan_command;
mod stdout;
mod test_writer;
mod wrapper_command;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "php-fuzz",
    version,
    about = "Coverage-guided fuzzer for PHP libraries"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Fuzz a target: mutate inputs, keep those reaching new coverage, save every distinct crash.
    Fuzz(Box<fuzz_command::FuzzArgs>),
    /// Fuzz a function or method with typed arguments, no target file written: 'App\Parser::parse'.
    Autofuzz(Box<autofuzz_command::AutofuzzArgs>),
    /// Fuzz a whole package with no harness written: rank its entry points and share the time.
    Scan(Box<scan_command::ScanArgs>),
    /// Run inputs (files or directories) once each and report how each ends.
    RunSingle(run_single_command::RunSingleArgs),
    /// Shrink a crashing input while it keeps crashing the same way.
    MinimizeCrash(minimize_command::MinimizeArgs),
    /// Copy into OUT the inputs of IN... that reach coverage OUT's do not, smallest first.
    Merge(merge_command::MergeArgs),
    /// Replay a corpus and write an HTML coverage report, coverage.json and lcov.info.
    ReportCoverage(report_command::ReportArgs),
    /// Write the findings saved in an artifact directory as a SARIF 2.1.0 log (GitHub code scanning).
    ReportSarif(report_sarif_command::ReportSarifArgs),
    /// Run a target as a libFuzzer binary: libFuzzer's flags, modes, output and exit codes.
    Libfuzzer(libfuzzer::LibFuzzerArgs),
    /// Write the shell script ClusterFuzzLite runs as a fuzz target ($OUT/name_fuzzer).
    LibfuzzerWrapper(wrapper_command::WrapperArgs),
    /// Set a composer project up for fuzzing: target template, corpus, dictionary, `composer fuzz`, CI workflow.
    Init(init_command::InitArgs),
    /// Print a PHP file instrumented, or mirror whole trees instrumented into --out.
    Instrument(instrument_command::InstrumentArgs),
    /// List the grammars `fuzz --grammar` and `$config->setGrammar()` take.
    Grammars(grammars_command::GrammarsArgs),
    /// List the bug detectors: each one's sinks, what it reports and its canary.
    Detectors(detectors_command::DetectorsArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Fuzz(args) => fuzz_command::run(args),
        Command::Autofuzz(args) => autofuzz_command::run(args),
        Command::Scan(args) => scan_command::run(args),
        Command::RunSingle(args) => run_single_command::run(args),
        Command::MinimizeCrash(args) => minimize_command::run(args),
        Command::ReportCoverage(args) => report_command::run(args),
        Command::ReportSarif(args) => report_sarif_command::run(args),
        Command::Merge(args) => merge_command::run(args),
        Command::Init(args) => init_command::run(args),
        Command::Instrument(args) => instrument_command::run(args),
        Command::Grammars(args) => grammars_command::run(args),
        Command::Detectors(args) => detectors_command::run(args),
        Command::Libfuzzer(args) => libfuzzer::run(args),
        Command::LibfuzzerWrapper(args) => wrapper_command::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err)
            if err
                .downcast_ref::<fuzz_test_target::ChooseMethod>()
                .is_some() =>
        {
            eprintln!("php-fuzz: {err}");
            ExitCode::from(exit_codes::USAGE)
        }
        Err(err) => {
            eprintln!("php-fuzz: error: {}", error_text(&err));
            if let Some(failure) = load_failure(&err) {
                // Where in the target (or what it loads) it went wrong.
                let problem = failure.problem.as_ref();
                for line in problem
                    .map(|p| p.trace.lines().skip(1).collect::<Vec<_>>())
                    .unwrap_or_default()
                {
                    eprintln!("    {line}");
                }
                if problem.is_none() {
                    for line in failure
                        .stderr
                        .lines()
                        .filter(|l| !l.trim().is_empty())
                        .take(10)
                    {
                        eprintln!("    php: {line}");
                    }
                }
            }
            ExitCode::from(exit_codes::ERROR)
        }
    }
}

/// The error and its causes on one line, like `{:#}`, but without a cause
/// that an error's own message already quotes (`StorageError` names its
/// `io::Error`, which is also its source).
fn error_text(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let cause = cause.to_string();
        if text.contains(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    text
}

fn load_failure(err: &anyhow::Error) -> Option<&php_fuzz_harness::LoadFailure> {
    err.chain().find_map(|cause| {
        let harness = cause
            .downcast_ref::<php_fuzz_harness::HarnessError>()
            .or_else(
                || match cause.downcast_ref::<php_fuzz_engine::EngineError>() {
                    Some(php_fuzz_engine::EngineError::Harness(inner)) => Some(inner),
                    _ => None,
                },
            )?;
        match harness {
            php_fuzz_harness::HarnessError::Load(failure) => Some(failure.as_ref()),
            _ => None,
        }
    })
}

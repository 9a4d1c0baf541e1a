//! `php-fuzz report-sarif ARTIFACT_DIR OUT`: the findings saved in an
//! artifact directory as a SARIF 2.1.0 log (docs/sarif.md).

use std::path::PathBuf;
use std::process::ExitCode;

use php_fuzz_report::write_sarif;

use crate::stdout::Stdout;

/// Arguments of `php-fuzz report-sarif`.
#[derive(clap::Args, Debug)]
pub struct ReportSarifArgs {
    /// The directory `fuzz` saved its findings in (its --artifact-dir).
    pub artifact_dir: PathBuf,
    /// The SARIF file to write (replaced if it exists).
    pub out: PathBuf,
    /// The folder file URIs are made relative to (`%SRCROOT%`), usually the
    /// repository's root [default: the current directory].
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub source_root: PathBuf,
}

pub fn run(args: &ReportSarifArgs) -> anyhow::Result<ExitCode> {
    // SarifError names the directory, root or file at fault.
    let summary = write_sarif(&args.artifact_dir, &args.out, &args.source_root)?;
    for skipped in &summary.skipped {
        eprintln!("WARNING: skipped {skipped}");
    }
    let skipped = match summary.skipped.len() {
        0 => String::new(),
        n => format!("; {} skipped", count(n, "unreadable report")),
    };
    Stdout::lock().line(format_args!(
        "{}: {} ({} error, {} warning, {} note) under {}{skipped}",
        summary.out.display(),
        count(summary.results, "result"),
        summary.errors,
        summary.warnings,
        summary.notes,
        count(summary.rules, "rule"),
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// `1 result`, `3 results`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

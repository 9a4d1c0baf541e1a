//! `php-fuzz scan DIR`: fuzz a whole package with no harness written
//! (docs/autofuzz.md). PHP lists and ranks the package's entry points
//! (`arguments-probe.php scan`); each gets a harness file and campaigns in
//! slices of the time budget (`scan/plan.rs`); the findings are
//! deduplicated across entry points by their crash site (`scan/findings.rs`);
//! OUT gets `entry-points.json` and the coverage report (`scan/report.rs`).

mod findings;
mod plan;
mod report;
mod slices;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

use crate::exit_codes;
use crate::harness_args::{HarnessArgs, positive_seconds};

/// Arguments of `php-fuzz scan`.
#[derive(clap::Args, Debug)]
pub struct ScanArgs {
    /// The package's folder: its public functions and methods, read from the files under it, are
    /// the entry points.
    pub dir: PathBuf,
    /// The whole scan's time, in seconds, shared among the entry points by rank and by what each
    /// campaign still finds.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0, value_parser = positive_seconds)]
    pub max_time: f64,
    /// Where the findings, harness files, entry-points.json and report.html go.
    #[arg(long, value_name = "OUT", default_value = "php-fuzz-scan")]
    pub out: PathBuf,
    /// Entry points fuzzed side by side.
    #[arg(short = 'j', long, value_name = "N", default_value_t = 1)]
    pub jobs: usize,
    /// Random seed of the first campaign; the others' follow from it [default: from the clock].
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub harness: HarnessArgs,
}

/// One entry point, as the probe ranked it.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct EntryPoint {
    pub callee: String,
    pub kind: String,
    pub file: String,
    pub line: u32,
    pub parameters: u32,
    pub takes_input: bool,
    pub reach: u64,
    pub name_score: u32,
    pub score: f64,
    pub rank: u32,
}

/// A public function or method the scan leaves out, and why.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Skipped {
    pub callee: String,
    pub file: String,
    pub line: u32,
    pub reason: String,
}

#[derive(Debug, Deserialize)]
struct ProbeAnswer {
    entry_points: Vec<EntryPoint>,
    skipped: Vec<Skipped>,
}

/// What the scan is given, resolved.
pub struct Scan<'a> {
    pub args: &'a ScanArgs,
    pub dir: PathBuf,
    pub autoload: PathBuf,
    pub out: PathBuf,
    pub seed: u64,
    pub started: Instant,
}

pub fn run(args: &ScanArgs) -> anyhow::Result<ExitCode> {
    let interrupted = crate::interrupt::install()?;
    if args.jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let dir = std::fs::canonicalize(&args.dir)
        .with_context(|| format!("cannot read the package folder {}", args.dir.display()))?;
    if !dir.is_dir() {
        bail!(
            "scan takes a package's folder, and {} is a file",
            args.dir.display()
        );
    }
    let autoload = scan_autoload(&dir, args.harness.autoload.as_deref())?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let scan = Scan {
        args,
        out: std::fs::canonicalize(&args.out)?,
        seed: args.seed.unwrap_or_else(|| rand::random::<u32>() as u64),
        started: Instant::now(),
        dir,
        autoload,
    };
    let answer: ProbeAnswer = crate::arguments_probe::run(
        &args.harness,
        &[
            "scan".as_ref(),
            scan.dir.as_os_str(),
            scan.autoload.as_os_str(),
        ],
        &[],
        "scan",
    )?;
    eprintln!(
        "INFO: scan of {}: {} entry points, {} public functions and methods left out (entry-points.json says why); autoload {}; seed {}",
        scan.dir.display(),
        answer.entry_points.len(),
        answer.skipped.len(),
        scan.autoload.display(),
        scan.seed
    );
    if answer.entry_points.is_empty() {
        bail!(
            "{} has no entry point php-fuzz can call: no public function or method whose parameters it can build",
            scan.dir.display()
        );
    }
    let outcomes = slices::fuzz_entry_points(&scan, &answer.entry_points, &interrupted)?;
    let found = findings::collect(&scan, &answer.entry_points)?;
    findings::print(&found);
    let coverage = report::write(&scan, &answer.entry_points, &outcomes, &found)?;
    report::write_entry_points(
        &scan,
        &answer.entry_points,
        &answer.skipped,
        &outcomes,
        &found,
        &coverage,
    )?;
    eprintln!(
        "==== scan done in {:.0} s: {} of {} entry points fuzzed, {} distinct findings; {}",
        scan.started.elapsed().as_secs_f64(),
        outcomes.iter().filter(|o| o.slices > 0).count(),
        answer.entry_points.len(),
        found.len(),
        scan.out.join("report.html").display()
    );
    Ok(exit_codes::for_findings(found.iter().map(|f| f.kind)))
}

/// `--autoload`, else the package's own `autoload.php` (as Debian's
/// packages have), else the nearest `vendor/autoload.php` above the package
/// or the working folder.
fn scan_autoload(dir: &Path, given: Option<&Path>) -> anyhow::Result<PathBuf> {
    if given.is_some() {
        return crate::callee_target::autoload_file(given);
    }
    let own = dir.join("autoload.php");
    if own.is_file() {
        return Ok(own);
    }
    for folder in dir.ancestors() {
        let candidate = folder.join("vendor/autoload.php");
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    crate::callee_target::autoload_file(None).with_context(|| {
        format!(
            "no autoload.php in {} and no vendor/autoload.php above it: name the autoloader with --autoload FILE",
            dir.display()
        )
    })
}

/// A file name for an entry point: its rank and a readable form of its name.
pub fn file_stem(entry: &EntryPoint) -> String {
    let readable: String = entry
        .callee
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("{:03}-{}", entry.rank, readable.trim_matches('-'))
}

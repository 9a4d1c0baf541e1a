use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use php_fuzz_engine::{HitsByBlock, collect_inputs, replay};
use php_fuzz_harness::{Coverage, Executor};
use php_fuzz_report::{BlockCoverage, FileCoverage, ReplayCrash, ReportInput, write_report};

use crate::harness_args::HarnessArgs;
use crate::stdout::Stdout;

/// Arguments of `php-fuzz report-coverage`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    pub target: PathBuf,
    /// Corpus directory (read recursively) or files.
    pub corpus: PathBuf,
    /// Output directory for index.html, per-file pages, coverage.json and lcov.info.
    pub out: PathBuf,
    #[command(flatten)]
    pub harness: HarnessArgs,
}

pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let session = args.harness.session(&args.target)?;
    let files = collect_inputs(std::slice::from_ref(&args.corpus))?;
    let mut executor = Executor::new(session.config.clone(), Arc::clone(&session.sources));
    let load_coverage = executor.start()?.load_coverage.clone();
    let mut hits = HitsByBlock::new();
    // What loading the target ran (top-level code of the included files) counts once.
    hits.add(Coverage {
        style: session.sources.style(),
        earlier: None,
        last: &load_coverage,
    });
    let mut crashes = Vec::new();
    replay(&mut executor, &files, true, |r| {
        match r.crash {
            // A crashing entry is reported and skipped; the others still count.
            Some(crash) => crashes.push(ReplayCrash {
                input: r.path.to_path_buf(),
                kind: crash.kind.name().to_string(),
                summary: crash.problem.headline(),
            }),
            None => {
                if let Some(blocks) = &r.blocks {
                    hits.merge(blocks);
                }
            }
        }
    })?;
    executor.shutdown();
    let replayed = started.elapsed();

    // The newest version of each file, in path order.
    let mut latest: BTreeMap<PathBuf, php_fuzz_harness::SourceFile> = BTreeMap::new();
    for file in session.sources.files() {
        if !file.blocks.is_empty() {
            latest.insert(file.path.clone(), file);
        }
    }
    let report_files = latest
        .into_values()
        .map(|file| FileCoverage {
            path: file.path.clone(),
            source: file.original.to_vec(),
            blocks: file
                .blocks
                .iter()
                .map(|b| BlockCoverage {
                    block: b.clone(),
                    hits: hits.get(b.id),
                })
                .collect(),
        })
        .collect::<Vec<_>>();
    let input = ReportInput {
        target: session.config.target.clone(),
        corpus_dir: args.corpus.clone(),
        corpus_entries: files.len(),
        generated_at: utc_now(),
        files: report_files,
        crashes,
    };
    let summary = write_report(&input, &args.out)
        .with_context(|| format!("cannot write the report to {}", args.out.display()))?;
    for warning in session.sources.take_warnings() {
        eprintln!("WARNING: {warning}");
    }
    let percent = if summary.blocks == 0 {
        0.0
    } else {
        100.0 * summary.covered_blocks as f64 / summary.blocks as f64
    };
    let mut stdout = Stdout::lock();
    stdout.line(format_args!(
        "{} corpus entries replayed in {:.2} s ({} crashed and were skipped); {} files, {}/{} blocks covered ({percent:.1} %)",
        files.len(),
        replayed.as_secs_f64(),
        input.crashes.len(),
        summary.files,
        summary.covered_blocks,
        summary.blocks
    ))?;
    stdout.line(format_args!(
        "report: {} (also coverage.json and lcov.info), {:.2} s in all",
        summary.index.display(),
        started.elapsed().as_secs_f64()
    ))?;
    Ok(ExitCode::SUCCESS)
}

fn utc_now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%d %H:%M UTC")
        .to_string()
}

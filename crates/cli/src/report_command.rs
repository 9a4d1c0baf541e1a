use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use php_fuzz_engine::{HitsByBlock, collect_inputs, replay};
use php_fuzz_harness::{Coverage, Executor, SourceServer};
use php_fuzz_report::{
    BlockCoverage, CampaignHistory, FileCoverage, HistoryCrash, HistoryRestart, HistorySample,
    ReplayCrash, ReportInput, write_report,
};
use php_fuzz_storage::{StatsEvent, StatsLine, default_stats_path, read_stats};

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
    /// The campaign's statistics file, plotted on the index page
    /// [default: CORPUS/.php-fuzz/stats.jsonl when it exists].
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    #[command(flatten)]
    pub harness: HarnessArgs,
}

pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let history = campaign_history(args)?;
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

    let report_files = file_coverage(&session.sources, &hits, |_| true);
    let input = ReportInput {
        target: session.config.target.clone(),
        corpus_dir: args.corpus.clone(),
        corpus_entries: files.len(),
        generated_at: utc_now(),
        files: report_files,
        crashes,
        history,
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

/// The newest version of each file the source server served that `keep`
/// keeps, in path order, with the hits of its blocks.
pub fn file_coverage(
    sources: &SourceServer,
    hits: &HitsByBlock,
    keep: impl Fn(&Path) -> bool,
) -> Vec<FileCoverage> {
    let mut latest: BTreeMap<PathBuf, php_fuzz_harness::SourceFile> = BTreeMap::new();
    for file in sources.files() {
        if !file.blocks.is_empty() && keep(&file.path) {
            latest.insert(file.path.clone(), file);
        }
    }
    latest
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
        .collect()
}

/// The statistics `fuzz` appended, from `--stats` (which must exist) or the
/// corpus directory's default file (if any; none when CORPUS is a file).
fn campaign_history(args: &ReportArgs) -> anyhow::Result<Option<CampaignHistory>> {
    let path = match &args.stats {
        Some(path) => path.clone(),
        None if args.corpus.is_dir() => default_stats_path(&args.corpus),
        None => return Ok(None),
    };
    let lines = read_stats(&path)?;
    if lines.is_none() && args.stats.is_some() {
        anyhow::bail!("statistics file not found: {}", path.display());
    }
    Ok(lines
        .filter(|lines| !lines.is_empty())
        .map(|lines| history_of(path, &lines)))
}

/// The statistics file's lines as the report plots them.
fn history_of(source: PathBuf, lines: &[StatsLine]) -> CampaignHistory {
    let first_session = lines.iter().map(|l| l.session).min().unwrap_or(0);
    let mut history = CampaignHistory {
        source,
        samples: Vec::new(),
        restarts: Vec::new(),
        crashes: Vec::new(),
    };
    for line in lines {
        match &line.event {
            StatsEvent::Start { .. } if line.session != first_session => {
                history.restarts.push(HistoryRestart {
                    session: line.session,
                    elapsed: line.elapsed,
                });
            }
            StatsEvent::Start { .. } => {}
            StatsEvent::Sample(sample) | StatsEvent::End { sample, .. } => {
                history.samples.push(HistorySample {
                    session: line.session,
                    elapsed: line.elapsed,
                    runs: sample.runs,
                    cov: sample.cov,
                    ft: sample.ft,
                    execs_per_sec: sample.execs_per_sec,
                    mix: sample
                        .mix
                        .iter()
                        .flatten()
                        .map(|(group, share)| (group.clone(), *share))
                        .collect(),
                });
            }
            StatsEvent::Crash {
                kind,
                summary,
                artifact,
            } => history.crashes.push(HistoryCrash {
                elapsed: line.elapsed,
                kind: kind.clone(),
                summary: summary.clone(),
                artifact: artifact.clone(),
            }),
        }
    }
    history
}

fn utc_now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%d %H:%M UTC")
        .to_string()
}

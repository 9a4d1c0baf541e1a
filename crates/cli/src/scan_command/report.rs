//! What `scan` leaves in OUT besides the findings: the coverage of the
//! package over every entry point's corpus (OUT/coverage/, the report
//! `report-coverage` writes, block ids shared by one source server), the
//! scan's page OUT/report.html (entry points, their numbers and findings,
//! linking to it), and OUT/entry-points.json.

use std::sync::Arc;

use anyhow::Context;
use php_fuzz_engine::{HitsByBlock, collect_inputs, replay};
use php_fuzz_harness::{Coverage, Executor, SourceServer};
use php_fuzz_instrument::{Coverage as CoverageMode, StubStyle};
use php_fuzz_report::{
    ReportInput, ScanEntryPoint, ScanFinding, ScanPage, write_report, write_scan_page,
};
use serde_json::json;

use super::findings::Finding;
use super::slices::{Outcome, paths};
use super::{EntryPoint, Scan, Skipped};

/// Blocks of the package the corpora reached.
#[derive(Debug, Default)]
pub struct PackageCoverage {
    pub blocks: usize,
    pub covered_blocks: usize,
    /// Entry points whose corpus was not replayed for lack of time.
    pub not_replayed: usize,
}

/// Replays each fuzzed entry point's corpus into one coverage report, then
/// writes the scan's page.
pub fn write(
    scan: &Scan<'_>,
    entries: &[EntryPoint],
    outcomes: &[Outcome],
    found: &[Finding],
) -> anyhow::Result<PackageCoverage> {
    let sources = Arc::new(SourceServer::new(StubStyle::Trace).with_coverage(CoverageMode::Full));
    let mut hits = HitsByBlock::new();
    let mut coverage = PackageCoverage::default();
    let deadline = scan.args.max_time;
    for (entry, outcome) in entries.iter().zip(outcomes) {
        if outcome.slices == 0 || outcome.error.is_some() {
            continue;
        }
        if scan.started.elapsed().as_secs_f64() >= deadline {
            coverage.not_replayed += 1;
            continue;
        }
        if let Err(err) = replay_corpus(scan, entry, &sources, &mut hits) {
            eprintln!(
                "WARNING: scan: the corpus of {} did not replay: {err:#}",
                entry.callee
            );
        }
    }
    // The package's files (under DIR) the replays loaded.
    let files =
        crate::report_command::file_coverage(&sources, &hits, |path| path.starts_with(&scan.dir));
    let input = ReportInput {
        target: scan.dir.clone(),
        corpus_dir: scan.out.join("corpus"),
        corpus_entries: outcomes.iter().map(|o| o.corpus_entries).sum(),
        generated_at: jiff::Timestamp::now()
            .strftime("%Y-%m-%d %H:%M UTC")
            .to_string(),
        files,
        crashes: Vec::new(),
        history: None,
    };
    let summary = write_report(&input, &scan.out.join("coverage"))
        .context("cannot write the scan's coverage report")?;
    coverage.blocks = summary.blocks;
    coverage.covered_blocks = summary.covered_blocks;
    let page = scan_page(
        scan,
        entries,
        outcomes,
        found,
        &coverage,
        &input.generated_at,
    );
    write_scan_page(&page, &scan.out.join("report.html"))
        .context("cannot write the scan's report.html")?;
    Ok(coverage)
}

fn replay_corpus(
    scan: &Scan<'_>,
    entry: &EntryPoint,
    sources: &Arc<SourceServer>,
    hits: &mut HitsByBlock,
) -> anyhow::Result<()> {
    let paths = paths(scan, entry);
    let files = collect_inputs(std::slice::from_ref(&paths.corpus))?;
    let session = scan.args.harness.session(&paths.harness)?;
    let mut executor = Executor::new(session.config, Arc::clone(sources));
    let load = executor.start()?.load_coverage.clone();
    hits.add(Coverage {
        style: sources.style(),
        earlier: None,
        last: &load,
    });
    replay(&mut executor, &files, true, |r| {
        if let (None, Some(blocks)) = (&r.crash, &r.blocks) {
            hits.merge(blocks);
        }
    })?;
    executor.shutdown();
    Ok(())
}

fn scan_page(
    scan: &Scan<'_>,
    entries: &[EntryPoint],
    outcomes: &[Outcome],
    found: &[Finding],
    coverage: &PackageCoverage,
    generated_at: &str,
) -> ScanPage {
    let entry_points = entries
        .iter()
        .zip(outcomes)
        .map(|(entry, outcome)| ScanEntryPoint {
            rank: entry.rank,
            callee: entry.callee.clone(),
            place: format!("{}:{}", relative(scan, &entry.file), entry.line),
            score: entry.score,
            reach: entry.reach,
            seconds: outcome.seconds,
            runs: outcome.runs,
            edges: outcome.edges,
            findings: found
                .iter()
                .filter(|f| f.entry_point == entry.callee)
                .map(|f| f.id)
                .collect(),
            note: outcome.error.clone().unwrap_or_else(|| {
                if outcome.slices == 0 {
                    "not reached within --max-time".into()
                } else {
                    String::new()
                }
            }),
        })
        .collect();
    ScanPage {
        dir: scan.dir.display().to_string(),
        generated_at: generated_at.to_string(),
        seconds: scan.started.elapsed().as_secs_f64(),
        blocks: coverage.blocks,
        covered_blocks: coverage.covered_blocks,
        entry_points,
        findings: found
            .iter()
            .map(|f| ScanFinding {
                id: f.id,
                kind: f.kind.name().to_string(),
                headline: f.headline.clone(),
                place: format!("{}:{}", relative(scan, &f.file), f.line),
                entry_point: f.entry_point.clone(),
                also_via: f.also_via.join(", "),
                input: f
                    .input
                    .strip_prefix(&scan.out)
                    .unwrap_or(&f.input)
                    .display()
                    .to_string(),
                reproduce: f.reproduce.clone(),
            })
            .collect(),
    }
}

/// A file of the package as the page shows it: relative to DIR.
fn relative(scan: &Scan<'_>, file: &str) -> String {
    std::path::Path::new(file)
        .strip_prefix(&scan.dir)
        .map_or_else(|_| file.to_string(), |p| p.display().to_string())
}

/// OUT/entry-points.json: each entry point's rank, runs, coverage and
/// findings, what was left out and why, and the findings.
pub fn write_entry_points(
    scan: &Scan<'_>,
    entries: &[EntryPoint],
    skipped: &[Skipped],
    outcomes: &[Outcome],
    found: &[Finding],
    coverage: &PackageCoverage,
) -> anyhow::Result<()> {
    let fuzzed: Vec<_> = entries
        .iter()
        .zip(outcomes)
        .map(|(entry, outcome)| {
            json!({
                "rank": entry.rank,
                "callee": entry.callee,
                "kind": entry.kind,
                "file": entry.file,
                "line": entry.line,
                "score": entry.score,
                "reach": entry.reach,
                "takes_input": entry.takes_input,
                "harness": paths(scan, entry).harness,
                "slices": outcome.slices,
                "seconds": (outcome.seconds * 10.0).round() / 10.0,
                "runs": outcome.runs,
                "coverage": {"edges": outcome.edges, "features": outcome.features},
                "corpus_entries": outcome.corpus_entries,
                "rejected_calls": outcome.rejected_calls,
                "findings": found.iter().filter(|f| f.entry_point == entry.callee).map(|f| f.id).collect::<Vec<_>>(),
                "error": outcome.error,
            })
        })
        .collect();
    let document = json!({
        "dir": scan.dir,
        "autoload": scan.autoload,
        "max_time": scan.args.max_time,
        "seconds": (scan.started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        "seed": scan.seed,
        "coverage": {"blocks": coverage.blocks, "covered_blocks": coverage.covered_blocks},
        "calls": outcomes.iter().map(|o| o.runs).sum::<u64>(),
        "rejected_calls": outcomes.iter().map(|o| o.rejected_calls).sum::<u64>(),
        "entry_points": fuzzed,
        "skipped": skipped,
        "findings": found,
    });
    let path = scan.out.join("entry-points.json");
    let text = serde_json::to_string_pretty(&document)?;
    php_fuzz_storage::replace_atomically(&path, text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

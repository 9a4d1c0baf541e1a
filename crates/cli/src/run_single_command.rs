use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use php_fuzz_engine::{CrashContext, EntryChecker, collect_inputs, crash_report, replay};
use php_fuzz_harness::Executor;

use crate::exit_codes;
use crate::harness_args::HarnessArgs;
use crate::junit::JunitReport;
use crate::stdout::Stdout;

mod findings;

use findings::{Findings, Placed};

/// Arguments of `php-fuzz run-single`.
#[derive(clap::Args, Debug)]
pub struct RunSingleArgs {
    pub target: PathBuf,
    /// Input files, or directories replayed recursively (regression mode).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub harness: HarnessArgs,
    /// Also list the blocks each input ran: file:line, kind, function, hits.
    #[arg(long)]
    pub trace: bool,
    /// Also write a JUnit XML report, one test case per input.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

pub fn run(args: &RunSingleArgs) -> anyhow::Result<ExitCode> {
    let session = args.harness.session(&args.target)?;
    let files = collect_inputs(&args.inputs)?;
    if files.is_empty() {
        anyhow::bail!(
            "no input files found in {}",
            args.inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut executor = Executor::new(session.config, std::sync::Arc::clone(&session.sources));
    let info = executor.start()?.clone();
    if let Some(checker) = EntryChecker::from_ready(info.arguments.as_deref())? {
        checker.check_files(&files)?;
    }
    for warning in &info.load_warnings {
        eprintln!("WARNING: while loading the target: {}", warning.headline());
    }
    let mut stdout = Stdout::lock();
    let mut kinds: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut found = Vec::new();
    let mut findings = Findings::default();
    let mut ok = 0usize;
    let mut write_error = None;
    let mut junit = args.junit.as_ref().map(|_| JunitReport::new(&args.target));
    let mut last_result = std::time::Instant::now();
    replay(&mut executor, &files, args.trace, |r| {
        let mut text = String::new();
        match &r.crash {
            None => {
                ok += 1;
                text.push_str(&format!("{}: OK\n", r.path.display()));
            }
            Some(crash) => {
                *kinds.entry(crash.kind.name()).or_default() += 1;
                found.push(crash.kind);
                text.push_str(&crash_report(
                    crash,
                    r.input,
                    CrashContext::Replayed { path: r.path },
                ));
                text.push('\n');
            }
        }
        if let Some(junit) = &mut junit {
            // Inputs run in batches: a case's time is its share of the wait.
            junit.add(r.path, r.crash.as_ref(), &text, last_result.elapsed());
            last_result = std::time::Instant::now();
        }
        if let Some(crash) = &r.crash
            && let Placed::Again { number, first } = findings.place(r.path, crash)
        {
            // The full report is the first input's: one line for the others.
            let headline = text.lines().next().unwrap_or_default();
            text = format!(
                "{headline}: finding #{number} again (first: {})\n",
                first.display()
            );
        }
        if let Some(blocks) = &r.blocks {
            let sources = &session.sources;
            let mut rows: Vec<_> = blocks
                .sorted()
                .into_iter()
                .filter_map(|(id, hits)| sources.locate(id).map(|l| (l, hits)))
                .collect();
            rows.sort_by(|a, b| {
                (&a.0.path, a.0.block.byte_offset).cmp(&(&b.0.path, b.0.block.byte_offset))
            });
            text.push_str(&format!("  blocks run: {}\n", rows.len()));
            for (loc, hits) in rows {
                text.push_str(&format!(
                    "    {}:{}:{}  {:?}  {}  x{hits}\n",
                    loc.path.display(),
                    loc.block.line,
                    loc.block.column,
                    loc.block.kind,
                    loc.block.function.as_deref().unwrap_or("{main}"),
                ));
            }
        }
        if write_error.is_none()
            && let Err(err) = stdout.write(text.as_bytes())
        {
            write_error = Some(err);
        }
    })?;
    if let Some(err) = write_error {
        return Err(err);
    }
    if let (Some(junit), Some(path)) = (junit, &args.junit) {
        junit.write(path)?;
    }
    let crashed: usize = kinds.values().sum();
    let detail = if kinds.is_empty() {
        String::new()
    } else {
        format!(
            " ({})",
            kinds
                .iter()
                .map(|(k, n)| format!("{n} {k}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let summary = format!(
        "== {} input{}: {ok} ok, {crashed} failed{detail}\n",
        files.len(),
        if files.len() == 1 { "" } else { "s" }
    );
    stdout.write(summary.as_bytes())?;
    stdout.write(findings.summary().as_bytes())?;
    Ok(exit_codes::for_findings(found))
}

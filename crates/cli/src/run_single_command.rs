use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use php_fuzz_engine::{collect_inputs, preview, replay};
use php_fuzz_harness::{CrashKind, Executor};

use crate::exit_codes;
use crate::harness_args::HarnessArgs;

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
    for warning in &info.load_warnings {
        eprintln!("WARNING: while loading the target: {}", warning.headline());
    }
    let mut stdout = std::io::stdout().lock();
    let mut kinds: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut found = Vec::new();
    let mut ok = 0usize;
    let mut write_error = None;
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
                let label = match crash.kind {
                    CrashKind::Timeout => "TIMEOUT",
                    CrashKind::OutOfMemory => "OUT OF MEMORY",
                    CrashKind::Fatal
                    | CrashKind::HarnessDied
                    | CrashKind::StackOverflow
                    | CrashKind::Exit => "FATAL",
                    _ => "CRASH",
                };
                text.push_str(&format!(
                    "{}: {label} ({})\n",
                    r.path.display(),
                    crash.kind.name()
                ));
                text.push_str(&format!("  {}\n", crash.problem.headline()));
                for line in crash.problem.message.lines().skip(1) {
                    text.push_str(&format!("  {line}\n"));
                }
                for line in crash.problem.trace.lines() {
                    text.push_str(&format!("    {line}\n"));
                }
                if let Some(note) = &crash.note {
                    text.push_str(&format!("  note: {note}\n"));
                }
                if let Some(stderr) = crash.stderr.as_deref().filter(|s| !s.trim().is_empty()) {
                    text.push_str("  php stderr:\n");
                    for line in stderr
                        .lines()
                        .rev()
                        .take(10)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                    {
                        text.push_str(&format!("    {line}\n"));
                    }
                }
                text.push_str(&format!(
                    "  input ({} bytes): {}\n",
                    r.input.len(),
                    preview(r.input, 200)
                ));
            }
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
            && let Err(err) = stdout.write_all(text.as_bytes())
        {
            write_error = Some(err);
        }
    })?;
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
    if write_error.is_none() {
        let _ = stdout.write_all(summary.as_bytes());
    }
    Ok(exit_codes::for_findings(found))
}

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context, bail};
use php_fuzz_instrument::{Block, BlockIdAllocator, Outcome, SkipReason, StubStyle};
use rayon::prelude::*;

use crate::harness_args::StyleArg;

/// Arguments of `php-fuzz instrument`.
#[derive(clap::Args)]
pub struct InstrumentArgs {
    /// Files or directories to instrument.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Mirror PATHs into this directory (PHP files instrumented, others
    /// copied, block map in DIR/php-fuzz-blocks.json) instead of printing.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// How instrumented code records coverage.
    #[arg(long, value_enum, default_value_t = StyleArg::Trace)]
    pub stub: StyleArg,
    /// Threads for --out [default: all cores].
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
}

fn style(arg: StyleArg) -> StubStyle {
    match arg {
        StyleArg::Trace => StubStyle::Trace,
        StyleArg::EdgeMap => StubStyle::EdgeMap,
    }
}

pub fn run(args: &InstrumentArgs) -> anyhow::Result<ExitCode> {
    for path in &args.paths {
        std::fs::metadata(path)
            .map_err(|err| anyhow::anyhow!("{}: {}", path.display(), io_reason(&err)))?;
    }
    match &args.out {
        None => print_instrumented(args),
        Some(out) => mirror(args, out),
    }
}

fn io_reason(err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => err.to_string(),
    }
}

fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path)
        .map_err(|err| anyhow::anyhow!("{}: cannot read: {}", path.display(), io_reason(&err)))
}

fn print_instrumented(args: &InstrumentArgs) -> anyhow::Result<ExitCode> {
    let mut ids = BlockIdAllocator::new();
    let mut stdout = std::io::stdout().lock();
    for path in &args.paths {
        if path.is_dir() {
            bail!(
                "{}: is a directory; use --out DIR to instrument a tree",
                path.display()
            );
        }
        let source = read(path)?;
        let text = match php_fuzz_instrument::instrument(&source, &mut ids, style(args.stub))? {
            Outcome::Instrumented(result) => result.source,
            Outcome::Skipped(SkipReason::ParseError { line }) => {
                eprintln!(
                    "php-fuzz: warning: {}:{line}: not instrumented: tree-sitter-php cannot parse this file (first error on line {line})",
                    path.display()
                );
                source
            }
        };
        if let Err(err) = stdout.write_all(&text) {
            if err.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(ExitCode::SUCCESS);
            }
            return Err(err).context("cannot write to stdout");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One file to mirror: where it is, where it goes.
struct Job {
    from: PathBuf,
    to: PathBuf,
    /// Path as shown and stored in the block map.
    shown: PathBuf,
}

#[derive(serde::Serialize)]
struct BlockMapFile<'a> {
    path: String,
    blocks: &'a [Block],
}

fn mirror(args: &InstrumentArgs, out: &Path) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let out_abs = absolute(out)?;
    let mut jobs = Vec::new();
    for path in &args.paths {
        let abs = std::fs::canonicalize(path)
            .with_context(|| format!("{}: cannot resolve", path.display()))?;
        if out_abs.starts_with(&abs) && abs.is_dir() {
            bail!(
                "{}: the output directory {} is inside this input tree; choose one outside it",
                path.display(),
                out.display()
            );
        }
        if abs.is_dir() {
            let base = abs.file_name().map(PathBuf::from).unwrap_or_default();
            for entry in walkdir::WalkDir::new(&abs).sort_by_file_name() {
                let entry = entry.map_err(|err| {
                    let at = err.path().unwrap_or(&abs).display().to_string();
                    anyhow::anyhow!("{at}: cannot read: {err}")
                })?;
                if entry.file_type().is_file() {
                    let rel = entry
                        .path()
                        .strip_prefix(&abs)
                        .expect("walkdir stays inside");
                    jobs.push(Job {
                        from: entry.path().to_path_buf(),
                        to: out.join(&base).join(rel),
                        shown: entry.path().to_path_buf(),
                    });
                }
            }
        } else {
            let name = abs.file_name().map(PathBuf::from).unwrap_or_default();
            jobs.push(Job {
                from: abs.clone(),
                to: out.join(name),
                shown: abs,
            });
        }
    }
    let threads = args.jobs.unwrap_or(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start worker threads")?;
    let ids = Mutex::new(BlockIdAllocator::new());
    let style = style(args.stub);
    let results: Vec<anyhow::Result<FileResult>> = pool.install(|| {
        jobs.par_iter()
            .map(|job| mirror_one(job, style, &ids))
            .collect()
    });

    let mut files = 0;
    let mut instrumented = 0;
    let mut blocks = 0;
    let mut bytes = 0;
    let mut skipped = Vec::new();
    let mut map = Vec::new();
    for (job, result) in jobs.iter().zip(results) {
        let result = result?;
        files += 1;
        bytes += result.bytes;
        match result.kind {
            FileKind::Copied => {}
            FileKind::Instrumented(file_blocks) => {
                instrumented += 1;
                blocks += file_blocks.len();
                map.push((job.shown.display().to_string(), file_blocks));
            }
            FileKind::Skipped(line) => skipped.push(format!(
                "{}:{line}: tree-sitter-php cannot parse it",
                job.shown.display()
            )),
        }
    }
    let map_json: Vec<BlockMapFile<'_>> = map
        .iter()
        .map(|(path, blocks)| BlockMapFile {
            path: path.clone(),
            blocks,
        })
        .collect();
    std::fs::create_dir_all(out).with_context(|| format!("{}: cannot create", out.display()))?;
    let map_path = out.join("php-fuzz-blocks.json");
    let json = serde_json::to_vec_pretty(&serde_json::json!({ "files": map_json }))
        .context("cannot encode the block map")?;
    std::fs::write(&map_path, json)
        .with_context(|| format!("{}: cannot write", map_path.display()))?;

    let secs = started.elapsed().as_secs_f64();
    println!(
        "{files} files: {instrumented} PHP files instrumented ({blocks} blocks), {} copied, {} skipped; {:.1} MB in {:.2} s ({:.1} MB/s)",
        files - instrumented - skipped.len(),
        skipped.len(),
        bytes as f64 / 1e6,
        secs,
        bytes as f64 / 1e6 / secs.max(1e-9)
    );
    for line in &skipped {
        println!("  skipped (copied unchanged): {line}");
    }
    println!("block map: {}", map_path.display());
    Ok(ExitCode::SUCCESS)
}

enum FileKind {
    Copied,
    Instrumented(Vec<Block>),
    Skipped(u32),
}

struct FileResult {
    bytes: usize,
    kind: FileKind,
}

fn mirror_one(
    job: &Job,
    style: StubStyle,
    ids: &Mutex<BlockIdAllocator>,
) -> anyhow::Result<FileResult> {
    let source = read(&job.from)?;
    if let Some(parent) = job.to.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("{}: cannot create", parent.display()))?;
    }
    let is_php = job
        .from
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("php"));
    let (bytes, kind) = if is_php {
        let outcome = php_fuzz_instrument::instrument_with(&source, style, |count| {
            ids.lock()
                .unwrap_or_else(|p| p.into_inner())
                .allocate(count)
        })?;
        match outcome {
            Outcome::Instrumented(result) => {
                std::fs::write(&job.to, &result.source)
                    .with_context(|| format!("{}: cannot write", job.to.display()))?;
                (source.len(), FileKind::Instrumented(result.blocks))
            }
            Outcome::Skipped(SkipReason::ParseError { line }) => {
                std::fs::write(&job.to, &source)
                    .with_context(|| format!("{}: cannot write", job.to.display()))?;
                (source.len(), FileKind::Skipped(line))
            }
        }
    } else {
        std::fs::write(&job.to, &source)
            .with_context(|| format!("{}: cannot write", job.to.display()))?;
        (source.len(), FileKind::Copied)
    };
    Ok(FileResult { bytes, kind })
}

fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    };
    // Resolve what exists of it, so symlinks and `..` compare correctly.
    let mut existing = abs.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut resolved = std::fs::canonicalize(&existing).unwrap_or(existing);
    for part in rest.into_iter().rev() {
        resolved.push(part);
    }
    Ok(resolved)
}

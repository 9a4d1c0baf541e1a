//! `php-fuzz instrument`: one file to stdout, or whole trees mirrored into
//! a directory with their block map. See docs/instrumentation.md.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, anyhow, bail};
use php_fuzz_instrument::{
    Block, BlockIdAllocator, Coverage, Hooks, Outcome, Plan, SkipReason, StubStyle,
};
use rayon::prelude::*;
use serde::Serialize;

use crate::harness_args::{CoverageArg, StyleArg};
use crate::stdout::Stdout;

/// Name of the block map `--out` writes at the top of DIR.
pub const BLOCK_MAP: &str = "php-fuzz-blocks.json";

/// Files in a tree that are instrumented; the rest are copied. A FILE named
/// on the command line is instrumented whatever its extension.
const PHP_EXTENSIONS: &[&str] = &["php", "phtml", "inc"];

/// Files planned at once in --out mode: bounds memory on huge trees, and
/// is large enough that most trees need one batch (each costs a wait for
/// its slowest file).
const BATCH: usize = 8192;

/// Arguments of `php-fuzz instrument`.
#[derive(clap::Args)]
pub struct InstrumentArgs {
    /// A PHP file to print instrumented, or (with --out) files and
    /// directories to mirror.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Mirror each PATH into DIR/<its name>: PHP files (.php, .phtml, .inc)
    /// instrumented, other files copied, block map in DIR/php-fuzz-blocks.json.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// How instrumented code records coverage (see docs/instrumentation.md).
    #[arg(long, alias = "style", value_enum, default_value_t = StyleArg::Trace)]
    pub stub: StyleArg,
    /// Which blocks to record: every block (full, what report-coverage replays with), or
    /// without the blocks other blocks imply (pruned, see `php-fuzz fuzz --coverage`).
    #[arg(long, value_enum, value_name = "MODE", default_value_t = CoverageArg::Full)]
    pub coverage: CoverageArg,
    /// Leave calls of the bug detectors' sinks as they are: the output then runs with
    /// FuzzingContext.php alone (see docs/detectors.md, "How sinks are hooked").
    #[arg(long)]
    pub no_hooks: bool,
    /// Threads for --out [default: all cores].
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
}

impl InstrumentArgs {
    fn hooks(&self) -> Hooks {
        if self.no_hooks {
            Hooks::LeaveOut
        } else {
            Hooks::Rewrite
        }
    }
}

pub fn run(args: &InstrumentArgs) -> anyhow::Result<ExitCode> {
    let style = match args.stub {
        StyleArg::Trace => StubStyle::Trace,
        StyleArg::EdgeMap => StubStyle::EdgeMap,
    };
    for path in &args.paths {
        std::fs::metadata(path)
            .map_err(|err| anyhow!("{}: {}", path.display(), io_reason(&err)))?;
    }
    match &args.out {
        None => print_one(args, style),
        Some(out) => mirror(args, out, style),
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
        .map_err(|err| anyhow!("{}: cannot read: {}", path.display(), io_reason(&err)))
}

fn warn_skipped(path: &Path, reason: &SkipReason, what_happens: &str) {
    let SkipReason::ParseError { line } = reason;
    eprintln!(
        "php-fuzz: warning: {}:{line}: not instrumented: {reason}; {what_happens}",
        path.display()
    );
}

/// `php-fuzz instrument FILE`: the instrumented file on stdout.
fn print_one(args: &InstrumentArgs, style: StubStyle) -> anyhow::Result<ExitCode> {
    let [path] = args.paths.as_slice() else {
        bail!("give one FILE to print, or --out DIR to instrument several paths");
    };
    if path.is_dir() {
        bail!(
            "{}: is a directory; use --out DIR to instrument a tree",
            path.display()
        );
    }
    let source = read(path)?;
    let output = match php_fuzz_instrument::instrument(
        &source,
        &mut BlockIdAllocator::new(),
        style,
        args.coverage.mode(),
        args.hooks(),
    )? {
        Outcome::Instrumented(result) => result.source,
        Outcome::Skipped(reason) => {
            warn_skipped(path, &reason, "printed unchanged");
            source
        }
    };
    Stdout::lock().write(&output)?;
    Ok(ExitCode::SUCCESS)
}

/// One file to mirror.
struct Job {
    from: PathBuf,
    /// Relative to the output directory.
    to: PathBuf,
    php: bool,
}

/// The block map written to DIR/php-fuzz-blocks.json.
#[derive(Serialize)]
struct BlockMap<'a> {
    format: &'static str,
    version: u32,
    stub: StubStyle,
    coverage: Coverage,
    files: Vec<MappedFile<'a>>,
    skipped: Vec<SkippedFile>,
}

#[derive(Serialize)]
struct MappedFile<'a> {
    /// The instrumented copy, relative to the output directory.
    path: String,
    /// The original it was made from.
    source: String,
    blocks: &'a [Block],
}

#[derive(Serialize)]
struct SkippedFile {
    path: String,
    source: String,
    reason: &'static str,
    line: u32,
}

enum Done {
    Copied,
    Instrumented(Vec<Block>),
    Skipped(SkipReason),
}

/// `php-fuzz instrument PATH... --out DIR`.
fn mirror(args: &InstrumentArgs, out: &Path, style: StubStyle) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let jobs = plan_jobs(&args.paths, out)?;
    let threads = args.jobs.unwrap_or(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start worker threads")?;
    std::fs::create_dir_all(out)
        .map_err(|err| anyhow!("{}: cannot create: {}", out.display(), io_reason(&err)))?;

    let mut ids = BlockIdAllocator::new();
    let mut done: Vec<Done> = Vec::with_capacity(jobs.len());
    let mut php_bytes = 0usize;
    // Every directory of the mirror, made once rather than once per file.
    let mut dirs: Vec<PathBuf> = jobs
        .iter()
        .filter_map(|j| out.join(&j.to).parent().map(Path::to_path_buf))
        .collect();
    dirs.dedup();
    for dir in &dirs {
        std::fs::create_dir_all(dir)
            .map_err(|err| anyhow!("{}: cannot create: {}", dir.display(), io_reason(&err)))?;
    }
    for batch in jobs.chunks(BATCH) {
        // Parse and analyse in parallel; take ids in file order, so the same
        // tree always gets the same ids; render and write in parallel.
        let sources: Vec<Option<(Vec<u8>, u32)>> = pool.install(|| {
            batch
                .par_iter()
                .map(|job| job.php.then(|| read_with_mode(&job.from)).transpose())
                .collect::<anyhow::Result<_>>()
        })?;
        let plans: Vec<Option<Result<Plan<'_>, SkipReason>>> = pool.install(|| {
            sources
                .par_iter()
                .map(|s| {
                    s.as_ref().map(|(source, _)| {
                        Plan::new(source, args.coverage.mode()).map(|p| p.with_hooks(args.hooks()))
                    })
                })
                .collect()
        });
        let mut firsts = Vec::with_capacity(batch.len());
        for plan in &plans {
            firsts.push(match plan {
                Some(Ok(plan)) => Some(ids.allocate(plan.block_count())?),
                _ => None,
            });
        }
        let results: Vec<anyhow::Result<Done>> = pool.install(|| {
            (batch, &plans, &sources, &firsts)
                .into_par_iter()
                .map(|(job, plan, source, first)| {
                    let to = out.join(&job.to);
                    match (plan, source, first) {
                        (Some(Ok(plan)), Some((_, mode)), Some(first)) => {
                            let result = plan.render(*first, style);
                            write_with_mode(&to, &result.source, *mode)?;
                            Ok(Done::Instrumented(result.blocks))
                        }
                        (Some(Err(reason)), Some((source, mode)), _) => {
                            write_with_mode(&to, source, *mode)?;
                            Ok(Done::Skipped(reason.clone()))
                        }
                        _ => {
                            std::fs::copy(&job.from, &to)
                                .map_err(|err| copy_error(&job.from, &to, &err))?;
                            Ok(Done::Copied)
                        }
                    }
                })
                .collect()
        });
        php_bytes += sources
            .iter()
            .flatten()
            .map(|(source, _)| source.len())
            .sum::<usize>();
        for result in results {
            done.push(result?);
        }
    }

    let map_path = out.join(BLOCK_MAP);
    let mut map = BlockMap {
        format: "php-fuzz-blocks",
        version: 1,
        stub: style,
        coverage: args.coverage.mode(),
        files: Vec::new(),
        skipped: Vec::new(),
    };
    let (mut copied, mut blocks) = (0usize, 0usize);
    for (job, done) in jobs.iter().zip(&done) {
        let path = job.to.to_string_lossy().into_owned();
        let source = job.from.to_string_lossy().into_owned();
        match done {
            Done::Copied => copied += 1,
            Done::Instrumented(file_blocks) => {
                blocks += file_blocks.len();
                map.files.push(MappedFile {
                    path,
                    source,
                    blocks: file_blocks,
                });
            }
            Done::Skipped(reason) => {
                let SkipReason::ParseError { line } = *reason;
                map.skipped.push(SkippedFile {
                    path,
                    source,
                    reason: "parse_error",
                    line,
                });
            }
        }
    }
    let file = std::fs::File::create(&map_path)
        .map_err(|err| anyhow!("{}: cannot write: {}", map_path.display(), io_reason(&err)))?;
    let mut writer = BufWriter::new(file);
    serde_json::to_writer(&mut writer, &map)
        .map_err(anyhow::Error::from)
        .and_then(|()| Ok(writer.flush()?))
        .with_context(|| format!("{}: cannot write", map_path.display()))?;

    let seconds = started.elapsed().as_secs_f64();
    let megabytes = php_bytes as f64 / 1e6;
    let mut stdout = Stdout::lock();
    stdout.line(format_args!(
        "instrumented {} ({blocks} blocks), skipped {}, copied {} into {}",
        plural(map.files.len(), "PHP file"),
        map.skipped.len(),
        plural(copied, "other file"),
        out.display()
    ))?;
    for (job, done) in jobs.iter().zip(&done) {
        if let Done::Skipped(reason) = done {
            let SkipReason::ParseError { line } = reason;
            stdout.line(format_args!(
                "  skipped {}:{line}: {reason}; copied unchanged",
                job.from.display()
            ))?;
        }
    }
    stdout.line(format_args!(
        "{megabytes:.2} MB of PHP in {seconds:.2} s: {:.1} MB/s on {} threads",
        megabytes / seconds.max(1e-9),
        pool.current_num_threads()
    ))?;
    stdout.line(format_args!("block map: {}", map_path.display()))?;
    Ok(ExitCode::SUCCESS)
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// Lists what to mirror where, after checking the paths make sense.
fn plan_jobs(paths: &[PathBuf], out: &Path) -> anyhow::Result<Vec<Job>> {
    let out_abs = absolute(out)?;
    let mut jobs = Vec::new();
    let mut names: Vec<(PathBuf, &Path)> = Vec::new();
    for path in paths {
        let abs = std::fs::canonicalize(path)
            .map_err(|err| anyhow!("{}: {}", path.display(), io_reason(&err)))?;
        let is_dir = abs.is_dir();
        if is_dir && out_abs.starts_with(&abs) {
            bail!(
                "{}: the output directory {} is inside this input tree",
                path.display(),
                out.display()
            );
        }
        if abs.starts_with(&out_abs) {
            bail!(
                "{}: is inside the output directory {}",
                path.display(),
                out.display()
            );
        }
        let Some(name) = abs.file_name().map(PathBuf::from) else {
            bail!(
                "{}: cannot mirror the root directory; name a directory below it",
                path.display()
            );
        };
        if let Some((_, other)) = names.iter().find(|(n, _)| *n == name) {
            bail!(
                "{} and {}: both would be mirrored to {}",
                other.display(),
                path.display(),
                out.join(&name).display()
            );
        }
        names.push((name.clone(), path));
        if !is_dir {
            jobs.push(Job {
                from: abs,
                to: name,
                php: true,
            });
            continue;
        }
        for entry in walkdir::WalkDir::new(&abs)
            .follow_links(true)
            .sort_by_file_name()
        {
            let entry = entry.map_err(|err| {
                let at = err.path().unwrap_or(&abs).display().to_string();
                match err.io_error() {
                    Some(io) => anyhow!("{at}: cannot read: {}", io_reason(io)),
                    None => anyhow!("{at}: {err}"),
                }
            })?;
            if !entry.file_type().is_file() {
                continue;
            }
            let relative = entry
                .path()
                .strip_prefix(&abs)
                .expect("walkdir stays below its root");
            let php = entry
                .path()
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| PHP_EXTENSIONS.iter().any(|p| e.eq_ignore_ascii_case(p)));
            jobs.push(Job {
                from: entry.path().to_path_buf(),
                to: name.join(relative),
                php,
            });
        }
    }
    Ok(jobs)
}

/// The file's bytes and permission bits.
fn read_with_mode(path: &Path) -> anyhow::Result<(Vec<u8>, u32)> {
    use std::io::Read as _;
    use std::os::unix::fs::PermissionsExt as _;
    let reason =
        |err: std::io::Error| anyhow!("{}: cannot read: {}", path.display(), io_reason(&err));
    let mut file = std::fs::File::open(path).map_err(reason)?;
    let meta = file.metadata().map_err(reason)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes).map_err(reason)?;
    Ok((bytes, meta.permissions().mode() & 0o7777))
}

/// Writes `bytes` to `to` with permission bits `mode` (scripts stay executable).
fn write_with_mode(to: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let reason =
        |err: std::io::Error| anyhow!("{}: cannot write: {}", to.display(), io_reason(&err));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(to)
        .map_err(reason)?;
    file.write_all(bytes).map_err(reason)
}

fn copy_error(from: &Path, to: &Path, err: &std::io::Error) -> anyhow::Error {
    match std::fs::File::open(from) {
        Err(read) => anyhow!("{}: cannot read: {}", from.display(), io_reason(&read)),
        Ok(_) => anyhow!("{}: cannot write: {}", to.display(), io_reason(err)),
    }
}

/// `path` made absolute, with the part that exists resolved (symlinks, `..`).
fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    };
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

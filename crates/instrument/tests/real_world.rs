//! Instruments every `.php` file under /usr/share/php (Debian's PHP
//! libraries, installed by `scripts/setup --test-libs`) in both stub styles,
//! in the `cmplog` rendering (comparisons logged), and in pruned coverage,
//! whose blocks must be a subset of full coverage's.
//! Each instrumented file must have the original's line count, must pass
//! `php -l` exactly when the original does, and (stubs stripped) must have
//! the original's AST as nikic/PHP-Parser reads it.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::assert_only_inserted;
use php_fuzz_instrument::{
    BlockIdAllocator, Coverage, Hooks, Outcome, Plan, SkipReason, StubStyle, instrument,
};

const LIBRARY_ROOT: &str = "/usr/share/php";
/// Fewer files than this means the test libraries are not installed.
const MIN_FILES: usize = 500;

fn php_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => dirs.push(path),
                Ok(_) if path.extension().is_some_and(|e| e == "php") && path.is_file() => {
                    files.push(path)
                }
                _ => {}
            }
        }
    }
    files.sort();
    files
}

/// `php -l` with Debian's defaults that matter to parsing, without loading
/// extensions (twice as fast, and linting needs none).
fn lints(php: &Path, file: &Path) -> bool {
    Command::new(php)
        .args(["-n", "-d", "short_open_tag=0", "-l"])
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run php -l")
        .success()
}

struct Checked {
    relative: PathBuf,
    original: bool,
    trace: bool,
    edge_map: bool,
    cmplog: bool,
    pruned: bool,
}

const RENDERINGS: [&str; 4] = ["trace", "edge-map", "cmplog", "pruned"];

#[test]
fn every_debian_php_library_file_stays_valid_php_with_the_same_lines() {
    let Some(php) = common::php() else { return };
    let root = Path::new(LIBRARY_ROOT);
    let files = php_files(root);
    assert!(
        files.len() >= MIN_FILES,
        "found {} .php files under {LIBRARY_ROOT}, expected at least {MIN_FILES}: run `scripts/setup --test-libs`",
        files.len()
    );

    let out = tempfile::tempdir().expect("temp dir");
    let mut ids = BlockIdAllocator::new();
    let mut jobs = Vec::new();
    let mut skipped = Vec::new();
    let mut blocks = 0usize;
    let mut pruned_blocks = 0usize;
    let mut sites = 0usize;
    let mut literals = 0usize;
    let mut bytes = 0usize;
    for file in &files {
        let source = std::fs::read(file).expect("read library file");
        bytes += source.len();
        let relative = file.strip_prefix(root).expect("under root").to_path_buf();
        let trace = match instrument(
            &source,
            &mut ids,
            StubStyle::Trace,
            Coverage::Full,
            Hooks::Rewrite,
        )
        .expect("ids suffice")
        {
            Outcome::Instrumented(result) => result,
            Outcome::Skipped(SkipReason::ParseError { line }) => {
                skipped.push(format!("{}:{line}", file.display()));
                continue;
            }
        };
        let first = trace
            .blocks
            .first()
            .map(|b| b.id)
            .unwrap_or(php_fuzz_instrument::BlockId(1));
        let plan = Plan::new(&source, Coverage::Full).expect("parsed before");
        let edge_map = plan.render(first, StubStyle::EdgeMap);
        let cmplog = plan.render_cmplog(first, 1, StubStyle::Trace);
        assert_eq!(edge_map.blocks, trace.blocks);
        assert_eq!(cmplog.blocks, trace.blocks);
        let pruned = Plan::new(&source, Coverage::Pruned)
            .expect("parsed before")
            .render(first, StubStyle::Trace);
        common::assert_pruned_subset(&trace.blocks, &pruned.blocks, &relative);
        for output in [
            &trace.source,
            &edge_map.source,
            &cmplog.source,
            &pruned.source,
        ] {
            assert_only_inserted(&source, output);
        }
        blocks += trace.blocks.len();
        pruned_blocks += pruned.blocks.len();
        sites += cmplog.comparison_sites as usize;
        literals += cmplog.comparison_literals.len();
        for (style, output) in RENDERINGS.into_iter().zip([
            &trace.source,
            &edge_map.source,
            &cmplog.source,
            &pruned.source,
        ]) {
            let path = out.path().join(style).join(&relative);
            std::fs::create_dir_all(path.parent().expect("has parent")).expect("create dirs");
            std::fs::write(&path, output).expect("write instrumented file");
        }
        jobs.push((file.clone(), relative));
    }
    let ast_pairs: Vec<(PathBuf, PathBuf)> = jobs
        .iter()
        .flat_map(|(original, relative)| {
            RENDERINGS.map(|style| (original.clone(), out.path().join(style).join(relative)))
        })
        .collect();

    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let checked: Vec<Checked> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((original, relative)) = jobs.get(i) else {
                            break;
                        };
                        done.push(Checked {
                            relative: relative.clone(),
                            original: lints(&php, original),
                            trace: lints(&php, &out.path().join("trace").join(relative)),
                            edge_map: lints(&php, &out.path().join("edge-map").join(relative)),
                            cmplog: lints(&php, &out.path().join("cmplog").join(relative)),
                            pruned: lints(&php, &out.path().join("pruned").join(relative)),
                        });
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("lint worker"))
            .collect()
    });

    let broken: Vec<String> = checked
        .iter()
        .filter(|c| {
            c.trace != c.original
                || c.edge_map != c.original
                || c.cmplog != c.original
                || c.pruned != c.original
        })
        .map(|c| {
            format!(
                "{}: php -l original {}, trace {}, edge-map {}, cmplog {}, pruned {}",
                c.relative.display(),
                verdict(c.original),
                verdict(c.trace),
                verdict(c.edge_map),
                verdict(c.cmplog),
                verdict(c.pruned)
            )
        })
        .collect();
    let invalid_originals = checked.iter().filter(|c| !c.original).count();
    let verdicts = match common::ast_oracle() {
        Some(oracle) => common::ast_verdicts(&php, &oracle, &ast_pairs, out.path()),
        None => Vec::new(),
    };
    assert!(
        verdicts.is_empty() || verdicts.len() == ast_pairs.len(),
        "the AST oracle skipped pairs"
    );
    let ast_failures: Vec<&String> = verdicts.iter().filter(|v| !v.starts_with("OK ")).collect();
    eprintln!(
        "real-world: {} files ({:.2} MB), {} instrumented ({blocks} blocks, {pruned_blocks} pruned, {sites} comparison sites, \
         {literals} dictionary entries), {} skipped, \
         {invalid_originals} originals fail php -l, {} of {} instrumented copies AST-identical",
        files.len(),
        bytes as f64 / 1e6,
        jobs.len(),
        skipped.len(),
        verdicts.len() - ast_failures.len(),
        ast_pairs.len(),
    );
    for file in &skipped {
        eprintln!("real-world: skipped (tree-sitter-php parse error): {file}");
    }
    assert!(
        broken.is_empty(),
        "instrumentation changed what php -l says:\n{}",
        broken.join("\n")
    );
    assert!(
        ast_failures.is_empty(),
        "instrumentation changed the AST (as PHP-Parser reads it):\n{}",
        ast_failures
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        jobs.len() * 100 >= files.len() * 99,
        "more than 1% of the files were skipped"
    );
}

fn verdict(ok: bool) -> &'static str {
    if ok { "passes" } else { "FAILS" }
}

//! Instrumentation throughput on one thread, for scripts/bench-instrument.
//!
//! `cargo run --release -p php-fuzz-instrument --example throughput -- DIR...`
//! reads every .php file under DIR into memory, then times, in the same
//! run and best of several rounds: tree-sitter-php parsing alone (the
//! floor), and parsing plus analysis plus rendering (what instrument()
//! costs).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use php_fuzz_instrument::{BlockId, Coverage, Plan, StubStyle};

const ROUNDS: usize = 5;

fn php_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            php_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "php") {
            files.push(path);
        }
    }
}

fn best(mut run: impl FnMut()) -> Duration {
    (0..ROUNDS)
        .map(|_| {
            let started = Instant::now();
            run();
            started.elapsed()
        })
        .min()
        .expect("at least one round")
}

fn main() {
    let mut files = Vec::new();
    for dir in std::env::args().skip(1) {
        php_files(Path::new(&dir), &mut files);
    }
    let sources: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(f).expect("read"))
        .collect();
    let bytes: usize = sources.iter().map(Vec::len).sum();
    assert!(bytes > 0, "no .php files under the given directories");
    let megabytes = bytes as f64 / 1e6;

    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_php::LANGUAGE_PHP.into())
        .expect("grammar loads");
    let parse = best(|| {
        for source in &sources {
            std::hint::black_box(parser.parse(source, None));
        }
    });
    let mut blocks = 0;
    let instrument = best(|| {
        blocks = 0;
        for source in &sources {
            if let Ok(plan) = Plan::new(source, Coverage::Full) {
                let result = plan.render(BlockId(1), StubStyle::Trace);
                blocks += result.blocks.len();
                std::hint::black_box(result);
            }
        }
    });
    let rate = |d: Duration| megabytes / d.as_secs_f64();
    println!(
        "files: {} ({megabytes:.2} MB), blocks: {blocks}",
        files.len()
    );
    println!(
        "parse only (tree-sitter-php): {:.1} MB/s ({:.0} ms)",
        rate(parse),
        parse.as_secs_f64() * 1e3
    );
    println!(
        "parse + instrument:           {:.1} MB/s ({:.0} ms)",
        rate(instrument),
        instrument.as_secs_f64() * 1e3
    );
    println!(
        "instrumentation overhead:     {:.0}% of the parse time",
        (instrument.as_secs_f64() / parse.as_secs_f64() - 1.0) * 100.0
    );
}

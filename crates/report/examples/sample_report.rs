//! Writes a sample coverage report, for looking at the pages and for the
//! screenshots in `docs/`.
//!
//! ```text
//! cargo run -p php-fuzz-report --example sample_report -- OUT_DIR
//! cargo run --release -p php-fuzz-report --example sample_report -- OUT_DIR --large 300 200
//! ```
//!
//! The first form instruments the PHP files under `fixtures/report/sample`
//! and gives the blocks the hit counts in [`HITS`], as if a small corpus
//! had been replayed: no PHP needed. The second generates FILES
//! synthetic files of BLOCKS blocks each and prints how long the report took.

use std::path::{Path, PathBuf};
use std::time::Instant;

use php_fuzz_instrument::{
    Block, BlockId, BlockIdAllocator, BlockKind, Outcome, StubStyle, instrument,
};
use php_fuzz_report::{BlockHits, FileCoverage, ReplayCrash, ReportInput, write_report};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first().map(PathBuf::from) else {
        eprintln!("usage: sample_report OUT_DIR [--large FILES BLOCKS]");
        std::process::exit(2);
    };
    let input = match args.get(1).map(String::as_str) {
        Some("--large") => {
            let number = |i: usize, default: usize| {
                args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default)
            };
            large(number(2, 300), number(3, 200))
        }
        _ => sample(),
    };
    let started = Instant::now();
    let summary = write_report(&input, &out).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "{} files, {}/{} blocks covered; report written in {:.0} ms: {}",
        summary.files,
        summary.covered_blocks,
        summary.blocks,
        started.elapsed().as_secs_f64() * 1e3,
        summary.index.display()
    );
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// A tiny deterministic hash, so the made-up counts are the same every run.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// Hit counts as if 412 INI files had been replayed (those that threw are
/// crashes, so no error path ran), by file, line and column. A block the
/// instrumenter places elsewhere one day shows as never run.
/// (line, column, hits) of one file's blocks.
type Hits = &'static [(u32, u32, u64)];

const HITS: &[(&str, Hits)] = &[
    ("target.php", &[(1, 1, 1), (6, 51, 412)]),
    (
        "Parser.php",
        &[
            (1, 1, 1),
            (16, 5, 412),
            (21, 5, 412),
            (24, 44, 412),
            (24, 45, 0),
            (24, 70, 2126),
            (26, 30, 2006),
            (26, 50, 1980),
            (26, 71, 176),
            (28, 13, 1950),
            (29, 35, 236),
            (31, 20, 1714),
            (33, 13, 1950),
            (34, 9, 412),
            (35, 70, 648),
            (39, 5, 236),
            (41, 29, 0),
            (43, 9, 236),
            (45, 39, 236),
            (45, 47, 0),
            (46, 32, 201),
            (50, 5, 1714),
            (52, 28, 0),
            (54, 9, 1714),
            (57, 40, 96),
            (60, 9, 1618),
            (65, 5, 1810),
            (66, 25, 1788),
            (66, 45, 1502),
            (66, 66, 310),
            (68, 9, 1500),
            (69, 28, 0),
            (71, 9, 1500),
            (73, 33, 88),
            (74, 42, 41),
            (75, 20, 0),
            (76, 21, 1371),
            (76, 41, 610),
            (76, 52, 761),
            (81, 5, 310),
            (84, 56, 4180),
            (86, 32, 310),
            (88, 13, 3870),
            (89, 29, 212),
            (89, 47, 160),
            (89, 63, 38),
            (91, 25, 12),
            (92, 25, 0),
            (93, 29, 26),
            (96, 13, 3832),
            // The rest (the throw after the loop, dump() and its closure) never ran.
        ],
    ),
    ("Ini/Util.php", &[(1, 1, 1)]),
    (
        "Json/Util.php",
        &[
            (1, 1, 1),
            (9, 5, 2510),
            (10, 32, 1640),
            (12, 9, 870),
            (14, 35, 2098),
            (16, 9, 870),
        ],
    ),
];

fn sample() -> ReportInput {
    let sample = workspace().join("fixtures/report/sample");
    let paths = [
        sample.join("target.php"),
        sample.join("src/Ini/Parser.php"),
        sample.join("src/Ini/Util.php"),
        sample.join("src/Json/Util.php"),
    ];
    let mut ids = BlockIdAllocator::new();
    let files = paths
        .iter()
        .map(|path| {
            let source = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let blocks = match instrument(&source, &mut ids, StubStyle::Trace).expect("block ids") {
                Outcome::Instrumented(i) => i.blocks,
                Outcome::Skipped(reason) => panic!("{}: {reason}", path.display()),
            };
            let table = HITS
                .iter()
                .find(|(name, _)| path.ends_with(name))
                .map_or(&[][..], |(_, t)| *t);
            let blocks = blocks
                .into_iter()
                .map(|block| {
                    let hits = table
                        .iter()
                        .find(|(line, column, _)| (*line, *column) == (block.line, block.column))
                        .map_or(0, |(_, _, hits)| *hits);
                    BlockHits { block, hits }
                })
                .collect();
            FileCoverage {
                path: path.clone(),
                source,
                blocks,
            }
        })
        .collect();
    ReportInput {
        target: sample.join("target.php"),
        corpus_dir: sample.join("corpus"),
        corpus_entries: 418,
        generated_at: "2026-11-22 14:05 UTC".to_string(),
        files,
        crashes: vec![
            ReplayCrash {
                input: sample.join("corpus/3f2a9c1d0b7e"),
                kind: "exception".into(),
                summary: "Sample\\Ini\\SyntaxError: unterminated string in src/Ini/Parser.php:99".into(),
            },
            ReplayCrash {
                input: sample.join("corpus/5e0c77aa41d9"),
                kind: "exception".into(),
                summary: "Sample\\Ini\\SyntaxError: line 3: expected key = value in src/Ini/Parser.php:53".into(),
            },
        ],
    }
}

/// FILES generated files of BLOCKS blocks each: methods of ten blocks (an
/// entry and nine `if` branches), about three lines per block.
fn large(files: usize, blocks: usize) -> ReportInput {
    let mut out = Vec::with_capacity(files);
    let mut next_id = 1;
    for f in 0..files {
        let mut source = format!(
            "<?php\nnamespace Gen\\Pkg{};\n\nfinal class C{f}\n{{\n",
            f % 17
        );
        let mut list = Vec::with_capacity(blocks);
        let mut add = |source: &str, kind, function: &str, hits| {
            let offset = source.len() - 1; // the `{` just written
            let line = source.matches('\n').count() as u32 + 1;
            let column = (offset - source[..offset].rfind('\n').map_or(0, |i| i + 1)) as u32 + 1;
            list.push(BlockHits {
                block: Block {
                    id: BlockId(next_id),
                    kind,
                    byte_offset: offset,
                    line,
                    column,
                    function: Some(function.to_string()),
                },
                hits,
            });
            next_id += 1;
        };
        for m in 0..blocks.div_ceil(10) {
            let function = format!("Gen\\Pkg{}\\C{f}::method{m}", f % 17);
            let entered = if mix((f * 1000 + m) as u64).is_multiple_of(4) {
                0
            } else {
                mix(m as u64) % 900 + 1
            };
            source.push_str(&format!(
                "    public function method{m}(int $x): int\n    {{"
            ));
            add(&source, BlockKind::MethodEntry, &function, entered);
            source.push('\n');
            for b in 1..10.min(blocks - m * 10) {
                source.push_str(&format!("        if ($x > {b} && $x % {b} === 0) {{"));
                let hits = if mix((f * 100_000 + m * 10 + b) as u64).is_multiple_of(3) {
                    0
                } else {
                    entered / (b as u64 + 1)
                };
                add(&source, BlockKind::IfBranch, &function, hits);
                source.push_str(&format!(
                    "\n            $x = intdiv($x, {b}) + strlen('<tag> & \"q\"');\n        }}\n"
                ));
            }
            source.push_str("        return $x;\n    }\n\n");
        }
        source.push_str("}\n");
        out.push(FileCoverage {
            path: PathBuf::from(format!("/srv/lib/src/Pkg{}/C{f}.php", f % 17)),
            source: source.into_bytes(),
            blocks: list,
        });
    }
    ReportInput {
        target: PathBuf::from("/srv/lib/target.php"),
        corpus_dir: PathBuf::from("/srv/lib/corpus"),
        corpus_entries: 10_000,
        generated_at: "2026-11-22 14:05 UTC".to_string(),
        files: out,
        crashes: Vec::new(),
    }
}

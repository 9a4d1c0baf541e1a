//! Writes a sample coverage report, for looking at the pages and for the
//! screenshots in `docs/` (the first form has a two-session campaign
//! history, for `docs/report-campaign.png`).
//!
//! ```text
//! cargo run -p php-fuzz-report --example sample_report -- OUT_DIR
//! cargo run --release -p php-fuzz-report --example sample_report -- OUT_DIR --large 300 200
//! ```
//!
//! The first form reads the PHP files under `fixtures/report/sample` and
//! their block map with hit counts (`blocks.json`), as if a small corpus
//! had been replayed: no PHP needed. The second generates FILES
//! synthetic files of BLOCKS blocks each and prints how long the report took.

use std::path::{Path, PathBuf};
use std::time::Instant;

use php_fuzz_instrument::{Block, BlockId, BlockKind};
use php_fuzz_report::{
    BlockCoverage, CampaignHistory, FileCoverage, HistoryCrash, HistoryRestart, HistorySample,
    ReplayCrash, ReportInput, write_report,
};
use serde::Deserialize;

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

/// `fixtures/report/sample/blocks.json`: the block map the instrumenter
/// gave for each sample file, with hit counts as if 418 INI files had been
/// replayed (the two that threw are crashes, so no error path ran).
/// Stored rather than recomputed, so the sample only depends on the block
/// map's types and does not change when the instrumenter places a block
/// elsewhere.
#[derive(Deserialize)]
struct SampleMap {
    files: Vec<SampleFile>,
}

#[derive(Deserialize)]
struct SampleFile {
    /// Relative to `fixtures/report/sample`.
    path: PathBuf,
    blocks: Vec<SampleBlock>,
}

#[derive(Deserialize)]
struct SampleBlock {
    #[serde(flatten)]
    block: Block,
    hits: u64,
}

fn sample() -> ReportInput {
    let sample = workspace().join("fixtures/report/sample");
    let map = sample.join("blocks.json");
    let map: SampleMap = serde_json::from_slice(
        &std::fs::read(&map).unwrap_or_else(|e| panic!("{}: {e}", map.display())),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", map.display()));
    let files = map
        .files
        .into_iter()
        .map(|file| {
            let path = sample.join(&file.path);
            let source = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            FileCoverage {
                path,
                source,
                blocks: file
                    .blocks
                    .into_iter()
                    .map(|b| BlockCoverage {
                        block: b.block,
                        hits: b.hits,
                    })
                    .collect(),
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
        history: Some(sample_history()),
    }
}

/// Two sessions of a campaign: an hour, then a resumed half hour.
fn sample_history() -> CampaignHistory {
    let samples = (0..=1080)
        .map(|i| {
            let elapsed = i as f64 * 5.0;
            let session = if elapsed < 3600.0 { 1 } else { 2 };
            let growth = 1.0 - (-elapsed / 900.0).exp();
            HistorySample {
                session,
                elapsed,
                runs: i * 5 * 9000,
                cov: (40.0 + 380.0 * growth) as usize,
                ft: (120.0 + 2400.0 * growth) as usize,
                execs_per_sec: 9000.0 + 700.0 * (i as f64 / 23.0).sin() - 1500.0 * growth,
                mix: vec![
                    ("bytes".into(), 0.6 - 0.2 * growth),
                    ("dict".into(), 0.2 + 0.1 * growth),
                    ("i2s".into(), 0.2 + 0.1 * growth),
                ],
            }
        })
        .collect();
    CampaignHistory {
        source: PathBuf::from("/srv/sample/corpus/.php-fuzz/stats.jsonl"),
        samples,
        restarts: vec![HistoryRestart {
            session: 2,
            elapsed: 3600.0,
        }],
        crashes: vec![HistoryCrash {
            elapsed: 412.0,
            kind: "exception".into(),
            summary: "Sample\\Ini\\SyntaxError: unterminated string in src/Ini/Parser.php:99"
                .into(),
            artifact: "crash-3f2a9c1d0b7e.txt".into(),
        }],
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
        // Lines counted so far, up to `counted` (counting from the start
        // every time would make the generator, not the report, quadratic).
        let (mut counted, mut line) = (0, 1);
        let mut add = |source: &str, kind, function: &str, hits| {
            let offset = source.len() - 1; // the `{` just written
            line += source[counted..].matches('\n').count() as u32;
            counted = source.len();
            let column = (offset - source[..offset].rfind('\n').map_or(0, |i| i + 1)) as u32 + 1;
            list.push(BlockCoverage {
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
        history: None,
    }
}

//! Behaviour identity: every program under fixtures/instrument/behaviour
//! runs once as written and once instrumented in each stub style, and in
//! the `cmplog` rendering (comparisons logged). Stdout, stderr and exit
//! code must be byte-for-byte the same (after replacing the
//! directory of the instrumented copy, which keeps the file's name, with the
//! fixture directory). The cmplog run must record exactly the trace of the
//! trace-style run.
//!
//! The instrumented copies must also have the original's AST (as
//! nikic/PHP-Parser reads it, stubs stripped). The runs prove the
//! instrumentation is live: the trace of the trace
//! style must hold only ids of the file's blocks, the edges it implies must
//! equal the edge map of the edge-map run, and across all fixtures every
//! kind of block (but PHP 8.4's property hooks) must run at least once.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use php_fuzz_instrument::{Block, BlockKind, Coverage, Plan, StubStyle};

const RUN_TIMEOUT: Duration = Duration::from_secs(60);

fn fixture_dir() -> PathBuf {
    common::repo_root().join("fixtures/instrument/behaviour")
}

fn fixtures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixture_dir())
        .expect("fixtures/instrument/behaviour exists")
        .map(|e| e.expect("readable fixture dir").path())
        .filter(|p| p.extension().is_some_and(|e| e == "php"))
        .collect();
    files.sort();
    files
}

#[derive(Debug, PartialEq, Eq)]
struct Output {
    stdout: String,
    stderr: String,
    exit: Option<i32>,
}

struct Run {
    output: Output,
    trace: Vec<u8>,
    edges: BTreeMap<u64, u64>,
    cmplog: Vec<u8>,
}

/// Runs `script` (from its own directory) as the tests run every program:
/// same ini settings, same prepended runtime, recording what it traced.
/// `shown_dir` replaces the script's directory in what it prints.
fn run(php: &Path, script: &Path, shown_dir: &Path, record: &Path) -> Run {
    let dir = script.parent().expect("script has a directory");
    let prepend = common::repo_root().join("fixtures/instrument/record.php");
    let mut child = Command::new(php)
        .args([
            "-n",
            "-d",
            "short_open_tag=0",
            "-d",
            "error_reporting=-1",
            "-d",
            "display_errors=stderr",
        ])
        .args([
            "-d",
            "log_errors=0",
            "-d",
            "html_errors=0",
            "-d",
            "zend.assertions=1",
            "-d",
        ])
        .arg(format!("auto_prepend_file={}", prepend.display()))
        .arg(script.file_name().expect("file name"))
        .current_dir(dir)
        .env("PHP_FUZZ_RUNTIME", common::fuzzing_context())
        .env("PHP_FUZZ_CMPLOG", common::cmplog_runtime())
        .env("PHP_FUZZ_RECORD", record)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start php");
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stdout.read_to_end(&mut buf).map(|_| buf)
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stderr.read_to_end(&mut buf).map(|_| buf)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for php") {
            break status;
        }
        if started.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            panic!("{} ran longer than {RUN_TIMEOUT:?}", script.display());
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let shown = |bytes: Vec<u8>| {
        String::from_utf8_lossy(&bytes)
            .replace(&dir.display().to_string(), &shown_dir.display().to_string())
    };
    let output = Output {
        stdout: shown(out_reader.join().expect("reader").expect("read stdout")),
        stderr: shown(err_reader.join().expect("reader").expect("read stderr")),
        exit: status.code(),
    };
    let with_suffix = |suffix: &str| {
        let mut path = record.as_os_str().to_owned();
        path.push(suffix);
        PathBuf::from(path)
    };
    let trace = std::fs::read(with_suffix(".trace")).unwrap_or_else(|_| {
        panic!(
            "{} left no trace record (did it exit from a shutdown function?)",
            script.display()
        )
    });
    let edges = std::fs::read_to_string(with_suffix(".edges"))
        .expect("edges record")
        .lines()
        .map(|line| {
            let (edge, count) = line.split_once(' ').expect("`edge count`");
            (edge.parse().expect("edge"), count.parse().expect("count"))
        })
        .collect();
    let cmplog = std::fs::read(with_suffix(".cmplog")).expect("cmplog record");
    Run {
        output,
        trace,
        edges,
        cmplog,
    }
}

/// A full-coverage trace with the blocks pruned coverage left out dropped,
/// and the rest renumbered to pruned coverage's ids: what the pruned run
/// must record, since the records change nothing else.
fn keep_surviving(trace: &[u8], full: &[Block], pruned: &[Block]) -> Vec<u8> {
    let by_anchor: BTreeMap<usize, u32> = pruned.iter().map(|b| (b.byte_offset, b.id.0)).collect();
    let anchor: BTreeMap<u32, usize> = full.iter().map(|b| (b.id.0, b.byte_offset)).collect();
    trace
        .chunks_exact(4)
        .filter_map(|id| {
            let id = u32::from_le_bytes(id.try_into().expect("4 bytes"));
            by_anchor.get(anchor.get(&id)?).copied()
        })
        .flat_map(u32::to_le_bytes)
        .collect()
}

/// The edge-map counts a trace implies: `(prev << 28) | id`, prev 0 at first.
fn edges_of(trace: &[u8]) -> BTreeMap<u64, u64> {
    let mut edges = BTreeMap::new();
    let mut prev = 0u64;
    for id in trace.chunks_exact(4) {
        let id = u64::from(u32::from_le_bytes(id.try_into().expect("4 bytes")));
        *edges.entry((prev << 28) | id).or_default() += 1;
        prev = id;
    }
    edges
}

fn first_difference(name: &str, expected: &str, actual: &str) -> String {
    let line = expected
        .lines()
        .zip(actual.lines())
        .position(|(e, a)| e != a);
    let line = line.unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
    format!(
        "{name} differs from line {}:\n  original:     {:?}\n  instrumented: {:?}\n--- original {name}\n{expected}\n--- instrumented {name}\n{actual}",
        line + 1,
        expected.lines().nth(line).unwrap_or("<end>"),
        actual.lines().nth(line).unwrap_or("<end>"),
    )
}

/// What one fixture showed: the kinds of the blocks its trace hit, the
/// instrumented copies (for the AST check), and the comparison log.
struct Checked {
    hit: BTreeSet<BlockKind>,
    copies: Vec<PathBuf>,
    cmplog: Vec<u8>,
}

fn check_fixture(php: &Path, fixture: &Path, work: &Path) -> Checked {
    let name = fixture.file_name().expect("file name");
    let source = std::fs::read(fixture).expect("read fixture");
    let plan = Plan::new(&source, Coverage::Full).unwrap_or_else(|reason| {
        panic!(
            "{}: fixtures must be instrumentable: {reason}",
            fixture.display()
        )
    });
    let first = php_fuzz_instrument::BlockId(1);
    let shown_dir = fixture.parent().expect("fixture dir");
    let stem = name.to_string_lossy().into_owned();
    std::fs::create_dir_all(work).expect("create work dir");

    let original = run(
        php,
        fixture,
        shown_dir,
        &work.join(format!("{stem}-original")),
    );
    assert!(
        original.trace.is_empty() && original.edges.is_empty(),
        "{}: the original recorded coverage",
        fixture.display()
    );

    let pruned_plan = Plan::new(&source, Coverage::Pruned).expect("parsed in full coverage");
    let mut blocks: Vec<Block> = Vec::new();
    let mut pruned_blocks: Vec<Block> = Vec::new();
    let mut traces = Vec::new();
    let mut copies = Vec::new();
    for (style, label) in [
        (StubStyle::Trace, "trace"),
        (StubStyle::EdgeMap, "edge-map"),
        (StubStyle::Trace, "cmplog"),
        (StubStyle::Trace, "pruned"),
    ] {
        let instrumented = match label {
            "cmplog" => plan.render_cmplog(first, 1, style),
            "pruned" => pruned_plan.render(first, style),
            _ => plan.render(first, style),
        };
        let dir = work.join(label);
        std::fs::create_dir_all(&dir).expect("create dir");
        let copy = dir.join(name);
        std::fs::write(&copy, &instrumented.source).expect("write instrumented copy");
        let result = run(php, &copy, shown_dir, &work.join(format!("{stem}-{label}")));
        let context = format!("{} ({label} style)", fixture.display());
        assert_eq!(
            original.output.exit, result.output.exit,
            "{context}: exit code differs\n--- stderr\n{}",
            result.output.stderr
        );
        assert!(
            original.output.stdout == result.output.stdout,
            "{context}: {}",
            first_difference("stdout", &original.output.stdout, &result.output.stdout)
        );
        assert!(
            original.output.stderr == result.output.stderr,
            "{context}: {}",
            first_difference("stderr", &original.output.stderr, &result.output.stderr)
        );
        if label == "pruned" {
            pruned_blocks = instrumented.blocks;
        } else {
            blocks = instrumented.blocks;
        }
        traces.push(result);
        copies.push(copy);
    }
    let (trace_run, edge_run, cmplog_run) = (&traces[0], &traces[1], &traces[2]);
    assert_eq!(
        keep_surviving(&trace_run.trace, &blocks, &pruned_blocks),
        traces[3].trace,
        "{}: the pruned run did not record exactly the full run's surviving blocks",
        fixture.display()
    );
    assert!(
        original.cmplog.is_empty() && trace_run.cmplog.is_empty() && edge_run.cmplog.is_empty(),
        "{}: only the cmplog rendering may log comparisons",
        fixture.display()
    );
    assert!(
        cmplog_run.trace == trace_run.trace,
        "{}: the cmplog rendering ran other blocks than the trace style",
        fixture.display()
    );
    assert!(
        !trace_run.trace.is_empty(),
        "{}: the instrumented program recorded nothing",
        fixture.display()
    );
    assert_eq!(
        trace_run.trace.len() % 4,
        0,
        "{}: trace is not a list of 4-byte ids",
        fixture.display()
    );
    assert!(
        trace_run.edges.is_empty() && edge_run.trace.is_empty(),
        "{}: a style recorded the other's data",
        fixture.display()
    );
    let by_id: BTreeMap<u32, BlockKind> = blocks.iter().map(|b| (b.id.0, b.kind)).collect();
    let mut hit = BTreeSet::new();
    for id in trace_run.trace.chunks_exact(4) {
        let id = u32::from_le_bytes(id.try_into().expect("4 bytes"));
        let kind = by_id
            .get(&id)
            .unwrap_or_else(|| panic!("{}: trace holds unknown block id {id}", fixture.display()));
        hit.insert(*kind);
    }
    assert!(
        hit.contains(&BlockKind::FileEntry),
        "{}: the file entry did not run",
        fixture.display()
    );
    assert_eq!(
        edges_of(&trace_run.trace),
        edge_run.edges,
        "{}: the edge-map style counted other edges than the trace style implies",
        fixture.display()
    );
    Checked {
        hit,
        copies,
        cmplog: cmplog_run.cmplog.clone(),
    }
}

#[test]
fn instrumented_programs_behave_exactly_like_the_originals() {
    let Some(php) = common::php() else { return };
    let fixtures = fixtures();
    assert!(
        fixtures.len() >= 25,
        "expected the behaviour fixtures, found {}",
        fixtures.len()
    );
    let work = tempfile::tempdir().expect("temp dir");
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let (hit, ast_pairs): (BTreeSet<BlockKind>, Vec<(PathBuf, PathBuf)>) =
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|worker| {
                    let (php, fixtures, work, next) = (&php, &fixtures, work.path(), &next);
                    scope.spawn(move || {
                        let mut hit = BTreeSet::new();
                        let mut pairs = Vec::new();
                        let work = work.join(format!("worker-{worker}"));
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(fixture) = fixtures.get(i) else {
                                break;
                            };
                            let checked = check_fixture(php, fixture, &work);
                            hit.extend(checked.hit);
                            pairs.extend(
                                checked
                                    .copies
                                    .into_iter()
                                    .map(|copy| (fixture.clone(), copy)),
                            );
                            if fixture.file_name().is_some_and(|n| n == "comparisons.php") {
                                check_comparison_log(&checked.cmplog);
                            }
                        }
                        (hit, pairs)
                    })
                })
                .collect();
            let mut all = (BTreeSet::new(), Vec::new());
            for worker in workers {
                let (hit, pairs) = worker
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e));
                all.0.extend(hit);
                all.1.extend(pairs);
            }
            all
        });
    if let Some(oracle) = common::ast_oracle() {
        let verdicts = common::ast_verdicts(&php, &oracle, &ast_pairs, work.path());
        let failed: Vec<&String> = verdicts.iter().filter(|v| !v.starts_with("OK ")).collect();
        assert!(
            failed.is_empty() && verdicts.len() == ast_pairs.len(),
            "AST changed:\n{failed:#?}"
        );
    }
    let never: Vec<BlockKind> = ALL_KINDS
        .iter()
        .copied()
        .filter(|k| runs_on_php_82(*k) && !hit.contains(k))
        .collect();
    assert!(never.is_empty(), "no fixture ran a block of kind {never:?}");
    eprintln!(
        "behaviour: {} fixtures identical in both stub styles and in the cmplog rendering",
        fixtures.len()
    );
}

/// One logged comparison, as `php-runtime/CmpLog.php` writes it.
#[derive(Debug, PartialEq)]
enum Logged {
    Int(i64),
    Float(f64),
    Bytes(Vec<u8>),
}

fn decode_comparison_log(mut log: &[u8]) -> Vec<(u32, u8, Logged, Logged)> {
    fn take<'a>(log: &mut &'a [u8], n: usize) -> &'a [u8] {
        let (head, rest) = log.split_at(n);
        *log = rest;
        head
    }
    fn operand(log: &mut &[u8]) -> Logged {
        match take(log, 1)[0] {
            1 => Logged::Int(i64::from_le_bytes(take(log, 8).try_into().unwrap())),
            2 => Logged::Float(f64::from_le_bytes(take(log, 8).try_into().unwrap())),
            3 => {
                take(log, 4);
                let n = take(log, 1)[0] as usize;
                Logged::Bytes(take(log, n).to_vec())
            }
            other => panic!("unknown operand type {other}"),
        }
    }
    let mut records = Vec::new();
    while !log.is_empty() {
        let site = u32::from_le_bytes(take(&mut log, 4).try_into().unwrap());
        let kind = take(&mut log, 1)[0];
        let a = operand(&mut log);
        let b = operand(&mut log);
        records.push((site, kind, a, b));
    }
    records
}

/// The comparisons fixture logs what its comparisons saw, and only that.
fn check_comparison_log(log: &[u8]) {
    let records = decode_comparison_log(log);
    let has = |a: Logged, b: Logged| records.iter().any(|r| r.2 == a && r.3 == b);
    let bytes = |s: &str| Logged::Bytes(s.as_bytes().to_vec());
    for (a, b) in [
        (bytes("IHDR"), bytes("PLTE")),
        (bytes("tEXt"), bytes("IEND")),
        (Logged::Int(7), Logged::Int(42)),
        (bytes("needle"), bytes("hay")),
        (bytes("Key"), bytes("key")),
        (bytes("GIF"), bytes("GIF")),
        (Logged::Float(1.5), Logged::Float(2.5)),
        (bytes("nope"), bytes("show")),
    ] {
        assert!(has(a, b), "comparison log lacks a record: {records:#?}");
    }
    assert!(
        !records.iter().any(|r| r.2 == bytes("to-string called")),
        "an object was converted to a string"
    );
}

const ALL_KINDS: &[BlockKind] = &[
    BlockKind::FileEntry,
    BlockKind::FunctionEntry,
    BlockKind::MethodEntry,
    BlockKind::ClosureEntry,
    BlockKind::PropertyHook,
    BlockKind::IfBranch,
    BlockKind::ElseIfBranch,
    BlockKind::ElseBranch,
    BlockKind::AfterIf,
    BlockKind::LoopBody,
    BlockKind::LoopExit,
    BlockKind::SwitchCase,
    BlockKind::AfterSwitch,
    BlockKind::TryBody,
    BlockKind::Catch,
    BlockKind::Finally,
    BlockKind::AfterTry,
    BlockKind::GotoLabel,
    BlockKind::ShortCircuit,
    BlockKind::Coalesce,
    BlockKind::TernaryThen,
    BlockKind::TernaryElse,
    BlockKind::MatchArm,
    BlockKind::ArrowFunctionBody,
    BlockKind::YieldResume,
];

/// Whether PHP 8.2 can run a block of this kind. The match is exhaustive,
/// so a new kind does not compile until it is listed here, and in ALL_KINDS
/// just above.
fn runs_on_php_82(kind: BlockKind) -> bool {
    match kind {
        // Property hooks are PHP 8.4.
        BlockKind::PropertyHook => false,
        BlockKind::FileEntry
        | BlockKind::FunctionEntry
        | BlockKind::MethodEntry
        | BlockKind::ClosureEntry
        | BlockKind::IfBranch
        | BlockKind::ElseIfBranch
        | BlockKind::ElseBranch
        | BlockKind::AfterIf
        | BlockKind::LoopBody
        | BlockKind::LoopExit
        | BlockKind::SwitchCase
        | BlockKind::AfterSwitch
        | BlockKind::TryBody
        | BlockKind::Catch
        | BlockKind::Finally
        | BlockKind::AfterTry
        | BlockKind::GotoLabel
        | BlockKind::ShortCircuit
        | BlockKind::Coalesce
        | BlockKind::TernaryThen
        | BlockKind::TernaryElse
        | BlockKind::MatchArm
        | BlockKind::ArrowFunctionBody
        | BlockKind::YieldResume => true,
    }
}

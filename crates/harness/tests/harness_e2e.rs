//! The harness against real `php` processes and real fixture targets.

mod common;

use std::time::{Duration, Instant};

use common::{executor, executor_with, repo, run};
use php_fuzz_harness::{Batch, CrashKind, Executor, HarnessError};
use php_fuzz_instrument::StubStyle;

#[test]
fn ok_runs_report_coverage_and_exceptions_are_crashes() {
    let mut ex = executor("fixtures/targets/nested_bytes.php");
    let results = run(&mut ex, &[b"", b"F", b"FUZZ", b"BUGGY", b"FU"]);
    assert!(results[0].0.is_none());
    assert!(results[0].1 >= 1, "the closure's entry block ran");
    assert!(
        results[2].0.is_none(),
        "LogicException is an allowed Exception"
    );
    assert!(results[2].1 > results[1].1, "more branches, more blocks");
    let crash = results[3].0.as_ref().expect("BUG throws an Error");
    assert_eq!(crash.kind, CrashKind::Exception);
    assert_eq!(crash.problem.class, "Error");
    assert!(crash.problem.file.ends_with("nested_bytes.php"));
    assert_eq!(crash.problem.line, 17);
    assert!(
        results[4].0.is_none(),
        "runs after a crash go on in the same batch"
    );
    assert_eq!(
        ex.stats().harness_starts,
        1,
        "an exception does not kill the harness"
    );
}

#[test]
fn warnings_are_crashes_with_their_location() {
    let mut ex = executor("fixtures/targets/warning_offset.php");
    let results = run(&mut ex, &[b"<<x", b"<", b"<<"]);
    let crash = results[0].0.as_ref().unwrap();
    assert_eq!(crash.kind, CrashKind::Warning);
    assert_eq!(crash.problem.class, "Warning");
    assert!(
        crash
            .problem
            .message
            .contains("Uninitialized string offset"),
        "{}",
        crash.problem.message
    );
    assert_eq!(crash.problem.line, 5);
    assert!(results[1].0.is_none());
    assert!(results[2].0.is_some());
}

#[test]
fn type_errors_carry_a_trace_into_the_library() {
    let mut ex = executor("fixtures/targets/type_error.php");
    let results = run(&mut ex, &[b"a;b", b"a;b;c"]);
    assert!(results[0].0.is_none());
    let crash = results[1].0.as_ref().unwrap();
    assert_eq!(crash.problem.class, "TypeError");
    assert_eq!(crash.problem.line, 5);
    let functions: Vec<_> = crash
        .problem
        .frames
        .iter()
        .map(|f| f.function.as_str())
        .collect();
    assert_eq!(functions.first(), Some(&"strtoupper()"), "{functions:?}");
    assert!(functions.contains(&"describe()"), "{functions:?}");
    assert!(crash.problem.trace.contains("describe()"));
    assert!(
        !crash.problem.trace.contains("Harness"),
        "harness frames are cut: {}",
        crash.problem.trace
    );
}

#[test]
fn a_timeout_is_reported_with_where_it_looped_and_the_harness_restarts() {
    let mut ex = executor_with(
        &repo().join("fixtures/targets/infinite_loop.php"),
        StubStyle::Trace,
        |c| {
            c.timeout = Duration::from_secs(1);
        },
    );
    let started = Instant::now();
    let results = run(&mut ex, &[b"L", b"LOO", b"x"]);
    assert!(results[0].0.is_none());
    let crash = results[1].0.as_ref().unwrap();
    assert_eq!(crash.kind, CrashKind::Timeout);
    assert!(
        crash.problem.frames.iter().any(|f| f.function == "spin()"),
        "{:?}",
        crash.problem
    );
    assert!(
        results[2].0.is_none(),
        "the input after the timeout still ran"
    );
    assert!(started.elapsed() < Duration::from_secs(8));
    assert_eq!(ex.stats().harness_starts, 2);
}

#[test]
fn exit_in_the_target_is_a_crash_located_at_the_last_block() {
    let mut ex = executor("fixtures/targets/exit_in_target.php");
    let results = run(&mut ex, &[b"Q", b"QUI", b"QU"]);
    let crash = results[1].0.as_ref().unwrap();
    assert_eq!(crash.kind, CrashKind::Exit);
    assert!(
        crash.problem.file.ends_with("exit_in_target.php"),
        "{:?}",
        crash.problem
    );
    assert!(results[0].0.is_none() && results[2].0.is_none());
}

#[test]
fn memory_exhaustion_is_out_of_memory() {
    let mut ex = executor("fixtures/targets/memory_hog.php");
    let results = run(&mut ex, &[b"M", b"MEM", b"ME"]);
    let crash = results[1].0.as_ref().unwrap();
    assert_eq!(crash.kind, CrashKind::OutOfMemory, "{crash:?}");
    assert!(
        crash.problem.message.contains("Allowed memory size"),
        "{:?}",
        crash.problem
    );
    assert!(results[2].0.is_none());
}

#[test]
fn unbounded_recursion_is_a_stack_overflow() {
    let mut ex = executor("fixtures/targets/recursion.php");
    let results = run(&mut ex, &[b"((", b"()"]);
    let crash = results[0].0.as_ref().unwrap();
    assert_eq!(crash.kind, CrashKind::StackOverflow, "{crash:?}");
    assert!(crash.problem.file.ends_with("recursion.php"));
    assert!(results[1].0.is_none());
}

#[test]
fn lazily_autoloaded_files_are_instrumented_mid_batch() {
    let mut ex = executor("fixtures/targets/autoloaded_crash.php");
    let before = ex.sources().files().len();
    let results = run(&mut ex, &[b"x", b"{}!", b"{ab"]);
    let crash = results[1].0.as_ref().unwrap();
    assert_eq!(crash.problem.class, "TypeError");
    assert!(crash.problem.file.ends_with("LazyParser.php"));
    let files = ex.sources().files();
    assert!(files.len() > before);
    assert!(
        files
            .iter()
            .any(|f| f.path.ends_with("lib/LazyParser.php") && !f.blocks.is_empty())
    );
    assert!(
        results[2].1 > results[0].1,
        "blocks of the lazily loaded class count"
    );
}

#[test]
fn edge_map_style_runs_the_same_oracle() {
    let mut ex = executor_with(
        &repo().join("fixtures/targets/nested_bytes.php"),
        StubStyle::EdgeMap,
        |_| {},
    );
    let mut batch = Batch::new();
    batch.push(b"FUZ");
    batch.push(b"BUG");
    let mut out = Vec::new();
    ex.run_batch(&batch, |r| {
        out.push((r.crash.is_some(), r.coverage.last.len()))
    })
    .unwrap();
    assert!(!out[0].0);
    assert!(out[0].1 >= 12 && out[0].1 % 12 == 0, "edge/count pairs");
    assert!(out[1].0);
}

fn load_error(target: &str) -> String {
    let mut ex = executor(target);
    match ex.start() {
        Ok(_) => panic!("{target} loaded"),
        Err(HarnessError::Load(failure)) => failure.to_string(),
        Err(other) => panic!("unexpected error {other}"),
    }
}

#[test]
fn target_files_that_cannot_load_say_why_and_where() {
    let syntax = load_error("fixtures/bad-targets/syntax_error.php");
    assert!(
        syntax.contains("syntax error") && syntax.contains("syntax_error.php:4"),
        "{syntax}"
    );
    let missing = load_error("fixtures/bad-targets/no_target.php");
    assert!(missing.contains("setTarget"), "{missing}");
    let throws = load_error("fixtures/bad-targets/throws_on_load.php");
    assert!(
        throws.contains("RuntimeException")
            && throws.contains("settings.ini is missing")
            && throws.contains("throws_on_load.php:4"),
        "{throws}"
    );
    let autoload = load_error("fixtures/bad-targets/missing_autoloader.php");
    assert!(
        autoload.contains("vendor/autoload.php") && autoload.contains("missing_autoloader.php:2"),
        "{autoload}"
    );
}

#[test]
fn file_operations_behave_like_plain_files_under_the_include_wrapper() {
    let mut ex = executor("fixtures/targets/file_ops.php");
    let results = run(&mut ex, &[b"", b"hello", b"\x00\xff binary"]);
    for (crash, _) in &results {
        assert!(
            crash.is_none(),
            "{:?}",
            crash.as_ref().map(|c| c.problem.headline())
        );
    }
    let files = ex.sources().files();
    assert!(
        files.iter().any(|f| f.path.ends_with("lib/template.phtml")),
        "includes are served by the engine"
    );
}

#[test]
fn a_file_reading_its_own_halt_compiler_data_reads_the_right_bytes() {
    // __COMPILER_HALT_OFFSET__ counts in the instrumented code, so the file's
    // own reads must see that code too.
    let mut ex = executor("fixtures/targets/halt_compiler_data.php");
    let results = run(&mut ex, &[b"x"]);
    assert!(
        results[0].0.is_none(),
        "{:?}",
        results[0].0.as_ref().map(|c| c.problem.headline())
    );
    let files = ex.sources().files();
    assert!(
        files
            .iter()
            .any(|f| f.path.ends_with("lib/Installer.php") && f.instrumented.is_some())
    );
}

fn reported(executor: &mut Executor, input: &[u8]) -> String {
    let results = run(executor, &[input]);
    let crash = results[0].0.as_ref().expect("the probe always fails");
    crash.problem.message.clone()
}

#[test]
fn opcache_is_on_by_default_and_caches_the_instrumented_target() {
    let target = repo().join("fixtures/targets/php_settings.php");
    let mut ex = executor_with(&target, StubStyle::Trace, |_| {});
    assert_eq!(
        reported(&mut ex, b"opcache.enable_cli"),
        "opcache.enable_cli='1'"
    );
    assert_eq!(reported(&mut ex, b"opcache-cached"), "opcache-cached=true");

    let mut off = executor_with(&target, StubStyle::Trace, |config| {
        config.ini.push(("opcache.enable_cli".into(), "0".into()));
    });
    assert_eq!(
        reported(&mut off, b"opcache.enable_cli"),
        "opcache.enable_cli='0'"
    );
    assert_eq!(
        reported(&mut off, b"opcache-cached"),
        "opcache-cached=false"
    );
}

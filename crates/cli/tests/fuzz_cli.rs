//! `php-fuzz fuzz` end to end: real php processes, fixture targets with planted bugs.

mod common;

use std::fs;
use std::path::Path;

use common::{artifacts, fixture, php_fuzz, sidecar};

/// Fuzzes `target` in a fresh temp dir until the first distinct crash.
fn find_first_bug(target: &str, extra: &[&str]) -> (tempfile::TempDir, common::Run) {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture(target);
    let mut args = vec![
        "fuzz",
        target.to_str().unwrap(),
        "corpus",
        "--seed",
        "1",
        "--max-runs",
        "300000",
        "--max-crashes",
        "1",
        "--timeout",
        "1",
        "--rss-limit-mb",
        "256",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let run = php_fuzz(&args, dir.path());
    (dir, run)
}

fn assert_single_artifact(
    dir: &Path,
    prefix: &str,
    kind: &str,
    file_suffix: &str,
    line: u64,
    run: &common::Run,
) -> serde_json::Value {
    let found = artifacts(dir, prefix);
    assert_eq!(
        found.len(),
        1,
        "one {prefix} artifact expected\n{}",
        run.all()
    );
    let record = sidecar(&found[0]);
    assert_eq!(record["kind"], kind, "{record:#}\n{}", run.all());
    assert!(
        record["file"].as_str().unwrap().ends_with(file_suffix),
        "{record:#}"
    );
    assert_eq!(record["line"], line, "{record:#}");
    let input = fs::read(&found[0]).unwrap();
    assert_eq!(record["input_size"], input.len() as u64);
    assert!(
        record["reproduce"]
            .as_str()
            .unwrap()
            .contains("php-fuzz run-single"),
        "{record:#}"
    );
    assert!(
        run.stderr().contains("reproduce: php-fuzz run-single"),
        "{}",
        run.all()
    );
    record
}

#[test]
fn finds_a_nested_byte_by_byte_check() {
    let (dir, run) = find_first_bug("targets/nested_bytes.php", &[]);
    assert_eq!(run.code(), 77, "{}", run.all());
    let record = assert_single_artifact(
        dir.path(),
        "crash-",
        "exception",
        "nested_bytes.php",
        17,
        &run,
    );
    assert_eq!(record["class"], "Error");
    assert!(
        fs::read(artifacts(dir.path(), "crash-")[0].clone())
            .unwrap()
            .starts_with(b"BUG")
    );
}

#[test]
fn finds_a_type_error() {
    let (dir, run) = find_first_bug("targets/type_error.php", &[]);
    assert_eq!(run.code(), 77, "{}", run.all());
    let record =
        assert_single_artifact(dir.path(), "crash-", "exception", "type_error.php", 5, &run);
    assert_eq!(record["class"], "TypeError");
}

#[test]
fn finds_a_string_offset_warning() {
    let (dir, run) = find_first_bug("targets/warning_offset.php", &[]);
    assert_eq!(run.code(), 77, "{}", run.all());
    let record = assert_single_artifact(
        dir.path(),
        "crash-",
        "warning",
        "warning_offset.php",
        5,
        &run,
    );
    assert!(
        record["message"]
            .as_str()
            .unwrap()
            .contains("Uninitialized string offset")
    );
}

#[test]
fn finds_an_infinite_loop_as_a_timeout() {
    let (dir, run) = find_first_bug("targets/infinite_loop.php", &[]);
    assert_eq!(run.code(), 70, "{}", run.all());
    let found = artifacts(dir.path(), "timeout-");
    assert_eq!(found.len(), 1, "{}", run.all());
    let record = sidecar(&found[0]);
    assert_eq!(record["kind"], "timeout");
    assert!(
        record["trace"].as_str().unwrap().contains("spin()"),
        "{record:#}"
    );
    assert!(fs::read(&found[0]).unwrap().starts_with(b"LOO"));
}

#[test]
fn finds_memory_exhaustion() {
    let (dir, run) = find_first_bug("targets/memory_hog.php", &[]);
    assert_eq!(run.code(), 71, "{}", run.all());
    let found = artifacts(dir.path(), "oom-");
    assert_eq!(found.len(), 1, "{}", run.all());
    let record = sidecar(&found[0]);
    assert_eq!(record["kind"], "out-of-memory");
    assert!(record["file"].as_str().unwrap().ends_with("memory_hog.php"));
}

#[test]
fn finds_infinite_recursion() {
    let (dir, run) = find_first_bug("targets/recursion.php", &[]);
    assert_eq!(run.code(), 77, "{}", run.all());
    let found = artifacts(dir.path(), "crash-");
    assert_eq!(found.len(), 1, "{}", run.all());
    let record = sidecar(&found[0]);
    assert_eq!(record["kind"], "stack-overflow", "{record:#}");
    assert!(record["file"].as_str().unwrap().ends_with("recursion.php"));
    assert!(
        record["note"].as_str().unwrap_or("").contains("recursion"),
        "{record:#}"
    );
}

#[test]
fn finds_exit_inside_the_target() {
    let (dir, run) = find_first_bug("targets/exit_in_target.php", &[]);
    assert_eq!(run.code(), 77, "{}", run.all());
    let found = artifacts(dir.path(), "crash-");
    assert_eq!(found.len(), 1, "{}", run.all());
    let record = sidecar(&found[0]);
    assert_eq!(record["kind"], "exit");
    assert!(
        record["file"]
            .as_str()
            .unwrap()
            .ends_with("exit_in_target.php")
    );
}

#[test]
fn finds_a_crash_in_a_lazily_autoloaded_class() {
    let (dir, run) = find_first_bug("targets/autoloaded_crash.php", &[]);
    assert_eq!(run.code(), 77, "{}", run.all());
    let record = assert_single_artifact(
        dir.path(),
        "crash-",
        "exception",
        "lib/LazyParser.php",
        15,
        &run,
    );
    assert_eq!(record["class"], "TypeError");
}

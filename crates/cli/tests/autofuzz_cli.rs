//! `php-fuzz autofuzz` (docs/autofuzz.md) on the planted package in
//! fixtures/typed-package: each planted bug is reached only by typed
//! arguments (one enum case, a negative integer, an array shape, an object
//! built through an interface), found with no target file written, saved
//! as a readable entry and replayed by `run-single` under the callee's name.
//! Documented exceptions and safe methods give no finding; `@internal` is
//! refused.

mod common;

use std::path::Path;

use common::{Run, fixture, php_fuzz};

fn autoload() -> String {
    fixture("typed-package/autoload.php").display().to_string()
}

/// `php-fuzz autofuzz CALLEE` in `dir` with the planted package's autoloader.
fn autofuzz(dir: &Path, callee: &str, extra: &[&str]) -> Run {
    let autoload = autoload();
    let mut args = vec![
        "autofuzz",
        callee,
        "corpus",
        "--autoload",
        &autoload,
        "--artifact-dir",
        "artifacts",
        "--seed",
        "1",
    ];
    args.extend_from_slice(extra);
    php_fuzz(&args, dir)
}

/// The crash artifacts' entries, as text.
fn findings(dir: &Path) -> Vec<(std::path::PathBuf, String)> {
    common::artifacts(&dir.join("artifacts"), "crash-")
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path, text)
        })
        .collect()
}

#[test]
fn the_enum_bug_is_found_as_a_readable_entry_and_replays_by_the_callee_name() {
    let dir = tempfile::tempdir().unwrap();
    let run = autofuzz(
        dir.path(),
        r"Planted\Renderer::render",
        &["--max-time", "60", "--max-crashes", "1"],
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    assert!(
        run.stderr().contains("with typed arguments"),
        "{}",
        run.all()
    );
    let found = findings(dir.path());
    assert_eq!(found.len(), 1, "{}", run.all());
    let (path, entry) = &found[0];
    let lines: Vec<&str> = entry.lines().collect();
    assert_eq!(lines[0], "php-fuzz arguments v1", "{entry}");
    assert!(lines[1].starts_with(r"new Planted\Renderer("), "{entry}");
    assert!(lines[3] == r"Planted\RenderMode::Debug", "{entry}");
    let replay = php_fuzz(
        &[
            "run-single",
            r"Planted\Renderer::render",
            path.to_str().unwrap(),
            "--autoload",
            &autoload(),
        ],
        dir.path(),
    );
    assert_ne!(replay.code(), 0, "{}", replay.all());
    assert!(
        replay.all().contains(r#"Undefined array key "debug""#),
        "{}",
        replay.all()
    );
}

#[test]
fn a_hand_written_entry_replays_and_a_malformed_one_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("negative-page");
    std::fs::write(&good, "php-fuzz arguments v1\n[\"a\", \"b\"]\n-1\n").unwrap();
    let run = php_fuzz(
        &[
            "run-single",
            r"Planted\Paginator::page",
            good.to_str().unwrap(),
            "--autoload",
            &autoload(),
        ],
        dir.path(),
    );
    assert_ne!(run.code(), 0, "{}", run.all());
    assert!(run.all().contains("DivisionByZeroError"), "{}", run.all());

    let bad = dir.path().join("bad");
    std::fs::write(&bad, "php-fuzz arguments v1\n[\"a\", \"b\"\n").unwrap();
    let run = php_fuzz(
        &[
            "run-single",
            r"Planted\Paginator::page",
            bad.to_str().unwrap(),
            "--autoload",
            &autoload(),
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 1, "{}", run.all());
    assert!(run.stderr().contains("bad:"), "{}", run.all());
}

#[test]
fn documented_exceptions_and_safe_code_give_no_finding() {
    for callee in [r"Planted\Validator::between", r"Planted\Validator::slug"] {
        let dir = tempfile::tempdir().unwrap();
        let run = autofuzz(dir.path(), callee, &["--max-runs", "3000"]);
        assert_eq!(run.code(), 0, "{callee}: {}", run.all());
        assert!(
            run.stderr().contains("0 rejected by the callee's types"),
            "{}",
            run.all()
        );
    }
}

#[test]
fn an_internal_class_is_refused_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let run = autofuzz(
        dir.path(),
        r"Planted\Internal\Buffer::take",
        &["--max-runs", "10"],
    );
    assert_eq!(run.code(), 1, "{}", run.all());
    assert!(run.stderr().contains("@internal"), "{}", run.all());
}

#[test]
fn write_test_writes_a_target_that_fuzz_runs() {
    let dir = tempfile::tempdir().unwrap();
    let run = autofuzz(
        dir.path(),
        r"Planted\Paginator::page",
        &["--max-runs", "200", "--write-test", "written"],
    );
    assert!(run.code() == 0 || run.code() == 77, "{}", run.all());
    let written = dir.path().join("written/planted-paginator-page.php");
    let source = std::fs::read_to_string(&written).unwrap_or_else(|_| panic!("{}", run.all()));
    assert!(source.contains(r"Autofuzz::configure($config, 'Planted\\Paginator::page'"));
    let again = php_fuzz(
        &["fuzz", written.to_str().unwrap(), "--max-runs", "100"],
        dir.path(),
    );
    assert!(again.code() == 0 || again.code() == 77, "{}", again.all());
}

#[test]
fn merge_and_report_coverage_take_a_callee_and_its_entries() {
    let dir = tempfile::tempdir().unwrap();
    let run = autofuzz(
        dir.path(),
        r"Planted\Validator::slug",
        &["--max-runs", "2000"],
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    let autoload = autoload();
    let merged = php_fuzz(
        &[
            "merge",
            r"Planted\Validator::slug",
            "merged",
            "corpus",
            "--autoload",
            &autoload,
        ],
        dir.path(),
    );
    assert_eq!(merged.code(), 0, "{}", merged.all());
    let kept = std::fs::read_dir(dir.path().join("merged"))
        .unwrap()
        .count();
    assert!(kept > 0, "{}", merged.all());
    let report = php_fuzz(
        &[
            "report-coverage",
            r"Planted\Validator::slug",
            "merged",
            "report",
            "--autoload",
            &autoload,
        ],
        dir.path(),
    );
    assert_eq!(report.code(), 0, "{}", report.all());
    let coverage = std::fs::read_to_string(dir.path().join("report/coverage.json")).unwrap();
    assert!(coverage.contains("Validator.php"), "{coverage}");
}

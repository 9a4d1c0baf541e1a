//! PHPUnit's hook methods around a fuzz test's inputs (docs/phpunit.md,
//! "Hook methods"): php-fuzz runs setUp(), `@before`, `@after` and the rest
//! in the order Debian's phpunit 9.6 runs them around a replayed input, on
//! the sample project of phpunit_fuzz_tests.rs with the fixture tests of
//! fixtures/phpunit/hooks/ in its tests/ folder.

mod common;

use std::fs;
use std::process::{Command, Output};

use common::composer::{Project, USER_PATH, copy_tree, describe, text};

/// What fixtures/phpunit/hooks/HooksFuzzTest.php's methods log before the
/// first input, and after the last (PHPUnit 9.6 reads no attributes).
const BEFORE_CLASS: &[&str] = &["openBase", "openChild", "setUpBeforeClass"];
const BEFORE: &[&str] = &[
    "prepareBase",
    "prepareEitherWay",
    "prepareSecond",
    "prepareFirst",
    "setUp",
];
const AFTER: &[&str] = &["tearDown", "cleanUp", "cleanBase"];
const AFTER_CLASS: &[&str] = &["tearDownAfterClass", "closeChild", "closeBase"];

fn project() -> Project {
    let project = Project::from_fixture("phpunit/project");
    copy_tree(
        &common::fixture("phpunit/hooks"),
        &project.path().join("tests"),
    );
    project
}

/// Debian's phpunit in the project, as CI runs it.
fn phpunit(project: &Project, args: &[&str]) -> Output {
    Command::new("phpunit")
        .args(args)
        .current_dir(project.path())
        .env_clear()
        .env("PATH", USER_PATH)
        .env("HOME", project.path().join("home"))
        .output()
        .expect("running phpunit")
}

/// `vendor/bin/php-fuzz ARGS` with this build's binary.
fn php_fuzz(project: &Project, args: &[&str]) -> Output {
    project
        .launcher("http://127.0.0.1:1")
        .env("PHP_FUZZ_BINARY", common::bin())
        .args(args)
        .output()
        .unwrap()
}

/// The lines HooksFuzzTest's methods appended to hooks.log; empties it.
fn take_log(project: &Project) -> Vec<String> {
    let path = project.path().join("hooks.log");
    let log = fs::read_to_string(&path).unwrap_or_default();
    let _ = fs::remove_file(path);
    log.lines().map(String::from).collect()
}

/// The groups of lines, one after the other.
fn lines(groups: &[&[&str]]) -> Vec<String> {
    groups.concat().into_iter().map(String::from).collect()
}

#[test]
fn phpunit_and_php_fuzz_run_the_same_hook_methods_in_the_same_order() {
    let project = project();
    let replay = phpunit(
        &project,
        &["--filter", "fuzzRecord", "tests/HooksFuzzTest.php"],
    );
    assert_eq!(replay.status.code(), Some(0), "{}", describe(&replay));
    let by_phpunit = take_log(&project);
    let expected = lines(&[
        BEFORE_CLASS,
        BEFORE,
        &["checkBefore", "fuzzRecord 1", "checkAfter"],
        AFTER,
        BEFORE,
        &["checkBefore", "fuzzRecord 2", "checkAfter"],
        AFTER,
        AFTER_CLASS,
    ]);
    assert_eq!(by_phpunit, expected, "phpunit 9.6's own order");

    // The hooks write hooks.log while an input runs: a side effect.
    let run = php_fuzz(
        &project,
        &[
            "run-single",
            "tests/HooksFuzzTest.php::fuzzRecord",
            "tests/fuzz/HooksFuzzTest/fuzzRecord",
            "--allow-side-effects",
        ],
    );
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
    assert_eq!(take_log(&project), by_phpunit, "{}", describe(&run));
}

#[test]
fn set_up_once_runs_the_before_hooks_once_and_the_after_hooks_as_the_process_ends() {
    let project = project();
    let run = php_fuzz(
        &project,
        &[
            "run-single",
            "tests/HooksFuzzTest.php::fuzzOnce",
            "tests/fuzz/HooksFuzzTest/fuzzOnce",
            "--allow-side-effects",
        ],
    );
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
    let expected = lines(&[
        BEFORE_CLASS,
        BEFORE,
        &["checkBefore", "fuzzOnce 1", "checkAfter"],
        &["checkBefore", "fuzzOnce 2", "checkAfter"],
        AFTER,
        AFTER_CLASS,
    ]);
    assert_eq!(take_log(&project), expected, "{}", describe(&run));
}

#[test]
fn a_bug_behind_a_before_method_is_found_and_the_after_method_keeps_inputs_apart() {
    let project = project();
    let green = phpunit(&project, &["tests/BeforeFuzzTest.php"]);
    assert_eq!(green.status.code(), Some(0), "{}", describe(&green));

    let fuzz = php_fuzz(
        &project,
        &[
            "fuzz",
            "tests/BeforeFuzzTest.php",
            "--max-time",
            "30",
            "--seed",
            "1",
            "--max-crashes",
            "1",
        ],
    );
    assert_eq!(fuzz.status.code(), Some(77), "{}", describe(&fuzz));
    assert!(
        text(&fuzz.stderr).contains("planted bug: a record with a third field"),
        "only the planted bug is found: {}",
        describe(&fuzz)
    );
    let folder = project.path().join("tests/fuzz/BeforeFuzzTest/fuzzSplit");
    let findings: Vec<_> = fs::read_dir(&folder)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap() != "seed")
        .collect();
    assert_eq!(findings.len(), 1, "{findings:?}");
    let finding = fs::read(&findings[0]).unwrap();
    assert!(
        finding.iter().filter(|&&b| b == b',').count() >= 2,
        "{finding:?}"
    );

    let red = phpunit(&project, &["tests/BeforeFuzzTest.php"]);
    assert_eq!(red.status.code(), Some(1), "{}", describe(&red));
    assert!(
        text(&red.stdout).contains("planted bug: a record with a third field"),
        "{}",
        describe(&red)
    );
}

//! Campaign behaviour of `php-fuzz fuzz`: going on after crashes, resuming,
//! seeds, limits, bad input.

mod common;

use std::fs;

use common::{artifacts, fixture, php_fuzz, sidecar};

fn fuzz(args: &[&str], cwd: &std::path::Path) -> common::Run {
    let mut all = vec!["fuzz"];
    all.extend_from_slice(args);
    php_fuzz(&all, cwd)
}

#[test]
fn keeps_fuzzing_after_crashes_and_restarts_the_harness() {
    let dir = tempfile::tempdir().unwrap();
    // exit() kills the harness each time it runs; the campaign must go on.
    // Two seeds hit the same bug: one artifact, two hits, a restart each.
    fs::create_dir_all(dir.path().join("corpus")).unwrap();
    fs::write(dir.path().join("corpus/a"), b"QUI").unwrap();
    fs::write(dir.path().join("corpus/b"), b"QUIT").unwrap();
    fs::write(dir.path().join("corpus/c"), b"Q").unwrap();
    let target = fixture("targets/exit_in_target.php");
    let run = fuzz(
        &[
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "3",
            "--max-runs",
            "20000",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    let err = run.stderr();
    assert!(err.contains("reached --max-runs"), "{}", run.all());
    let found = artifacts(dir.path(), "crash-");
    assert_eq!(
        found.len(),
        1,
        "one distinct bug, saved once\n{}",
        run.all()
    );
    let summary = err
        .lines()
        .find(|l| l.contains("hit ") && l.contains("times"))
        .expect("summary lists the crash");
    let hits: u64 = summary
        .split("hit ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(hits >= 2, "duplicates are counted: {summary}");
    let starts = err.lines().find(|l| l.contains("harness started")).unwrap();
    let starts: u64 = starts
        .split("harness started ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        starts > hits,
        "each exit() restarts the harness: {starts} starts for {hits} hits"
    );
    let record = sidecar(&found[0]);
    assert_eq!(record["kind"], "exit");
}

#[test]
fn seeds_survive_and_a_crashing_seed_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    fs::create_dir_all(corpus.join("nested")).unwrap();
    fs::write(corpus.join("seed-ok"), b"FU").unwrap();
    fs::write(corpus.join("nested/seed-crash"), b"BUG!").unwrap();
    let target = fixture("targets/nested_bytes.php");
    let run = fuzz(
        &[
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "5",
            "--max-runs",
            "20000",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    assert_eq!(
        fs::read(corpus.join("seed-ok")).unwrap(),
        b"FU",
        "seeds are never rewritten"
    );
    assert_eq!(fs::read(corpus.join("nested/seed-crash")).unwrap(), b"BUG!");
    let found = artifacts(dir.path(), "crash-");
    assert_eq!(found.len(), 1, "{}", run.all());
    assert!(
        run.stderr().contains("reached --max-runs"),
        "fuzzing went on after the crashing seed\n{}",
        run.all()
    );
    let written: Vec<_> = fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(written.len() > 3, "new entries were written: {written:?}");
}

#[test]
fn resuming_continues_from_the_corpus_and_knows_earlier_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("targets/nested_bytes.php");
    let t = target.to_str().unwrap();
    let first = fuzz(
        &[t, "corpus", "--seed", "7", "--max-runs", "30000"],
        dir.path(),
    );
    assert_eq!(first.code(), 77, "{}", first.all());
    let cov = |run: &common::Run| -> u64 {
        let line = run
            .stderr()
            .lines()
            .find(|l| l.contains(" INITED "))
            .map(str::to_string)
            .unwrap();
        line.split("cov: ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    // The crash input, kept as a seed, hits the known bug right away.
    let crash = artifacts(dir.path(), "crash-").remove(0);
    fs::create_dir_all(dir.path().join("corpus/regressions")).unwrap();
    fs::copy(&crash, dir.path().join("corpus/regressions/bug")).unwrap();
    let second = fuzz(
        &[t, "corpus", "--seed", "8", "--max-runs", "2000"],
        dir.path(),
    );
    assert!(
        cov(&second) > cov(&first),
        "the second run starts with the first run's coverage\n{}",
        second.all()
    );
    assert_eq!(
        artifacts(dir.path(), "crash-").len(),
        1,
        "the known crash is not saved again\n{}",
        second.all()
    );
    assert!(
        second.stderr().contains("known exception hit again"),
        "{}",
        second.all()
    );
    assert!(
        second.stderr().contains("saved earlier"),
        "{}",
        second.all()
    );
    assert_eq!(
        second.code(),
        77,
        "a known crash hit again still fails the run\n{}",
        second.all()
    );
}

#[test]
fn the_same_seed_replays_the_same_campaign() {
    let target = fixture("json-parser/target.php");
    let run_once = || {
        let dir = tempfile::tempdir().unwrap();
        let run = fuzz(
            &[
                target.to_str().unwrap(),
                "corpus",
                "--seed",
                "42",
                "--max-runs",
                "3000",
            ],
            dir.path(),
        );
        let mut names: Vec<_> = fs::read_dir(dir.path().join("corpus"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        (names, run.code())
    };
    let (a, code_a) = run_once();
    let (b, code_b) = run_once();
    assert!(a.len() > 5);
    assert_eq!(a, b, "same corpus from the same seed");
    assert_eq!(code_a, code_b);
}

#[test]
fn two_jobs_find_the_planted_bugs() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("targets/nested_bytes.php");
    let run = fuzz(
        &[
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "1",
            "-j",
            "2",
            "--max-crashes",
            "1",
            "--max-runs",
            "300000",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    let found = artifacts(dir.path(), "crash-");
    assert_eq!(found.len(), 1);
    assert_eq!(sidecar(&found[0])["class"], "Error");
}

#[test]
fn without_a_corpus_argument_a_temporary_one_is_used_and_printed() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("targets/noop.php");
    let run = fuzz(&[target.to_str().unwrap(), "--max-runs", "100"], dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(
        run.stderr().contains("no corpus directory given; using"),
        "{}",
        run.all()
    );
}

#[test]
fn bad_input_gets_a_one_line_error_naming_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["missing-target.php".into()],
            "target file not found: missing-target.php",
        ),
        (
            vec![
                fixture("bad-targets/syntax_error.php")
                    .display()
                    .to_string(),
            ],
            "syntax_error.php:4",
        ),
        (
            vec![fixture("bad-targets/no_target.php").display().to_string()],
            "setTarget",
        ),
        (
            vec![
                fixture("bad-targets/throws_on_load.php")
                    .display()
                    .to_string(),
            ],
            "settings.ini is missing",
        ),
        (
            vec![
                fixture("bad-targets/missing_autoloader.php")
                    .display()
                    .to_string(),
            ],
            "vendor/autoload.php",
        ),
        (
            vec![
                fixture("targets/noop.php").display().to_string(),
                "--php".into(),
                "/nonexistent/php".into(),
            ],
            "cannot run `/nonexistent/php`",
        ),
        (
            vec![
                fixture("targets/noop.php").display().to_string(),
                "--dict".into(),
                "nope.dict".into(),
            ],
            "nope.dict",
        ),
    ];
    for (args, expected) in cases {
        let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
        all.extend(["--max-runs", "10"]);
        let run = fuzz(&all, dir.path());
        assert_eq!(run.code(), 1, "{args:?}\n{}", run.all());
        assert!(
            run.stderr().contains(expected),
            "{args:?}: expected {expected:?}\n{}",
            run.all()
        );
        assert!(run.stderr().contains("php-fuzz: error:"), "{}", run.all());
    }
}

#[test]
fn a_malformed_dictionary_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("bad.dict"),
        "# ok\n\"fine\"\nkw=\"unterminated\n",
    )
    .unwrap();
    let target = fixture("targets/noop.php");
    let run = fuzz(
        &[
            target.to_str().unwrap(),
            "--dict",
            "bad.dict",
            "--max-runs",
            "10",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 1, "{}", run.all());
    assert!(run.stderr().contains("bad.dict:3"), "{}", run.all());
}

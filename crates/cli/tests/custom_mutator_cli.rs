//! Custom mutators and crossovers end to end (fixtures/custom-mutator):
//! each example's bug is found through its mutator with a fixed seed and run
//! limit, and not without it; mutator failures stop the campaign.

mod common;

use std::fs;
use std::path::Path;

use common::{artifacts, fixture, php_fuzz};

const RUNS: &str = "60000";

/// `php-fuzz fuzz <fixtures/custom-mutator/target> corpus --seed 1 --max-runs <runs>` in `dir`.
fn fuzz(target: &str, dir: &Path, runs: &str) -> common::Run {
    let target = fixture(&format!("custom-mutator/{target}"));
    php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "1",
            "--max-runs",
            runs,
            "--max-crashes",
            "1",
        ],
        dir,
    )
}

/// Fuzzes `fixtures/custom-mutator/<example>/<file>` from the example's seeds.
fn fuzz_example(example: &str, file: &str, dir: &Path, runs: &str) -> common::Run {
    let corpus = dir.join("corpus");
    fs::create_dir_all(&corpus).unwrap();
    let seeds = fixture(&format!("custom-mutator/{example}/seeds"));
    for seed in fs::read_dir(seeds).unwrap() {
        let seed = seed.unwrap().path();
        fs::copy(&seed, corpus.join(seed.file_name().unwrap())).unwrap();
    }
    fuzz(&format!("{example}/{file}"), dir, runs)
}

fn assert_found_only_with_the_mutator(example: &str, bug: &str) {
    let with = tempfile::tempdir().unwrap();
    let run = fuzz_example(example, "target.php", with.path(), RUNS);
    assert_eq!(run.code(), 77, "{}", run.all());
    assert!(run.stderr().contains(bug), "{}", run.all());
    assert_eq!(artifacts(with.path(), "crash-").len(), 1, "{}", run.all());
    assert!(run.stderr().contains("MS: 1 Custom-"), "{}", run.all());

    let without = tempfile::tempdir().unwrap();
    let run = fuzz_example(example, "plain.php", without.path(), RUNS);
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(
        artifacts(without.path(), "crash-").is_empty(),
        "{}",
        run.all()
    );
}

#[test]
fn gzip_bug_is_found_only_through_the_recompressing_mutator() {
    assert_found_only_with_the_mutator("gzip", "starts with \"FU\"");
}

#[test]
fn crc_chunk_bug_is_found_only_through_the_checksum_fixing_mutator() {
    assert_found_only_with_the_mutator("crc-chunks", "starts with \"FUZ\"");
}

#[test]
fn wallet_bug_is_found_only_through_the_operation_mutator() {
    assert_found_only_with_the_mutator("wallet", "DivisionByZeroError");
}

#[test]
fn run_single_reproduces_a_crash_found_through_a_custom_mutator() {
    let dir = tempfile::tempdir().unwrap();
    let run = fuzz_example("gzip", "target.php", dir.path(), RUNS);
    assert_eq!(run.code(), 77, "{}", run.all());
    let crash = &artifacts(dir.path(), "crash-")[0];
    let target = fixture("custom-mutator/gzip/target.php");
    let replay = php_fuzz(
        &[
            "run-single",
            target.to_str().unwrap(),
            crash.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(replay.code(), 77, "{}", replay.all());
    assert!(
        replay.all().contains("starts with \"FU\""),
        "{}",
        replay.all()
    );
}

#[test]
fn a_seed_replays_a_campaign_with_a_custom_mutator() {
    let corpus_of = |dir: &Path| {
        let mut names: Vec<_> = fs::read_dir(dir.join("corpus"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|name| !name.to_str().unwrap().starts_with('.'))
            .collect();
        names.sort();
        names
    };
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    let a = fuzz_example("crc-chunks", "target.php", first.path(), "4000");
    let b = fuzz_example("crc-chunks", "target.php", second.path(), "4000");
    assert_eq!(a.code(), b.code(), "{}\n{}", a.all(), b.all());
    let corpus = corpus_of(first.path());
    assert!(
        corpus.len() > 2,
        "the mutator found new entries\n{}",
        a.all()
    );
    assert_eq!(corpus, corpus_of(second.path()), "{}\n{}", a.all(), b.all());
}

#[test]
fn mutant_longer_than_max_len_is_cut_and_crossover_shows_in_ms() {
    let dir = tempfile::tempdir().unwrap();
    let run = fuzz("limits.php", dir.path(), "3000");
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(run.stderr().contains("MS: 1 Custom-"), "{}", run.all());
    assert!(
        run.stderr().contains("MS: 1 CustomCrossOver-"),
        "{}",
        run.all()
    );
    let entries: Vec<_> = fs::read_dir(dir.path().join("corpus"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_str().unwrap().starts_with('.'))
        .collect();
    assert!(entries.len() > 2, "{}", run.all());
    for entry in entries {
        let len = fs::metadata(&entry).unwrap().len();
        assert!(len <= 8, "{} has {len} bytes", entry.display());
    }
}

fn assert_mutator_error(file: &str, expected: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let run = fuzz(&format!("broken/{file}"), dir.path(), "1000");
    assert_eq!(run.code(), 1, "{}", run.all());
    assert!(
        run.stderr().contains("error: mutator error: "),
        "{}",
        run.all()
    );
    for text in expected {
        assert!(
            run.stderr().contains(text),
            "{text:?} missing\n{}",
            run.all()
        );
    }
    assert!(artifacts(dir.path(), "crash-").is_empty(), "{}", run.all());
}

#[test]
fn warning_in_a_mutator_is_a_mutator_error_with_its_trace() {
    assert_mutator_error(
        "warning.php",
        &[
            "Warning: Undefined array key \"missing\"",
            "#0 mutator_helper() at ",
            "broken/warning.php:13",
        ],
    );
}

#[test]
fn a_crossover_returning_a_non_string_is_a_mutator_error() {
    assert_mutator_error(
        "not-a-string.php",
        &[
            "the custom crossover returned int, not a string",
            "broken/not-a-string.php:10",
        ],
    );
}

#[test]
fn exit_in_a_mutator_is_a_mutator_error_not_a_crash() {
    assert_mutator_error("exit.php", &["the custom mutator's php process died"]);
}

//! Comparison feedback (issue #12) on the fixtures of fixtures/cmp/: each
//! planted bug hides behind a comparison that blind mutation does not get
//! past. Fixed seeds, generous run limits, no timing.

mod common;

use std::fs;
use std::path::Path;

use common::{artifacts, fixture, php_fuzz};

/// Every fixture of fixtures/cmp/, one per kind of comparison.
const FIXTURES: [&str; 9] = [
    "switch_tag",
    "magic8",
    "unpack_be32",
    "computed_le",
    "decimal_arith",
    "string_calls",
    "match_lookup",
    "runtime_string",
    "crc_chunk",
];

/// Far more runs than comparison feedback needs on any fixture (a few
/// hundred, see docs/benchmarks.md).
const RUNS: &str = "30000";

/// Fuzzes fixture `name` from its seeds in a fresh directory.
fn fuzz_fixture(name: &str, extra: &[&str]) -> (tempfile::TempDir, common::Run) {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    fs::create_dir_all(&corpus).unwrap();
    for seed in fs::read_dir(fixture(&format!("cmp/{name}/seeds"))).unwrap() {
        let seed = seed.unwrap().path();
        fs::copy(&seed, corpus.join(seed.file_name().unwrap())).unwrap();
    }
    let target = fixture(&format!("cmp/{name}/target.php"));
    let mut args = vec![
        "fuzz",
        target.to_str().unwrap(),
        "corpus",
        "--seed",
        "1",
        "--max-runs",
        RUNS,
        "--max-crashes",
        "1",
    ];
    args.extend_from_slice(extra);
    let run = php_fuzz(&args, dir.path());
    (dir, run)
}

fn found_planted_bug(dir: &Path, run: &common::Run) -> bool {
    let found = !artifacts(dir, "crash-").is_empty();
    assert_eq!(run.code(), if found { 77 } else { 0 }, "{}", run.all());
    found && run.stderr().contains("planted: ")
}

#[test]
fn comparison_feedback_finds_every_fixture_bug_from_trivial_seeds() {
    for name in FIXTURES {
        let (dir, run) = fuzz_fixture(name, &[]);
        assert!(
            found_planted_bug(dir.path(), &run),
            "{name}: not found in {RUNS} runs\n{}",
            run.all()
        );
        assert!(
            run.stderr().contains("comparison feedback:"),
            "{}",
            run.all()
        );
    }
}

#[test]
fn without_comparison_feedback_the_same_runs_find_none_of_them() {
    for name in FIXTURES {
        let (dir, run) = fuzz_fixture(name, &["--no-cmp"]);
        assert!(
            !found_planted_bug(dir.path(), &run),
            "{name}: found blind in {RUNS} runs, so the fixture shows nothing\n{}",
            run.all()
        );
        assert!(!run.stderr().contains(" dict: "), "{}", run.all());
        assert!(
            !dir.path().join("corpus/.php-fuzz/autodict").exists(),
            "no auto-dictionary (the directory holds the statistics file)"
        );
    }
}

/// The corpus (file names), the auto-dictionary and the crash artifacts
/// of a campaign on `name`, without a crash limit.
fn campaign(name: &str, runs: &str) -> (Vec<String>, Vec<u8>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    fs::create_dir_all(&corpus).unwrap();
    fs::copy(fixture(&format!("cmp/{name}/seeds/a")), corpus.join("a")).unwrap();
    let target = fixture(&format!("cmp/{name}/target.php"));
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "7",
            "--max-runs",
            runs,
        ],
        dir.path(),
    );
    assert!(run.stderr().contains("reached --max-runs"), "{}", run.all());
    let mut names: Vec<String> = fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let dictionary = fs::read(corpus.join(".php-fuzz/autodict")).unwrap_or_default();
    let crashes = artifacts(dir.path(), "crash-")
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    (names, dictionary, crashes)
}

#[test]
fn the_same_seed_replays_a_campaign_tracer_included() {
    // match_lookup chains: match subject, then the constant lookup, each
    // solved from a trace of the entry the one before produced.
    let first = campaign("match_lookup", "4000");
    let second = campaign("match_lookup", "4000");
    assert!(
        first.0.len() > 4,
        "the campaign found entries: {:?}",
        first.0
    );
    assert!(!first.1.is_empty(), "and dictionary words");
    assert_eq!(first.2.len(), 1, "and the planted bug");
    assert_eq!(
        first, second,
        "same seed, same corpus, dictionary and crashes"
    );
}

#[test]
fn the_auto_dictionary_is_saved_beside_the_corpus_and_read_back() {
    let (dir, run) = fuzz_fixture("string_calls", &[]);
    assert!(found_planted_bug(dir.path(), &run), "{}", run.all());
    let saved = fs::read_to_string(dir.path().join("corpus/.php-fuzz/autodict")).unwrap();
    assert!(saved.contains("\"CMD:\""), "{saved}");
    let words = saved.lines().count();
    let status = run
        .stderr()
        .lines()
        .rfind(|l| l.contains(" dict: "))
        .map(str::to_string)
        .expect("status lines show the dictionary's size");
    assert!(status.contains(&format!(" dict: {words}")), "{status}");

    // Resumed: the words are back before anything runs.
    let target = fixture("cmp/string_calls/target.php");
    let again = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "2",
            "--max-runs",
            "100",
        ],
        dir.path(),
    );
    assert!(
        again
            .stderr()
            .contains(&format!("auto-dictionary of {words} words")),
        "{}",
        again.all()
    );
}

#[test]
fn value_profile_makes_comparison_closeness_a_feature() {
    let target = fixture("json-parser/target.php");
    let features = |extra: &[&str]| -> u64 {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec![
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "3",
            "--max-runs",
            "3000",
        ];
        args.extend_from_slice(extra);
        let run = php_fuzz(&args, dir.path());
        let done = run
            .stderr()
            .lines()
            .find(|l| l.starts_with("==== Done"))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("{}", run.all()));
        let cov: u64 = field(&done, "cov: ");
        let ft: u64 = field(&done, "ft: ");
        assert!(ft >= cov);
        ft - cov
    };
    let plain = features(&[]);
    let profiled = features(&["--use-value-profile"]);
    assert!(
        profiled > plain + 50,
        "value profile adds features: {plain} without, {profiled} with"
    );
}

fn field(line: &str, name: &str) -> u64 {
    line.split(name)
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {name:?} in {line}"))
}

#[test]
fn no_cmp_and_value_profile_exclude_each_other() {
    let target = fixture("cmp/magic8/target.php");
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "--no-cmp",
            "--use-value-profile",
        ],
        Path::new("."),
    );
    assert_eq!(run.code(), 2, "{}", run.all());
    assert!(
        run.stderr().contains("cannot be used with"),
        "{}",
        run.all()
    );
}

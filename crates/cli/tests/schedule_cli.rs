//! `--mutation-schedule learned` (docs/scheduling.md): a campaign replays
//! under the same seed, shows its mix on the status line and in the
//! statistics file, and the report plots it.

mod common;

use std::fs;
use std::path::Path;

use common::{Run, fixture, php_fuzz};

/// A campaign on fixtures/cmp/match_lookup with the learned schedule;
/// returns the run and the corpus's file names.
fn campaign(dir: &Path, schedule: &str) -> (Run, Vec<String>) {
    let corpus = dir.join("corpus");
    fs::create_dir_all(&corpus).unwrap();
    fs::copy(fixture("cmp/match_lookup/seeds/a"), corpus.join("a")).unwrap();
    let target = fixture("cmp/match_lookup/target.php");
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "3",
            "--max-runs",
            "6000",
            "--mutation-schedule",
            schedule,
            "--artifact-dir",
            "artifacts",
        ],
        dir,
    );
    let mut names: Vec<String> = fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with('.'))
        .collect();
    names.sort();
    (run, names)
}

#[test]
fn the_learned_schedule_replays_under_its_seed_and_shows_its_mix() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (run, first) = campaign(a.path(), "learned");
    let (_, second) = campaign(b.path(), "learned");
    assert!(run.stderr().contains("reached --max-runs"), "{}", run.all());
    assert!(first.len() > 3, "the campaign found entries: {first:?}");
    assert_eq!(first, second, "same seed, same corpus");
    let mix_line = run
        .stderr()
        .lines()
        .rev()
        .find(|l| l.contains(" mix: "))
        .unwrap_or_else(|| panic!("no mix on the status lines\n{}", run.all()))
        .to_string();
    let mix = &mix_line[mix_line.find(" mix: ").unwrap() + 6..];
    let shares: u32 = mix
        .split_whitespace()
        .filter_map(|w| w.strip_suffix('%'))
        .map(|n| n.parse::<u32>().unwrap())
        .sum();
    assert!(
        (97..=103).contains(&shares),
        "the groups add up: {mix_line}"
    );
    assert!(
        mix.contains("bytes ") && mix.contains("dict ") && mix.contains("i2s "),
        "{mix_line}"
    );

    let stats = fs::read_to_string(a.path().join("corpus/.php-fuzz/stats.jsonl")).unwrap();
    let end: serde_json::Value = serde_json::from_str(
        stats
            .lines()
            .find(|l| l.contains("\"event\":\"end\""))
            .expect("an end line"),
    )
    .unwrap();
    let total: f64 = end["mix"]
        .as_object()
        .unwrap_or_else(|| panic!("no mix in {end}"))
        .values()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!((total - 1.0).abs() < 0.01, "{end}");

    let report = a.path().join("report");
    let target = fixture("cmp/match_lookup/target.php");
    let run = php_fuzz(
        &[
            "report-coverage",
            target.to_str().unwrap(),
            "corpus",
            report.to_str().unwrap(),
        ],
        a.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    let index = fs::read_to_string(report.join("index.html")).unwrap();
    assert!(
        index.contains(r#"id="plot-mix""#),
        "the report plots the mix"
    );
    assert!(
        index.contains("class=\"legend mix-0\">bytes "),
        "with a legend"
    );
}

#[test]
fn the_uniform_schedule_shows_no_mix_and_is_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let (run, _) = campaign(dir.path(), "uniform");
    assert!(!run.stderr().contains(" mix: "), "{}", run.all());
    let stats = fs::read_to_string(dir.path().join("corpus/.php-fuzz/stats.jsonl")).unwrap();
    assert!(!stats.contains("\"mix\""), "{stats}");
    let dir = tempfile::tempdir().unwrap();
    let run = php_fuzz(
        &["fuzz", "x.php", "--mutation-schedule", "adaptive"],
        dir.path(),
    );
    assert_eq!(run.code(), 2, "{}", run.all());
    assert!(
        run.stderr().contains("[possible values: uniform, learned]"),
        "{}",
        run.all()
    );
}

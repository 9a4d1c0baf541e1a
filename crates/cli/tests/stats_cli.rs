//! Campaign statistics (issue #16): `fuzz` appends JSON lines to the
//! statistics file, a resumed campaign continues it, and `report-coverage`
//! plots it.

mod common;

use std::fs;
use std::path::Path;

use common::{fixture, php_fuzz};
use scraper::{Html, Selector};
use serde_json::Value;

fn lines(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn events<'a>(lines: &'a [Value], event: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["event"] == event).collect()
}

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn fuzz_appends_statistics_and_a_resumed_campaign_continues_them() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    fs::create_dir(&corpus).unwrap();
    for seed in ["array.json", "object.json"] {
        fs::copy(fixture("json-parser/seeds").join(seed), corpus.join(seed)).unwrap();
    }
    let target = fixture("json-parser/target.php");
    let target = target.to_str().unwrap();
    let campaign = |seed: &str, runs: &str| {
        let run = php_fuzz(
            &[
                "fuzz",
                target,
                "corpus",
                "--seed",
                seed,
                "--max-runs",
                runs,
                "--artifact-dir",
                "artifacts",
            ],
            dir.path(),
        );
        assert!(run.stderr().contains("reached --max-runs"), "{}", run.all());
        run
    };
    let run = campaign("1", "20000");
    let stats = corpus.join(".php-fuzz/stats.jsonl");
    assert!(
        run.stderr()
            .contains("INFO: statistics appended to corpus/.php-fuzz/stats.jsonl"),
        "{}",
        run.all()
    );
    let first = lines(&stats);
    assert_eq!(first[0]["event"], "start", "{first:?}");
    assert_eq!(first[0]["v"], 1);
    assert_eq!(first[0]["session"], 1);
    assert_eq!(first[0]["seed"], 1);
    let end = first.last().unwrap();
    assert_eq!(end["event"], "end", "{first:?}");
    assert_eq!(end["reason"], "reached --max-runs");
    assert!(
        !events(&first, "sample").is_empty(),
        "a sample after the seeds ran: {first:?}"
    );
    for line in &first {
        assert_eq!(line["session"], 1);
        assert!(f(line, "time") > 1.0e9, "{line}");
    }
    for key in [
        "runs",
        "execs_per_sec",
        "cov",
        "ft",
        "corpus_entries",
        "corpus_bytes",
        "crashes",
        "rss_mb",
        "harness_rss_mb",
    ] {
        assert!(end[key].is_number(), "{key} in {end}");
    }
    assert!(
        f(end, "cov") > 0.0 && f(end, "ft") >= f(end, "cov"),
        "{end}"
    );
    assert!(f(end, "runs") >= 20000.0, "{end}");
    // The planted bugs of the fixture are found early: each is a crash line.
    for crash in events(&first, "crash") {
        let artifact = dir.path().join(crash["artifact"].as_str().unwrap());
        assert!(artifact.exists(), "{crash}");
        assert!(!crash["summary"].as_str().unwrap().is_empty());
    }
    let elapsed: Vec<f64> = first.iter().map(|l| f(l, "elapsed")).collect();
    assert!(
        elapsed.windows(2).all(|w| w[0] <= w[1]),
        "elapsed grows: {elapsed:?}"
    );

    // php-fuzz killed in the middle of a line leaves half of it.
    let mut text = fs::read_to_string(&stats).unwrap();
    text.push_str(r#"{"v":1,"time":17000"#);
    fs::write(&stats, &text).unwrap();

    campaign("2", "3000");
    let after = fs::read_to_string(&stats).unwrap();
    assert!(
        after.starts_with(&text),
        "the first session's lines are kept"
    );
    let all = lines(&stats);
    let second: Vec<&Value> = all.iter().filter(|l| l["session"] == 2).collect();
    assert_eq!(all.len(), first.len() + second.len(), "torn line skipped");
    assert_eq!(second[0]["event"], "start");
    assert_eq!(second.last().unwrap()["event"], "end");
    assert!(
        f(second[0], "elapsed") >= f(end, "elapsed"),
        "campaign time continues: {} then {}",
        end,
        second[0]
    );
    let second_end = second.last().unwrap();
    assert!(
        f(second_end, "runs") >= f(end, "runs") + 3000.0,
        "runs continue: {end} then {second_end}"
    );
    assert_eq!(
        events(&all, "crash").len(),
        events(&first, "crash").len(),
        "crashes saved by the first session are not new again"
    );
    assert_eq!(
        second_end["crashes"], end["crashes"],
        "but they count as saved"
    );

    // report-coverage finds the file beside the corpus and plots both sessions.
    let report = php_fuzz(&["report-coverage", target, "corpus", "out"], dir.path());
    assert_eq!(report.code(), 0, "{}", report.all());
    let index =
        Html::parse_document(&fs::read_to_string(dir.path().join("out/index.html")).unwrap());
    let select = |s: &str| Selector::parse(s).unwrap();
    for id in ["plot-cov", "plot-ft", "plot-execs"] {
        let plot = index
            .select(&select(&format!("#{id} svg path.series")))
            .next()
            .unwrap_or_else(|| panic!("#{id} has a line"));
        let d = plot.value().attr("d").unwrap();
        assert_eq!(d.matches('M').count(), 2, "a line per session: {d}");
        assert_eq!(index.select(&select(&format!("#{id} .restart"))).count(), 1);
    }
    let found = index.select(&select("#campaign .crashes li")).count();
    assert_eq!(found, events(&all, "crash").len());
    for mark in index.select(&select("#plot-cov a.crash-mark")) {
        let href = mark.value().attr("href").unwrap();
        assert!(
            index.select(&select(href)).next().is_some(),
            "{href} points into the page"
        );
    }
}

#[test]
fn stats_go_where_told_and_nowhere_without_a_corpus_directory() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("targets/type_error.php");
    let target = target.to_str().unwrap();
    let run = php_fuzz(
        &[
            "fuzz",
            target,
            "--max-runs",
            "3000",
            "--seed",
            "3",
            "--stats",
            "s/run.jsonl",
        ],
        dir.path(),
    );
    assert!(run.stderr().contains("reached --max-runs"), "{}", run.all());
    let stats = lines(&dir.path().join("s/run.jsonl"));
    assert_eq!(stats[0]["event"], "start");
    let crashes = events(&stats, "crash");
    assert_eq!(crashes.len(), 1, "{stats:?}");
    assert_eq!(crashes[0]["kind"], "exception");
    assert!(
        crashes[0]["summary"]
            .as_str()
            .unwrap()
            .starts_with("TypeError: strtoupper()"),
        "{}",
        crashes[0]
    );
    assert_eq!(stats.last().unwrap()["crashes"], 1);

    // No corpus directory and no --stats: the temporary corpus gets none.
    let run = php_fuzz(&["fuzz", target, "--max-runs", "200"], dir.path());
    let temporary = run
        .stderr()
        .lines()
        .find_map(|l| l.strip_prefix("INFO: no corpus directory given; using "))
        .map(str::to_string)
        .unwrap_or_else(|| panic!("{}", run.all()));
    assert!(
        !run.stderr().contains("statistics appended"),
        "{}",
        run.all()
    );
    assert!(!Path::new(&temporary).join(".php-fuzz/stats.jsonl").exists());
    let _ = fs::remove_dir_all(&temporary);

    // report-coverage: --stats names the file; one that is missing is an error.
    let corpus = dir.path().join("corpus");
    fs::create_dir(&corpus).unwrap();
    let report = php_fuzz(
        &[
            "report-coverage",
            target,
            "corpus",
            "out",
            "--stats",
            "s/run.jsonl",
        ],
        dir.path(),
    );
    assert_eq!(report.code(), 0, "{}", report.all());
    let index = fs::read_to_string(dir.path().join("out/index.html")).unwrap();
    assert!(index.contains(r#"id="found-crash-1""#));
    assert!(index.contains(r##"href="#found-crash-1""##));
    let report = php_fuzz(
        &[
            "report-coverage",
            target,
            "corpus",
            "out2",
            "--stats",
            "missing.jsonl",
        ],
        dir.path(),
    );
    assert_ne!(report.code(), 0);
    assert!(
        report
            .stderr()
            .contains("statistics file not found: missing.jsonl"),
        "{}",
        report.all()
    );
    // A corpus given as a file has no statistics beside it.
    fs::write(corpus.join("one"), "a;b;c").unwrap();
    let report = php_fuzz(
        &["report-coverage", target, "corpus/one", "out4"],
        dir.path(),
    );
    assert_eq!(report.code(), 0, "{}", report.all());
    // Without a statistics file the report says nothing about a campaign.
    let report = php_fuzz(&["report-coverage", target, "corpus", "out3"], dir.path());
    assert_eq!(report.code(), 0, "{}", report.all());
    let index = fs::read_to_string(dir.path().join("out3/index.html")).unwrap();
    assert!(!index.contains(r#"id="campaign""#), "no campaign section");
}

#[test]
fn a_campaign_killed_with_sigkill_leaves_readable_statistics_and_resumes_them() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("json-parser/target.php");
    let target = target.to_str().unwrap();
    let stats = dir.path().join("corpus/.php-fuzz/stats.jsonl");
    let mut child = std::process::Command::new(common::bin())
        .args([
            "fuzz",
            target,
            "corpus",
            "--max-time",
            "120",
            "--artifact-dir",
            "artifacts",
            "-q",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for a sample from the monitor (after the one the seeds make).
    let sampled = |path: &Path| {
        fs::read_to_string(path)
            .map(|t| t.matches(r#""event":"sample""#).count() >= 2)
            .unwrap_or(false)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(100);
    while !sampled(&stats) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(
        sampled(&stats),
        "the campaign wrote samples before the kill"
    );
    let first = lines(&stats);
    assert!(
        events(&first, "end").is_empty(),
        "a killed session has no end"
    );
    let text = fs::read_to_string(&stats).unwrap();
    let whole = text.lines().filter(|l| !l.is_empty()).count();
    assert!(
        first.len() == whole || (first.len() + 1 == whole && !text.ends_with('\n')),
        "only a last, partial line may be unreadable: {text}"
    );

    let run = php_fuzz(
        &[
            "fuzz",
            target,
            "corpus",
            "--max-runs",
            "1000",
            "--artifact-dir",
            "artifacts",
        ],
        dir.path(),
    );
    assert!(run.stderr().contains("reached --max-runs"), "{}", run.all());
    let all = lines(&stats);
    let second: Vec<&Value> = all.iter().filter(|l| l["session"] == 2).collect();
    assert_eq!(all.len(), first.len() + second.len(), "{all:?}");
    assert_eq!(second[0]["event"], "start");
    let last = all.last().unwrap();
    assert_eq!(
        (last["event"].as_str(), last["session"].as_u64()),
        (Some("end"), Some(2))
    );
    let report = php_fuzz(&["report-coverage", target, "corpus", "out"], dir.path());
    assert_eq!(report.code(), 0, "{}", report.all());
    let index = fs::read_to_string(dir.path().join("out/index.html")).unwrap();
    assert!(index.contains(r#"id="plot-cov""#));
}

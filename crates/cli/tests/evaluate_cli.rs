//! scripts/evaluate end to end on small fixtures (2 trials of a few seconds),
//! its statistics against known values (scripts/evaluation/test_stats.py),
//! its parser of nikic/php-fuzzer's output (scripts/evaluation/test_php_fuzzer_log.py),
//! and its known-bug mode (`--bugs`) on a tiny git library made here, with
//! its figures checked by scripts/evaluation/test_bugs.py.

mod common;

use std::process::Command;

use common::{Run, bin, fixture, python_with, repo};

#[test]
fn the_statistics_match_known_values() {
    let Some(python) = python_with("scipy") else {
        return;
    };
    let output = Command::new(python)
        .args(["-m", "unittest", "scripts/evaluation/test_stats.py"])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `--php-fuzzer` reads nikic/php-fuzzer's output; the parser is checked on
/// a recorded log (CI has no php-fuzzer, so the campaign itself is not run).
#[test]
fn php_fuzzer_output_parses_from_a_recorded_log() {
    let Some(python) = python_with("json") else {
        return;
    };
    let output = Command::new(python)
        .args([
            "-m",
            "unittest",
            "scripts/evaluation/test_php_fuzzer_log.py",
        ])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn an_evaluation_writes_the_report_with_every_figure() {
    let Some(python) = python_with("scipy") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let evaluate = |extra: &[&str]| {
        Command::new(&python)
            .arg(repo().join("scripts/evaluate"))
            .args(extra)
            .args([
                "--trials",
                "2",
                "--seconds",
                "2",
                "--config",
                "cmp=",
                "--config",
                "nocmp=--no-cmp",
            ])
            .arg("--out")
            .arg(out.path())
            .arg("--php-fuzz")
            .arg(bin())
            .arg(fixture("json-parser/target.php"))
            .arg(fixture("targets/magic_word.php"))
            .output()
            .unwrap()
    };
    let output = evaluate(&[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("[8/8] "),
        "progress counts the runs: {stderr}"
    );
    assert!(stderr.contains("min left"), "{stderr}");

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(report["trials"], 2);
    assert_eq!(report["runs"].as_array().unwrap().len(), 8);
    let json_parser = &report["targets"]["json-parser"];
    for config in ["cmp", "nocmp"] {
        let final_coverage = &json_parser["final_coverage"][config];
        assert_eq!(final_coverage["values"].as_array().unwrap().len(), 2);
        assert!(
            final_coverage["median"].as_f64().unwrap() > 50.0,
            "{final_coverage}"
        );
        assert!(json_parser["execs_per_sec"][config].as_f64().unwrap() > 0.0);
        assert!(
            !json_parser["coverage_over_time"][config]
                .as_array()
                .unwrap()
                .is_empty()
        );
    }
    let pair = &json_parser["pairwise"][0];
    let p = pair["p_value"].as_f64().unwrap();
    let a12 = pair["a12"].as_f64().unwrap();
    assert!(
        (0.0..=1.0).contains(&p) && (0.0..=1.0).contains(&a12),
        "{pair}"
    );
    let findings = json_parser["findings"].as_object().unwrap();
    assert!(!findings.is_empty(), "the planted bugs are found in 2 s");
    for by_config in findings.values() {
        assert_eq!(by_config["cmp"]["trials"], 2);
    }
    let ranks = report["mean_rank"].as_object().unwrap();
    let sum: f64 = ranks.values().map(|r| r.as_f64().unwrap()).sum();
    assert!(
        (sum - 3.0).abs() < 1e-9,
        "two configurations' ranks add up to 1 + 2: {ranks:?}"
    );

    let html = std::fs::read_to_string(out.path().join("report.html")).unwrap();
    assert!(
        html.contains("<svg") && html.contains("<polygon"),
        "inline plots with IQR bands"
    );
    assert!(!html.contains("<script"), "no script");
    let svg = std::fs::read_to_string(out.path().join("plots/magic_word.svg")).unwrap();
    assert!(
        svg.contains("<svg xmlns") && svg.contains("<polygon"),
        "each target's plot is also a file of its own: {svg}"
    );
    assert!(html.contains("Mann-Whitney") && html.contains("A12"));

    // An interrupted evaluation resumes: finished campaigns are kept, not rerun.
    let stale = out.path().join("runs/magic_word/nocmp/trial-2/run.json");
    std::fs::remove_file(&stale).unwrap();
    let resumed = evaluate(&["--resume"]);
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{stderr}");
    assert_eq!(
        stderr.matches("(kept from the earlier run)").count(),
        7,
        "{stderr}"
    );
    assert!(stale.is_file(), "the missing campaign ran again: {stderr}");
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(
        again["targets"]["json-parser"]["final_coverage"],
        report["targets"]["json-parser"]["final_coverage"]
    );
}

/// The known-bug mode's matching, censoring and statistics
/// (scripts/evaluation/test_bugs.py).
#[test]
fn the_known_bug_figures_match_known_values() {
    let Some(python) = python_with("scipy") else {
        return;
    };
    let output = Command::new(python)
        .args(["-m", "unittest", "scripts/evaluation/test_bugs.py"])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A tiny library with a planted bug, in git: `Parser::parse()` reads a
/// missing array key (a warning) on input starting with "AB".
const VULNERABLE_PARSER: &str = r#"<?php
namespace Acme\Tiny;

final class Parser
{
    public function parse(string $input): array
    {
        $fields = explode(',', $input);
        if (strlen($input) >= 2 && $input[0] === 'A' && $input[1] === 'B') {
            $names = ['id' => 0];
            return [$names[$fields[0]]]; // THE BUG
        }
        return $fields;
    }
}
"#;

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

struct BugFixture {
    dir: tempfile::TempDir,
    /// (commit, tree) of: the bug, the bug with a README, the fix.
    commits: [(String, String); 3],
    bug_line: usize,
}

/// acme/tiny's history (the bug; a README change, the bug still there; the
/// fix) and its bare mirror at MIRRORS/acme+tiny/repo, as the search tool
/// lays mirrors out; seeds for the format `tiny`.
fn bug_fixture() -> BugFixture {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src-repo");
    std::fs::create_dir_all(src.join("src")).unwrap();
    git(&src, &["init", "--quiet"]);
    let mut commits = Vec::new();
    let fixed = VULNERABLE_PARSER.replace(
        "return [$names[$fields[0]]]; // THE BUG",
        "return [$names[$fields[0]] ?? null];",
    );
    for (file, text, message) in [
        ("src/Parser.php", VULNERABLE_PARSER, "parser"),
        ("README.md", "A tiny parser.\n", "readme"),
        ("src/Parser.php", fixed.as_str(), "fix the missing key"),
    ] {
        std::fs::write(src.join(file), text).unwrap();
        git(&src, &["add", "."]);
        git(&src, &["commit", "--quiet", "-m", message]);
        commits.push((
            git(&src, &["rev-parse", "HEAD"]),
            git(&src, &["rev-parse", "HEAD^{tree}"]),
        ));
    }
    let mirror = dir.path().join("mirrors/acme+tiny/repo");
    git(
        dir.path(),
        &[
            "clone",
            "--quiet",
            "--bare",
            src.to_str().unwrap(),
            mirror.to_str().unwrap(),
        ],
    );
    let seeds = dir.path().join("seeds/tiny");
    std::fs::create_dir_all(&seeds).unwrap();
    std::fs::write(seeds.join("one.txt"), "Apple,12,red").unwrap();
    std::fs::write(seeds.join("two.txt"), "Avocado,3,green\n").unwrap();
    let bug_line = VULNERABLE_PARSER
        .lines()
        .position(|l| l.contains("THE BUG"))
        .unwrap()
        + 1;
    BugFixture {
        dir,
        commits: commits.try_into().unwrap(),
        bug_line,
    }
}

impl BugFixture {
    fn entry(&self, id: &str, library: &str, vulnerable: usize, fixed: usize) -> serde_json::Value {
        let (vc, vt) = &self.commits[vulnerable];
        let (fc, ft) = &self.commits[fixed];
        serde_json::json!({
            "id": id, "library": library, "kind": "code-parser", "format": "tiny",
            "vulnerable_commit": vc, "fixed_commit": fc, "vulnerable_tree": vt, "fixed_tree": ft,
            "entry": "(new \\Acme\\Tiny\\Parser())->parse($input);",
            "allowed_exceptions": [], "error_reporting": 32767,
            "expected": {"kind": "warning", "class": "Warning", "message": "Undefined array key",
                         "site": format!("src/Parser.php:{}", self.bug_line)},
            "trigger": "AB", "autoload": {"psr4": {"Acme\\Tiny\\": "src/"}}
        })
    }

    fn catalog(&self, name: &str, entries: Vec<serde_json::Value>) -> std::path::PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, serde_json::json!({ "bugs": entries }).to_string()).unwrap();
        path
    }

    /// `scripts/evaluate --bugs` on this fixture's mirrors, seeds and work folder.
    fn evaluate(&self, python: &std::path::Path, catalog: &std::path::Path, args: &[&str]) -> Run {
        let output = Command::new(python)
            .arg(repo().join("scripts/evaluate"))
            .arg("--bugs")
            .arg("--catalog")
            .arg(catalog)
            .arg("--mirrors")
            .arg(self.dir.path().join("mirrors"))
            .arg("--work")
            .arg(self.dir.path().join("work"))
            .arg("--seeds")
            .arg(self.dir.path().join("seeds"))
            .arg("--git-base")
            .arg(format!(
                "file://{}/no-such-forge",
                self.dir.path().display()
            ))
            .arg("--php-fuzz")
            .arg(bin())
            .args(args)
            .output()
            .unwrap();
        Run { output }
    }
}

fn report_json(out: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

/// `--bugs` end to end: a real git library, a mirror, a bug found and
/// confirmed in every trial of two configurations, a bug without a mirror
/// skipped, the figures, `--resume`; and a "fix" that still fails, whose
/// finding is matched but not counted.
#[test]
fn a_known_bug_evaluation_finds_confirms_and_reports_each_bug() {
    let Some(python) = python_with("scipy") else {
        return;
    };
    let fixture = bug_fixture();
    let mut ghost = fixture.entry("ghost-missing", "acme/ghost", 0, 2);
    ghost["kind"] = "other-format".into();
    let catalog = fixture.catalog(
        "catalog.json",
        vec![
            fixture.entry("tiny-ab-key", "acme/tiny", 1, 2),
            fixture.entry("tiny-not-fixed", "acme/tiny", 0, 1),
            ghost,
        ],
    );
    let out = fixture.dir.path().join("out");
    let seconds = 20.0;
    let args = [
        "--only",
        "tiny-ab-key",
        "--only",
        "ghost-missing",
        "--trials",
        "2",
        "--seconds",
        "20",
        "--config",
        "a=",
        "--config",
        "b=--no-cmp",
        "--out",
        out.to_str().unwrap(),
    ];
    let run = fixture.evaluate(&python, &catalog, &args);
    assert!(run.output.status.success(), "{}", run.all());
    let stderr = run.stderr();
    assert!(
        stderr.contains("evaluate: skipping ghost-missing: ")
            && stderr.contains("no mirror of acme/ghost"),
        "{stderr}"
    );
    assert!(stderr.contains("[4/4] "), "the rest goes on: {stderr}");
    let work = fixture.dir.path().join("work/tiny-ab-key");
    assert!(work.join("vulnerable/src/Parser.php").is_file());
    assert!(work.join("fixed/src/Parser.php").is_file());
    assert!(
        std::fs::read_to_string(work.join("target.php"))
            .unwrap()
            .contains("$config->setTarget(function (string $input): void {")
    );

    let report = report_json(&out);
    assert_eq!(report["mode"], "bugs");
    let bug = &report["bugs"]["tiny-ab-key"];
    for config in ["a", "b"] {
        let figures = &bug["configs"][config];
        assert_eq!(figures["found_in"], 2, "{config}: {figures}");
        assert_eq!(figures["trials"], 2);
        let median = figures["median_seconds"].as_f64().unwrap();
        assert!(median <= seconds, "{figures}");
        for time in figures["times"].as_array().unwrap() {
            assert!(time.as_f64().unwrap() <= seconds, "{figures}");
        }
        let per_trial = &report["bug_groups"]["all"]["bugs_per_trial"][config];
        assert_eq!(
            per_trial["values"],
            serde_json::json!([1, 1]),
            "{per_trial}"
        );
        assert_eq!(per_trial["median"].as_f64(), Some(1.0));
        assert_eq!(per_trial["mean"].as_f64(), Some(1.0));
    }
    assert_eq!(
        report["bug_groups"]["code-parser"]["bugs"],
        serde_json::json!(["tiny-ab-key"])
    );
    let pair = &bug["pairwise"][0];
    assert_eq!((&pair["a"], &pair["b"]), (&"a".into(), &"b".into()));
    let p = pair["p_value"].as_f64().unwrap();
    let a12 = pair["a12_faster"].as_f64().unwrap();
    assert!(
        (0.0..=1.0).contains(&p) && (0.0..=1.0).contains(&a12),
        "{pair}"
    );
    let counts = &report["bug_groups"]["all"]["pairwise"][0];
    assert_eq!(counts["p_value"].as_f64(), Some(1.0), "{counts}");
    assert_eq!(counts["a12"].as_f64(), Some(0.5), "{counts}");
    assert_eq!(report["skipped"][0]["id"], "ghost-missing");
    for run in report["runs"].as_array().unwrap() {
        assert_eq!(run["stopped_early"], true, "stopped at the bug: {run}");
        assert!(run["wall_seconds"].as_f64().unwrap() < seconds, "{run}");
        let confirmed = &run["confirmed"][0];
        assert!(
            confirmed["observed"]["fixed"]
                .as_str()
                .unwrap()
                .starts_with("OK"),
            "{run}"
        );
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("tiny-ab-key") && html.contains("ghost-missing"));
    assert!(html.contains("P(A finds the bug faster than B)"));
    assert!(!html.contains("<script"));

    // Resumed: the four finished campaigns are kept.
    let resumed = fixture.evaluate(&python, &catalog, &[&args[..], &["--resume"]].concat());
    assert!(resumed.output.status.success(), "{}", resumed.all());
    assert_eq!(
        resumed
            .stderr()
            .matches("(kept from the earlier run)")
            .count(),
        4,
        "{}",
        resumed.all()
    );
    assert_eq!(
        report_json(&out)["bugs"]["tiny-ab-key"]["configs"],
        bug["configs"]
    );

    // A "fix" that does not fix it: the finding matches the bug's site, but
    // the fixed commit fails the same way, so it is not counted.
    let out = fixture.dir.path().join("out-not-fixed");
    let run = fixture.evaluate(
        &python,
        &catalog,
        &[
            "--only",
            "tiny-not-fixed",
            "--trials",
            "1",
            "--seconds",
            "4",
            "--config",
            "a=",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(run.output.status.success(), "{}", run.all());
    let report = report_json(&out);
    let figures = &report["bugs"]["tiny-not-fixed"]["configs"]["a"];
    assert_eq!(figures["found_in"], 0, "{figures}");
    assert_eq!(figures["times"], serde_json::json!([4.0]), "censored");
    let trial = &report["runs"][0];
    assert_eq!(trial["found"], false);
    let unconfirmed = &trial["unconfirmed"][0];
    for side in ["vulnerable", "fixed"] {
        let observed = unconfirmed["observed"][side].as_str().unwrap();
        assert!(
            observed.starts_with("BUG Warning: Undefined array key"),
            "{side}: {trial}"
        );
    }
}

/// Bad input is refused before anything runs: an unknown bug id, a missing
/// catalog, a tree that is not the catalog's.
#[test]
fn a_known_bug_evaluation_refuses_bad_input() {
    let Some(python) = python_with("scipy") else {
        return;
    };
    let fixture = bug_fixture();
    let catalog = fixture.catalog(
        "catalog.json",
        vec![fixture.entry("tiny-ab-key", "acme/tiny", 1, 2)],
    );
    let out = fixture.dir.path().join("out");
    let common = ["--config", "a=", "--out", out.to_str().unwrap()];
    let run = fixture.evaluate(
        &python,
        &catalog,
        &[&common[..], &["--only", "nope"]].concat(),
    );
    assert!(!run.output.status.success(), "{}", run.all());
    assert!(run.stderr().contains("no bug nope"), "{}", run.all());

    let missing = fixture.dir.path().join("missing.json");
    let run = fixture.evaluate(&python, &missing, &common);
    assert!(!run.output.status.success(), "{}", run.all());
    assert!(
        run.stderr().contains("missing.json: no such file"),
        "{}",
        run.all()
    );

    let mut wrong = fixture.entry("tiny-ab-key", "acme/tiny", 1, 2);
    wrong["fixed_tree"] = "0".repeat(40).into();
    let catalog = fixture.catalog("wrong.json", vec![wrong]);
    let run = fixture.evaluate(&python, &catalog, &common);
    assert!(!run.output.status.success(), "{}", run.all());
    assert!(
        run.stderr().contains("the catalog says 0000")
            && run.stderr().contains("refusing to use it"),
        "{}",
        run.all()
    );
    assert!(
        !fixture.dir.path().join("work/tiny-ab-key/fixed").exists(),
        "never exported"
    );
    assert!(!out.join("runs").exists(), "no campaign ran");
}

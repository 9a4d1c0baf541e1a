//! scripts/evaluate end to end on small fixtures (2 trials of a few seconds),
//! its statistics against known values (scripts/evaluation/test_stats.py), and
//! its parser of nikic/php-fuzzer's output (scripts/evaluation/test_php_fuzzer_log.py).

mod common;

use std::process::Command;

use common::{bin, fixture, python_with, repo};

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

//! `--coverage full|pruned` end to end: a pruned campaign finds the planted
//! bugs, the mode reaches every command that fuzzes, and a wrong value is a
//! usage error that names the choices.

mod common;

use std::fs;

use common::{artifacts, fixture, php_fuzz};

#[test]
fn a_pruned_campaign_finds_both_planted_json_parser_bugs() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("json-parser/target.php");
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--coverage",
            "pruned",
            "--seed",
            "1",
            "--max-runs",
            "500000",
            "--max-crashes",
            "2",
            "--timeout",
            "2",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    let err = run.stderr();
    assert!(err.contains("coverage: pruned"), "{err}");
    let found: Vec<String> = artifacts(dir.path(), "crash-")
        .iter()
        .map(|a| common::sidecar(a)["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(found.len(), 2, "{found:?}\n{err}");
    assert!(
        found
            .iter()
            .any(|m| m.contains("Uninitialized string offset")),
        "planted bug 1 (\"1e\"): {found:?}"
    );
    assert!(
        found.iter().any(|m| m.contains("must be of type int")),
        "planted bug 2 (\"\\udc00\"): {found:?}"
    );
}

#[test]
fn campaigns_default_to_pruned_coverage_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("json-parser/target.php");
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--max-runs",
            "10",
        ],
        dir.path(),
    );
    assert!(run.stderr().contains("coverage: pruned"), "{}", run.all());
}

#[test]
fn full_coverage_is_named_in_the_opening_line_when_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("json-parser/target.php");
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--coverage",
            "full",
            "--max-runs",
            "10",
        ],
        dir.path(),
    );
    assert!(run.stderr().contains("coverage: full"), "{}", run.all());
}

#[test]
fn an_unknown_coverage_mode_is_a_usage_error_naming_the_choices() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("json-parser/target.php");
    for command in [
        vec!["fuzz", target.to_str().unwrap(), "corpus"],
        vec!["merge", target.to_str().unwrap(), "out", "in"],
        vec!["libfuzzer", target.to_str().unwrap()],
        vec!["instrument", target.to_str().unwrap()],
    ] {
        let mut args = command.clone();
        // Before the target, where libfuzzer takes php-fuzz's own options.
        args.insert(1, "--coverage");
        args.insert(2, "partial");
        let run = php_fuzz(&args, dir.path());
        assert_eq!(run.code(), 2, "{command:?}: {}", run.all());
        let err = run.stderr();
        assert!(
            err.contains("invalid value 'partial' for '--coverage <MODE>'"),
            "{command:?}: {err}"
        );
        assert!(
            err.contains("[possible values: full, pruned]"),
            "{command:?}: {err}"
        );
    }
    assert!(
        !dir.path().join("corpus").exists(),
        "nothing ran after the error"
    );
}

#[test]
fn instrument_prints_and_maps_the_pruned_rendering() {
    let dir = tempfile::tempdir().unwrap();
    let source = "<?php\nif ($a) {\n    a();\n} else {\n    b();\n}\nafter();\n";
    fs::write(dir.path().join("f.php"), source).unwrap();
    let count = |mode: &str| {
        let run = php_fuzz(&["instrument", "f.php", "--coverage", mode], dir.path());
        assert_eq!(run.code(), 0, "{}", run.all());
        run.stdout().matches("FuzzingContext::$trace .=").count()
    };
    // File entry, then and else; full adds the after-if.
    assert_eq!(count("full"), 4);
    assert_eq!(count("pruned"), 3);

    let run = php_fuzz(
        &[
            "instrument",
            "f.php",
            "--coverage",
            "pruned",
            "--out",
            "out",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    let map: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("out/php-fuzz-blocks.json")).unwrap())
            .unwrap();
    assert_eq!(map["coverage"], "pruned");
    let kinds: Vec<&str> = map["files"][0]["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["file_entry", "if_branch", "else_branch"]);
}

#[test]
fn merge_and_libfuzzer_take_the_mode() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("json-parser/target.php");
    let target = target.to_str().unwrap();
    fs::create_dir(dir.path().join("in")).unwrap();
    fs::write(dir.path().join("in/a"), b"[1,2]").unwrap();
    fs::write(dir.path().join("in/b"), b"{\"k\": true}").unwrap();
    let run = php_fuzz(
        &["merge", target, "out", "in", "--coverage", "pruned"],
        dir.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    let kept = fs::read_dir(dir.path().join("out"))
        .unwrap()
        .filter(|e| {
            !e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('.')
        })
        .count();
    assert_eq!(kept, 2, "{}", run.all());

    fs::create_dir(dir.path().join("corpus")).unwrap();
    let run = php_fuzz(
        &[
            "libfuzzer",
            "--coverage",
            "pruned",
            target,
            "-runs=200",
            "-seed=1",
            "corpus",
            "in",
        ],
        dir.path(),
    );
    // 77 if it found one of the planted bugs in its 200 runs.
    assert!([0, 77].contains(&run.code()), "{}", run.all());
    assert!(run.stderr().contains("\tINITED cov: "), "{}", run.all());
}

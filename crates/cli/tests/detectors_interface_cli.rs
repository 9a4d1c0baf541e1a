//! How users reach the detectors (docs/detectors.md): `php-fuzz detectors`,
//! `--detectors` and `$config->setDetectors()`, and what a security
//! finding looks like in run-single, JUnit, minimize-crash and the
//! libFuzzer front end, checked with ClusterFuzz's own stack analyzer.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::{Run, bin, fixture, php_fuzz};

const VULNERABLE: &str = "detectors/command-injection/vulnerable.php";
/// An input that puts the canary where the shell looks for a command.
const ATTACK: &[u8] = b";php-fuzz-cmd;:20";

fn php_fuzz_env(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(bin());
    command.args(args).current_dir(cwd).env_remove("CI");
    for (key, value) in env {
        command.env(key, value);
    }
    Run {
        output: command.output().expect("running php-fuzz"),
    }
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn php_fuzz_detectors_lists_each_detector_with_its_sinks_and_canary() {
    let dir = tempfile::tempdir().unwrap();
    let run = php_fuzz(&["detectors"], dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    let out = run.stdout();
    for (name, canary) in [
        ("command-injection", "php-fuzz-cmd"),
        ("code-injection", "php_fuzz_code"),
        ("object-injection", "PhpFuzzObject"),
        ("class-injection", "PhpFuzzClass"),
        ("path-traversal", "php-fuzz-traversal"),
        ("xxe", "php-fuzz-xxe"),
        ("ssrf", "php-fuzz.example"),
        ("regex-dos", "none"),
    ] {
        let block = out
            .split("\n\n")
            .find(|b| b.starts_with(&format!("{name}\n")))
            .unwrap_or_else(|| panic!("{name} is not listed:\n{out}"));
        assert!(block.contains("  sinks:   "), "{block}");
        assert!(block.contains(&format!("  canary:  {canary}")), "{block}");
        assert!(block.contains("\n  rules:\n  - "), "{block}");
        assert!(block.contains("\n    safe: "), "{block}");
    }
    assert!(out.contains("exec, system, passthru"), "{out}");
    assert!(
        out.contains("  - autoload: a lookup is no finding"),
        "{out}"
    );
}

/// docs/detectors.md ("The rules") lists every rule `php-fuzz detectors`
/// prints, with its safe pattern (issue #42: the autoload rule was in
/// neither).
#[test]
fn the_docs_list_every_rule_and_its_safe_pattern() {
    let docs = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/detectors.md"),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = php_fuzz(&["detectors"], dir.path()).stdout();
    for line in out.lines() {
        if let Some(rule) = line.strip_prefix("  - ") {
            assert!(
                docs.contains(&format!("- {rule}\n")),
                "not in the docs: {rule}"
            );
        } else if let Some(safe) = line.strip_prefix("    safe: ") {
            assert!(
                docs.contains(&format!("safe: `{safe}`")),
                "not in the docs: {safe}"
            );
        }
    }
}

#[test]
fn an_unknown_detector_is_an_error_that_lists_the_valid_ones() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture(VULNERABLE);
    let run = php_fuzz(
        &[
            "fuzz",
            path(&target),
            "--detectors",
            "xxe,sqli",
            "--max-runs",
            "1",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 2, "{}", run.all());
    assert!(
        run.stderr().contains("unknown detector `sqli`: the detectors are command-injection, code-injection, object-injection, class-injection, path-traversal, xxe, ssrf, regex-dos, or `all` or `none`"),
        "{}",
        run.all()
    );
    let configured = fixture("detectors/configured/target.php");
    let run = php_fuzz_env(
        &["run-single", path(&configured), path(&target)],
        dir.path(),
        &[("PHP_FUZZ_TEST_DETECTORS", "xxe,sqli")],
    );
    assert_ne!(run.code(), 0, "{}", run.all());
    assert!(
        run.stderr().contains(
            "setDetectors(): unknown detector 'sqli': the detectors are command-injection,"
        ),
        "{}",
        run.all()
    );
}

#[test]
fn set_detectors_chooses_and_the_command_line_wins() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("attack"), ATTACK).unwrap();
    let configured = fixture("detectors/configured/target.php");
    // The target runs xxe only: the injection goes unseen (the refused
    // process is the only finding).
    let run = php_fuzz(&["run-single", path(&configured), "attack"], dir.path());
    assert_eq!(run.code(), 77, "{}", run.all());
    assert!(run.all().contains("side-effect: process"), "{}", run.all());
    assert!(!run.all().contains("SECURITY"), "{}", run.all());
    // The command line's choice wins.
    let run = php_fuzz(
        &[
            "run-single",
            path(&configured),
            "attack",
            "--detectors",
            "command-injection",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    assert!(
        run.all()
            .contains("command-injection: exec() would run \"php-fuzz-cmd\""),
        "{}",
        run.all()
    );
    // `none`: no detector, and side effects still refused.
    let run = php_fuzz(
        &[
            "run-single",
            path(&fixture(VULNERABLE)),
            "attack",
            "--detectors",
            "none",
        ],
        dir.path(),
    );
    assert!(!run.all().contains("security"), "{}", run.all());
    assert!(run.all().contains("side-effect: process"), "{}", run.all());
}

#[test]
fn a_security_finding_replays_in_run_single_junit_and_minimize_crash() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("attack"), ATTACK).unwrap();
    let target = fixture(VULNERABLE);
    let run = php_fuzz(
        &[
            "run-single",
            path(&target),
            "attack",
            "--junit",
            "junit.xml",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    let err = run.all();
    assert!(err.contains("SECURITY"), "{err}");
    assert!(
        err.contains("at ") && err.contains("vulnerable.php:17"),
        "{err}"
    );
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(junit.contains(r#"type="security""#), "{junit}");
    assert!(
        junit.contains("security: command-injection: exec() would run"),
        "{junit}"
    );

    let run = php_fuzz(
        &[
            "minimize-crash",
            path(&target),
            "attack",
            "--max-runs",
            "2000",
        ],
        dir.path(),
    );
    assert!(run.code() == 0 || run.code() == 77, "{}", run.all());
    let smallest = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("minimized-")
        })
        .min_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap_or_else(|| panic!("no minimized input\n{}", run.all()));
    let small = std::fs::read(&smallest).unwrap();
    assert!(
        small.len() < ATTACK.len(),
        "{:?}",
        String::from_utf8_lossy(&small)
    );
    let again = php_fuzz(&["run-single", path(&target), path(&smallest)], dir.path());
    assert!(
        again.all().contains("security: command-injection"),
        "the minimized input shows the same bug\n{}",
        again.all()
    );
}

/// Each detector's finding, through the libFuzzer front end, as
/// ClusterFuzz's stack analyzer reads it: (detector, an input that shows
/// the bug, the crash type it gives, the planted function).
const CLUSTERFUZZ: [(&str, &[u8], &str, &str); 8] = [
    (
        "command-injection",
        ATTACK,
        "Command injection",
        "thumbnail",
    ),
    (
        "code-injection",
        b"php_fuzz_code()",
        "Fatal-signal",
        "calculate",
    ),
    (
        "object-injection",
        b"v1|O:13:\"PhpFuzzObject\":0:{}",
        "Fatal-signal",
        "preferences",
    ),
    (
        "class-injection",
        b"PhpFuzzClass:x",
        "Fatal-signal",
        "run_filter",
    ),
    (
        "path-traversal",
        b"....//php-fuzz-traversal.html",
        "Arbitrary file open",
        "load_page",
    ),
    (
        "xxe",
        b"<!DOCTYPE r [<!ENTITY x SYSTEM \"php-fuzz-xxe\">]><feed>&x;</feed>",
        "Fatal-signal",
        "feed_items",
    ),
    (
        "ssrf",
        b"http://php-fuzz.example/",
        "Arbitrary DNS resolution",
        "preview",
    ),
    (
        "regex-dos",
        b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@example.co",
        "Fatal-signal",
        "is_company_address",
    ),
];

#[test]
fn the_libfuzzer_front_end_reports_security_issues_clusterfuzz_classifies() {
    let Some(python) = common::python_with("clusterfuzz") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (detector, input, crash_type, function) in CLUSTERFUZZ {
        let name = format!("crash-{detector}");
        std::fs::write(dir.path().join(&name), input).unwrap();
        let target = fixture(&format!("detectors/{detector}/vulnerable.php"));
        let run = php_fuzz(&["libfuzzer", path(&target), &name], dir.path());
        let text = format!("{}{}", run.stdout(), run.stderr());
        assert!(
            text.contains("ERROR: php-fuzz: security issue (FuzzerSecurityIssue"),
            "{text}"
        );
        assert!(text.contains(&format!("): {detector}: ")), "{text}");
        let classified = classify(&python, &text);
        eprintln!("ClusterFuzz classifies {detector} as {classified}");
        assert_eq!(classified["crash_type"], crash_type, "{detector}\n{text}");
        assert_eq!(classified["security"], true, "{detector}\n{text}");
        assert_eq!(
            classified["crash_state"],
            format!("{function}\n{{closure}}\n"),
            "{detector}\n{text}"
        );
    }
}

/// ClusterFuzz's stack analyzer on `output`.
fn classify(python: &Path, output: &str) -> serde_json::Value {
    use std::io::Write;
    let script = common::repo().join("crates/cli/tests/contract/clusterfuzz_stack.py");
    let mut child = Command::new(python)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(output.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_html_report_lists_a_security_finding_of_the_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    std::fs::write(corpus.join("seed"), "cat.png:100").unwrap();
    std::fs::write(corpus.join("attack"), ATTACK).unwrap();
    let run = php_fuzz(
        &[
            "report-coverage",
            path(&fixture(VULNERABLE)),
            "corpus",
            "report",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    let index = std::fs::read_to_string(dir.path().join("report/index.html")).unwrap();
    assert!(index.contains("security"), "{index}");
    assert!(
        index.contains("command-injection: exec() would run"),
        "{index}"
    );
}

#[test]
fn a_preg_call_stuck_past_the_timeout_is_regex_dos() {
    let dir = tempfile::tempdir().unwrap();
    // fixtures/hostile/seven: 'P' runs a catastrophic regex with the
    // backtrack limit raised and PCRE's JIT off, so it never gives up.
    std::fs::write(dir.path().join("stuck"), "P").unwrap();
    let target = fixture("hostile/seven/target.php");
    let run = php_fuzz(
        &["run-single", path(&target), "stuck", "--timeout", "1"],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    let text = run.all();
    assert!(
        text.contains("regex-dos: a preg_* call ran past the timeout on one input"),
        "{text}"
    );
    assert!(text.contains("target.php:31"), "{text}");
    let run = php_fuzz(
        &[
            "run-single",
            path(&target),
            "stuck",
            "--timeout",
            "1",
            "--detectors",
            "none",
        ],
        dir.path(),
    );
    assert_eq!(
        run.code(),
        70,
        "a timeout without the detector\n{}",
        run.all()
    );
}

//! Regression mode for CI: `run-single DIR --junit FILE`, read back by
//! junitparser (the JUnit XML reader CI tools build on); and assertions,
//! on by default.

mod common;

use std::process::Command;

use common::{fixture, php_fuzz, python_with};

#[test]
fn junit_xml_has_one_case_per_input_and_the_crashes_as_failures() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("inputs");
    std::fs::create_dir(&inputs).unwrap();
    std::fs::write(inputs.join("fine"), "a;b").unwrap();
    std::fs::write(inputs.join("also-fine <&>"), "x").unwrap();
    std::fs::write(inputs.join("crash"), "1;2;3").unwrap();
    let target = fixture("targets/type_error.php");
    let run = php_fuzz(
        &[
            "run-single",
            target.to_str().unwrap(),
            "inputs",
            "--junit",
            "report.xml",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    let xml = std::fs::read_to_string(dir.path().join("report.xml")).unwrap();
    assert!(xml.contains("<testcase"), "{xml}");

    let Some(python) = python_with("junitparser") else {
        return;
    };
    let script = r#"
import sys
from junitparser import JUnitXml, Failure
xml = JUnitXml.fromfile(sys.argv[1])
for suite in xml:
    for case in suite:
        failures = [r for r in case.result if isinstance(r, Failure)]
        if failures:
            f = failures[0]
            print("FAIL", case.name, "|", f.type, "|", f.message, "|", "TypeError" in (f.text or ""))
        else:
            print("PASS", case.name)
    print("SUITE", suite.tests, suite.failures)
"#;
    let output = Command::new(&python)
        .args(["-c", script])
        .arg(dir.path().join("report.xml"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(lines[0], "PASS inputs/also-fine <&>");
    assert!(
        lines[1].starts_with("FAIL inputs/crash | exception | exception: TypeError: "),
        "{text}"
    );
    assert!(
        lines[1].ends_with("| True"),
        "the report with the trace: {text}"
    );
    assert_eq!(lines[2], "PASS inputs/fine");
    assert_eq!(lines[3], "SUITE 3 1");
}

#[test]
fn assertions_are_on_unless_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a"), "Abc").unwrap();
    let target = fixture("targets/assert_failure.php");
    let target = target.to_str().unwrap();
    let run = php_fuzz(&["run-single", target, "a"], dir.path());
    assert_eq!(run.code(), 77, "{}", run.all());
    assert!(
        run.stdout()
            .contains("AssertionError: the input must not start with A"),
        "{}",
        run.all()
    );
    let off = php_fuzz(
        &["run-single", target, "a", "--ini", "zend.assertions=-1"],
        dir.path(),
    );
    assert_eq!(off.code(), 0, "{}", off.all());
    // A later --ini wins.
    let on_again = php_fuzz(
        &[
            "run-single",
            target,
            "a",
            "--ini",
            "zend.assertions=-1",
            "--ini",
            "zend.assertions=1",
        ],
        dir.path(),
    );
    assert_eq!(on_again.code(), 77, "{}", on_again.all());

    // Fuzzing finds the failure by itself, and does not with assertions off.
    let fuzz = php_fuzz(
        &[
            "fuzz",
            target,
            "found",
            "--seed",
            "1",
            "--max-runs",
            "200000",
            "--max-crashes",
            "1",
            "--quiet",
        ],
        dir.path(),
    );
    assert_eq!(fuzz.code(), 77, "{}", fuzz.all());
    let fuzz_off = php_fuzz(
        &[
            "fuzz",
            target,
            "not-found",
            "--seed",
            "1",
            "--max-runs",
            "20000",
            "--quiet",
            "--ini",
            "zend.assertions=-1",
        ],
        dir.path(),
    );
    assert_eq!(fuzz_off.code(), 0, "{}", fuzz_off.all());
    let libfuzzer = php_fuzz(&["libfuzzer", target, "-runs=100", "a"], dir.path());
    assert_eq!(libfuzzer.code(), 77, "{}", libfuzzer.all());
}

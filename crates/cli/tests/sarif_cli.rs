//! `php-fuzz report-sarif`: the findings of real campaigns, and hand-made
//! security and side-effect reports, as SARIF logs that the official
//! SARIF 2.1.0 schema accepts (fixtures/sarif/, checked with Python's
//! `jsonschema`, URI formats included).

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use common::{fixture, php_fuzz, python_with, repo};

/// Checks `log` against the SARIF 2.1.0 schema with every format checker
/// jsonschema has (`uri`, `uri-reference` through rfc3986-validator).
/// `Ok` if valid, `Err(the validator's complaints)` if not; `None` when
/// the validator is missing outside CI (said loudly).
const VALIDATE: &str = r#"
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1], encoding="utf-8"))
log = json.load(open(sys.argv[2], encoding="utf-8"))
checker = jsonschema.FormatChecker()
if "uri-reference" not in checker.checkers:
    sys.exit("jsonschema cannot check URIs: install rfc3986-validator (scripts/setup --test-libs)")
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
errors = list(cls(schema, format_checker=checker).iter_errors(log))
for error in errors:
    print("/".join(map(str, error.absolute_path)) or "(root)", "-", error.message)
sys.exit(1 if errors else 0)
"#;

fn schema() -> PathBuf {
    fixture("sarif/sarif-schema-2.1.0.json")
}

fn validate(log: &Path) -> Option<Result<(), String>> {
    let python = python_with("jsonschema")?;
    let output = Command::new(python)
        .args(["-c", VALIDATE])
        .arg(schema())
        .arg(log)
        .output()
        .expect("running the validator");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    match output.status.code() {
        Some(0) => Some(Ok(())),
        Some(1) if !said.trim().is_empty() => Some(Err(said)),
        _ => panic!("the validator itself failed:\n{said}"),
    }
}

fn assert_valid(log: &Path) {
    if let Some(Err(errors)) = validate(log) {
        panic!(
            "{} is not valid SARIF 2.1.0:\n{errors}\n{}",
            log.display(),
            fs::read_to_string(log).unwrap()
        );
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

fn report_sarif(args: &[&str], cwd: &Path) -> common::Run {
    let mut all = vec!["report-sarif"];
    all.extend_from_slice(args);
    php_fuzz(&all, cwd)
}

/// Fuzzes `target` until `crashes` distinct findings, saving them in
/// `DIR/findings`; `code` is the exit code that says what it found.
fn fuzz_into_findings(dir: &Path, target: &str, crashes: &str, code: i32) {
    let target = fixture(target);
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--artifact-dir",
            "findings",
            "--seed",
            "1",
            "--max-runs",
            "300000",
            "--max-crashes",
            crashes,
            "--timeout",
            "1",
            "--quiet",
        ],
        dir,
    );
    assert_eq!(run.code(), code, "findings expected\n{}", run.all());
}

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

/// Writes a report and its input into `dir` as `fuzz` would name them.
fn write_finding(dir: &Path, prefix: &str, record: Value) {
    fs::create_dir_all(dir).unwrap();
    let name = format!("{prefix}-{SHA}");
    fs::write(dir.join(format!("{name}.txt")), b"a;php-fuzz-cmd").unwrap();
    fs::write(
        dir.join(format!("{name}.json")),
        serde_json::to_string_pretty(&record).unwrap(),
    )
    .unwrap();
}

fn record(kind: &str, class: &str, message: &str, file: &Path, line: u32) -> Value {
    let file = file.to_str().unwrap();
    json!({
        "kind": kind,
        "class": class,
        "message": message,
        "file": file,
        "line": line,
        "trace": format!("#0 exec() at {file}:{line}\n#1 {{closure}}() at {file}:3\n"),
        "signature": format!("{kind} {class} at {file}:{line}"),
        "hits": 1,
        "input_file": "./crash-x.txt",
        "input_size": 14,
        "sha1": SHA,
        "found_at": 1_795_738_731u64,
        "target": file,
        "reproduce": format!("php-fuzz run-single {file} ./crash-x.txt"),
    })
}

#[test]
fn a_real_campaigns_findings_make_a_valid_log() {
    let dir = tempfile::tempdir().unwrap();
    // json-parser's two planted bugs (a warning, a TypeError), then a hang.
    fuzz_into_findings(dir.path(), "json-parser/target.php", "2", 77);
    fuzz_into_findings(dir.path(), "targets/infinite_loop.php", "1", 70);
    let root = repo();
    let run = report_sarif(
        &[
            "findings",
            "out.sarif",
            "--source-root",
            root.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(
        run.stdout()
            .contains("out.sarif: 3 results (1 error, 2 warning, 0 note) under 3 rules"),
        "{}",
        run.all()
    );
    let out = dir.path().join("out.sarif");
    assert_valid(&out);

    let log = read_json(&out);
    let run_ = &log["runs"][0];
    assert_eq!(
        run_["originalUriBaseIds"]["%SRCROOT%"]["uri"],
        format!("file://{}/", root.display())
    );
    let rules: Vec<&str> = run_["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rule| rule["id"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["exception", "timeout", "warning"]);
    let results = run_["results"].as_array().unwrap();
    let by_rule = |id: &str| {
        results
            .iter()
            .find(|r| r["ruleId"] == id)
            .unwrap_or_else(|| panic!("no {id} result in {log:#}"))
    };

    let type_error = by_rule("exception");
    assert_eq!(type_error["level"], "error");
    assert!(
        type_error["message"]["text"]
            .as_str()
            .unwrap()
            .starts_with("TypeError: Fixture\\JsonParser::utf8()"),
        "{type_error:#}"
    );
    let place = &type_error["locations"][0]["physicalLocation"];
    assert_eq!(
        place["artifactLocation"]["uri"],
        "fixtures/json-parser/JsonParser.php"
    );
    assert_eq!(place["artifactLocation"]["uriBaseId"], "%SRCROOT%");
    assert_eq!(place["region"]["startLine"], 239);
    // The path, outermost first: the target's closure, then down to utf8().
    let steps = type_error["codeFlows"][0]["threadFlows"][0]["locations"]
        .as_array()
        .unwrap();
    let first = &steps[0]["location"]["physicalLocation"];
    assert_eq!(
        first["artifactLocation"]["uri"],
        "fixtures/json-parser/target.php"
    );
    let last = &steps[steps.len() - 1]["location"]["physicalLocation"];
    assert_eq!(last["region"]["startLine"], 239);
    assert!(steps.len() >= 4, "{type_error:#}");
    // The input lies in the temp dir, outside the source root.
    let findings = dir.path().canonicalize().unwrap().join("findings");
    let input = type_error["properties"]["input"].as_str().unwrap();
    assert!(
        input.starts_with(&format!("{}/crash-", findings.display())),
        "{input}"
    );
    assert_eq!(
        type_error["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        format!("file://{input}")
    );
    assert!(
        type_error["properties"]["reproduce"]
            .as_str()
            .unwrap()
            .starts_with("php-fuzz run-single")
    );

    let warning = by_rule("warning");
    assert_eq!(warning["level"], "warning");
    assert_eq!(
        warning["locations"][0]["physicalLocation"]["region"]["startLine"],
        262
    );
    let hang = by_rule("timeout");
    assert_eq!(hang["level"], "warning");
    assert_eq!(
        hang["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "fixtures/targets/infinite_loop.php"
    );

    // One fingerprint per finding, all different.
    let mut fingerprints: Vec<&str> = results
        .iter()
        .map(|r| {
            r["partialFingerprints"]["phpFuzzSignature/v1"]
                .as_str()
                .unwrap()
        })
        .collect();
    fingerprints.sort();
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), 3);

    // The same findings give the same log, byte for byte.
    let again = report_sarif(
        &[
            "findings",
            "again.sarif",
            "--source-root",
            root.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(again.code(), 0, "{}", again.all());
    assert_eq!(
        fs::read(&out).unwrap(),
        fs::read(dir.path().join("again.sarif")).unwrap()
    );

    // With the default root (here: the temp dir), the fixtures lie outside
    // it and keep absolute file URIs; the inputs are inside.
    let outside = report_sarif(&["findings", "outside.sarif"], dir.path());
    assert_eq!(outside.code(), 0, "{}", outside.all());
    let outside = dir.path().join("outside.sarif");
    assert_valid(&outside);
    let log = read_json(&outside);
    let result = &log["runs"][0]["results"][0];
    let uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .unwrap();
    assert!(uri.starts_with("file:///"), "{uri}");
    let input = &result["relatedLocations"][0]["physicalLocation"]["artifactLocation"];
    assert!(
        input["uri"].as_str().unwrap().starts_with("findings/"),
        "{input}"
    );
    assert_eq!(input["uriBaseId"], "%SRCROOT%");
}

#[test]
fn a_security_finding_is_an_error_with_its_security_severity() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("src/Shell Runner.php");
    let findings = dir.path().join("findings");
    write_finding(
        &findings,
        "crash",
        record(
            "security",
            "command-injection",
            "exec() would run \"php-fuzz-cmd\" from the input",
            &source,
            14,
        ),
    );
    write_finding(
        &findings,
        "side-effect",
        record(
            "side-effect",
            "network",
            "fsockopen() would connect to 127.0.0.1:80",
            &source,
            20,
        ),
    );
    let run = report_sarif(&["findings", "security.sarif"], dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    let out = dir.path().join("security.sarif");
    assert_valid(&out);
    let log = read_json(&out);
    let run_ = &log["runs"][0];
    let rules = run_["tool"]["driver"]["rules"].as_array().unwrap();
    let rule = rules
        .iter()
        .find(|r| r["id"] == "command-injection")
        .unwrap();
    assert_eq!(rule["properties"]["security-severity"], "9.8");
    assert!(
        rule["properties"]["tags"]
            .as_array()
            .unwrap()
            .contains(&json!("security")),
        "{rule:#}"
    );
    assert_eq!(rule["defaultConfiguration"]["level"], "error");
    let results = run_["results"].as_array().unwrap();
    let injection = results
        .iter()
        .find(|r| r["ruleId"] == "command-injection")
        .unwrap();
    assert_eq!(injection["level"], "error");
    assert_eq!(
        injection["message"]["text"],
        "command-injection: exec() would run \"php-fuzz-cmd\" from the input"
    );
    assert_eq!(
        injection["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "src/Shell%20Runner.php"
    );
    assert_eq!(
        rules[injection["ruleIndex"].as_u64().unwrap() as usize]["id"],
        "command-injection"
    );
    let side_effect = results
        .iter()
        .find(|r| r["ruleId"] == "side-effect/network")
        .unwrap();
    assert_eq!(side_effect["level"], "note");
}

#[test]
fn an_empty_artifact_dir_gives_a_valid_log_without_results() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("findings")).unwrap();
    fs::write(dir.path().join("findings/composer.json"), "{}").unwrap();
    let run = report_sarif(&["findings", "empty.sarif"], dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(run.stdout().contains("0 results"), "{}", run.all());
    assert!(run.stderr().is_empty(), "{}", run.all());
    let out = dir.path().join("empty.sarif");
    assert_valid(&out);
    let log = read_json(&out);
    assert_eq!(log["runs"][0]["results"], json!([]));
    assert_eq!(log["runs"][0]["tool"]["driver"]["name"], "php-fuzz");
}

#[test]
fn a_missing_artifact_dir_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = report_sarif(&["no-such-findings", "out.sarif"], dir.path());
    assert_eq!(run.code(), 1, "{}", run.all());
    assert!(
        run.stderr()
            .contains("no-such-findings: the artifact directory does not exist"),
        "{}",
        run.all()
    );
    assert!(!dir.path().join("out.sarif").exists());

    fs::create_dir(dir.path().join("findings")).unwrap();
    let run = report_sarif(
        &["findings", "out.sarif", "--source-root", "no-such-root"],
        dir.path(),
    );
    assert_eq!(run.code(), 1, "{}", run.all());
    assert!(
        run.stderr()
            .contains("no-such-root: the source root must be an existing directory"),
        "{}",
        run.all()
    );

    let run = report_sarif(&["findings", "no-such-dir/out.sarif"], dir.path());
    assert_eq!(run.code(), 1, "{}", run.all());
    assert!(
        run.stderr().contains(
            "cannot write the SARIF log no-such-dir/out.sarif: no-such-dir: cannot create a file in this directory"
        ),
        "{}",
        run.all()
    );
}

#[test]
fn a_report_that_does_not_parse_is_skipped_with_a_warning_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let findings = dir.path().join("findings");
    write_finding(
        &findings,
        "crash",
        record(
            "exception",
            "TypeError",
            "bad",
            &dir.path().join("a.php"),
            2,
        ),
    );
    let broken = findings.join(format!("timeout-{SHA}.json"));
    fs::write(&broken, "{\"kind\": \"timeout\"").unwrap();
    let run = report_sarif(&["findings", "out.sarif"], dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(
        run.stderr().contains(&format!(
            "WARNING: skipped findings/timeout-{SHA}.json: not a php-fuzz crash report"
        )),
        "{}",
        run.all()
    );
    assert!(
        run.stdout().contains(
            "1 result (1 error, 0 warning, 0 note) under 1 rule; 1 unreadable report skipped"
        ),
        "{}",
        run.all()
    );
    assert_valid(&dir.path().join("out.sarif"));
}

/// The check above can fail: logs broken in ways php-fuzz must never
/// write are each rejected by the validator.
#[test]
fn the_validator_rejects_a_broken_log() {
    let dir = tempfile::tempdir().unwrap();
    let findings = dir.path().join("findings");
    write_finding(
        &findings,
        "crash",
        record(
            "exception",
            "TypeError",
            "bad",
            &dir.path().join("a.php"),
            2,
        ),
    );
    let run = report_sarif(&["findings", "good.sarif"], dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    let good = read_json(&dir.path().join("good.sarif"));
    type Breakage = (&'static str, fn(&mut Value));
    let breakages: [Breakage; 5] = [
        ("a level SARIF does not have", |log| {
            log["runs"][0]["results"][0]["level"] = json!("fatal")
        }),
        ("a result without a message", |log| {
            log["runs"][0]["results"][0]
                .as_object_mut()
                .unwrap()
                .remove("message");
        }),
        ("another SARIF version", |log| {
            log["version"] = json!("2.0.0")
        }),
        ("a URI with a space", |log| {
            log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] =
                json!("src/a b.php")
        }),
        ("a line number below 1", |log| {
            log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
                json!(0)
        }),
    ];
    let Some(Ok(())) = validate(&dir.path().join("good.sarif")) else {
        // Skipped (no validator outside CI), or invalid: assert_valid says why.
        assert_valid(&dir.path().join("good.sarif"));
        return;
    };
    for (what, breakage) in breakages {
        let mut log = good.clone();
        breakage(&mut log);
        let path = dir.path().join("broken.sarif");
        fs::write(&path, serde_json::to_string_pretty(&log).unwrap()).unwrap();
        match validate(&path) {
            Some(Err(_)) => {}
            other => panic!("{what}: the validator said {other:?}"),
        }
    }
}

#[test]
fn fuzz_sarif_writes_the_campaigns_security_finding_as_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    fs::create_dir(&corpus).unwrap();
    fs::write(corpus.join("seed"), "cat.png:100").unwrap();
    // A seed that already shows the bug: the campaign saves it at once.
    fs::write(corpus.join("attack"), ";php-fuzz-cmd;:20").unwrap();
    let target = fixture("detectors/command-injection/vulnerable.php");
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--max-runs",
            "200",
            "--artifact-dir",
            "artifacts",
            "--sarif",
            "findings.sarif",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    let log_path = dir.path().join("findings.sarif");
    assert_valid(&log_path);
    let log = read_json(&log_path);
    let results = log["runs"][0]["results"].as_array().unwrap();
    let security = results
        .iter()
        .find(|r| r["ruleId"] == "command-injection")
        .unwrap_or_else(|| panic!("no command-injection result: {log:#}"));
    assert_eq!(security["level"], "error");
    let location = &security["locations"][0]["physicalLocation"];
    assert_eq!(location["region"]["startLine"], 17, "{security:#}");
    assert!(
        results
            .iter()
            .any(|r| r["ruleId"] == "side-effect/process" && r["level"] == "note"),
        "{log:#}"
    );
}

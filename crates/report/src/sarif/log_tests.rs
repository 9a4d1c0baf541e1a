//! The mapping of crash reports to SARIF, checked on the JSON it serializes to.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;

/// A project folder to be the source root, its real path as PHP names files.
fn project() -> (tempfile::TempDir, PathBuf, SourceRoot) {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().canonicalize().unwrap();
    let root = SourceRoot::new(&real).unwrap();
    (dir, real, root)
}

/// The warning the json-parser fixture's planted bug 1 gives, under `root`.
fn warning(root: &Path) -> Finding {
    let r = root.display();
    let record = CrashRecord {
        kind: "warning".into(),
        class: "Warning".into(),
        message: "Uninitialized string offset 2".into(),
        file: format!("{r}/src/JsonParser.php"),
        line: 262,
        trace: format!(
            "#0 Fixture\\JsonParser->number() at {r}/src/JsonParser.php:262\n\
             #1 strlen() at [internal]\n\
             #2 Fixture\\JsonParser->value() at {r}/src/JsonParser.php:80\n\
             #3 {{closure}}() at {r}/fuzz/target.php:6\n"
        ),
        signature: format!(
            "warning Warning \"Uninitialized string offset …\" at {r}/src/JsonParser.php:262 \
             in Fixture\\JsonParser::number < Fixture\\JsonParser::value ({r}/src/JsonParser.php)"
        ),
        hits: 13,
        input_file: "./crash-1d02965522afb49228f4581d5b2438716cebbe78.txt".into(),
        input_size: 2,
        sha1: "1d02965522afb49228f4581d5b2438716cebbe78".into(),
        found_at: 1_795_738_731,
        target: format!("{r}/fuzz/target.php"),
        reproduce: format!("php-fuzz run-single {r}/fuzz/target.php ./crash-1d02.txt"),
        stderr: None,
        note: None,
    };
    finding(
        root,
        "crash-1d02965522afb49228f4581d5b2438716cebbe78",
        record,
    )
}

fn finding(root: &Path, name: &str, record: CrashRecord) -> Finding {
    Finding {
        report: root.join(format!("fuzz/crashes/{name}.json")),
        input: root.join(format!("fuzz/crashes/{name}.txt")),
        record,
    }
}

/// The hand-made report of a `security` finding, as the command-injection
/// detector words it.
fn command_injection(root: &Path) -> Finding {
    let r = root.display();
    let record = CrashRecord {
        kind: "security".into(),
        class: "command-injection".into(),
        message: "exec() would run \"php-fuzz-cmd\" from the input".into(),
        file: format!("{r}/src/Shell.php"),
        line: 14,
        trace: format!(
            "#0 exec() at {r}/src/Shell.php:14\n#1 Acme\\Shell::run() at {r}/fuzz/target.php:5\n"
        ),
        signature: format!("security command-injection at {r}/src/Shell.php:14 in exec"),
        target: format!("{r}/fuzz/target.php"),
        reproduce: "php-fuzz run-single fuzz/target.php crash-aa.txt".into(),
        ..Default::default()
    };
    finding(
        root,
        "crash-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        record,
    )
}

fn log_of(findings: &[Finding], root: &SourceRoot) -> Value {
    serde_json::to_value(sarif_log(findings, root)).unwrap()
}

#[test]
fn a_log_without_findings_has_one_run_and_no_results() {
    let (_dir, real, root) = project();
    let log = log_of(&[], &root);
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(log["$schema"], SCHEMA_URI);
    let run = &log["runs"][0];
    assert_eq!(run["results"], json!([]));
    assert_eq!(run["tool"]["driver"]["name"], "php-fuzz");
    assert_eq!(run["tool"]["driver"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(run["tool"]["driver"]["rules"], json!([]));
    assert_eq!(
        run["originalUriBaseIds"][SRCROOT]["uri"],
        format!("file://{}/", real.display())
    );
}

#[test]
fn a_warning_is_placed_relative_to_the_source_root_with_its_path() {
    let (_dir, real, root) = project();
    let log = log_of(&[warning(&real)], &root);
    let result = &log["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "warning");
    assert_eq!(result["ruleIndex"], 0);
    assert_eq!(result["level"], "warning");
    assert_eq!(
        result["message"]["text"],
        "Warning: Uninitialized string offset 2"
    );
    let place = &result["locations"][0]["physicalLocation"];
    assert_eq!(place["artifactLocation"]["uri"], "src/JsonParser.php");
    assert_eq!(place["artifactLocation"]["uriBaseId"], SRCROOT);
    assert_eq!(place["region"]["startLine"], 262);

    // The path: outermost first, PHP's strlen() left out, the innermost
    // step at the finding.
    let steps = result["codeFlows"][0]["threadFlows"][0]["locations"]
        .as_array()
        .unwrap();
    let walked: Vec<(&str, i64, &str)> = steps
        .iter()
        .map(|step| {
            let location = &step["location"];
            let physical = &location["physicalLocation"];
            (
                physical["artifactLocation"]["uri"].as_str().unwrap(),
                physical["region"]["startLine"].as_i64().unwrap(),
                location["logicalLocations"][0]["fullyQualifiedName"]
                    .as_str()
                    .unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        walked,
        [
            ("fuzz/target.php", 6, "{closure}"),
            ("src/JsonParser.php", 80, "Fixture\\JsonParser->value"),
            ("src/JsonParser.php", 262, "Fixture\\JsonParser->number"),
        ]
    );
    assert_eq!(steps[0]["nestingLevel"], 0);
    assert_eq!(steps[2]["nestingLevel"], 2);
    assert_eq!(
        steps[2]["location"]["message"]["text"],
        "Fixture\\JsonParser->number(): Warning: Uninitialized string offset 2"
    );
    assert_eq!(
        steps[1]["location"]["logicalLocations"][0]["kind"],
        "member"
    );

    // The stack: every frame, innermost first, PHP's own function included.
    let frames = result["stacks"][0]["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 4);
    assert_eq!(
        frames[0]["location"]["physicalLocation"]["region"]["startLine"],
        262
    );
    assert!(frames[1]["location"].get("physicalLocation").is_none());
    assert_eq!(
        frames[1]["location"]["logicalLocations"][0]["fullyQualifiedName"],
        "strlen"
    );
}

#[test]
fn the_input_and_the_reproduce_command_come_along() {
    let (_dir, real, root) = project();
    let log = log_of(&[warning(&real)], &root);
    let result = &log["runs"][0]["results"][0];
    let props = &result["properties"];
    assert_eq!(
        props["input"],
        "fuzz/crashes/crash-1d02965522afb49228f4581d5b2438716cebbe78.txt"
    );
    assert_eq!(props["inputSize"], 2);
    assert_eq!(
        props["report"],
        "fuzz/crashes/crash-1d02965522afb49228f4581d5b2438716cebbe78.json"
    );
    assert_eq!(props["hits"], 13);
    assert_eq!(props["kind"], "warning");
    assert!(
        props["reproduce"]
            .as_str()
            .unwrap()
            .starts_with("php-fuzz run-single")
    );
    let input = &result["relatedLocations"][0];
    assert_eq!(input["id"], 1);
    assert_eq!(
        input["physicalLocation"]["artifactLocation"]["uri"],
        "fuzz/crashes/crash-1d02965522afb49228f4581d5b2438716cebbe78.txt"
    );
    assert!(
        input["message"]["text"]
            .as_str()
            .unwrap()
            .contains("reproduce: php-fuzz run-single"),
        "{input}"
    );
    assert_eq!(
        result["relatedLocations"][1]["physicalLocation"]["artifactLocation"]["uri"],
        "fuzz/target.php"
    );
}

#[test]
fn a_security_finding_has_its_detector_rule_at_error_with_a_severity() {
    let (_dir, real, root) = project();
    let log = log_of(&[warning(&real), command_injection(&real)], &root);
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["command-injection", "warning"], "one rule per ruleId");
    let result = &run["results"][1];
    assert_eq!(result["ruleId"], "command-injection");
    assert_eq!(result["ruleIndex"], 0);
    assert_eq!(run["results"][0]["ruleIndex"], 1);
    assert_eq!(result["level"], "error");
    assert_eq!(
        result["message"]["text"],
        "command-injection: exec() would run \"php-fuzz-cmd\" from the input"
    );
    let rule = &rules[0];
    assert_eq!(rule["properties"]["security-severity"], "9.8");
    let tags = rule["properties"]["tags"].as_array().unwrap();
    assert!(tags.contains(&json!("security")), "{rule}");
    assert_eq!(rule["defaultConfiguration"]["level"], "error");
    assert!(rule["shortDescription"]["text"].as_str().unwrap().len() > 10);
    assert!(rule["fullDescription"]["text"].as_str().unwrap().len() > 10);
    assert!(rule["help"]["text"].as_str().unwrap().len() > 10);
}

#[test]
fn a_side_effect_is_a_note() {
    let (_dir, real, root) = project();
    let record = CrashRecord {
        kind: "side-effect".into(),
        class: "network".into(),
        message: "fsockopen() would connect to example.com:80".into(),
        file: format!("{}/src/Client.php", real.display()),
        line: 3,
        ..Default::default()
    };
    let log = log_of(&[finding(&real, "crash-b", record)], &root);
    let result = &log["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "side-effect/network");
    assert_eq!(result["level"], "note");
}

#[test]
fn a_finding_without_a_place_falls_back_to_its_frames_then_to_the_target() {
    let (_dir, real, root) = project();
    let r = real.display();
    let hang = CrashRecord {
        kind: "timeout".into(),
        class: "Timeout".into(),
        message: "the target ran for 1.07 s, longer than the timeout".into(),
        trace: format!("#0 spin() at {r}/src/Spin.php:8\n#1 {{main}} at {r}/t.php:3\n"),
        target: format!("{r}/t.php"),
        ..Default::default()
    };
    let nowhere = CrashRecord {
        kind: "harness-died".into(),
        target: format!("{r}/t.php"),
        ..Default::default()
    };
    let homeless = CrashRecord {
        kind: "exit".into(),
        ..Default::default()
    };
    let log = log_of(
        &[
            finding(&real, "timeout-a", hang),
            finding(&real, "crash-b", nowhere),
            finding(&real, "crash-c", homeless),
        ],
        &root,
    );
    let results = &log["runs"][0]["results"];
    let hang = &results[0]["locations"][0]["physicalLocation"];
    assert_eq!(hang["artifactLocation"]["uri"], "src/Spin.php");
    assert_eq!(hang["region"]["startLine"], 8);

    let nowhere = &results[1];
    let place = &nowhere["locations"][0]["physicalLocation"];
    assert_eq!(place["artifactLocation"]["uri"], "t.php");
    assert!(place.get("region").is_none(), "no line, no region: {place}");
    assert!(nowhere.get("codeFlows").is_none());
    assert!(nowhere.get("stacks").is_none());
    assert_eq!(
        nowhere["message"]["text"],
        "a finding of the kind harness-died"
    );

    assert!(results[2].get("locations").is_none());
    assert_eq!(results[2]["relatedLocations"].as_array().unwrap().len(), 1);
}

#[test]
fn a_known_file_with_an_unknown_line_has_no_region() {
    let (_dir, real, root) = project();
    let record = CrashRecord {
        kind: "out-of-memory".into(),
        file: format!("{}/src/Big.php", real.display()),
        line: 0,
        ..Default::default()
    };
    let log = log_of(&[finding(&real, "oom-a", record)], &root);
    let place = &log["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(place["artifactLocation"]["uri"], "src/Big.php");
    assert!(place.get("region").is_none());
}

#[test]
fn a_file_outside_the_root_keeps_its_absolute_uri() {
    let (_dir, real, root) = project();
    let record = CrashRecord {
        kind: "exception".into(),
        class: "Twig\\Error\\SyntaxError".into(),
        message: "Unexpected token\nsecond line".into(),
        file: "/usr/share/php/Twig/Lexer.php".into(),
        line: 400,
        ..Default::default()
    };
    let log = log_of(&[finding(&real, "crash-a", record)], &root);
    let result = &log["runs"][0]["results"][0];
    let artifact = &result["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(artifact["uri"], "file:///usr/share/php/Twig/Lexer.php");
    assert!(artifact.get("uriBaseId").is_none());
    assert_eq!(
        result["message"]["text"],
        "Twig\\Error\\SyntaxError: Unexpected token"
    );
}

#[test]
fn code_from_eval_is_placed_at_the_eval_call() {
    let (_dir, real, root) = project();
    let record = CrashRecord {
        kind: "exception".into(),
        class: "DivisionByZeroError".into(),
        message: "Division by zero".into(),
        file: format!("{}/src/Template.php(41) : eval()'d code", real.display()),
        line: 3,
        ..Default::default()
    };
    let log = log_of(&[finding(&real, "crash-a", record)], &root);
    let place = &log["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(place["artifactLocation"]["uri"], "src/Template.php");
    assert_eq!(place["region"]["startLine"], 41);
}

#[test]
fn the_fingerprint_is_the_same_wherever_the_project_is_checked_out() {
    let (_a, first, first_root) = project();
    let (_b, second, second_root) = project();
    let fingerprint = |real: &Path, root: &SourceRoot, finding: fn(&Path) -> Finding| {
        log_of(&[finding(real)], root)["runs"][0]["results"][0]["partialFingerprints"]
            [FINGERPRINT_KEY]
            .as_str()
            .unwrap()
            .to_string()
    };
    let here = fingerprint(&first, &first_root, warning);
    assert_eq!(here.len(), 40, "a SHA-1: {here}");
    assert_eq!(here, fingerprint(&second, &second_root, warning));
    assert_ne!(here, fingerprint(&first, &first_root, command_injection));
}

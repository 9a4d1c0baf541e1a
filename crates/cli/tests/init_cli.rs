//! `php-fuzz init` on a generated composer project, then the fuzz command
//! it wrote finds the project's planted bug.

mod common;

use std::path::Path;
use std::process::Command;

use common::{composer_project, php_fuzz, repo};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn init_then_composer_fuzz_finds_the_planted_bug() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    composer_project(project);
    let run = php_fuzz(
        &["init", "--call", "Acme\\JsonLite\\Decoder->decode"],
        project,
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    let out = run.stdout();
    for file in [
        "fuzz/json_lite/target.php",
        "fuzz/json_lite/json_lite.dict",
        "fuzz/json_lite/corpus/.gitkeep",
        ".github/workflows/php-fuzz.yml",
    ] {
        assert!(out.contains(&format!("created {file}")), "{out}");
        assert!(project.join(file).is_file(), "{file}");
    }
    let target = read(&project.join("fuzz/json_lite/target.php"));
    assert!(target.contains("(new \\Acme\\JsonLite\\Decoder())->decode($input);"));
    assert!(target.contains("Namespaces of this project (composer.json): Acme\\JsonLite\\"));
    assert!(target.contains("require __DIR__ . '/../../vendor/autoload.php';"));

    // composer.json: the script added, everything else as it was.
    let composer = read(&project.join("composer.json"));
    let value: serde_json::Value = serde_json::from_str(&composer).unwrap();
    let keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "name",
            "description",
            "type",
            "require",
            "autoload",
            "scripts"
        ]
    );
    assert_eq!(value["scripts"]["test"], "phpunit");
    assert!(
        composer.contains("\n    \"name\": \"acme/json-lite\",\n"),
        "{composer}"
    );
    assert!(composer.contains("\"Acme\\\\JsonLite\\\\\": \"src/\""));
    let command = value["scripts"]["fuzz"].as_str().unwrap().to_string();

    // `composer fuzz -- --max-crashes 1 …`, as composer runs it: a shell
    // command line in the project, php-fuzz on the PATH.
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_php-fuzz")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let fuzz = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{command} --max-crashes 1 --max-time 120 --seed 1 --quiet"
        ))
        .current_dir(project)
        .env("PATH", path)
        .env_remove("CI")
        .output()
        .unwrap();
    let all = format!(
        "{}\n{}",
        String::from_utf8_lossy(&fuzz.stdout),
        String::from_utf8_lossy(&fuzz.stderr)
    );
    assert_eq!(fuzz.status.code(), Some(77), "{all}");
    assert!(all.contains("Undefined array key 0"), "{all}");
    let crashes: Vec<_> = std::fs::read_dir(project.join("fuzz/json_lite/crashes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    assert_eq!(crashes.len(), 1, "{all}");
    assert!(std::fs::read(&crashes[0]).unwrap().starts_with(b"{}"));

    // Again: nothing is overwritten, and it says so.
    let before: Vec<_> = [
        "composer.json",
        "fuzz/json_lite/target.php",
        ".github/workflows/php-fuzz.yml",
    ]
    .iter()
    .map(|f| read(&project.join(f)))
    .collect();
    let again = php_fuzz(&["init", "--call", "Other\\Thing::run"], project);
    assert_eq!(again.code(), 0, "{}", again.all());
    let out = again.stdout();
    assert!(
        out.contains("skipped fuzz/json_lite/target.php (exists)"),
        "{out}"
    );
    assert!(out.contains("skipped .github/workflows/php-fuzz.yml (exists)"));
    assert!(out.contains("skipped the composer script `fuzz`"));
    assert!(!out.contains("created "), "{out}");
    let after: Vec<_> = [
        "composer.json",
        "fuzz/json_lite/target.php",
        ".github/workflows/php-fuzz.yml",
    ]
    .iter()
    .map(|f| read(&project.join(f)))
    .collect();
    assert_eq!(before, after);
}

#[test]
fn without_call_the_target_has_a_todo_and_the_workflow_matches_the_docs() {
    let dir = tempfile::tempdir().unwrap();
    composer_project(dir.path());
    let run = php_fuzz(&["init", "--name", "parser"], dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(run.stdout().contains("next: edit fuzz/parser/target.php"));
    let target = read(&dir.path().join("fuzz/parser/target.php"));
    assert!(target.contains("// TODO: call your code with $input"));
    assert!(target.contains("(new \\Acme\\JsonLite\\Parser())->parse($input);"));
    // The generated target loads and runs (doing nothing yet).
    let check = php_fuzz(
        &["run-single", "fuzz/parser/target.php", "composer.json"],
        dir.path(),
    );
    assert_eq!(check.code(), 0, "{}", check.all());
    assert_eq!(
        read(&dir.path().join(".github/workflows/php-fuzz.yml")),
        read(&repo().join("docs/ci/github/php-fuzz.yml")),
        "docs/ci/github/php-fuzz.yml is what init writes for a target named parser"
    );

    let empty = tempfile::tempdir().unwrap();
    let run = php_fuzz(&["init"], empty.path());
    assert_eq!(run.code(), 1);
    assert!(run.stderr().contains("composer.json"), "{}", run.all());
}

/// The workflow `init` writes turns the findings into a SARIF log and
/// uploads it to code scanning, and actionlint passes it.
#[test]
fn the_workflow_uploads_the_findings_to_code_scanning() {
    let dir = tempfile::tempdir().unwrap();
    composer_project(dir.path());
    let run = php_fuzz(&["init", "--name", "parser"], dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    let workflow = dir.path().join(".github/workflows/php-fuzz.yml");
    let Some(python) = common::python_with("yaml") else {
        return;
    };
    let json = Command::new(&python)
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
        ])
        .arg(&workflow)
        .output()
        .unwrap();
    assert!(json.status.success(), "{json:?}");
    let workflow_json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let job = &workflow_json["jobs"]["fuzz"];
    assert_eq!(job["permissions"]["security-events"], "write");
    assert_eq!(job["permissions"]["contents"], "read");
    let steps = job["steps"].as_array().unwrap();
    let position = |found: &dyn Fn(&serde_json::Value) -> bool, what: &str| {
        steps
            .iter()
            .position(found)
            .unwrap_or_else(|| panic!("no step {what} in {job:#}"))
    };
    let fuzz = position(
        &|s| {
            s["run"].as_str().is_some_and(|r| {
                r.contains("php-fuzz fuzz ") && r.contains("--sarif php-fuzz.sarif")
            })
        },
        "fuzzing with --sarif php-fuzz.sarif",
    );
    let fallback = position(
        &|s| {
            s["run"]
                .as_str()
                .is_some_and(|r| r.contains("php-fuzz report-sarif \"$CRASHES\" php-fuzz.sarif"))
        },
        "running report-sarif",
    );
    let upload = position(
        &|s| s["uses"] == "github/codeql-action/upload-sarif@v3",
        "uploading the SARIF log",
    );
    assert!(fuzz < fallback && fallback < upload, "{job:#}");
    for step in [fallback, upload] {
        let condition = steps[step]["if"].as_str().unwrap();
        assert!(condition.contains("always()"), "{condition}");
    }
    assert_eq!(steps[upload]["with"]["sarif_file"], "php-fuzz.sarif");
    assert_eq!(steps[upload]["with"]["category"], "php-fuzz");

    // actionlint, installed beside the test Python by scripts/setup --test-libs.
    let actionlint = python.parent().map(|bin| bin.join("actionlint"));
    let Some(actionlint) = actionlint.filter(|path| path.is_file()) else {
        let message = "actionlint is missing: run `scripts/setup --test-libs` and set \
                       PHP_FUZZ_TEST_PYTHON=target/test-venv/bin/python (scripts/test does both)";
        assert!(std::env::var_os("CI").is_none(), "{message}");
        eprintln!("SKIPPED (not in CI): {message}");
        return;
    };
    let lint = Command::new(actionlint).arg(&workflow).output().unwrap();
    assert!(
        lint.status.success(),
        "{}{}",
        String::from_utf8_lossy(&lint.stdout),
        String::from_utf8_lossy(&lint.stderr)
    );
}

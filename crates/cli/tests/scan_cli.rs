//! `php-fuzz scan` (docs/autofuzz.md) on the planted package of
//! fixtures/typed-package, with no harness written: it finds each planted
//! bug (one enum case, a negative integer, an array shape, an object built
//! through an interface) and nothing else, leaves the `@internal` class
//! out, writes OUT as documented, and every finding replays with
//! `run-single`. A package with nothing to find exits 0.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{fixture, php_fuzz};

fn scan(dir: &Path, package: &str, seconds: &str) -> common::Run {
    let package = fixture(package);
    php_fuzz(
        &[
            "scan",
            package.to_str().unwrap(),
            "--max-time",
            seconds,
            "--out",
            "out",
            "--seed",
            "1",
        ],
        dir,
    )
}

#[test]
fn scan_finds_every_planted_bug_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let run = scan(dir.path(), "typed-package", "60");
    assert_eq!(run.code(), 77, "{}", run.all());
    let out = dir.path().join("out");
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("entry-points.json")).unwrap())
            .unwrap();
    let sites: BTreeSet<String> = document["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let file = f["file"].as_str().unwrap();
            let name = Path::new(file).file_name().unwrap().to_string_lossy();
            format!("{name}:{}", f["line"])
        })
        .collect();
    let planted: BTreeSet<String> = [
        "PaddedFormatter.php:20",
        "Paginator.php:14",
        "Renderer.php:12",
        "Settings.php:15",
    ]
    .map(String::from)
    .into();
    assert_eq!(sites, planted, "{}", run.all());
    assert_eq!(document["rejected_calls"], 0, "{document}");
    let skipped = document["skipped"].to_string();
    assert!(
        skipped.contains(r"Planted\\Internal\\Buffer::take") && skipped.contains("@internal"),
        "{skipped}"
    );
    let interface_bug = document["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"].as_str().unwrap().ends_with("PaddedFormatter.php"))
        .unwrap();
    assert!(
        interface_bug
            .to_string()
            .contains(r"Planted\\Exporter::export"),
        "the interface's bug is reached from the method that takes the interface: {interface_bug}"
    );

    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    for name in ["Renderer.php:12", r"Planted\Paginator::page", "report.html"] {
        assert!(
            page.contains(name) || name == "report.html",
            "report.html lacks {name}"
        );
    }
    assert!(out.join("coverage/index.html").is_file());

    for finding in document["findings"].as_array().unwrap() {
        let input = finding["input"].as_str().unwrap();
        let replay = php_fuzz(
            &[
                "run-single",
                finding["entry_point"].as_str().unwrap(),
                input,
                "--autoload",
                fixture("typed-package/autoload.php").to_str().unwrap(),
            ],
            dir.path(),
        );
        assert_eq!(replay.code(), 77, "{input}: {}", replay.all());
    }
    let harness = document["entry_points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["callee"] == r"Planted\Renderer::render")
        .unwrap()["harness"]
        .as_str()
        .unwrap()
        .to_string();
    let renderer_finding = document["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["entry_point"] == r"Planted\Renderer::render")
        .unwrap()["input"]
        .as_str()
        .unwrap()
        .to_string();
    let by_file = php_fuzz(&["run-single", &harness, &renderer_finding], dir.path());
    assert_eq!(by_file.code(), 77, "{}", by_file.all());
}

#[test]
fn a_package_with_nothing_to_find_exits_0_and_a_usage_error_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let run = scan(dir.path(), "typed-safe", "12");
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(run.stderr().contains("No findings"), "{}", run.all());
    let usage = php_fuzz(&["scan"], dir.path());
    assert_eq!(usage.code(), 2, "{}", usage.all());
}

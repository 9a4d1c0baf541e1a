//! Issue 27, one bug one finding: crashes are told apart by what went wrong
//! and where (kind, site, top three frames), never by how PHP worded it
//! (docs/dedup.md). Each fixture of fixtures/dedup is fuzzed for 30 s with
//! `--seed 1`, long enough for the old rule to save dozens of copies of
//! one bug; `PHP_FUZZ_BIN` runs them against another build (an older one,
//! to see them fail).

mod common;

use std::fs;
use std::path::Path;

use common::{Run, artifacts, fixture, php_fuzz, sidecar};
use serde_json::Value;

/// `php-fuzz fuzz fixtures/dedup/NAME.php corpus --seed 1 --max-runs 20000`
/// in a fresh directory; the run, and the reports of the findings saved.
/// A run budget, not a time: the same work on a loaded machine (20,000
/// runs take 0.5 to 3 s here; each bug comes back hundreds of times).
fn campaign(name: &str) -> (Run, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture(&format!("dedup/{name}.php"));
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "1",
            "--max-runs",
            "20000",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    let found: Vec<_> = ["crash-", "timeout-", "oom-"]
        .iter()
        .flat_map(|prefix| artifacts(dir.path(), prefix))
        .collect();
    let reports = found.iter().map(|a| sidecar(a)).collect();
    (run, reports)
}

fn field<'a>(report: &'a Value, name: &str) -> &'a str {
    report[name].as_str().unwrap_or_default()
}

/// Every report is hit more than once: the bug came back with other
/// inputs (other characters, keys, numbers) and was not saved again.
fn assert_hit_often(run: &Run, reports: &[Value]) {
    for report in reports {
        let hits = report["hits"].as_u64().unwrap_or(0);
        assert!(
            hits >= 100,
            "hit {hits} times: {}\n{}",
            field(report, "signature"),
            run.all()
        );
    }
}

#[test]
fn a_warning_quoting_a_character_of_the_input_is_one_finding() {
    let (run, reports) = campaign("hex_digit");
    assert_eq!(reports.len(), 1, "{}", run.all());
    assert!(
        field(&reports[0], "message").starts_with("pack(): Type H: illegal hex digit "),
        "{}",
        run.all()
    );
    assert_hit_often(&run, &reports);
    let err = run.stderr();
    assert!(
        err.contains("==== 1 distinct crashes (1 new this run):"),
        "{err}"
    );
    let last_status = err.lines().rfind(|l| l.starts_with('#'));
    assert!(
        last_status.is_some_and(|l| l.contains(" crashes: 1 ")),
        "{last_status:?}"
    );
}

#[test]
fn an_undefined_array_key_named_by_the_input_is_one_finding() {
    let (run, reports) = campaign("array_key");
    assert_eq!(reports.len(), 1, "{}", run.all());
    assert!(
        field(&reports[0], "message").starts_with("Undefined array key "),
        "{}",
        run.all()
    );
    assert_hit_often(&run, &reports);
}

#[test]
fn two_bugs_with_the_same_message_are_two_findings() {
    let (run, reports) = campaign("same_message");
    assert_eq!(reports.len(), 2, "{}", run.all());
    assert!(
        reports
            .iter()
            .all(|r| field(r, "message") == "Undefined array key 1"),
        "{}",
        run.all()
    );
    let mut lines: Vec<u64> = reports
        .iter()
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    lines.sort();
    assert_eq!(lines, [12, 19], "{}", run.all());
}

#[test]
fn one_bug_through_two_callers_in_the_top_three_frames_is_a_finding_per_caller() {
    // The rule (docs/dedup.md): the callers are two of the top three frames,
    // so each is a finding, as ClusterFuzz would file them.
    let (run, reports) = campaign("two_callers");
    assert_eq!(reports.len(), 2, "{}", run.all());
    let signatures: Vec<&str> = reports.iter().map(|r| field(r, "signature")).collect();
    assert!(
        signatures.iter().any(|s| s.contains("< Reader::tag (")),
        "{signatures:?}"
    );
    assert!(
        signatures.iter().any(|s| s.contains("< Reader::length (")),
        "{signatures:?}"
    );
    assert!(
        run.stderr()
            .contains("(via Reader::tag():16 < {closure}():27)"),
        "the summary names the caller: {}",
        run.all()
    );
}

#[test]
fn one_bug_reached_along_paths_that_part_below_the_top_three_frames_is_one_finding() {
    let (run, reports) = campaign("distant_callers");
    assert_eq!(reports.len(), 1, "{}", run.all());
    assert_hit_often(&run, &reports);
}

/// fixtures/dedup/old-artifacts, as the php-fuzz before issue 27 saved
/// them, copied into `dir` with the fixture folder's real path.
fn old_artifacts(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    let dedup = fixture("dedup");
    for entry in fs::read_dir(fixture("dedup/old-artifacts")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if !name.starts_with("crash-") {
            continue;
        }
        let mut bytes = fs::read(&path).unwrap();
        if name.ends_with(".json") {
            let text = String::from_utf8(bytes).unwrap();
            bytes = text
                .replace("@DEDUP@", dedup.to_str().unwrap())
                .into_bytes();
        }
        fs::write(dir.join(name), bytes).unwrap();
    }
}

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            (name, fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn an_old_artifact_folder_is_rekeyed_and_its_copies_are_one_known_finding() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("saved");
    old_artifacts(&saved);
    let before = listing(&saved);
    assert_eq!(before.len(), 14, "seven artifacts and their reports");
    fs::create_dir(dir.path().join("corpus")).unwrap();
    fs::write(dir.path().join("corpus/seed"), b"\\'zz").unwrap();
    let target = fixture("dedup/hex_digit.php");
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "1",
            "--max-runs",
            "3000",
            "--artifact-dir",
            "saved",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    let err = run.stderr();
    assert!(
        err.contains("INFO: the 7 crash reports of this target in saved are 1 distinct findings"),
        "{err}"
    );
    assert!(err.contains("==== known warning hit again"), "{err}");
    assert!(
        err.contains("==== 1 distinct crashes (0 new this run):"),
        "{err}"
    );
    assert!(err.contains("saved earlier (with 6 copies)"), "{err}");

    let after = listing(&saved);
    let names = |files: &[(String, Vec<u8>)]| -> Vec<String> {
        files.iter().map(|(n, _)| n.clone()).collect()
    };
    assert_eq!(
        names(&after),
        names(&before),
        "nothing deleted, nothing added"
    );
    let changed: Vec<&String> = after
        .iter()
        .zip(&before)
        .filter(|(a, b)| a.1 != b.1)
        .map(|(a, _)| &a.0)
        .collect();
    assert_eq!(
        changed.len(),
        1,
        "only the first report counts hits: {changed:?}"
    );
    let first = sidecar(&saved.join(changed[0]).with_extension("txt"));
    let found_first = before
        .iter()
        .filter(|(n, _)| n.ends_with(".json"))
        .map(|(n, _)| sidecar(&saved.join(n).with_extension("txt"))["found_at"].as_u64())
        .min()
        .unwrap();
    assert_eq!(first["found_at"].as_u64(), found_first, "{first}");
    assert!(first["hits"].as_u64().unwrap() > 1, "{first}");
    assert!(
        field(&first, "signature").contains(" in pack < RtfText::hexByte ("),
        "re-keyed: {first}"
    );
}

#[test]
fn run_single_groups_a_folder_by_signature() {
    let dir = tempfile::tempdir().unwrap();
    old_artifacts(&dir.path().join("saved"));
    let target = fixture("dedup/hex_digit.php");
    let run = php_fuzz(
        &["run-single", target.to_str().unwrap(), "saved"],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    let out = run.stdout();
    assert!(
        out.contains("== 7 inputs: 0 ok, 7 failed (7 warning)\n"),
        "{out}"
    );
    assert!(
        out.contains("== 1 distinct finding by signature (docs/dedup.md):\n"),
        "{out}"
    );
    assert!(
        out.contains("  #1 7 inputs: warning: Warning: pack(): Type H: illegal hex digit "),
        "{out}"
    );
    assert!(
        out.contains("(via RtfText::hexByte():26 < RtfText::decode():15); first: saved/crash-"),
        "{out}"
    );
    assert_eq!(
        out.matches(": finding #1 again (first: saved/crash-")
            .count(),
        6,
        "{out}"
    );
    assert_eq!(
        out.matches("  input (").count(),
        1,
        "one full report, the first input's: {out}"
    );
}

#[test]
fn libfuzzers_dedup_token_names_the_signatures_frames() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("crash-hex"), b"\\'zz").unwrap();
    let target = fixture("dedup/hex_digit.php");
    let run = php_fuzz(
        &["libfuzzer", target.to_str().unwrap(), "crash-hex"],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    assert!(
        run.stderr()
            .contains("\nDEDUP_TOKEN: pack--RtfText::hexByte--RtfText::decode\n"),
        "{}",
        run.all()
    );
}

/// A finding's hits reach its report while the campaign runs (every 2 s),
/// not only at its end: a campaign killed with SIGKILL keeps them.
#[test]
fn hit_counts_reach_the_report_during_the_campaign() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("hostile/engine_always_throws.php");
    let mut child = std::process::Command::new(common::bin())
        .args(["fuzz", target.to_str().unwrap(), "corpus", "-q"])
        .args(["--max-time", "120"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let hits_on_disk = || {
        artifacts(dir.path(), "crash-")
            .first()
            .and_then(|a| fs::read_to_string(a.with_extension("json")).ok())
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .and_then(|report| report["hits"].as_u64())
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while hits_on_disk() < 100 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.kill().unwrap(); // SIGKILL: no end of campaign writes them
    child.wait().unwrap();
    let hits = hits_on_disk();
    assert!(
        hits >= 100,
        "the report says {hits} hits after 60 s of a crash on every input"
    );
}

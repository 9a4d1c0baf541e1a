//! `run-single` and `minimize-crash` end to end.

mod common;

use std::fs;

use common::{fixture, php_fuzz, php_fuzz_into_closed_pipe};

#[test]
fn run_single_reports_each_outcome_and_the_exit_code_says_if_any_failed() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("ok.json"), b"[1, 2]").unwrap();
    fs::write(dir.path().join("parse-error.json"), b"[1,").unwrap();
    fs::write(dir.path().join("warning.json"), b"1e").unwrap();
    fs::write(dir.path().join("type-error.json"), br#""\udc00""#).unwrap();
    let target = fixture("json-parser/target.php");
    let t = target.to_str().unwrap();

    let ok = php_fuzz(
        &["run-single", t, "ok.json", "parse-error.json"],
        dir.path(),
    );
    assert_eq!(ok.code(), 0, "{}", ok.all());
    assert!(ok.stdout().contains("ok.json: OK"), "{}", ok.all());
    assert!(
        ok.stdout().contains("parse-error.json: OK"),
        "allowed exceptions pass\n{}",
        ok.all()
    );
    assert!(
        ok.stdout().contains("== 2 inputs: 2 ok, 0 failed"),
        "{}",
        ok.all()
    );

    let bad = php_fuzz(
        &[
            "run-single",
            t,
            "warning.json",
            "type-error.json",
            "ok.json",
        ],
        dir.path(),
    );
    assert_eq!(bad.code(), 77, "{}", bad.all());
    let out = bad.stdout();
    assert!(out.contains("warning.json: CRASH (warning)"), "{out}");
    assert!(out.contains("Uninitialized string offset 2"), "{out}");
    assert!(
        out.contains("JsonParser.php:262"),
        "original line numbers: {out}"
    );
    assert!(out.contains("type-error.json: CRASH (exception)"), "{out}");
    assert!(out.contains("TypeError"), "{out}");
    assert!(
        out.contains("Fixture\\JsonParser->unicodeEscape() at"),
        "stack trace: {out}"
    );
    assert!(
        out.contains("== 3 inputs: 1 ok, 2 failed (1 exception, 1 warning)"),
        "{out}"
    );
}

#[test]
fn run_single_replays_a_directory_recursively_and_reports_timeouts() {
    let dir = tempfile::tempdir().unwrap();
    let crashes = dir.path().join("crashes");
    fs::create_dir_all(crashes.join("older")).unwrap();
    fs::write(crashes.join("a"), b"L").unwrap();
    fs::write(crashes.join("older/b"), b"LOO").unwrap();
    fs::write(crashes.join("crash-x.json"), b"{}").unwrap();
    let target = fixture("targets/infinite_loop.php");
    let run = php_fuzz(
        &[
            "run-single",
            target.to_str().unwrap(),
            "crashes",
            "--timeout",
            "1",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 70, "{}", run.all());
    let out = run.stdout();
    assert!(out.contains("crashes/a: OK"), "{out}");
    assert!(out.contains("crashes/older/b: TIMEOUT"), "{out}");
    assert!(out.contains("spin()"), "where it looped: {out}");
    assert!(
        !out.contains("crash-x.json"),
        "sidecars are not inputs: {out}"
    );
    assert!(
        out.contains("== 2 inputs: 1 ok, 1 failed (1 timeout)"),
        "{out}"
    );
}

#[test]
fn run_single_trace_lists_the_blocks_an_input_ran() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("in"), b"FUZX").unwrap();
    let target = fixture("targets/nested_bytes.php");
    let run = php_fuzz(
        &["run-single", target.to_str().unwrap(), "in", "--trace"],
        dir.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    let out = run.stdout();
    assert!(out.contains("blocks run:"), "{out}");
    let branch_on = |line: u32| {
        out.lines()
            .any(|l| l.contains(&format!("nested_bytes.php:{line}:")) && l.contains("IfBranch"))
    };
    assert!(branch_on(6), "the 'F' branch ran: {out}");
    assert!(branch_on(8), "the 'Z' branch ran: {out}");
    assert!(!branch_on(9), "the second 'Z' branch did not: {out}");
    assert!(out.contains("ClosureEntry"), "{out}");
}

#[test]
fn minimize_crash_keeps_the_same_crash_and_reaches_the_minimal_input() {
    let dir = tempfile::tempdir().unwrap();
    // The planted "1e" warning buried in a larger document.
    let mut input = b"[true, false, null, {\"k\": [\"v\", 2, 3.5]}, ".to_vec();
    input.extend_from_slice(b"1e");
    fs::write(dir.path().join("crash-big.txt"), &input).unwrap();
    let target = fixture("json-parser/target.php");
    let run = php_fuzz(
        &["minimize-crash", target.to_str().unwrap(), "crash-big.txt"],
        dir.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    let out = run.stdout();
    assert!(out.contains("1-minimal"), "{out}");
    assert!(
        out.contains("Uninitialized string offset"),
        "the same crash: {out}"
    );
    let minimized: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("minimized-")
        })
        .collect();
    assert_eq!(minimized.len(), 1, "{}", run.all());
    let data = fs::read(&minimized[0]).unwrap();
    assert_eq!(
        data,
        b"0e",
        "digit simplified, exponent kept: {:?}",
        String::from_utf8_lossy(&data)
    );
}

#[test]
fn minimize_crash_does_not_accept_a_different_crash() {
    let dir = tempfile::tempdir().unwrap();
    // A TypeError (\udc00) next to a warning (1e): minimizing the TypeError
    // must not slide over to the shorter warning.
    fs::write(dir.path().join("crash"), br#"["\udc00", 1e"#).unwrap();
    let target = fixture("json-parser/target.php");
    let run = php_fuzz(
        &["minimize-crash", target.to_str().unwrap(), "crash"],
        dir.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(run.stdout().contains("TypeError"), "{}", run.all());
    let minimized = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("minimized-")
        })
        .unwrap();
    let data = fs::read(&minimized).unwrap();
    assert!(
        String::from_utf8_lossy(&data).contains("\\udc"),
        "{:?}",
        String::from_utf8_lossy(&data)
    );
}

#[test]
fn minimize_crash_on_one_byte_inputs_and_non_crashes_ends() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("one"), b"x").unwrap();
    let target = fixture("json-parser/target.php");
    let run = php_fuzz(
        &["minimize-crash", target.to_str().unwrap(), "one"],
        dir.path(),
    );
    assert_eq!(
        run.code(),
        1,
        "a non-crashing input is an error\n{}",
        run.all()
    );
    assert!(run.stderr().contains("does not crash"), "{}", run.all());

    fs::write(dir.path().join("exit"), b"QUI").unwrap();
    let target = fixture("targets/exit_in_target.php");
    let run = php_fuzz(
        &["minimize-crash", target.to_str().unwrap(), "exit"],
        dir.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(
        run.stdout().contains("minimized 3 -> 3 bytes"),
        "{}",
        run.all()
    );
}

#[test]
fn minimize_crash_and_run_single_into_a_closed_pipe_keep_their_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("crash"), b"[1e").unwrap();
    let target = fixture("json-parser/target.php");
    let run = php_fuzz_into_closed_pipe(
        &["minimize-crash", target.to_str().unwrap(), "crash"],
        dir.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(!run.stderr().contains("panicked"), "{}", run.all());
    assert!(
        fs::read_dir(dir.path()).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("minimized-")),
        "the minimized input is still written\n{}",
        run.all()
    );

    let run = php_fuzz_into_closed_pipe(
        &["run-single", target.to_str().unwrap(), "crash"],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    assert!(!run.stderr().contains("panicked"), "{}", run.all());
}

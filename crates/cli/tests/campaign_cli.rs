//! Campaign behaviour of `php-fuzz fuzz`: going on after crashes, resuming,
//! seeds, limits, bad input.

mod common;

use std::fs;

use common::{artifacts, fixture, php_fuzz, sidecar};

fn fuzz(args: &[&str], cwd: &std::path::Path) -> common::Run {
    let mut all = vec!["fuzz"];
    all.extend_from_slice(args);
    php_fuzz(&all, cwd)
}

#[test]
fn keeps_fuzzing_after_crashes_and_restarts_the_harness() {
    let dir = tempfile::tempdir().unwrap();
    // exit() kills the harness each time it runs; the campaign must go on.
    // Two seeds hit the same bug: one artifact, two hits, a restart each.
    fs::create_dir_all(dir.path().join("corpus")).unwrap();
    fs::write(dir.path().join("corpus/a"), b"QUI").unwrap();
    fs::write(dir.path().join("corpus/b"), b"QUIT").unwrap();
    fs::write(dir.path().join("corpus/c"), b"Q").unwrap();
    let target = fixture("targets/exit_in_target.php");
    let run = fuzz(
        &[
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "3",
            "--max-runs",
            "20000",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    let err = run.stderr();
    assert!(err.contains("reached --max-runs"), "{}", run.all());
    let found = artifacts(dir.path(), "crash-");
    assert_eq!(
        found.len(),
        1,
        "one distinct bug, saved once\n{}",
        run.all()
    );
    let summary = err
        .lines()
        .find(|l| l.contains("hit ") && l.contains("times"))
        .expect("summary lists the crash");
    let hits: u64 = summary
        .split("hit ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(hits >= 2, "duplicates are counted: {summary}");
    let starts = err.lines().find(|l| l.contains("harness started")).unwrap();
    let starts: u64 = starts
        .split("harness started ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        starts > hits,
        "each exit() restarts the harness: {starts} starts for {hits} hits"
    );
    let record = sidecar(&found[0]);
    assert_eq!(record["kind"], "exit");
}

#[test]
fn seeds_survive_and_a_crashing_seed_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    fs::create_dir_all(corpus.join("nested")).unwrap();
    fs::write(corpus.join("seed-ok"), b"FU").unwrap();
    fs::write(corpus.join("nested/seed-crash"), b"BUG!").unwrap();
    let target = fixture("targets/nested_bytes.php");
    let run = fuzz(
        &[
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "5",
            "--max-runs",
            "20000",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    assert_eq!(
        fs::read(corpus.join("seed-ok")).unwrap(),
        b"FU",
        "seeds are never rewritten"
    );
    assert_eq!(fs::read(corpus.join("nested/seed-crash")).unwrap(), b"BUG!");
    let found = artifacts(dir.path(), "crash-");
    assert_eq!(found.len(), 1, "{}", run.all());
    assert!(
        run.stderr().contains("reached --max-runs"),
        "fuzzing went on after the crashing seed\n{}",
        run.all()
    );
    let written: Vec<_> = fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(written.len() > 3, "new entries were written: {written:?}");
}

#[test]
fn resuming_continues_from_the_corpus_and_knows_earlier_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("targets/nested_bytes.php");
    let t = target.to_str().unwrap();
    let first = fuzz(
        &[t, "corpus", "--seed", "7", "--max-runs", "30000"],
        dir.path(),
    );
    assert_eq!(first.code(), 77, "{}", first.all());
    let cov = |run: &common::Run| -> u64 {
        let line = run
            .stderr()
            .lines()
            .find(|l| l.contains(" INITED "))
            .map(str::to_string)
            .unwrap();
        line.split("cov: ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    // The crash input, kept as a seed, hits the known bug right away.
    let crash = artifacts(dir.path(), "crash-").remove(0);
    fs::create_dir_all(dir.path().join("corpus/regressions")).unwrap();
    fs::copy(&crash, dir.path().join("corpus/regressions/bug")).unwrap();
    let second = fuzz(
        &[t, "corpus", "--seed", "8", "--max-runs", "2000"],
        dir.path(),
    );
    assert!(
        cov(&second) > cov(&first),
        "the second run starts with the first run's coverage\n{}",
        second.all()
    );
    assert_eq!(
        artifacts(dir.path(), "crash-").len(),
        1,
        "the known crash is not saved again\n{}",
        second.all()
    );
    assert!(
        second.stderr().contains("known exception hit again"),
        "{}",
        second.all()
    );
    assert!(
        second.stderr().contains("saved earlier"),
        "{}",
        second.all()
    );
    assert_eq!(
        second.code(),
        77,
        "a known crash hit again still fails the run\n{}",
        second.all()
    );
}

#[test]
fn the_same_seed_replays_the_same_campaign() {
    let target = fixture("json-parser/target.php");
    let run_once = || {
        let dir = tempfile::tempdir().unwrap();
        let run = fuzz(
            &[
                target.to_str().unwrap(),
                "corpus",
                "--seed",
                "42",
                "--max-runs",
                "3000",
            ],
            dir.path(),
        );
        let mut names: Vec<_> = fs::read_dir(dir.path().join("corpus"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        (names, run.code())
    };
    let (a, code_a) = run_once();
    let (b, code_b) = run_once();
    assert!(a.len() > 5);
    assert_eq!(a, b, "same corpus from the same seed");
    assert_eq!(code_a, code_b);
}

#[test]
fn two_jobs_find_the_planted_bugs() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("targets/nested_bytes.php");
    let run = fuzz(
        &[
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "1",
            "-j",
            "2",
            "--max-crashes",
            "1",
            "--max-runs",
            "300000",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    let found = artifacts(dir.path(), "crash-");
    assert_eq!(found.len(), 1);
    assert_eq!(sidecar(&found[0])["class"], "Error");
}

#[test]
fn without_a_corpus_argument_a_temporary_one_is_used_and_printed() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("targets/noop.php");
    let run = fuzz(&[target.to_str().unwrap(), "--max-runs", "100"], dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(
        run.stderr().contains("no corpus directory given; using"),
        "{}",
        run.all()
    );
}

#[test]
fn bad_input_gets_a_one_line_error_naming_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["missing-target.php".into()],
            "target file not found: missing-target.php",
        ),
        (
            vec![
                fixture("bad-targets/syntax_error.php")
                    .display()
                    .to_string(),
            ],
            "syntax_error.php:4",
        ),
        (
            vec![fixture("bad-targets/no_target.php").display().to_string()],
            "setTarget",
        ),
        (
            vec![
                fixture("bad-targets/throws_on_load.php")
                    .display()
                    .to_string(),
            ],
            "settings.ini is missing",
        ),
        (
            vec![
                fixture("bad-targets/missing_autoloader.php")
                    .display()
                    .to_string(),
            ],
            "vendor/autoload.php",
        ),
        (
            vec![
                fixture("targets/noop.php").display().to_string(),
                "--php".into(),
                "/nonexistent/php".into(),
            ],
            "cannot run `/nonexistent/php`",
        ),
        (
            vec![
                fixture("targets/noop.php").display().to_string(),
                "--dict".into(),
                "nope.dict".into(),
            ],
            "nope.dict",
        ),
    ];
    for (args, expected) in cases {
        let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
        all.extend(["--max-runs", "10"]);
        let run = fuzz(&all, dir.path());
        assert_eq!(run.code(), 1, "{args:?}\n{}", run.all());
        assert!(
            run.stderr().contains(expected),
            "{args:?}: expected {expected:?}\n{}",
            run.all()
        );
        assert!(run.stderr().contains("php-fuzz: error:"), "{}", run.all());
    }
}

#[test]
fn a_php_older_than_8_1_is_refused_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    // A stand-in `php` that answers the version probe like PHP 7.4 would.
    let fake = dir.path().join("php74");
    fs::write(&fake, "#!/bin/sh\nprintf '70433\\n7.4.33\\n1\\n'\n").unwrap();
    fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let target = fixture("targets/noop.php");
    let run = fuzz(
        &[
            target.to_str().unwrap(),
            "--php",
            fake.to_str().unwrap(),
            "--max-runs",
            "10",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 1, "{}", run.all());
    let err = run.stderr();
    assert!(
        err.contains("is PHP 7.4.33, but php-fuzz needs PHP 8.1 or newer"),
        "{err}"
    );
    assert!(err.contains("apt-get install php-cli"), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
}

#[test]
fn a_malformed_dictionary_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("bad.dict"),
        "# ok\n\"fine\"\nkw=\"unterminated\n",
    )
    .unwrap();
    let target = fixture("targets/noop.php");
    let run = fuzz(
        &[
            target.to_str().unwrap(),
            "--dict",
            "bad.dict",
            "--max-runs",
            "10",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 1, "{}", run.all());
    assert!(run.stderr().contains("bad.dict:3"), "{}", run.all());
}

#[test]
fn ctrl_c_stops_gracefully_with_a_summary_and_keeps_the_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("json-parser/target.php");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_php-fuzz"))
        .args(["fuzz", target.to_str().unwrap(), "corpus", "--seed", "2"])
        .current_dir(dir.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    rustix_kill(child.id(), "INT");
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("==== Done (interrupted)"), "{stderr}");
    assert!(stderr.contains("corpus:"), "{stderr}");
    let code = output
        .status
        .code()
        .expect("exited, not killed by the signal");
    let found_crash = !artifacts(dir.path(), "crash-").is_empty();
    assert_eq!(code, if found_crash { 77 } else { 0 }, "{stderr}");
    let entries = fs::read_dir(dir.path().join("corpus")).unwrap().count();
    assert!(
        entries > 3,
        "the corpus found so far is on disk: {entries} entries"
    );
}

#[test]
fn reload_imports_entries_another_process_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("targets/magic_word.php");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_php-fuzz"))
        .args([
            "fuzz",
            target.to_str().unwrap(),
            "shared",
            "--seed",
            "4",
            "--reload",
            "0.5",
            "--max-time",
            "5",
            // Comparison feedback would find the magic word itself.
            "--no-cmp",
        ])
        .current_dir(dir.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    // What another php-fuzz process would write: the planted bug's input.
    let other = dir.path().join("shared/.php-fuzz-tmp-other");
    fs::write(&other, b"open sesame").unwrap();
    fs::rename(&other, dir.path().join("shared/from-another-process")).unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--reload: ran 1 new entries"), "{stderr}");
    let found = artifacts(dir.path(), "crash-");
    assert_eq!(
        found.len(),
        1,
        "the imported entry crashes the target: {stderr}"
    );
    assert_eq!(fs::read(&found[0]).unwrap(), b"open sesame");
}

fn rustix_kill(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn two_processes_share_one_corpus_directory_without_corrupting_it() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("json-parser/target.php");
    let spawn = |seed: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_php-fuzz"))
            .args([
                "fuzz",
                target.to_str().unwrap(),
                "shared",
                "--seed",
                seed,
                "--reload",
                "1",
                "--max-time",
                "4",
                "-q",
            ])
            .current_dir(dir.path())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn("11"), spawn("12"));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    for out in [&a, &b] {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("==== Done (reached --max-time)"),
            "{stderr}"
        );
    }
    let journal = fs::read_to_string(dir.path().join("shared/.php-fuzz-owned")).unwrap();
    let mut files = 0;
    for entry in fs::read_dir(dir.path().join("shared")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if name == ".php-fuzz-owned" || name == php_fuzz_storage::STATE_DIR {
            // The journal, and the state directory (the auto-dictionary).
            continue;
        }
        assert!(
            !name.starts_with(".php-fuzz-tmp"),
            "no half-written file is left: {name}"
        );
        let data = fs::read(&path).unwrap();
        assert_eq!(
            name,
            php_fuzz_storage::content_hash(&data),
            "every entry is whole: its name is its content's hash"
        );
        assert!(
            journal.lines().any(|l| l == name),
            "every entry php-fuzz wrote is in the journal: {name}"
        );
        files += 1;
    }
    assert!(files > 10, "both processes added entries: {files}");
}

#[test]
fn seeds_run_shortest_first_so_the_short_one_of_two_alike_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    // The no-op target gives every input the same coverage: only the first
    // seed run adds features. "a" comes first by name, "b" by length.
    fs::create_dir_all(dir.path().join("corpus")).unwrap();
    fs::write(
        dir.path().join("corpus/a"),
        b"a long seed, twenty-nine byte",
    )
    .unwrap();
    fs::write(dir.path().join("corpus/b"), b"xy").unwrap();
    let target = fixture("targets/noop.php");
    let run = fuzz(
        &[
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "1",
            "--max-runs",
            "0",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    let inited = run
        .stderr()
        .lines()
        .find(|l| l.contains("INITED"))
        .expect("an INITED line")
        .to_string();
    assert!(inited.contains("corp: 1/2b"), "{inited}");
}

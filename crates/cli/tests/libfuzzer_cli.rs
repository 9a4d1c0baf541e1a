//! `php-fuzz libfuzzer`: libFuzzer's command line, modes, output, exit codes
//! and signals, on the real binary and real `php`.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{fixture, php_fuzz};

fn target(name: &str) -> String {
    fixture(&format!("targets/{name}")).display().to_string()
}

fn json_target() -> String {
    fixture("json-parser/target.php").display().to_string()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

#[test]
fn fuzzing_stops_at_the_first_crash_with_libfuzzers_report_and_artifact() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("corpus")).unwrap();
    std::fs::create_dir(dir.path().join("seeds")).unwrap();
    std::fs::write(dir.path().join("seeds/one"), b"[1]").unwrap();
    let prefix = format!("{}/artifacts/", dir.path().display());
    std::fs::create_dir(dir.path().join("artifacts")).unwrap();
    let run = php_fuzz(
        &[
            "libfuzzer",
            &json_target(),
            "-timeout=25",
            "-rss_limit_mb=2560",
            "corpus",
            "-seed=1337",
            "-max_total_time=60",
            &format!("-artifact_prefix={prefix}"),
            "-print_final_stats=1",
            "seeds",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    let err = run.stderr();
    assert!(err.contains("INFO: Seed: 1337\n"), "{err}");
    assert!(
        err.contains("INFO: seed corpus: files: 1 min: 3b max: 3b total: 3b"),
        "{err}"
    );
    assert!(err.contains("\tINITED cov: "), "{err}");
    assert!(err.contains("ERROR: libFuzzer: deadly signal"), "{err}");
    assert!(err.contains("SUMMARY: libFuzzer: deadly signal"), "{err}");
    assert!(err.contains("stat::number_of_executed_units: "), "{err}");
    assert_eq!(
        err.matches("Test unit written to").count(),
        1,
        "one crash: {err}"
    );
    let artifacts = files_in(&dir.path().join("artifacts"));
    assert!(
        artifacts
            .iter()
            .any(|a| a.starts_with("crash-") && a.len() == 46),
        "crash-<sha1> with no extension and no report: {artifacts:?}"
    );
    assert!(err.contains(&format!(
        "artifact_prefix='{prefix}'; Test unit written to {prefix}crash-"
    )));
    // New coverage goes to the first directory only, named by SHA-1.
    let corpus = files_in(&dir.path().join("corpus"));
    assert!(!corpus.is_empty());
    assert!(corpus.iter().all(|n| n.len() == 40), "{corpus:?}");
    assert_eq!(files_in(&dir.path().join("seeds")), vec!["one"]);
}

#[test]
fn bad_build_check_runs_four_inputs_and_says_done() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["-seed=1337", "-runs=4"],
        vec!["--", "-seed=1337", "-runs=4"],
    ] {
        let mut all = vec!["libfuzzer".to_string(), json_target()];
        all.extend(args.iter().map(|s| s.to_string()));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let run = php_fuzz(&all, dir.path());
        assert_eq!(run.code(), 0, "{}", run.all());
        assert!(run.stderr().contains("Done 4 runs in "), "{}", run.all());
        assert!(
            !run.stderr()
                .contains("ERROR: no interesting inputs were found")
        );
        assert!(run.stderr().contains("INFO: A corpus is not provided"));
    }
    assert!(files_in(dir.path()).is_empty(), "nothing left behind");
}

#[test]
fn files_run_in_reproduce_mode_with_libfuzzers_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, data: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, data).unwrap();
        path.display().to_string()
    };
    let ok = write("ok", b"[1,2]");
    let crash = write("crash", b"1;2;3");
    let hang = write("hang", b"LOOP");
    let oom = write("oom", b"MEM");

    let run = php_fuzz(&["libfuzzer", &json_target(), "-runs=5", &ok], dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    let err = run.stderr();
    assert!(err.contains("Running 1 inputs 5 time(s) each."), "{err}");
    assert!(
        err.contains(&format!("Running: {ok}\nExecuted {ok} in ")),
        "{err}"
    );
    assert!(err.contains("*** NOTE: fuzzing was not performed"));

    let run = php_fuzz(
        &[
            "libfuzzer",
            &target("type_error.php"),
            "-timeout=20",
            "-rss_limit_mb=2560",
            "-runs=100",
            &crash,
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    let err = run.stderr();
    assert!(err.contains("ERROR: libFuzzer: deadly signal"), "{err}");
    assert!(err.contains(" in describe "), "a PHP frame: {err}");
    assert!(!err.contains("Test unit written"), "nothing saved: {err}");
    assert!(!err.contains(&format!("Executed {crash}")));

    let run = php_fuzz(
        &[
            "libfuzzer",
            &target("infinite_loop.php"),
            "-timeout=1",
            &hang,
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 70, "{}", run.all());
    assert!(
        run.stderr()
            .contains("ERROR: libFuzzer: timeout after 1 seconds")
    );
    assert!(run.stderr().contains("SUMMARY: libFuzzer: timeout"));

    let run = php_fuzz(
        &[
            "libfuzzer",
            &target("memory_hog.php"),
            "-rss_limit_mb=64",
            &oom,
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 71, "{}", run.all());
    assert!(run.stderr().contains("ERROR: libFuzzer: out-of-memory ("));
    assert!(run.stderr().contains("SUMMARY: libFuzzer: out-of-memory"));

    let run = php_fuzz(
        &[
            "libfuzzer",
            &target("type_error.php"),
            "-error_exitcode=9",
            &crash,
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 9, "{}", run.all());
}

#[test]
fn flags_are_parsed_the_libfuzzer_way() {
    let dir = tempfile::tempdir().unwrap();
    let run = php_fuzz(
        &[
            "libfuzzer",
            &json_target(),
            "-runs=100",
            "-no_such_flag=1",
            "--max_len=4",
            "-use_value_profile=1",
            "-close_fd_mask=3",
            "-runs=2",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    let err = run.stderr();
    assert!(
        err.contains("WARNING: unrecognized flag '-no_such_flag=1'; use -help=1 to list all flags"),
        "{err}"
    );
    assert!(err.contains("WARNING: did you mean '-max_len=4' (single dash)?"));
    assert!(
        err.contains("INFO: -close_fd_mask is accepted and has no effect"),
        "{err}"
    );
    assert!(!err.contains("-use_value_profile is accepted"), "{err}");
    assert!(
        err.contains("Done 2 runs in "),
        "the last -runs wins: {err}"
    );

    let run = php_fuzz(&["libfuzzer", &json_target(), "-help=1"], dir.path());
    assert_eq!(run.code(), 0);
    assert!(
        run.stdout().contains(" merge_control_file"),
        "{}",
        run.all()
    );

    let run = php_fuzz(&["libfuzzer", &json_target(), "missing-dir"], dir.path());
    assert_eq!(run.code(), 1);
    assert!(
        run.stderr()
            .contains("ERROR: The required directory \"missing-dir\" does not exist")
    );

    std::fs::write(dir.path().join("bad.dict"), "\"ok\"\nnot quoted\n").unwrap();
    let run = php_fuzz(
        &["libfuzzer", &json_target(), "-dict=bad.dict", "-runs=1"],
        dir.path(),
    );
    assert_eq!(run.code(), 1, "{}", run.all());
    assert!(
        run.stderr()
            .contains("ParseDictionaryFile: error in line 2"),
        "{}",
        run.all()
    );
}

#[test]
fn exact_artifact_path_and_minimize_crash() {
    let dir = tempfile::tempdir().unwrap();
    let crash = dir.path().join("crash-input");
    std::fs::write(&crash, b"aaaa;bbbb;cccc").unwrap();
    let run = php_fuzz(
        &[
            "libfuzzer",
            &target("type_error.php"),
            "-minimize_crash=1",
            "-max_total_time=30",
            "-exact_artifact_path=min/out",
            crash.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(run.stderr().contains("CRASH_MIN: minimizing crash input"));
    assert_eq!(std::fs::read(dir.path().join("min/out")).unwrap(), b";;");

    std::fs::write(dir.path().join("fine"), b"ok").unwrap();
    let run = php_fuzz(
        &[
            "libfuzzer",
            &target("type_error.php"),
            "-minimize_crash=1",
            "-runs=100",
            "fine",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 1);
    assert!(run.stderr().contains("ERROR: the input fine did not crash"));

    std::fs::create_dir(dir.path().join("corpus")).unwrap();
    let run = php_fuzz(
        &[
            "libfuzzer",
            &json_target(),
            "-seed=3",
            "-max_total_time=60",
            "-exact_artifact_path=found",
            "corpus",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 77, "{}", run.all());
    assert!(run.stderr().contains("Test unit written to found\n"));
    assert!(dir.path().join("found").is_file());
}

/// Starts php-fuzz and waits until its stderr has `marker`.
fn spawn_until(args: &[&str], cwd: &Path, marker: &str) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_php-fuzz"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = String::new();
    loop {
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => {
                seen.push_str(&line);
                seen.push('\n');
                if line.contains(marker) {
                    break;
                }
            }
            Err(_) => panic!("no {marker:?} in:\n{seen}"),
        }
    }
    (child, rx)
}

fn signal_and_wait(mut child: Child, rx: mpsc::Receiver<String>, signal: &str) -> (i32, String) {
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let code = child.wait().unwrap().code().unwrap_or(-1);
    let rest: Vec<String> = rx.iter().collect();
    (code, rest.join("\n"))
}

#[test]
fn sigterm_ends_with_the_final_stats_and_exit_0_sigint_with_72() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("corpus")).unwrap();
    let target = target("noop.php");
    let args = [
        "libfuzzer",
        &target,
        "-print_final_stats=1",
        "-max_total_time=120",
        "corpus",
    ];
    let (child, rx) = spawn_until(&args, dir.path(), "INITED");
    let (code, rest) = signal_and_wait(child, rx, "-TERM");
    assert_eq!(code, 0, "{rest}");
    assert!(
        rest.contains("INFO: libFuzzer: exiting as requested"),
        "{rest}"
    );
    assert!(rest.contains("stat::number_of_executed_units: "), "{rest}");

    let (child, rx) = spawn_until(&args, dir.path(), "INITED");
    let (code, rest) = signal_and_wait(child, rx, "-INT");
    assert_eq!(code, 72, "{rest}");
    assert!(
        rest.contains("libFuzzer: run interrupted; exiting"),
        "{rest}"
    );
}

/// The merge fixture: OUT has "zz" (the default path); IN has the 'a' and
/// 'b' paths twice each (the smaller is kept), the default path again, and
/// a crash.
fn merge_dirs(d: &Path) {
    std::fs::create_dir_all(d.join("out")).unwrap();
    std::fs::create_dir_all(d.join("in")).unwrap();
    std::fs::write(d.join("out/zz"), "zz").unwrap();
    for (name, data) in [
        ("a", "a"),
        ("a2", "aa"),
        ("b", "b"),
        ("b2", "bb"),
        ("c", "c"),
        ("bang", "!"),
    ] {
        std::fs::write(d.join("in").join(name), data).unwrap();
    }
}

fn contents(dir: &Path) -> Vec<String> {
    let mut data: Vec<_> = files_in(dir)
        .iter()
        .map(|k| std::fs::read_to_string(dir.join(k)).unwrap())
        .collect();
    data.sort();
    data
}

#[test]
fn merge_keeps_what_adds_coverage_skips_crashes_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    merge_dirs(d);
    let target = target("merge_paths.php");
    let merge = |extra: &[&str]| {
        let mut args = vec!["libfuzzer", target.as_str(), "-merge=1"];
        args.extend_from_slice(extra);
        args.extend(["out", "in"]);
        php_fuzz(&args, d)
    };
    let run = merge(&["-merge_control_file=mcf"]);
    assert_eq!(run.code(), 0, "{}", run.all());
    let err = run.stderr();
    assert!(
        err.contains("'in/bang' crashes the target and is skipped"),
        "{err}"
    );
    assert!(
        err.contains("MERGE-OUTER: 7 files, 1 in the initial corpus"),
        "{err}"
    );
    assert!(err.contains("MERGE-OUTER: 2 new files with "), "{err}");
    assert_eq!(contents(&d.join("out")), ["a", "b", "zz"]);

    // Run again with the finished control file: nothing runs again.
    let again = merge(&["-merge_control_file=mcf"]);
    assert!(
        again.stderr().contains("first not processed file 7"),
        "{}",
        again.all()
    );
    assert!(again.stderr().contains("MERGE-OUTER: 2 new files with"));

    // A merge killed after two inputs (and midway through a line): the rest
    // runs, the first two do not.
    let text = std::fs::read_to_string(d.join("mcf")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let first_result = lines.iter().position(|l| l.starts_with("FT ")).unwrap();
    let partial = lines[..first_result + 2].join("\n") + "\nFT 2 12";
    std::fs::write(d.join("mcf"), partial).unwrap();
    std::fs::remove_dir_all(d.join("out")).unwrap();
    merge_dirs(d);
    let resumed = merge(&["-merge_control_file=mcf"]);
    assert_eq!(resumed.code(), 0, "{}", resumed.all());
    assert!(
        resumed
            .stderr()
            .contains("control file ok, 7 files total, first not processed file 2"),
        "{}",
        resumed.all()
    );
    assert!(resumed.stderr().contains("2 processed earlier"));
    // in/a (index 1) was kept before the kill; its copy went with the old
    // OUT, and the resumed merge does not run it again.
    assert_eq!(contents(&d.join("out")), ["b", "zz"]);

    let one_dir = php_fuzz(&["libfuzzer", &target, "-merge=1", "out"], d);
    assert_eq!(one_dir.code(), 0);
    assert!(
        one_dir
            .stderr()
            .contains("INFO: Merge requires two or more corpus dirs")
    );
}

#[test]
fn the_native_merge_command_prints_what_it_kept() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    merge_dirs(d);
    let run = php_fuzz(&["merge", &target("merge_paths.php"), "out", "in"], d);
    assert_eq!(run.code(), 0, "{}", run.all());
    let out = run.stdout();
    assert!(out.contains("kept in/a as out/"), "{out}");
    assert!(out.contains("kept in/b as out/"), "{out}");
    assert_eq!(out.matches("kept in/").count(), 2, "{out}");
    assert!(out.contains("kept 2, "), "{out}");
    assert!(out.contains("1 crashed and were skipped"), "{out}");
    assert!(
        run.stderr()
            .contains("skipped in/bang: exception: TypeError")
    );
    assert_eq!(contents(&d.join("out")), ["a", "b", "zz"]);
}

#[test]
fn merge_keeps_one_copy_of_inputs_with_the_same_content() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("out")).unwrap();
    std::fs::create_dir_all(d.join("in1")).unwrap();
    std::fs::create_dir_all(d.join("in2")).unwrap();
    std::fs::write(d.join("in1/x"), "same").unwrap();
    std::fs::write(d.join("in2/y"), "same").unwrap();
    // The target's second run reaches a new block whatever its input: run
    // twice, the same bytes would be kept twice.
    let run = php_fuzz(
        &[
            "merge",
            &target("stateful_counter.php"),
            "out",
            "in1",
            "in2",
        ],
        d,
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    let out = run.stdout();
    assert!(out.contains("kept 1, "), "{out}");
    assert!(out.contains(", 1 duplicates"), "{out}");
    assert!(
        run.stderr()
            .contains("the same content as an input before it"),
        "{}",
        run.all()
    );
    assert_eq!(contents(&d.join("out")), ["same"]);
}

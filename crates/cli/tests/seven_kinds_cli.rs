//! Issue #26, section 1: one seed folder whose seeds each fail a different
//! way (`fixtures/hostile/seven`): `exit()`, a runaway recursion, memory
//! exhausted by a growing array, a userland infinite loop, a `preg_match()`
//! stuck in one internal call (a `regex-dos` finding of the detectors), a
//! TypeError and a warning. At `--timeout 2`,
//! on a machine that two busy loops keep busy, php-fuzz reports all seven,
//! each once, within 120 s, leaves the seeds alone and exits non-zero.
//! `PHP_FUZZ_BIN` runs it against another build (an older one: 5 of 7).

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Child, Command};

use common::{fixture, php_fuzz, sidecar};

/// Two `sh -c 'while :; do :; done'`, killed when dropped.
struct BusyLoops(Vec<Child>);

impl BusyLoops {
    fn start() -> BusyLoops {
        BusyLoops(
            (0..2)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .expect("starting a busy loop")
                })
                .collect(),
        )
    }
}

impl Drop for BusyLoops {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// File name → contents of the files directly in `dir`.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read(&p).unwrap())
        })
        .collect()
}

#[test]
fn seven_kinds_in_one_seed_folder_are_seven_findings_on_a_loaded_machine() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = fixture("hostile/seven/seeds");
    let corpus = dir.path().join("corpus");
    fs::create_dir(&corpus).unwrap();
    for (name, data) in files(&seeds) {
        fs::write(corpus.join(name), data).unwrap();
    }
    let before = files(&corpus);
    assert_eq!(before.len(), 7);

    let run = {
        let _load = BusyLoops::start();
        php_fuzz(
            &[
                "fuzz",
                fixture("hostile/seven/target.php").to_str().unwrap(),
                "corpus",
                "--timeout",
                "2",
                "--max-time",
                "120",
                // All seven found: done (the limit is the test's bound, not its length).
                "--max-crashes",
                "7",
                "--artifact-dir",
                "artifacts",
                "--seed",
                "1",
            ],
            dir.path(),
        )
    };

    // A crash beats an out-of-memory, which beats a timeout (exit_codes.rs).
    assert_eq!(run.code(), 77, "{}", run.all());
    let mut kinds: Vec<String> = fs::read_dir(dir.path().join("artifacts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .map(|artifact| {
            let report = sidecar(&artifact);
            format!(
                "{} {}",
                report["kind"].as_str().unwrap_or_default(),
                report["class"].as_str().unwrap_or_default()
            )
        })
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "exception TypeError",
            "exit Exit",
            "out-of-memory Fatal error",
            // Stuck in one preg_match() call past the timeout: regex-dos.
            "security regex-dos",
            "stack-overflow StackOverflow",
            "timeout Timeout",
            "warning Warning",
        ],
        "{}",
        run.all()
    );
    let reported = run
        .stderr()
        .lines()
        .filter(|l| {
            l.starts_with("==== CRASH #")
                || l.starts_with("==== TIMEOUT #")
                || l.starts_with("==== OOM #")
        })
        .count();
    assert_eq!(reported, 7, "each reported once: {}", run.all());
    // The seeds are still there, untouched (php-fuzz may add its own files).
    let after = files(&corpus);
    for (name, data) in &before {
        assert_eq!(after.get(name), Some(data), "seed {name}: {}", run.all());
    }
}

//! Issue #26, section 5: a second Ctrl-C during the graceful stop ends
//! php-fuzz at once (130), with the finding in flight saved and nothing half
//! written. Both ways a Ctrl-C reaches php-fuzz are tested: sent by a
//! process (`kill -INT -PGID`), and typed on a terminal (the kernel sends it
//! to the terminal's foreground group, here through the pseudo-terminal
//! `script` makes). `PHP_FUZZ_BIN` runs them against another build.

mod common;

use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Run, artifacts, bin, fixture, sidecar};

const SEEDS: &[(&str, &[u8])] = &[("crash", b"E"), ("ok", b"okay")];

/// A copy of `engine_slow_recheck.php` (quick to load once, then slow) in
/// `dir` with its seeds; returns php-fuzz's arguments.
fn campaign_in(dir: &Path) -> Vec<String> {
    let target = dir.join("target.php");
    fs::copy(fixture("hostile/engine_slow_recheck.php"), &target).unwrap();
    fs::create_dir_all(dir.join("corpus")).unwrap();
    for (name, data) in SEEDS {
        fs::write(dir.join("corpus").join(name), data).unwrap();
    }
    let target = target.display().to_string();
    ["fuzz", &target, "corpus", "--artifact-dir", "artifacts"]
        .into_iter()
        // The target marks its loads in its own folder: a side effect.
        .chain(["--no-cmp", "--allow-side-effects"])
        // A campaign a failed test leaves behind ends by itself.
        .chain(["--max-time", "180"])
        .map(String::from)
        .collect()
}

/// Waits until the seed "E" has crashed and its re-run alone waits for the
/// slow load: the moment a finding is in flight.
fn wait_for_the_slow_load(dir: &Path) {
    let marker = dir.join("slow-load-started");
    let started = Instant::now();
    while !marker.exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "no slow load");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for the child, killing it if it takes longer than `limit`.
fn finish(mut child: Child, limit: Duration) -> Run {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!(
                "still running after {limit:?}\n{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Run {
        output: child.wait_with_output().unwrap(),
    }
}

/// The finding in flight is saved whole, nothing is half written, the seeds
/// are as they were. `said` is what php-fuzz printed.
fn check_saved(dir: &Path, said: &str) {
    assert!(said.contains("saved the finding in flight"), "{said}");
    let saved = artifacts(&dir.join("artifacts"), "crash-");
    assert_eq!(saved.len(), 1, "{said}");
    assert_eq!(fs::read(&saved[0]).unwrap(), b"E");
    let report = sidecar(&saved[0]);
    assert_eq!(report["message"], "planted", "{report}");
    let note = report["note"].as_str().unwrap_or_default();
    assert!(note.contains("interrupted twice"), "{report}");
    for folder in ["corpus", "artifacts"] {
        for entry in fs::read_dir(dir.join(folder)).unwrap() {
            let name = entry.unwrap().file_name();
            let name = name.to_string_lossy();
            assert!(!name.starts_with(".php-fuzz-tmp"), "{folder}/{name}");
        }
    }
    for (name, data) in SEEDS {
        assert_eq!(fs::read(dir.join("corpus").join(name)).unwrap(), *data);
    }
}

fn kill_group(child: &Child) {
    let group = format!("-{}", child.id());
    let status = Command::new("kill")
        .args(["-INT", "--", &group])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_second_ctrl_c_during_the_stop_exits_at_once_and_saves_the_finding_in_flight() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let child = Command::new(bin())
        .args(campaign_in(dir.path()))
        .current_dir(dir.path())
        .env_remove("CI")
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    wait_for_the_slow_load(dir.path());
    // Two `kill -INT -PGID`, 300 ms apart: two senders, two requests.
    kill_group(&child);
    std::thread::sleep(Duration::from_millis(300));
    let second = Instant::now();
    kill_group(&child);
    let run = finish(child, Duration::from_secs(20));
    assert!(second.elapsed() < Duration::from_secs(5), "{}", run.all());
    assert_eq!(run.code(), 130, "{}", run.all());
    check_saved(dir.path(), &run.stderr());
}

#[test]
fn two_ctrl_cs_typed_on_a_terminal_150_ms_apart_exit_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let quoted: Vec<String> = std::iter::once(bin().display().to_string())
        .chain(campaign_in(dir.path()))
        .map(|arg| format!("'{arg}'"))
        .collect();
    // `script` runs the command on a new pseudo-terminal, as its session
    // leader (bash -c execs it), and copies its stdin to the terminal: a
    // 0x03 there is the kernel's SIGINT to php-fuzz, as a real Ctrl-C.
    let mut child = Command::new("script")
        .args(["-qec", &quoted.join(" "), "/dev/null"])
        .env("SHELL", "/bin/bash")
        .env_remove("CI")
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script (util-linux)");
    wait_for_the_slow_load(dir.path());
    let mut terminal = child.stdin.take().unwrap();
    terminal.write_all(b"\x03").unwrap();
    terminal.flush().unwrap();
    std::thread::sleep(Duration::from_millis(150));
    let second = Instant::now();
    terminal.write_all(b"\x03").unwrap();
    terminal.flush().unwrap();
    let run = finish(child, Duration::from_secs(20));
    drop(terminal);
    assert!(second.elapsed() < Duration::from_secs(5), "{}", run.all());
    assert_eq!(run.code(), 130, "{}", run.all());
    let said = run.stdout();
    assert!(said.contains("Ctrl-C again to exit at once"), "{said}");
    check_saved(dir.path(), &said);
}

//! No side effects on the machine (docs/detectors.md, "Side effects"):
//! hostile targets that try to delete a file outside the scratch folder,
//! connect to a TCP listener and write into `$HOME` change nothing, and
//! each attempt is one `side-effect` finding; with --allow-side-effects
//! the same writes happen.

mod common;

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::{Run, bin, fixture};

/// `php-fuzz fuzz FIXTURE` for 300 runs from the fixture's seeds, in `dir`,
/// with `env` set; also returns the side-effect findings' reports.
fn fuzz(
    fixture_name: &str,
    dir: &Path,
    env: &[(&str, &Path)],
    extra: &[&str],
) -> (Run, Vec<serde_json::Value>) {
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    for seed in ["1", "2"] {
        std::fs::copy(
            fixture(&format!("side-effects/seeds/{seed}")),
            corpus.join(seed),
        )
        .unwrap();
    }
    let target = fixture(&format!("side-effects/{fixture_name}"));
    let mut command = Command::new(bin());
    command
        .args([
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--max-runs",
            "300",
            "--seed",
            "1",
        ])
        .args(["--artifact-dir", "artifacts"])
        .args(extra)
        .current_dir(dir)
        .env_remove("CI");
    for (key, value) in env {
        command.env(key, value);
    }
    let run = Run {
        output: command.output().expect("running php-fuzz"),
    };
    let reports = common::finding_reports(&dir.join("artifacts"));
    (run, reports)
}

/// The side-effect findings of `class`, one per line of the fixture; no
/// finding of any other kind.
fn side_effect_lines(reports: &[serde_json::Value], class: &str, run: &Run) -> BTreeSet<u64> {
    let mut lines = BTreeSet::new();
    for report in reports {
        assert_eq!(
            report["kind"],
            "side-effect",
            "only side effects: {report:#}\n{}",
            run.all()
        );
        assert_eq!(report["class"], class, "{report:#}");
        assert!(
            report["message"]
                .as_str()
                .unwrap()
                .contains("php-fuzz refused it"),
            "{report:#}"
        );
        assert!(
            lines.insert(report["line"].as_u64().unwrap()),
            "one finding per place: {report:#}"
        );
    }
    lines
}

#[test]
fn a_file_outside_the_scratch_folder_survives_every_way_to_delete_it() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let (run, reports) = fuzz(
        "delete.php",
        dir.path(),
        &[("PHP_FUZZ_VICTIM", &victim)],
        &[],
    );
    assert_eq!(run.code(), 77, "side effects are findings\n{}", run.all());
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "keep me",
        "{}",
        run.all()
    );
    assert!(!elsewhere.path().join("victim.txt.moved").exists());
    // exec, system, shell_exec, passthru, backticks, proc_open, popen: processes;
    // unlink, rename, file_put_contents: writes.
    let processes: Vec<_> = reports
        .iter()
        .filter(|r| r["class"] == "process")
        .cloned()
        .collect();
    let writes: Vec<_> = reports
        .iter()
        .filter(|r| r["class"] == "file-write")
        .cloned()
        .collect();
    assert_eq!(
        processes.len() + writes.len(),
        reports.len(),
        "{reports:#?}"
    );
    assert_eq!(
        side_effect_lines(&processes, "process", &run),
        (8..=14).collect(),
        "{}",
        run.all()
    );
    assert_eq!(
        side_effect_lines(&writes, "file-write", &run),
        (15..=17).collect(),
        "{}",
        run.all()
    );
}

#[test]
fn a_tcp_listener_sees_no_connection() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (accepted, done) = (Arc::clone(&accepted), Arc::clone(&done));
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if listener.accept().is_ok() {
                    accepted.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let dir = tempfile::tempdir().unwrap();
    let port_text = port.to_string();
    let (run, reports) = fuzz(
        "connect.php",
        dir.path(),
        &[("PHP_FUZZ_PORT", Path::new(&port_text))],
        &[],
    );
    done.store(true, Ordering::Relaxed);
    watcher.join().unwrap();
    assert_eq!(accepted.load(Ordering::Relaxed), 0, "{}", run.all());
    assert_eq!(run.code(), 77, "{}", run.all());
    // fsockopen, stream_socket_client, http://, ftp://, socket_connect,
    // pfsockopen, a SoapClient's call.
    assert_eq!(
        side_effect_lines(&reports, "network", &run),
        BTreeSet::from([8, 9, 10, 11, 13, 15, 18]),
        "{}",
        run.all()
    );
}

/// The files of `dir`, recursively, with their contents.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .map(|e| {
            let contents = if e.file_type().is_file() {
                std::fs::read(e.path()).unwrap()
            } else {
                Vec::new()
            };
            (e.path().display().to_string(), contents)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn home_is_unchanged_and_allowed_folders_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".bashrc"), "# mine\n").unwrap();
    let allowed = tempfile::tempdir().unwrap();
    let before = snapshot(home.path());
    let env = [("HOME", home.path()), ("PHP_FUZZ_ALLOWED", allowed.path())];
    let (run, reports) = fuzz("home.php", dir.path(), &env, &[]);
    assert_eq!(snapshot(home.path()), before, "{}", run.all());
    assert_eq!(run.code(), 77, "{}", run.all());
    // file_put_contents, fopen(…, 'a'), mkdir, touch, copy, symlink.
    assert_eq!(
        side_effect_lines(&reports, "file-write", &run),
        (9..=14).collect(),
        "{}",
        run.all()
    );
    assert!(
        std::fs::read_dir(allowed.path()).unwrap().count() > 0,
        "$config->allowWrites() lets the target write there\n{}",
        run.all()
    );
}

#[test]
fn allow_side_effects_lets_the_same_writes_happen() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let allowed = tempfile::tempdir().unwrap();
    let env = [("HOME", home.path()), ("PHP_FUZZ_ALLOWED", allowed.path())];
    let (run, reports) = fuzz("home.php", dir.path(), &env, &["--allow-side-effects"]);
    // A second mkdir() of the folder warns, as it would outside php-fuzz.
    assert!(
        reports.iter().all(|r| r["kind"] != "side-effect"),
        "{reports:#?}"
    );
    assert!(
        home.path().join(".php-fuzz-was-here").is_file(),
        "{}",
        run.all()
    );
    assert!(home.path().join(".php-fuzz-dir").is_dir());
    assert!(
        run.stderr()
            .contains("side effects: allowed (--allow-side-effects)"),
        "{}",
        run.all()
    );
}

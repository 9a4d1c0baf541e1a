//! One large allocation from the command line (docs/hardening.md, "One
//! large allocation"): `run-single`, `fuzz` and the libFuzzer front end name
//! it an out-of-memory with its PHP stack, and `--malloc-limit-mb` /
//! `-malloc_limit_mb=` make one allocation over it a finding under a higher
//! RSS limit.

mod common;

use std::fs;
use std::path::Path;

use common::{artifacts, fixture, php_fuzz, sidecar};

fn target() -> String {
    fixture("oom/huge_allocation.php").display().to_string()
}

fn write(dir: &Path, name: &str, data: &[u8]) -> String {
    let path = dir.join(name);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, data).unwrap();
    path.display().to_string()
}

/// The stack as `run-single` prints it, from the internal function down to the target closure.
const STACK: [&str; 5] = [
    "#0 str_repeat() at ",
    "#1 Record::fill() at ",
    "#2 Record::body() at ",
    "#3 Record::parse() at ",
    "#4 {closure}() at ",
];

#[test]
fn run_single_names_one_huge_allocation_an_out_of_memory_with_its_stack() {
    let dir = tempfile::tempdir().unwrap();
    let mut input = b"N2900000000 ".to_vec();
    input.extend_from_slice(&[b'p'; 1200]);
    let huge = write(dir.path(), "huge", &input);
    let run = php_fuzz(&["run-single", &target(), &huge], dir.path());
    assert_eq!(run.code(), 71, "{}", run.all());
    let out = run.stdout();
    assert!(
        out.contains("OUT OF MEMORY (out-of-memory)"),
        "{}",
        run.all()
    );
    assert!(out.contains("MallocLimit: Allowed memory size of"), "{out}");
    assert!(
        !out.contains("recursion") && !out.contains("stack-overflow"),
        "{out}"
    );
    let mut at = 0;
    for frame in STACK {
        at += out[at..]
            .find(frame)
            .unwrap_or_else(|| panic!("{frame}: {out}"));
    }
}

#[test]
fn run_single_holds_one_allocation_to_the_malloc_limit() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "100mb", b"N100000000");
    let run = php_fuzz(&["run-single", &target(), &input], dir.path());
    assert_eq!(run.code(), 0, "100 MB fit in 2048: {}", run.all());
    let run = php_fuzz(
        &["run-single", "--malloc-limit-mb", "64", &target(), &input],
        dir.path(),
    );
    assert_eq!(run.code(), 71, "{}", run.all());
    assert!(
        run.stdout().contains("#0 str_repeat() at "),
        "{}",
        run.all()
    );
    let run = php_fuzz(
        &["run-single", "--malloc-limit-mb", "8", &target(), &input],
        dir.path(),
    );
    assert_eq!(run.code(), 1, "{}", run.all());
    assert!(
        run.stderr()
            .contains("--malloc-limit-mb must be at least 32, got 8"),
        "{}",
        run.all()
    );
}

#[test]
fn fuzz_saves_an_oom_artifact_whose_reproduce_command_carries_the_malloc_limit() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "corpus/seed", b"N100000000");
    let run = php_fuzz(
        &[
            "fuzz",
            &target(),
            "corpus",
            "--malloc-limit-mb",
            "64",
            "--rss-limit-mb",
            "512",
            "--max-runs",
            "20",
            "--seed",
            "1",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 71, "{}", run.all());
    let found = artifacts(dir.path(), "oom-");
    assert_eq!(found.len(), 1, "{}", run.all());
    let report = sidecar(&found[0]);
    let reproduce = report["reproduce"].as_str().unwrap();
    assert!(
        reproduce.contains("--rss-limit-mb 512 --malloc-limit-mb 64"),
        "{reproduce}"
    );
    // The command, as printed, replays the out-of-memory.
    let command = reproduce.replacen("php-fuzz", &common::bin().display().to_string(), 1);
    let replay = std::process::Command::new("sh")
        .args(["-c", &command])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(replay.status.code(), Some(71), "{command}: {replay:?}");
    let text = report.to_string();
    assert!(text.contains("str_repeat()"), "{text}");
    assert!(text.contains("Record::parse()"), "{text}");
}

#[test]
fn libfuzzer_front_end_writes_an_oom_artifact_with_libfuzzers_malloc_words() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "corpus/seed", b"N100000000");
    let run = php_fuzz(
        &[
            "libfuzzer",
            &target(),
            "-malloc_limit_mb=64",
            "-artifact_prefix=out/",
            "-create_missing_dirs=1",
            "-runs=20",
            "corpus",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 71, "{}", run.all());
    let err = run.stderr();
    let header = err
        .find("ERROR: libFuzzer: out-of-memory (malloc(100003840))")
        .unwrap_or_else(|| panic!("{}", run.all()));
    let top = err.find(" in str_repeat ").expect("the allocating call");
    let closure = err.find(" in {closure} ").expect("the target closure");
    let unit = err
        .find("Test unit written to out/oom-")
        .expect("oom- artifact");
    let summary = err.find("SUMMARY: libFuzzer: out-of-memory").unwrap();
    assert!(
        header < top && top < closure && closure < unit && unit < summary,
        "{err}"
    );
    let saved: Vec<_> = fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        saved.iter().any(|n| n.starts_with("oom-") && n.len() == 44),
        "{saved:?}"
    );
    let help = php_fuzz(&["libfuzzer", &target(), "-help=1"], dir.path());
    assert!(
        help.stdout().contains(" malloc_limit_mb "),
        "{}",
        help.all()
    );
}

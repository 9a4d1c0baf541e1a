//! The PHP half of typed arguments (php-runtime/src/Arguments/, docs/autofuzz.md),
//! tested in real `php`: the corpus format's reader and writer, the invoker
//! that tells a call PHP refused from a library's own TypeError
//! (fixtures/arguments/entry/run.php), and the type reader that turns
//! declared and PHPDoc types into the schema (fixtures/arguments/types/run.php).

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn run_php_suite(script: &str) {
    let path = repo().join(script);
    let output = Command::new("php")
        .arg(&path)
        .output()
        .expect("running php");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{script} failed:\n{text}");
    assert!(
        text.contains(" 0 failed") || text.contains("OK ("),
        "{text}"
    );
}

#[test]
fn entries_are_read_and_written_as_the_corpus_format_says() {
    run_php_suite("fixtures/arguments/entry/run.php");
}

#[test]
fn parameter_types_become_the_schema() {
    run_php_suite("fixtures/arguments/types/run.php");
}

#[test]
fn a_package_scan_lists_and_ranks_its_entry_points() {
    run_php_suite("fixtures/arguments/scan/run.php");
}

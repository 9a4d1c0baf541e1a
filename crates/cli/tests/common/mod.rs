//! Helpers for tests that run the real `php-fuzz` binary on fixture targets.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

pub fn fixture(path: &str) -> PathBuf {
    repo().join("fixtures").join(path)
}

/// The php-fuzz binary under test: this build's, or `PHP_FUZZ_BIN` (an
/// older build, to see a regression test fail without its fix).
pub fn bin() -> PathBuf {
    std::env::var_os("PHP_FUZZ_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_php-fuzz")))
}

pub fn php_fuzz(args: &[&str], cwd: &Path) -> Run {
    let output = Command::new(bin())
        .args(args)
        .current_dir(cwd)
        .env_remove("CI")
        .output()
        .expect("running php-fuzz");
    Run { output }
}

/// Runs php-fuzz with stdout a pipe whose reader is already closed, as
/// `php-fuzz … | head -1` leaves it once `head` has its line.
pub fn php_fuzz_into_closed_pipe(args: &[&str], cwd: &Path) -> Run {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let output = Command::new(env!("CARGO_BIN_EXE_php-fuzz"))
        .args(args)
        .current_dir(cwd)
        .env_remove("CI")
        .stdout(writer)
        .output()
        .expect("running php-fuzz");
    Run { output }
}

pub struct Run {
    pub output: Output,
}

impl Run {
    pub fn code(&self) -> i32 {
        self.output.status.code().unwrap_or(-1)
    }
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
    /// Both streams, for assertion messages.
    pub fn all(&self) -> String {
        format!(
            "--- exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.output.status,
            self.stdout(),
            self.stderr()
        )
    }
}

/// Crash artifacts (inputs, not sidecars) in `dir`, sorted.
pub fn artifacts(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.starts_with(prefix) && name.ends_with(".txt")
        })
        .collect();
    found.sort();
    found
}

pub fn sidecar(artifact: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(artifact.with_extension("json"))
        .expect("sidecar next to the artifact");
    serde_json::from_str(&text).expect("sidecar is JSON")
}

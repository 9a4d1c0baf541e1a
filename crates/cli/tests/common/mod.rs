//! Helpers for tests that run the real `php-fuzz` binary on fixture targets.
#![allow(dead_code)]

pub mod composer;

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

/// The reports (`*.json`) of the findings saved in `dir`; none if it does
/// not exist yet.
pub fn finding_reports(dir: &Path) -> Vec<serde_json::Value> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter_map(|p| serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok())
        .collect()
}

pub fn sidecar(artifact: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(artifact.with_extension("json"))
        .expect("sidecar next to the artifact");
    serde_json::from_str(&text).expect("sidecar is JSON")
}

/// Writes a small composer project into `dir`: `acme/json-lite`, PSR-4
/// namespace `Acme\JsonLite\` in src/, a hand-written vendor/autoload.php,
/// and a planted bug: `Decoder->decode("{}")` reads a missing array key (a
/// warning). `Decoder::isValid()` is safe.
pub fn composer_project(dir: &Path) {
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "composer.json",
        r#"{
    "name": "acme/json-lite",
    "description": "A tiny JSON subset decoder",
    "type": "library",
    "require": {
        "php": ">=8.1"
    },
    "autoload": {
        "psr-4": {
            "Acme\\JsonLite\\": "src/"
        }
    },
    "scripts": {
        "test": "phpunit"
    }
}
"#,
    );
    write(
        "vendor/autoload.php",
        r#"<?php
// Hand-written stand-in for Composer's autoloader: PSR-4, as composer.json says.
spl_autoload_register(function (string $class): void {
    $prefix = 'Acme\\JsonLite\\';
    if (strncmp($class, $prefix, strlen($prefix)) === 0) {
        require __DIR__ . '/../src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    }
});
"#,
    );
    write(
        "src/Decoder.php",
        r#"<?php
namespace Acme\JsonLite;

final class Decoder
{
    /** Decodes a tiny JSON subset. */
    public function decode(string $text): mixed
    {
        if ($text === '') {
            return null;
        }
        if ($text[0] === '{') {
            return $this->object($text);
        }
        return is_numeric($text) ? (float) $text : $text;
    }

    private function object(string $text): array
    {
        if (strlen($text) > 1 && $text[1] === '}') {
            $members = [];
            return [$members[0]]; // planted bug: "{}" reads a missing key
        }
        return ['raw' => substr($text, 1)];
    }

    public static function isValid(string $text): bool
    {
        return $text !== '' && ($text[0] === '{' || is_numeric($text));
    }
}
"#,
    );
}

/// A Python that can import `module`: $PHP_FUZZ_TEST_PYTHON, else `python3`
/// (`scripts/setup --test-libs` makes a venv with the test modules and CI
/// points the variable at it). Missing outside CI: the caller's check is
/// skipped, loudly. Missing in CI: the test fails.
pub fn python_with(module: &str) -> Option<PathBuf> {
    let python = std::env::var_os("PHP_FUZZ_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("python3"));
    let found = Command::new(&python)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return Some(python);
    }
    let message = format!(
        "the Python module `{module}` is not importable by {}: run `scripts/setup --test-libs` \
         (it installs it into target/test-venv) and set PHP_FUZZ_TEST_PYTHON=target/test-venv/bin/python, \
         or `pip install {module}`",
        python.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{message}");
    }
    eprintln!("SKIPPED (not in CI): {message}");
    None
}

/// Every file parses as YAML (PyYAML's safe_load).
pub fn assert_yaml_parses(files: &[&Path]) {
    let Some(python) = python_with("yaml") else {
        return;
    };
    for file in files {
        let output = Command::new(&python)
            .args(["-c", "import sys, yaml; yaml.safe_load(open(sys.argv[1]))"])
            .arg(file)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{} is not valid YAML: {}",
            file.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

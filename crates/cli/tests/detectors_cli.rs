//! The bug detectors end to end (docs/detectors.md): each planted target in
//! fixtures/detectors/ is reported under its detector by a campaign that
//! starts from its two plain seeds and runs at most 60 s, and no safe twin
//! gives any security finding in 60 s.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use common::{bin, fixture};

/// The protocol of issue #32: two plain seeds, 60 s.
const CAMPAIGN: Duration = Duration::from_secs(60);

const DETECTORS: [&str; 8] = [
    "command-injection",
    "code-injection",
    "object-injection",
    "class-injection",
    "path-traversal",
    "xxe",
    "ssrf",
    "regex-dos",
];

/// A campaign on `fixtures/detectors/<folder>/<variant>.php` (the folder
/// is the detector's, or a case of its own), in a folder of its own (the
/// seeds are copied: a campaign adds to its corpus).
struct Campaign {
    dir: tempfile::TempDir,
    child: Child,
    started: Instant,
}

impl Campaign {
    fn start(folder: &str, variant: &str) -> Campaign {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("corpus");
        std::fs::create_dir(&corpus).unwrap();
        let seeds = fixture(&format!("detectors/{folder}/seeds"));
        for seed in std::fs::read_dir(&seeds).unwrap() {
            let seed = seed.unwrap().path();
            std::fs::copy(&seed, corpus.join(seed.file_name().unwrap())).unwrap();
        }
        let target = fixture(&format!("detectors/{folder}/{variant}.php"));
        let child = Command::new(bin())
            .args(["fuzz", target.to_str().unwrap(), "corpus"])
            .args(["--max-time", &CAMPAIGN.as_secs().to_string()])
            .args(["--artifact-dir", "artifacts", "--quiet"])
            .current_dir(dir.path())
            .env_remove("CI")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("running php-fuzz");
        Campaign {
            dir,
            child,
            started: Instant::now(),
        }
    }

    fn artifacts(&self) -> PathBuf {
        self.dir.path().join("artifacts")
    }

    /// The reports of the security findings saved so far.
    fn security_findings(&self) -> Vec<serde_json::Value> {
        findings(&self.artifacts(), "security")
    }

    /// Waits until a security finding of `detector` is saved (then stops
    /// the campaign, as Ctrl-C would) or the campaign ends; returns the
    /// security findings, when, and stderr.
    fn until_finding_of(mut self, detector: &str) -> (Vec<serde_json::Value>, Duration, String) {
        loop {
            let found = self.security_findings();
            if found.iter().any(|f| f["class"] == detector) {
                let elapsed = self.started.elapsed();
                self.interrupt();
                return (found, elapsed, self.stderr());
            }
            if self.child.try_wait().unwrap().is_some() {
                let elapsed = self.started.elapsed();
                return (self.security_findings(), elapsed, self.stderr());
            }
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// Lets the campaign run its course; returns its exit code and stderr.
    fn finish(mut self) -> (Vec<serde_json::Value>, i32, String) {
        let status = self.child.wait().unwrap();
        let stderr = self.stderr();
        (
            self.security_findings(),
            status.code().unwrap_or(-1),
            stderr,
        )
    }

    fn interrupt(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-INT", &pid]).status();
        let _ = self.child.wait();
    }

    fn stderr(&mut self) -> String {
        use std::io::Read;
        let mut text = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            let _ = stderr.read_to_string(&mut text);
        }
        text
    }
}

/// The reports in `dir` of findings of `kind`.
fn findings(dir: &Path, kind: &str) -> Vec<serde_json::Value> {
    common::finding_reports(dir)
        .into_iter()
        .filter(|report| report["kind"] == kind)
        .collect()
}

fn vulnerable_target_is_reported(detector: &str) {
    vulnerable_in_is_reported(detector, detector);
}

/// `fixtures/detectors/<folder>/vulnerable.php` gives a finding of
/// `detector` at its sink within 60 s.
fn vulnerable_in_is_reported(folder: &str, detector: &str) {
    let (found, elapsed, stderr) = Campaign::start(folder, "vulnerable").until_finding_of(detector);
    let ours: Vec<_> = found.iter().filter(|f| f["class"] == detector).collect();
    assert!(
        !ours.is_empty(),
        "{detector}: no {detector} finding in {} s: {found:#?}\n{stderr}",
        CAMPAIGN.as_secs()
    );
    for other in found.iter().filter(|f| f["class"] != detector) {
        eprintln!("{detector}: the planted target also gave {other:#}");
    }
    for report in ours {
        assert!(
            report["file"].as_str().unwrap().ends_with("vulnerable.php"),
            "the finding is placed at the sink: {report:#}"
        );
        assert!(
            report["trace"].as_str().unwrap().contains("{closure}"),
            "{report:#}"
        );
    }
    eprintln!("{detector}: found after {:.1} s", elapsed.as_secs_f64());
}

#[test]
fn command_injection_is_reported() {
    vulnerable_target_is_reported("command-injection");
}

#[test]
fn code_injection_is_reported() {
    vulnerable_target_is_reported("code-injection");
}

#[test]
fn object_injection_is_reported() {
    vulnerable_target_is_reported("object-injection");
}

#[test]
fn class_injection_is_reported() {
    vulnerable_target_is_reported("class-injection");
}

#[test]
fn path_traversal_is_reported() {
    vulnerable_target_is_reported("path-traversal");
}

#[test]
fn xxe_is_reported() {
    vulnerable_target_is_reported("xxe");
}

#[test]
fn ssrf_is_reported() {
    vulnerable_target_is_reported("ssrf");
}

#[test]
fn regex_dos_is_reported() {
    vulnerable_target_is_reported("regex-dos");
}

/// All eight twins at once, each for the full 60 s: none may give a
/// security finding (side effects, such as the thumbnailer's refused
/// `convert`, are no security finding).
#[test]
fn no_safe_twin_gives_a_security_finding() {
    let campaigns: Vec<(&str, Campaign)> = DETECTORS
        .iter()
        .map(|detector| (*detector, Campaign::start(detector, "safe")))
        .collect();
    let mut failures = Vec::new();
    for (detector, campaign) in campaigns {
        let (found, code, stderr) = campaign.finish();
        if !found.is_empty() {
            failures.push(format!("{detector}: {found:#?}"));
        }
        assert!(
            stderr.contains("runs in"),
            "{detector}: the campaign ran to its end (exit {code})\n{stderr}"
        );
    }
    assert!(
        failures.is_empty(),
        "safe twins reported:\n{}",
        failures.join("\n")
    );
}

/// Issue #42: an annotation reader looks each docblock tag's class up
/// (`class_exists()`) and makes only annotation classes (an interface
/// check, or the `@Annotation` marker in the class's docblock). A lookup
/// is no use: no security finding in 60 s (before #42, the autoload of the
/// looked-up canary was reported at once).
#[test]
fn a_class_looked_up_then_checked_is_no_alarm() {
    let (found, code, stderr) = Campaign::start("class-lookup", "safe").finish();
    assert!(stderr.contains("runs in"), "exit {code}\n{stderr}");
    assert!(found.is_empty(), "the checked reader reported: {found:#?}");
}

/// Its twin makes whatever class the docblock names once it exists: still
/// class-injection, at `new $class`.
#[test]
fn a_class_looked_up_then_made_is_class_injection() {
    vulnerable_in_is_reported("class-lookup", "class-injection");
}

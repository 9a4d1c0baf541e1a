//! `run-single`'s failures grouped by signature (docs/dedup.md): the first
//! input of each finding is reported in full, the others in one line each,
//! and the summary names each finding once with its number of inputs.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use php_fuzz_engine::{callers_in_signature, signature};
use php_fuzz_harness::Crash;

/// The distinct findings among the inputs replayed so far.
#[derive(Debug, Default)]
pub struct Findings {
    groups: Vec<Group>,
    by_signature: HashMap<String, usize>,
}

#[derive(Debug)]
struct Group {
    headline: String,
    callers: Option<String>,
    first: PathBuf,
    inputs: usize,
}

/// Where a failing input's crash belongs.
#[derive(Debug, PartialEq, Eq)]
pub enum Placed<'a> {
    /// The first input of finding number `.0` (from 1).
    First(usize),
    /// Finding number `number` again, first seen with `first`.
    Again { number: usize, first: &'a Path },
}

impl Findings {
    /// Files `path`'s crash under its signature.
    pub fn place(&mut self, path: &Path, crash: &Crash) -> Placed<'_> {
        let key = signature(crash);
        if let Some(&index) = self.by_signature.get(&key) {
            let group = &mut self.groups[index];
            group.inputs += 1;
            return Placed::Again {
                number: index + 1,
                first: &group.first,
            };
        }
        self.by_signature.insert(key, self.groups.len());
        self.groups.push(Group {
            headline: crash.headline(),
            callers: callers_in_signature(crash),
            first: path.to_path_buf(),
            inputs: 1,
        });
        Placed::First(self.groups.len())
    }

    /// The findings, one a line, after a heading; empty without any.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        if self.groups.is_empty() {
            return out;
        }
        let _ = writeln!(
            out,
            "== {} distinct finding{} by signature (docs/dedup.md):",
            self.groups.len(),
            plural(self.groups.len())
        );
        for (n, group) in self.groups.iter().enumerate() {
            let _ = write!(
                out,
                "  #{} {} input{}: {}",
                n + 1,
                group.inputs,
                plural(group.inputs),
                group.headline
            );
            if let Some(callers) = &group.callers {
                let _ = write!(out, " (via {callers})");
            }
            let _ = writeln!(out, "; first: {}", group.first.display());
        }
        out
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use php_fuzz_harness::{CrashKind, Frame, Problem};

    fn warning(character: char, line: u32) -> Crash {
        Crash {
            kind: CrashKind::Warning,
            problem: Problem {
                class: "Warning".into(),
                message: format!("pack(): Type H: illegal hex digit {character}"),
                file: "/t.php".into(),
                line,
                trace: String::new(),
                frames: vec![Frame {
                    file: "/t.php".into(),
                    line,
                    function: "pack()".into(),
                }],
            },
            stderr: None,
            note: None,
        }
    }

    #[test]
    fn inputs_are_grouped_by_signature_in_order_of_discovery() {
        let mut findings = Findings::default();
        assert_eq!(
            findings.place(Path::new("a"), &warning('x', 5)),
            Placed::First(1)
        );
        assert_eq!(
            findings.place(Path::new("b"), &warning('y', 9)),
            Placed::First(2)
        );
        assert_eq!(
            findings.place(Path::new("c"), &warning('z', 5)),
            Placed::Again {
                number: 1,
                first: Path::new("a")
            }
        );
        let summary = findings.summary();
        assert!(
            summary.starts_with("== 2 distinct findings by signature"),
            "{summary}"
        );
        assert!(
            summary.contains("  #1 2 inputs: warning: Warning: pack(): Type H: illegal hex digit x at /t.php:5; first: a\n"),
            "{summary}"
        );
        assert!(summary.contains("  #2 1 input: "), "{summary}");
    }
}

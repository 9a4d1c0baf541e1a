//! The scan's findings, deduplicated across entry points. Every campaign
//! saves its findings into OUT/artifacts (nothing is lost); findings that
//! fail at the same line the same way (kind and class) are one bug,
//! whatever entry point called it. Each distinct finding's first input and report are
//! copied into OUT/findings, with the entry point that found it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use php_fuzz_harness::CrashKind;
use php_fuzz_storage::{ArtifactDir, CrashRecord};
use serde::Serialize;

use super::slices::artifacts;
use super::{EntryPoint, Scan};

/// One distinct finding of the scan.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub id: usize,
    #[serde(serialize_with = "kind_name")]
    pub kind: CrashKind,
    /// `Warning: Undefined array key "debug"`.
    pub headline: String,
    pub file: String,
    pub line: u32,
    /// The entry point whose campaign found it first.
    pub entry_point: String,
    /// Other entry points that reached it.
    pub also_via: Vec<String>,
    /// Its input in OUT/findings, which `run-single` replays.
    pub input: PathBuf,
    pub reproduce: String,
}

fn kind_name<S: serde::Serializer>(kind: &CrashKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(kind.name())
}

/// Reads OUT/artifacts, groups the reports by crash site and copies each
/// group's first input and report into OUT/findings.
pub fn collect(scan: &Scan<'_>, entries: &[EntryPoint]) -> anyhow::Result<Vec<Finding>> {
    let dir = artifacts(scan);
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut groups: BTreeMap<String, Vec<(PathBuf, CrashRecord)>> = BTreeMap::new();
    for (sidecar, record) in ArtifactDir::open(&dir)?.existing() {
        let input = match PathBuf::from(&record.input_file) {
            path if path.is_file() => path,
            _ => sidecar.with_extension("txt"),
        };
        groups
            .entry(site_key(&record))
            .or_default()
            .push((input, record));
    }
    let rank = |callee: &str| {
        entries
            .iter()
            .find(|e| e.callee == callee)
            .map_or(u32::MAX, |e| e.rank)
    };
    let findings_dir = scan.out.join("findings");
    std::fs::create_dir_all(&findings_dir)
        .with_context(|| format!("cannot create {}", findings_dir.display()))?;
    let mut found = Vec::new();
    for mut group in groups.into_values() {
        group.sort_by_key(|(input, record)| (record.found_at, rank(&record.target), input.clone()));
        let (input, first) = &group[0];
        let copied = copy_finding(input, &findings_dir)?;
        let mut also_via: Vec<String> = group[1..]
            .iter()
            .map(|(_, r)| r.target.clone())
            .filter(|t| *t != first.target)
            .collect();
        also_via.sort();
        also_via.dedup();
        found.push(Finding {
            id: 0,
            kind: first.kind.parse().unwrap_or(CrashKind::Exception),
            headline: format!(
                "{}: {}",
                first.class,
                first.message.lines().next().unwrap_or("")
            ),
            file: first.file.clone(),
            line: first.line,
            entry_point: first.target.clone(),
            also_via,
            reproduce: first
                .reproduce
                .replace(&input.display().to_string(), &copied.display().to_string()),
            input: copied,
        });
    }
    found.sort_by(|a, b| {
        (rank(&a.entry_point), &a.file, a.line).cmp(&(rank(&b.entry_point), &b.file, b.line))
    });
    for (id, finding) in found.iter_mut().enumerate() {
        finding.id = id + 1;
    }
    Ok(found)
}

/// What makes two findings the same bug in a scan's list: the kind, the
/// class and the failing line. The message is left out: messages quote
/// what the generated arguments held (`file_get_contents(<path>)`,
/// `Attempt to read property on <type>`), and a maintainer fixes the line
/// once. The raw findings in OUT/artifacts keep every variant.
fn site_key(record: &CrashRecord) -> String {
    format!(
        "{} {} at {}:{}",
        record.kind, record.class, record.file, record.line
    )
}

/// Copies an artifact and its report (`.json` beside it) into `dir`.
fn copy_finding(input: &Path, dir: &Path) -> anyhow::Result<PathBuf> {
    let name = input.file_name().context("an artifact has a file name")?;
    let target = dir.join(name);
    std::fs::copy(input, &target)
        .with_context(|| format!("cannot copy {} to {}", input.display(), dir.display()))?;
    let report = input.with_extension("json");
    if report.is_file() {
        std::fs::copy(&report, target.with_extension("json"))
            .with_context(|| format!("cannot copy {}", report.display()))?;
    }
    Ok(target)
}

/// Every distinct finding with its entry point and place, as `fuzz`'s
/// summary lists its crashes.
pub fn print(found: &[Finding]) {
    if found.is_empty() {
        eprintln!("==== No findings.");
        return;
    }
    eprintln!(
        "==== {} distinct findings (one per crash site, across entry points):",
        found.len()
    );
    for f in found {
        eprintln!(
            "  #{} {} {} at {}:{}",
            f.id,
            f.kind.name(),
            f.headline,
            f.file,
            f.line
        );
        eprintln!("      entry point: {}", f.entry_point);
        if !f.also_via.is_empty() {
            eprintln!("      also reached from: {}", f.also_via.join(", "));
        }
        eprintln!("      reproduce: {}", f.reproduce);
    }
}

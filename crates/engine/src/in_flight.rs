//! Findings in flight: crashes a harness has reported whose artifact is not
//! written yet (their input re-runs alone on a fresh harness, or the rest of
//! their batch waits for a harness to load). A process about to exit at
//! once (a second Ctrl-C) saves them with [`save_in_flight`] first.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use php_fuzz_storage::{ArtifactDir, CrashRecord};

/// What it takes to save a finding without its crash store.
#[derive(Debug, Clone)]
pub struct PendingFinding {
    pub(crate) artifacts: ArtifactDir,
    pub(crate) prefix: &'static str,
    pub(crate) input: Vec<u8>,
    pub(crate) record: CrashRecord,
    pub(crate) findings_dir: Option<PathBuf>,
}

/// Why a finding saved by [`save_in_flight`] has no more than its report.
const NOTE: &str = "not re-run alone: php-fuzz was interrupted twice";

static PENDING: Mutex<Vec<(u64, PendingFinding)>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A finding listed in flight until this is dropped (once it is saved, or
/// known to need no saving).
#[derive(Debug)]
pub(crate) struct Held(u64);

pub(crate) fn hold(finding: PendingFinding) -> Held {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    pending().push((id, finding));
    Held(id)
}

impl Drop for Held {
    fn drop(&mut self) {
        pending().retain(|(id, _)| *id != self.0);
    }
}

fn pending() -> std::sync::MutexGuard<'static, Vec<(u64, PendingFinding)>> {
    PENDING.lock().unwrap_or_else(|p| p.into_inner())
}

/// Saves every finding in flight (its input, then its report), then lets no
/// file write begin again: for a process about to exit. Returns one line
/// per finding: where it went, or why it could not be saved, with its
/// input in hex.
pub fn save_in_flight() -> Vec<String> {
    let findings: Vec<PendingFinding> = pending().iter().map(|(_, f)| f.clone()).collect();
    let lines = findings.into_iter().map(save).collect();
    php_fuzz_storage::stop_writing();
    lines
}

fn save(mut finding: PendingFinding) -> String {
    finding.record.note = Some(match finding.record.note.take() {
        Some(earlier) => format!("{earlier}; {NOTE}"),
        None => NOTE.to_string(),
    });
    let saved = finding
        .artifacts
        .save(finding.prefix, &finding.input, &mut finding.record);
    let copied = match &finding.findings_dir {
        Some(dir) => {
            php_fuzz_storage::save_finding_input(dir, finding.prefix, &finding.input).map(drop)
        }
        None => Ok(()),
    };
    match saved.and_then(|saved| copied.map(|()| saved)) {
        Ok(saved) => format!(
            "saved the finding in flight ({}) to {}",
            finding.record.message,
            saved.input.display()
        ),
        Err(err) => format!(
            "==== a finding in flight could not be saved: {err}\n  input ({} bytes, hex): {}",
            finding.input.len(),
            hex(&finding.input)
        ),
    }
}

/// `bytes` in lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
}

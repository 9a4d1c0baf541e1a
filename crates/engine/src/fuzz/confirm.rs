//! A crash saved as a new finding is run again, alone, on a fresh harness.
//! A crash that needs what earlier runs left behind (a static counter, a
//! cache, memory grown over thousands of runs) keeps its finding, but its
//! report gains a note that its input alone does not reproduce it.
//!
//! The check comes after the save and the report: the input is on disk
//! before anything else happens, and a hang is reported when it is seen,
//! not a whole timeout later.

use std::sync::Arc;

use php_fuzz_harness::{Batch, Crash, Executor};

use super::Shared;
use super::scratch::Scratch;
use crate::EngineError;
use crate::in_flight;
use crate::signature::signature;

/// Re-runs alone the input of each finding `scratch`'s batch saved, and
/// notes on its report when it does not crash the same way. Runs without
/// the state lock.
pub(super) fn confirm_saved_crashes(
    shared: &Shared,
    scratch: &mut Scratch,
) -> Result<(), EngineError> {
    for (index, key) in std::mem::take(&mut scratch.saved) {
        let input = scratch.batch.get(index);
        let note = if shared.should_stop() {
            // A re-run may take a whole timeout; the campaign is ending.
            Some("not re-run alone: the campaign was stopping".to_string())
        } else {
            // In flight until checked: a second Ctrl-C meanwhile saves its
            // report again, saying it was not re-run.
            let crash = scratch.crashes.iter().find(|(i, _)| *i == index);
            let _held = crash
                .map(|(_, crash)| in_flight::hold(shared.lock().crashes.pending(input, crash)));
            rerun_alone(shared, input, &key)
        };
        let Some(note) = note else { continue };
        let artifact = shared.lock().crashes.add_note(&key, &note)?;
        if let Some(artifact) = artifact {
            shared
                .out
                .line(&format!("  note on {}: {note}", artifact.display()));
        }
    }
    Ok(())
}

/// Why `input` alone, on a fresh harness, does not crash with signature
/// `key`; `None` if it does.
fn rerun_alone(shared: &Shared, input: &[u8], key: &str) -> Option<String> {
    // One executor for every re-run: each retires its harness, and the
    // next re-run finds a fresh one already loaded.
    let mut confirmer = shared.confirmer.lock().unwrap_or_else(|p| p.into_inner());
    let executor = confirmer.get_or_insert_with(|| {
        let mut executor = Executor::new(shared.harness(), Arc::clone(&shared.sources));
        // A re-run may take a whole timeout: Ctrl-C and --max-time stop it too.
        executor.stop_when(shared.stop.clone());
        executor
    });
    executor.set_config(shared.harness());
    let mut batch = Batch::new();
    batch.push(input);
    let mut alone: Option<Crash> = None;
    let result = executor.run_batch(&batch, |r| alone = r.crash);
    executor.retire_process();
    drop(confirmer);
    if alone.is_none() && shared.stop.reached() {
        return Some("not re-run alone: the campaign was stopping".to_string());
    }
    match (result, alone) {
        (Err(err), _) => Some(format!(
            "could not be checked alone on a fresh harness: {err}"
        )),
        (Ok(()), Some(other)) if signature(&other) == key => None,
        (Ok(()), Some(other)) => Some(format!(
            "does not reproduce alone: on a fresh harness this input gives {} instead; \
             earlier runs (state kept between runs) are part of the cause",
            other.headline()
        )),
        (Ok(()), None) => Some(
            "does not reproduce alone: on a fresh harness this input runs without a crash; \
             earlier runs (state kept between runs) are part of the cause"
                .to_string(),
        ),
    }
}

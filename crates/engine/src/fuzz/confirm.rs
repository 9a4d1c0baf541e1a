//! A crash about to be saved for the first time is run again, alone, on a
//! fresh harness. A crash that needs what earlier runs left behind (a static
//! counter, a cache, memory grown over thousands of runs) is still saved,
//! but its report says that its input alone does not reproduce it.

use std::sync::Arc;

use php_fuzz_harness::{Batch, Crash, Executor};

use super::Shared;
use super::scratch::Scratch;
use crate::signature::signature;

/// Notes on each crash of `scratch` that would be new whether its input
/// alone crashes a fresh harness the same way. Runs without the state lock.
pub(super) fn confirm_new_crashes(shared: &Shared, scratch: &mut Scratch) {
    if scratch.crashes.is_empty() {
        return;
    }
    let mut checked: Vec<String> = Vec::new();
    for (index, crash) in &mut scratch.crashes {
        let key = signature(crash);
        if checked.contains(&key) || !shared.lock().would_save(shared, crash) {
            continue;
        }
        let input = scratch.batch.get(*index);
        let note = if shared.should_stop() {
            // A re-run may take a whole timeout; the campaign is ending.
            Some("not re-run alone: the campaign was stopping".to_string())
        } else {
            rerun_alone(shared, input, &key)
        };
        if let Some(note) = note {
            crash.note = Some(match crash.note.take() {
                Some(earlier) => format!("{earlier}; {note}"),
                None => note,
            });
        }
        checked.push(key);
    }
}

/// Why `input` alone, on a fresh harness, does not crash with signature
/// `key`; `None` if it does.
fn rerun_alone(shared: &Shared, input: &[u8], key: &str) -> Option<String> {
    let mut executor = Executor::new(Arc::clone(&shared.harness), Arc::clone(&shared.sources));
    // A re-run may take a whole timeout: Ctrl-C and --max-time stop it too.
    executor.stop_when(shared.stop.clone());
    let mut batch = Batch::new();
    batch.push(input);
    let mut alone: Option<Crash> = None;
    let result = executor.run_batch(&batch, |r| alone = r.crash);
    executor.shutdown();
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

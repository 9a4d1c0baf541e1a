//! A crash saved as a new finding is run again, alone, on a fresh harness.
//! A crash that needs what earlier runs left behind (a static counter, a
//! cache, memory grown over thousands of runs) keeps its finding, but its
//! report gains a note that its input alone does not reproduce it.
//!
//! The check comes after the save and the report: the input is on disk
//! before anything else happens, and a hang is reported when it is seen,
//! not a whole timeout later.
//!
//! A new hang's re-run takes a whole timeout, so it does not block the
//! worker that found it: the hang checker's thread does it, with its own
//! harness, while the workers fuzz on. Its queue is done before the
//! campaign ends; a check that Ctrl-C or --max-time cut short says so on
//! the report ("not re-run alone"). --max-runs counts the campaign's runs,
//! not these, and waits for them.

use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use php_fuzz_harness::{Batch, Crash, CrashKind, Executor};

use super::Shared;
use super::scratch::Scratch;
use crate::EngineError;
use crate::in_flight::{self, Held};
use crate::signature::signature;

const STOPPING: &str = "not re-run alone: the campaign was stopping";

/// A new hang waiting for its re-run alone; in flight until checked.
pub(super) struct HangCheck {
    input: Vec<u8>,
    key: String,
    _held: Option<Held>,
}

/// Where workers send new hangs, while the hang checker runs.
pub(super) type HangChecks = Mutex<Option<Sender<HangCheck>>>;

/// Starts the hang checker's thread; [`finish_hang_checks`] ends it.
pub(super) fn start_hang_checker(shared: &Arc<Shared>) -> JoinHandle<()> {
    let (sender, checks) = channel::<HangCheck>();
    *lock(&shared.hang_checks) = Some(sender);
    let shared = Arc::clone(shared);
    std::thread::Builder::new()
        .name("php-fuzz-hang-check".into())
        .spawn(move || {
            let mut executor = None;
            for check in checks {
                let note = if shared.stop.reached() {
                    Some(STOPPING.to_string())
                } else {
                    let executor = executor.get_or_insert_with(|| confirmer_for(&shared));
                    rerun_alone(&shared, executor, &check.input, &check.key)
                };
                if let Err(err) = write_note(&shared, &check.key, note) {
                    let mut state = shared.lock();
                    state.error.get_or_insert(err);
                    state.stop.get_or_insert(super::StopReason::Interrupted);
                }
            }
            if let Some(mut executor) = executor {
                executor.shutdown();
            }
        })
        .expect("spawning the hang checker's thread")
}

/// Closes the hang checker's queue once the workers have ended, and waits
/// for the checks still in it.
pub(super) fn finish_hang_checks(shared: &Shared, checker: JoinHandle<()>) {
    lock(&shared.hang_checks).take();
    if checker.join().is_err() {
        shared
            .lock()
            .error
            .get_or_insert(EngineError::WorkerPanicked);
    }
}

fn lock(checks: &HangChecks) -> std::sync::MutexGuard<'_, Option<Sender<HangCheck>>> {
    checks.lock().unwrap_or_else(|p| p.into_inner())
}

/// Re-runs alone the input of each finding `scratch`'s batch saved, and
/// notes on its report when it does not crash the same way. Runs without
/// the state lock. A new hang goes to the hang checker, if it runs.
pub(super) fn confirm_saved_crashes(
    shared: &Shared,
    scratch: &mut Scratch,
) -> Result<(), EngineError> {
    for (index, key) in std::mem::take(&mut scratch.saved) {
        if shared.should_stop() {
            // A re-run may take a whole timeout; the campaign is ending.
            write_note(shared, &key, Some(STOPPING.to_string()))?;
            continue;
        }
        let input = scratch.batch.get(index);
        let crash = scratch
            .crashes
            .iter()
            .find(|(i, _)| *i == index)
            .map(|(_, c)| c);
        // In flight until checked: a second Ctrl-C meanwhile saves its
        // report again, saying it was not re-run.
        let held = crash.map(|c| in_flight::hold(shared.lock().crashes.pending(input, c, &key)));
        let check = HangCheck {
            input: input.to_vec(),
            key,
            _held: held,
        };
        if let Some(check) = send_hang(shared, crash, check) {
            let note = {
                let mut confirmer = shared.confirmer.lock().unwrap_or_else(|p| p.into_inner());
                let executor = confirmer.get_or_insert_with(|| confirmer_for(shared));
                rerun_alone(shared, executor, &check.input, &check.key)
            };
            write_note(shared, &check.key, note)?;
        }
    }
    Ok(())
}

/// Hands a new hang to the hang checker; gives the check back when it
/// must be done here (not a hang, or no checker running).
fn send_hang(shared: &Shared, crash: Option<&Crash>, check: HangCheck) -> Option<HangCheck> {
    if crash.is_none_or(|c| c.kind != CrashKind::Timeout) {
        return Some(check);
    }
    match lock(&shared.hang_checks).as_ref() {
        Some(sender) => sender.send(check).err().map(|failed| failed.0),
        None => Some(check),
    }
}

/// Adds `note`, if any, to the report of the finding `key`, and says so.
fn write_note(shared: &Shared, key: &str, note: Option<String>) -> Result<(), EngineError> {
    let Some(note) = note else { return Ok(()) };
    let artifact = shared.lock().crashes.add_note(key, &note)?;
    if let Some(artifact) = artifact {
        shared
            .out
            .line(&format!("  note on {}: {note}", artifact.display()));
    }
    Ok(())
}

/// A harness for re-runs alone: each re-run retires its process, and the
/// next finds a fresh one already loaded. Ctrl-C and --max-time stop it.
fn confirmer_for(shared: &Shared) -> Executor {
    let mut executor = Executor::new(shared.harness(), Arc::clone(&shared.sources));
    executor.stop_when(shared.stop.clone());
    executor
}

/// Why `input` alone, on a fresh harness, does not crash with signature
/// `key`; `None` if it does.
fn rerun_alone(
    shared: &Shared,
    executor: &mut Executor,
    input: &[u8],
    key: &str,
) -> Option<String> {
    executor.set_config(shared.harness());
    let mut batch = Batch::new();
    batch.push(input);
    let mut alone: Option<Crash> = None;
    let result = executor.run_batch(&batch, |r| alone = r.crash);
    executor.retire_process();
    if alone.is_none() && shared.stop.reached() {
        return Some(STOPPING.to_string());
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

//! Running one batch on a harness and recording its results in the
//! scratch, with the run count and the harness's memory.

use std::sync::atomic::Ordering;

use php_fuzz_harness::{Crash, Executor};

use super::Shared;
use super::scratch::Scratch;
use crate::EngineError;
use crate::in_flight::{self, Held};

pub(super) fn run_and_collect(
    shared: &Shared,
    executor: &mut Executor,
    scratch: &mut Scratch,
) -> Result<(), EngineError> {
    executor.submit(&scratch.batch)?;
    finish_and_collect(shared, executor, scratch)
}

/// Waits for `scratch`'s batch, submitted earlier, and records its results.
pub(super) fn finish_and_collect(
    shared: &Shared,
    executor: &mut Executor,
    scratch: &mut Scratch,
) -> Result<(), EngineError> {
    let batch = std::mem::take(&mut scratch.batch);
    let result = executor.finish(&batch, |r| {
        if let Some(crash) = &r.crash {
            hold_if_new(shared, &mut scratch.held, batch.get(r.index), crash);
        }
        scratch.collect(
            r.index,
            r.crash,
            r.coverage,
            r.trace_hash,
            r.repeat,
            r.cmp_log,
        )
    });
    scratch.batch = batch;
    result?;
    scratch.keep_collected();
    let stats = executor.stats();
    shared
        .runs
        .fetch_add(scratch.batch.len() as u64, Ordering::Relaxed);
    shared.harness_rss.store(stats.rss_mb, Ordering::Relaxed);
    shared
        .harness_peak_rss
        .fetch_max(stats.peak_rss_mb, Ordering::Relaxed);
    scratch.adapt_batch_size();
    Ok(())
}

/// Lists `crash` in flight if it is to be saved, from the moment its
/// harness reports it: the rest of its batch, then its re-run alone, may
/// take a harness's whole load time before `absorb` saves it.
fn hold_if_new(shared: &Shared, held: &mut Vec<Held>, input: &[u8], crash: &Crash) {
    let state = shared.lock();
    if state.would_save(shared, crash) {
        held.push(in_flight::hold(state.crashes.pending(input, crash)));
    }
}

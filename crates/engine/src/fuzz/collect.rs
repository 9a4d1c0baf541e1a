//! Running one batch on a harness and recording its results in the
//! scratch, with the run count and the harness's memory.

use std::sync::atomic::Ordering;

use php_fuzz_harness::Executor;

use super::Shared;
use super::scratch::Scratch;
use crate::EngineError;

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
        if r.crash.is_none() {
            scratch.slowest_micros = scratch.slowest_micros.max(r.micros);
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

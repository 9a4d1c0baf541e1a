//! Running one batch on a harness and recording its results in the
//! scratch, with the run count and the harness's memory.

use std::sync::atomic::Ordering;

use php_fuzz_harness::Executor;

use super::Shared;
use super::feedback::record_crash;
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
    let mut failure = None;
    let result = executor.finish(&batch, |r| {
        scratch.micros.push(r.micros);
        match &r.crash {
            None => scratch.slowest_micros = scratch.slowest_micros.max(r.micros),
            // Saved and reported the moment the harness reports it, not
            // once the rest of the batch ran (each of which may hang too).
            Some(crash) if failure.is_none() => {
                match record_crash(shared, &mut shared.lock(), batch.get(r.index), crash) {
                    Ok(Some(signature)) => scratch.saved.push((r.index, signature)),
                    Ok(None) => {}
                    Err(err) => failure = Some(err),
                }
            }
            Some(_) => {}
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
    if let Some(err) = failure {
        return Err(err);
    }
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

//! How a campaign ends: the statistics file's `end` line, the crash
//! reports' hit counts, the last warnings, and the [`FuzzSummary`].

use std::sync::atomic::Ordering;

use super::stats::Numbers;
use super::{CmpSummary, FuzzSummary, Shared, StopReason};
use crate::EngineError;

/// Closes the campaign once its workers have ended; a worker's error is
/// returned here.
pub(super) fn finish(shared: &Shared) -> Result<FuzzSummary, EngineError> {
    end_stats(shared);
    summarize(shared)
}

/// Writes the statistics file's `end` line with why the campaign stopped.
fn end_stats(shared: &Shared) {
    if shared.stats.is_some() {
        let (numbers, reason) = {
            let state = shared.lock();
            let reason = match (&state.error, state.stop) {
                (Some(err), _) => format!("error: {err}"),
                (None, stop) => stop
                    .unwrap_or(StopReason::Interrupted)
                    .describe()
                    .to_string(),
            };
            (Numbers::of(&state), reason)
        };
        if let Some(mut stats) = shared.stats() {
            stats.end(shared, numbers, &reason);
        }
    }
}

fn summarize(shared: &Shared) -> Result<FuzzSummary, EngineError> {
    let sources = &shared.sources;
    let mut state = shared.lock();
    if let Err(err) = state.crashes.flush_hits() {
        let text = format!("WARNING: cannot update the hit counts of the crash reports: {err}");
        shared.out.line(&text);
    }
    if let Some(err) = state.error.take() {
        return Err(err);
    }
    for warning in sources.take_warnings() {
        shared.out.line(&format!("WARNING: {warning}"));
    }
    if let Some(corpus) = &state.grammar {
        shared.out.line(&format!(
            "INFO: grammar mutation: {}; {}",
            corpus.describe_use(),
            corpus.describe()
        ));
        shared.out.line(&format!(
            "INFO: mean run of the mutants: {}",
            corpus.describe_runs()
        ));
    }
    let runs = shared.runs.load(Ordering::Relaxed);
    let cmp = state.auto_dictionary.as_ref().map(|auto| CmpSummary {
        auto_words: auto.len(),
        source_words: sources.comparison_literals().1.len(),
        ..state.cmp.clone()
    });
    Ok(FuzzSummary {
        runs,
        elapsed: shared.started.elapsed(),
        edges: state.features.edges(),
        features: state.features.features(),
        corpus_entries: state.corpus.len(),
        corpus_bytes: state.corpus.total_bytes(),
        harness_starts: shared.harness_starts.load(Ordering::Relaxed),
        harness_forks: shared.harness_forks.load(Ordering::Relaxed),
        memory_restarts: shared.memory_restarts.load(Ordering::Relaxed),
        known_hang_stops: shared.known_hang_stops.load(Ordering::Relaxed),
        harness_peak_rss_mb: shared.harness_peak_rss.load(Ordering::Relaxed),
        engine_peak_rss_mb: crate::output::own_peak_rss_mb(),
        crashes: state.crashes.hit_this_session().cloned().collect(),
        new_crashes: state.crashes.new_count(),
        new_units: state.new_units,
        stop_reason: state.stop.unwrap_or(StopReason::Interrupted),
        corpus_dir: state.corpus_dir.root().to_path_buf(),
        seed: shared.options.seed,
        cmp,
        rejected_calls: shared
            .typed
            .as_ref()
            .map(|t| t.rejected.load(Ordering::Relaxed)),
    })
}

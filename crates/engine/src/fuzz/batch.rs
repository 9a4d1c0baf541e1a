//! Building a batch: input-to-state candidates first, then mutants of
//! corpus entries (grammar, custom or byte mutations), within --max-runs.

use std::sync::atomic::Ordering;

use php_fuzz_mutate::Mutator;

use super::cmp::CmpFeedback;
use super::custom::CustomMutation;
use super::grammar::GrammarWorker;
use super::scratch::Scratch;
use super::{Shared, StopReason};
use crate::EngineError;

/// Fills `scratch` with input-to-state candidates (up to half the batch),
/// then mutants of corpus entries. `in_flight` is a batch already queued,
/// counted against --max-runs. Returns false if there is nothing to run.
pub(super) fn build_batch(
    shared: &Shared,
    mutator: &mut Mutator,
    grammar: &mut GrammarWorker,
    mut custom: Option<&mut CustomMutation>,
    scratch: &mut Scratch,
    in_flight: Option<&Scratch>,
    cmp: Option<&mut CmpFeedback>,
) -> Result<bool, EngineError> {
    scratch.clear();
    let mut guard = shared.lock();
    let state = &mut *guard;
    let queued = in_flight.map_or(0, |s| s.batch.len() as u64);
    let remaining = shared
        .options
        .max_runs
        .map(|max| max.saturating_sub(shared.runs.load(Ordering::Relaxed) + queued));
    let size = match remaining {
        Some(0) => {
            if queued == 0 {
                state.stop.get_or_insert(StopReason::MaxRuns);
            }
            return Ok(false);
        }
        Some(left) => scratch.batch_size.min(left as usize),
        None => scratch.batch_size,
    };
    let limit = state.length.limit();
    let candidates = match cmp {
        Some(cmp) => cmp.fill_batch(
            scratch,
            size.div_ceil(2),
            |id| state.corpus.get(id).data.len(),
            |parent_len| limit.max(parent_len).min(state.max_len),
        ),
        None => 0,
    };
    for _ in candidates..size {
        let Some(parent) = state.corpus.pick(mutator.rng_mut()) else {
            break;
        };
        let partner = state.corpus.pick(mutator.rng_mut()).unwrap_or(parent);
        let parent_data = &state.corpus.get(parent).data;
        // As libFuzzer: the limit never cuts the parent itself.
        let max_len = limit.max(parent_data.len()).min(state.max_len);
        if let Some(trees) = &mut state.grammar
            && grammar.push_mutant(
                trees,
                &state.corpus,
                mutator,
                scratch,
                parent,
                partner,
                max_len,
            )
        {
            continue;
        }
        let partner_data = &state.corpus.get(partner).data;
        if let Some(custom) = custom.as_deref_mut()
            && custom.plan(
                mutator.rng_mut(),
                parent,
                parent_data,
                partner_data,
                max_len,
            )
        {
            continue;
        }
        scratch.push_mutant(mutator, parent, parent_data, partner_data, max_len);
    }
    drop(guard);
    if let Some(custom) = custom {
        custom.run(scratch)?;
    }
    Ok(!scratch.batch.is_empty())
}

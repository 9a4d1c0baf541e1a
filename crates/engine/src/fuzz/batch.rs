//! Building a batch: input-to-state candidates first, then mutants of
//! corpus entries (grammar, custom or byte mutations), within --max-runs.

use std::sync::atomic::Ordering;

use php_fuzz_arguments::ArgumentMutator;
use php_fuzz_mutate::{Mutator, Source};

use super::cmp::CmpFeedback;
use super::custom::CustomMutation;
use super::grammar::GrammarWorker;
use super::scratch::Scratch;
use super::{Shared, StopReason};
use crate::EngineError;
use crate::corpus::{Corpus, EntryId};

/// Fills `scratch` with input-to-state candidates (up to half the batch),
/// then mutants of corpus entries. `in_flight` is a batch already queued,
/// counted against --max-runs. Returns false if there is nothing to run.
/// The mutators that know an input's structure, besides the byte mutator:
/// a typed target's (its entries' arguments), the grammar's, the target's
/// own custom mutator.
pub(super) struct Structured<'a> {
    pub arguments: Option<&'a mut ArgumentMutator>,
    pub grammar: &'a mut GrammarWorker,
    pub custom: Option<&'a mut CustomMutation>,
}

pub(super) fn build_batch(
    shared: &Shared,
    mutator: &mut Mutator,
    structured: Structured<'_>,
    scratch: &mut Scratch,
    in_flight: Option<&Scratch>,
    cmp: Option<&mut CmpFeedback>,
) -> Result<bool, EngineError> {
    let Structured {
        mut arguments,
        grammar,
        mut custom,
    } = structured;
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
    let slow_micros = shared.harness().timeout.as_micros() / SLOW_PARENT_SHARE_OF_TIMEOUT;
    // Uniform: candidates take up to half the batch; learned: their share.
    let candidate_slots = match mutator.schedule() {
        schedule if schedule.is_learned() => ((size as f64 * schedule.odds(Source::InputToState))
            .ceil() as usize)
            .min(size.div_ceil(2)),
        _ => size.div_ceil(2),
    };
    let typed = shared.typed.as_ref();
    let candidates = match cmp {
        Some(cmp) => cmp.fill_batch(
            scratch,
            candidate_slots,
            |id| state.corpus.get(id).data.len(),
            |parent_len| match typed {
                Some(_) => state.max_len,
                None => limit.max(parent_len).min(state.max_len),
            },
            |id| {
                state.corpus.has_hung(id) || u128::from(state.corpus.get(id).micros) >= slow_micros
            },
            // A replacement in a typed entry's text must leave an entry
            // that fits the types, or the call would not be the API's.
            |data| typed.is_none_or(|t| t.check(data).is_ok()),
        ),
        None => 0,
    };
    for _ in candidates..size {
        let Some(parent) = pick_parent(&mut state.corpus, mutator, scratch, in_flight) else {
            break;
        };
        let partner = state.corpus.pick(mutator.rng_mut()).unwrap_or(parent);
        let parent_data = &state.corpus.get(parent).data;
        if let Some(arguments) = arguments.as_deref_mut() {
            let partner_data = &state.corpus.get(partner).data;
            scratch.push_typed_mutant(arguments, mutator, parent, parent_data, partner_data);
            continue;
        }
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

/// A parent whose run took this fraction of the timeout or more is slow:
/// its input-to-state candidates, which put compared values in place of its
/// bytes (a loop's bound among them), come one per batch, as do those of a
/// parent whose mutants hung. On Twig, a template looping 10,000 times
/// (20 ms) gave a batch of candidates that each hung for the whole timeout.
const SLOW_PARENT_SHARE_OF_TIMEOUT: u128 = 100;

/// Picks the entry to mutate next. An entry whose mutants have hung gets at
/// most one mutant in this batch and the one queued before it: each hang
/// costs a whole timeout, and a batch is built before any of its outcomes
/// is known, so a slow template picked five times in one batch would hang
/// five times before its weight could fall. A repeat is re-picked, a few
/// times at most. Nothing changes while nothing has hung, so `--seed`
/// replays stay as they were.
fn pick_parent(
    corpus: &mut Corpus,
    mutator: &mut Mutator,
    scratch: &Scratch,
    in_flight: Option<&Scratch>,
) -> Option<EntryId> {
    let mut parent = corpus.pick(mutator.rng_mut())?;
    for _ in 0..REPICKS_AFTER_A_HANG {
        let queued = |s: &Scratch| s.has_mutant_of(parent);
        if !corpus.has_hung(parent) || !(queued(scratch) || in_flight.is_some_and(queued)) {
            break;
        }
        parent = corpus.pick(mutator.rng_mut())?;
    }
    Some(parent)
}

/// Re-picks for an entry that hung and is in the batch already.
const REPICKS_AFTER_A_HANG: usize = 4;

#[cfg(test)]
mod tests {
    use php_fuzz_mutate::Dictionary;

    use super::*;
    use crate::Entry;

    fn corpus_of(entries: usize) -> Corpus {
        let mut corpus = Corpus::new();
        for i in 0..entries {
            corpus.add(Entry {
                data: vec![b'a' + i as u8],
                path: None,
                unique: vec![i as u64],
                trace_hash: 0,
                micros: 0,
            });
        }
        corpus
    }

    /// Mutants of the entries `pick_parent` chooses, `runs` of them.
    fn parents(corpus: &mut Corpus, runs: usize) -> Vec<EntryId> {
        let mut mutator = Mutator::new(7, Dictionary::new());
        let mut scratch = Scratch::new();
        for _ in 0..runs {
            let parent = pick_parent(corpus, &mut mutator, &scratch, None).unwrap();
            let data = corpus.get(parent).data.clone();
            scratch.push_mutant(&mut mutator, parent, &data, &data, 64);
        }
        match &scratch.origin {
            crate::fuzz::scratch::Origin::Mutants(m) => m.iter().map(|m| m.parent).collect(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn an_entry_that_hung_gets_one_mutant_per_batch() {
        let mut corpus = corpus_of(2);
        let before = parents(&mut corpus, 16);
        assert!(before.iter().filter(|&&p| p == EntryId(0)).count() > 1);
        corpus.count_hang(EntryId(0));
        let after = parents(&mut corpus, 16);
        assert_eq!(
            after.iter().filter(|&&p| p == EntryId(0)).count(),
            1,
            "{after:?}"
        );
    }
}

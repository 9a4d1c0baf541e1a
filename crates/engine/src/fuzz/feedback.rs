//! Feedback: what a batch's results change in the shared state. Crashes go
//! to the crash store first; an input with a new feature joins the corpus
//! (NEW); a shorter mutant that keeps its parent's unique features replaces
//! it (REDUCE).

use std::sync::atomic::Ordering;

use php_fuzz_harness::Crash;

use super::scratch::{Origin, Scratch};
use super::{Shared, State, StopReason};
use crate::EngineError;
use crate::corpus::{Entry, keeps_all};
use crate::crashes::Recorded;
use crate::in_flight::hex;
use crate::output::{CampaignEvent, Event, NewCrash, known_crash_line};
use crate::signature::signature;

/// Takes a batch's results into the shared state.
pub(super) fn absorb(
    shared: &Shared,
    state: &mut State,
    scratch: &mut Scratch,
) -> Result<(), EngineError> {
    // Crashes were saved as they came (`collect`). A mutant that hung makes
    // its parent less likely to be picked again.
    if let Origin::Mutants(mutants) = &scratch.origin {
        for (index, crash) in &scratch.crashes {
            if crash.kind == php_fuzz_harness::CrashKind::Timeout {
                state.corpus.count_hang(mutants[*index].parent);
            }
        }
    }

    for index in 0..scratch.batch.len() {
        let features = &scratch.features[scratch.features_range(index)];
        let input = scratch.batch.get(index);
        let fingerprint = scratch.fingerprints[index];
        let is_new = !scratch.crashed[index]
            && !scratch.known[index]
            && !state.seen.contains(fingerprint)
            && state.features.has_new(features);
        if !is_new && !scratch.crashed[index] {
            state.seen.insert(fingerprint);
            if scratch.trace_hashes[index] != 0 {
                scratch.known_traces.insert(scratch.trace_hashes[index]);
            }
        }
        let (file, mutant) = match &scratch.origin {
            Origin::CorpusFiles(paths) => (paths[index].as_ref(), None),
            Origin::Mutants(mutants) => (None, Some(&mutants[index])),
        };
        // Length control counts the campaign's own runs only; as in
        // libFuzzer, a REDUCE is progress as much as a NEW.
        let mut progress = is_new;
        if is_new {
            state.seen.insert(fingerprint);
            scratch.new_features.clear();
            state
                .features
                .insert_all(features, &mut scratch.new_features);
            scratch.new_feature_counts[index] = scratch.new_features.len() as u32;
            let mut unique = scratch.new_features.clone();
            unique.sort_unstable();
            let path = match file {
                Some(file) => file.clone(),
                None => state.corpus_dir.save(input)?,
            };
            let id = state.corpus.add(Entry {
                data: input.to_vec(),
                path: Some(path),
                unique,
                trace_hash: scratch.trace_hashes[index],
                micros: scratch.micros[index],
            });
            scratch.joined.push((id, index));
            if let Some(mutant) = mutant {
                if let Some(auto) = state.auto_dictionary.as_mut() {
                    for token in scratch.tokens_of(mutant) {
                        auto.learn(token);
                    }
                }
                state.new_units += 1;
                shared.print_status(state, Event::New, Some((input.len(), mutant.sequence)));
            }
        } else if let Some(mutant) = mutant
            && !scratch.crashed[index]
        {
            let parent = mutant.parent;
            let parent_entry = state.corpus.get(parent);
            let trace_hash = scratch.trace_hashes[index];
            // A run that went exactly like its parent keeps all its features,
            // even when only the trace's hash came back.
            let same_path = trace_hash != 0 && trace_hash == parent_entry.trace_hash;
            let keeps = || {
                if scratch.known[index] {
                    same_path
                } else {
                    keeps_all(features, &parent_entry.unique)
                }
            };
            if input.len() < parent_entry.data.len() && keeps() {
                let path = state.corpus_dir.save(input)?;
                let run = (trace_hash, scratch.micros[index]);
                let old = state
                    .corpus
                    .replace(parent, input.to_vec(), Some(path.clone()), run);
                if let Some(old) = old.filter(|o| *o != path) {
                    state.corpus_dir.remove_owned(&old)?;
                }
                scratch.joined.push((parent, index));
                shared.print_status(state, Event::Reduce, Some((input.len(), mutant.sequence)));
                progress = true;
            }
        }
        if mutant.is_some() {
            state.length.record_run(progress);
        }
        if !scratch.crashed[index] {
            state.corpus.count_run(mutant.map(|m| m.parent), features);
            if let (Some(mutant), Some(grammar)) = (mutant, &mut state.grammar) {
                let made_by_grammar = mutant.sequence.grammar.is_some();
                grammar.count_run(made_by_grammar, scratch.micros[index], input.len());
            }
        }
    }
    Ok(())
}

/// Saves a new crash and reports it, or counts a known one. Returns the
/// signature of a crash saved as a new finding.
pub(super) fn record_crash(
    shared: &Shared,
    state: &mut State,
    input: &[u8],
    crash: &Crash,
) -> Result<Option<String>, EngineError> {
    if let Some(typed) = &shared.typed
        && crash.problem.class == super::typed::CALL_REJECTED
    {
        // PHP refused the generated arguments at the call: php-fuzz's bug,
        // counted in the summary, never the library's finding.
        if typed.count_rejected() {
            shared.out.line(&format!(
                "WARNING: PHP refused arguments php-fuzz built, at the call (php-fuzz's bug, not the library's; please report it): {}\n  input: {}",
                crash.problem.message,
                crate::output::preview(input, 300)
            ));
        }
        return Ok(None);
    }
    // Computed once for this input: the store, the report and the re-run
    // alone all take it from here.
    let signature = signature(crash);
    if !state.crashes.knows_signature(&signature) && !state.would_save(shared, &signature) {
        // --max-crashes is reached: the campaign is stopping, and saves no more.
        return Ok(None);
    }
    let runs = shared.runs.load(Ordering::Relaxed);
    let seconds = shared.started.elapsed().as_secs();
    let recorded = match state.crashes.record_signed(input, crash, signature) {
        Ok(recorded) => recorded,
        Err(err) => {
            // The input is all there is of this finding: never lose it.
            shared.out.line(&format!(
                "==== {} could not be saved: {err}\n  {}\n  input ({} bytes, hex): {}",
                crash.kind.artifact_prefix().to_uppercase(),
                crash.headline(),
                input.len(),
                hex(input)
            ));
            return Err(err.into());
        }
    };
    match recorded {
        Recorded::New(saved) => {
            let saved = saved.clone();
            shared.out.campaign(CampaignEvent::NewCrash(&NewCrash {
                crash,
                input,
                number: state.crashes.new_count(),
                runs,
                seconds,
                saved: &saved,
                timeout: shared.harness().timeout,
            }));
            if let Some(mut stats) = shared.stats() {
                stats.crash(
                    &shared.out,
                    &saved.record.kind,
                    crash.problem.headline(),
                    &saved.artifact,
                );
            }
            if shared
                .options
                .max_crashes
                .is_some_and(|max| state.crashes.new_count() >= max)
            {
                state.stop.get_or_insert(StopReason::MaxCrashes);
            }
            Ok(Some(saved.record.signature))
        }
        Recorded::Duplicate(known) => {
            if known.hits == 1 && !known.new {
                shared.out.line(&known_crash_line(crash, known));
            }
            Ok(None)
        }
    }
}

//! The workers: one thread per job, each with its own harness, mutating,
//! running and absorbing batches until the campaign stops, while the
//! calling thread runs the monitor.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use php_fuzz_harness::{Executor, ExecutorStats};
use php_fuzz_mutate::{Mutator, Schedule, Source};
use php_fuzz_storage::CorpusFile;

use super::batch::{Structured, build_batch};
use super::cmp::CmpFeedback;
use super::collect::finish_and_collect;
use super::confirm::{confirm_saved_crashes, finish_hang_checks, start_hang_checker};
use super::custom::CustomMutation;
use super::feedback::absorb;
use super::grammar::GrammarWorker;
use super::monitor::monitor;
use super::scratch::{Origin, Scratch};
use super::seeds::run_seeds;
use super::timeout::known_hangs;
use super::{Shared, State, StopReason};
use crate::{EngineError, MutationSchedule};

/// Starts the workers (worker 0 on `first`, which ran the seeds into
/// `scratch`), runs the monitor until a limit is reached, and waits for
/// them all.
pub(super) fn run_workers(
    shared: &Arc<Shared>,
    first: Executor,
    scratch: Scratch,
    feedbacks: Vec<Option<CmpFeedback>>,
) {
    let jobs = shared.options.jobs.max(1);
    let checker = start_hang_checker(shared);
    let mut workers = Vec::new();
    let mut feedbacks = feedbacks.into_iter();
    let first_cmp = feedbacks.next().flatten();
    for (worker, cmp) in (1..jobs).zip(feedbacks) {
        let shared = Arc::clone(shared);
        let mut executor = Executor::new(shared.harness(), Arc::clone(&shared.sources));
        executor.stop_when(shared.stop.clone());
        let cmp = arm_known_hangs(&shared, scratch.slowest_micros, &mut executor, cmp);
        workers.push(
            std::thread::Builder::new()
                .name(format!("php-fuzz-worker-{worker}"))
                .spawn(move || worker_loop(&shared, executor, worker as u64, Scratch::new(), cmp))
                .expect("spawning a worker thread"),
        );
    }
    let mut first = first;
    let first_cmp = arm_known_hangs(shared, scratch.slowest_micros, &mut first, first_cmp);
    {
        let shared = Arc::clone(shared);
        workers.push(
            std::thread::Builder::new()
                .name("php-fuzz-worker-0".into())
                .spawn(move || worker_loop(&shared, first, 0, scratch, first_cmp))
                .expect("spawning a worker thread"),
        );
    }
    monitor(shared);
    for worker in workers {
        if worker.join().is_err() {
            shared
                .lock()
                .error
                .get_or_insert(EngineError::WorkerPanicked);
        }
    }
    finish_hang_checks(shared, checker);
}

/// Arms the known-hang limit of a worker's harness and of its tracer.
fn arm_known_hangs(
    shared: &Arc<Shared>,
    slowest_micros: u32,
    executor: &mut Executor,
    cmp: Option<CmpFeedback>,
) -> Option<CmpFeedback> {
    let (limit, known) = known_hangs(shared, slowest_micros);
    executor.stop_known_hangs(limit, Arc::clone(&known));
    cmp.map(|mut cmp| {
        cmp.stop_known_hangs(limit, known);
        cmp
    })
}

/// Fuzzes until told to stop. Two batches are in flight: while PHP runs
/// one, this thread absorbs the results of the previous one and mutates the
/// next, so the engine's work hides behind the harness's.
fn worker_loop(
    shared: &Shared,
    mut executor: Executor,
    worker: u64,
    first: Scratch,
    mut cmp: Option<CmpFeedback>,
) {
    let seed = shared
        .options
        .seed
        .wrapping_add(worker.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut mutator = Mutator::new(seed, shared.dictionary.clone());
    if shared.options.mutation_schedule == MutationSchedule::Learned {
        let mut schedule = Schedule::learned();
        schedule.set_available(Source::InputToState, cmp.is_some());
        schedule.set_available(Source::Grammar, shared.grammar.is_some());
        schedule.set_available(Source::Custom, shared.custom.is_some());
        mutator.set_schedule(schedule);
    }
    let mut grammar = GrammarWorker::new(
        shared.grammar.as_ref(),
        shared.options.fusion,
        shared.options.grammar_share,
    );
    let mut custom = shared
        .custom
        .as_ref()
        .map(|setup| CustomMutation::new(setup, shared.dictionary.clone()));
    let mut arguments = shared.typed.as_ref().map(|typed| typed.mutator());
    let mut last_counts = ExecutorStats::default();
    let mut current = first;
    let mut next = Scratch::new();
    next.batch_size = current.batch_size;
    next.value_profile = shared.options.use_value_profile;
    current.value_profile = shared.options.use_value_profile;
    let mut in_flight = false;
    let result = loop {
        let stopping = shared.should_stop();
        let reloaded = if stopping {
            Vec::new()
        } else {
            std::mem::take(&mut *shared.reloaded.lock().unwrap_or_else(|p| p.into_inner()))
        };
        let step = (|| -> Result<bool, EngineError> {
            // Queue the next batch before waiting for the current one.
            let queued_next = !stopping
                && reloaded.is_empty()
                && build_batch(
                    shared,
                    &mut mutator,
                    Structured {
                        arguments: arguments.as_mut(),
                        grammar: &mut grammar,
                        custom: custom.as_mut(),
                    },
                    &mut next,
                    in_flight.then_some(&current),
                    cmp.as_mut(),
                )?;
            if queued_next {
                executor.submit(&next.batch)?;
            }
            if in_flight {
                finish_and_collect(shared, &mut executor, &mut current)?;
                absorb(shared, &mut shared.lock(), &mut current)?;
                learn_schedule(shared, &mut mutator, &current);
                grammar.learn_costs(&current);
                confirm_saved_crashes(shared, &mut current)?;
                grammar.learn(shared, &mut current);
                if let Some(cmp) = cmp.as_mut() {
                    save_auto_dictionary(&mut shared.lock())?;
                    cmp.after_batch(shared, &mut mutator, &current);
                }
            }
            if !reloaded.is_empty() {
                run_reloaded(shared, &mut executor, &mut current, &mut grammar, reloaded)?;
            }
            std::mem::swap(&mut current, &mut next);
            next.batch_size = current.batch_size;
            in_flight = queued_next;
            Ok(in_flight || (!stopping && !shared.should_stop()))
        })();
        count_harness_starts(shared, &executor, &mut last_counts);
        match step {
            Ok(true) => {}
            Ok(false) => break Ok(()),
            Err(err) => break Err(err),
        }
    };
    end_worker(shared, executor, cmp, result);
}

/// Credits the mutation schedule with what each mutant of the batch found
/// and cost (docs/scheduling.md); a no-op under the uniform schedule.
fn learn_schedule(shared: &Shared, mutator: &mut Mutator, scratch: &Scratch) {
    let Origin::Mutants(mutants) = &scratch.origin else {
        return;
    };
    let schedule = mutator.schedule_mut();
    if !schedule.is_learned() {
        return;
    }
    for (index, mutant) in mutants.iter().enumerate() {
        let source = mutant.source();
        let kinds = match (source, &mutant.sequence.bytes) {
            (None, Some(sequence)) => sequence.kinds(),
            _ => &[][..],
        };
        let found = scratch.new_feature_counts[index] as usize;
        schedule.credit(kinds, source, found, u64::from(scratch.run_blocks[index]));
    }
    schedule.update();
    shared.lock().mix = schedule.mix();
}

/// Runs the entries other php-fuzz processes wrote, found by --reload.
fn run_reloaded(
    shared: &Shared,
    executor: &mut Executor,
    current: &mut Scratch,
    grammar: &mut GrammarWorker,
    reloaded: Vec<CorpusFile>,
) -> Result<(), EngineError> {
    let count = reloaded.len();
    let before = shared.lock().corpus.len();
    run_seeds(shared, executor, current, grammar, reloaded)?;
    let added = shared.lock().corpus.len() - before;
    shared.out.status(&format!(
        "INFO: --reload: ran {count} new entries from the corpus directory, {added} added coverage"
    ));
    Ok(())
}

/// Adds the harness starts, forks, memory restarts and known-hang stops
/// since `last` (the stats as of the previous call) to the campaign's counts.
fn count_harness_starts(shared: &Shared, executor: &Executor, last: &mut ExecutorStats) {
    let stats = executor.stats();
    let add = |total: &std::sync::atomic::AtomicU64, now: u64, then: u64| {
        total.fetch_add(now - then, Ordering::Relaxed);
    };
    add(
        &shared.harness_starts,
        stats.harness_starts,
        last.harness_starts,
    );
    add(&shared.harness_forks, stats.forks, last.forks);
    add(
        &shared.memory_restarts,
        stats.memory_restarts,
        last.memory_restarts,
    );
    add(
        &shared.known_hang_stops,
        stats.known_hang_stops,
        last.known_hang_stops,
    );
    *last = stats;
}

/// Hands a worker's error and comparison counts to the campaign, and stops
/// its harness.
fn end_worker(
    shared: &Shared,
    mut executor: Executor,
    mut cmp: Option<CmpFeedback>,
    result: Result<(), EngineError>,
) {
    if let Some(cmp) = cmp.as_mut() {
        cmp.finish(shared);
    }
    let mut state = shared.lock();
    if let Err(err) = result {
        state.error.get_or_insert(err);
        state.stop.get_or_insert(StopReason::Interrupted);
    }
    if let Some(cmp) = &cmp {
        state.cmp.traced += cmp.traced;
        state.cmp.candidates += cmp.candidates_made;
    }
    drop(state);
    executor.shutdown();
}

/// Writes the auto-dictionary beside the corpus if it learned words.
fn save_auto_dictionary(state: &mut State) -> Result<(), EngineError> {
    let State {
        auto_dictionary,
        corpus_dir,
        ..
    } = state;
    match auto_dictionary {
        Some(auto) => auto.save_if_changed(corpus_dir),
        None => Ok(()),
    }
}

//! Comparison feedback of one worker (docs/architecture.md, "Comparison
//! feedback"). A *tracer*, a second harness process that loads the
//! `cmplog` rendering of the target, runs each new corpus entry once and
//! one in `SAMPLE_EVERY` other inputs. Each run's comparison log feeds the
//! worker's table of recent compares (the `CMP` mutation) and becomes
//! input-to-state candidates (`I2S`), which the worker runs in its next
//! batches; a candidate that finds coverage is a new entry, traced in turn,
//! so comparisons that only run after a solved one are solved in a chain.
//!
//! Off the hot path: the main harness never runs the logging code, and
//! the worker does not wait for the tracer unless it falls behind. The
//! tracer starts while the seeds run; after absorbing a batch the worker
//! takes the logs of the round it sent the tracer `ROUNDS_IN_FLIGHT`
//! batches earlier (which ran beside the main harness) and sends the next
//! round, at most one per batch. The tracer may run at most one block for
//! every `TRACE_SHARE` blocks the main harness ran, a logged comparison
//! counting as `RECORD_COST` blocks. Budget and hand-over count batches and
//! blocks, never time, and everything the tracer returns enters the worker
//! at one point of its loop: a seed replays a campaign exactly, tracer
//! included.

use std::collections::VecDeque;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use php_fuzz_coverage::EdgeCounter;
use php_fuzz_harness::{
    Batch, Executor, HarnessConfig, HarnessError, KnownHang, SourceServer, StopWhen,
};
use php_fuzz_mutate::cmp::{Operand, Record, records};
use php_fuzz_mutate::i2s::{self, Candidate};
use php_fuzz_mutate::{Dictionary, Mutator, MutatorKind};

use super::Shared;
use super::scratch::{Origin, Scratch};
use crate::corpus::EntryId;

/// Set in the environment, the tracer runs on its schedule but nothing it
/// or the source's literals yield reaches the mutator: `scripts/bench-cmp`
/// measures the cost of tracing apart from the dearer inputs it leads to.
const DISCARD_ENV: &str = "PHP_FUZZ_BENCH_CMP_DISCARD";

/// One input in this many (other than new entries) is traced.
const SAMPLE_EVERY: u64 = 1000;
/// The tracer runs at most one block per this many of the main harness.
const TRACE_SHARE: i64 = 100;
/// What a logged comparison costs the tracer, in blocks: each is a call
/// that encodes both operands. Fitted to the tracer's CPU time on
/// masterminds-html5 and league-commonmark (docs/benchmarks.md): 9–11.
const RECORD_COST: u64 = 10;
/// Blocks the tracer may run before the main harness has run any: the seeds.
const INITIAL_CREDIT: i64 = 2_000_000;
/// Unused budget does not pile up past this.
const MAX_CREDIT: i64 = 4_000_000;
/// Inputs traced in one round trip to the tracer (one sent per batch), at most.
const TRACES_PER_ROUND: usize = 8;
/// A round has at most one input per this many of the main harness's
/// batch, so that it ends before the batch does (a traced run costs a few
/// main-harness runs of the same input), and the worker does not wait.
const BATCH_INPUTS_PER_TRACE: usize = 8;
/// Rounds in flight: a round's logs are taken this many batches after it
/// was sent, so a tracer that falls behind by a batch (on a busy machine)
/// does not stall the worker either.
const ROUNDS_IN_FLIGHT: u64 = 2;
const MAX_QUEUED_TRACES: usize = 1024;
/// Candidates kept waiting for the length limit to grow.
const MAX_DEFERRED: usize = 4096;
const MAX_QUEUED_SAMPLES: usize = 4;
const MAX_PENDING_CANDIDATES: usize = 4096;
const CANDIDATES_PER_ENTRY: usize = 64;
const CANDIDATES_PER_SAMPLE: usize = 16;
/// Candidates of a checksummed input traced again to repair the checksum.
const MAX_REPAIRS: usize = 8;

/// What a worker needs to start its tracer.
#[derive(Debug, Clone)]
pub(super) struct TracerSetup {
    pub config: Arc<HarnessConfig>,
    /// Serves the `cmplog` rendering; one for all tracers of a session.
    pub sources: Arc<SourceServer>,
    /// Ctrl-C and --max-time stop a traced input that hangs too.
    pub stop: StopWhen,
}

/// An input waiting for the tracer.
struct Job {
    data: Vec<u8>,
    /// The entry it is, or the entry it was mutated from.
    parent: EntryId,
    kind: Kind,
}

/// Why an input is traced.
enum Kind {
    /// A new corpus entry.
    Entry,
    /// One in `SAMPLE_EVERY` other inputs.
    Sample,
    /// A candidate of an input that passed a comparison on its own bytes
    /// (`log`, the input's comparisons): the checksum it broke is repaired.
    Repair { log: Arc<[u8]>, token: Vec<u8> },
}

/// Inputs sent to the tracer together.
struct Round {
    jobs: Vec<Job>,
    batch: Batch,
    /// The worker's batch count when it was sent.
    sent: u64,
}

/// An input-to-state candidate waiting for a batch.
struct Pending {
    candidate: Candidate,
    parent: EntryId,
}

enum Tracer {
    /// Loading the target, in a thread of its own.
    Starting(JoinHandle<Result<Executor, HarnessError>>),
    Ready(Box<Executor>),
    /// Failed; comparison tracing is off for this worker.
    Off,
}

pub(super) struct CmpFeedback {
    worker: u64,
    /// `DISCARD_ENV` is set.
    discard: bool,
    jobs: u64,
    tracer: Tracer,
    /// The main harness's source server: the dictionary taken from the source.
    sources: Arc<SourceServer>,
    queue: VecDeque<Job>,
    samples_queued: usize,
    /// The rounds the tracer runs now, oldest first.
    in_flight: VecDeque<Round>,
    /// Batches absorbed so far (the tracer's clock).
    batches: u64,
    candidates: VecDeque<Pending>,
    /// Candidates longer than the length limit allowed when they came up:
    /// they run once it has grown (at most `MAX_DEFERRED`, oldest dropped).
    deferred: VecDeque<Pending>,
    credit: i64,
    /// Corpus entries below this id were considered for tracing.
    next_entry: u32,
    source_generation: u64,
    auto_generation: u64,
    since_sample: u64,
    max_len: usize,
    counter: EdgeCounter,
    /// What candidates that hung cost, against the campaign's time.
    hangs: HangBudget,
    /// The known-hang limit, for the tracer once it is ready.
    known_hangs: Option<(Duration, KnownHang)>,
    /// Stats for the summary.
    pub traced: u64,
    pub candidates_made: u64,
}

impl CmpFeedback {
    /// Starts the worker's tracer (in the background: it loads while the
    /// seeds run) and its bookkeeping.
    pub fn new(
        setup: &TracerSetup,
        sources: Arc<SourceServer>,
        worker: u64,
        jobs: u64,
    ) -> CmpFeedback {
        let (config, tracer_sources) = (Arc::clone(&setup.config), Arc::clone(&setup.sources));
        let stop = setup.stop.clone();
        let start = std::thread::Builder::new()
            .name(format!("php-fuzz-tracer-{worker}"))
            .spawn(move || {
                let mut executor = Executor::new(config, tracer_sources);
                executor.stop_when(stop);
                executor.start()?;
                Ok(executor)
            })
            .expect("spawning a thread");
        CmpFeedback {
            worker,
            discard: std::env::var_os(DISCARD_ENV).is_some(),
            jobs: jobs.max(1),
            tracer: Tracer::Starting(start),
            sources,
            queue: VecDeque::new(),
            samples_queued: 0,
            in_flight: VecDeque::new(),
            batches: 0,
            candidates: VecDeque::new(),
            deferred: VecDeque::new(),
            // The seeds' tracing is split between the workers like the entries.
            credit: INITIAL_CREDIT / i64::try_from(jobs.max(1)).unwrap_or(1),
            next_entry: 0,
            source_generation: u64::MAX,
            auto_generation: u64::MAX,
            since_sample: 0,
            max_len: 0,
            counter: EdgeCounter::new(),
            hangs: HangBudget::new(),
            known_hangs: None,
            traced: 0,
            candidates_made: 0,
        }
    }

    /// Runs after a batch was absorbed, while the harness runs the next:
    /// takes up new dictionary words, queues new entries and samples,
    /// learns from the round the tracer ran since the last batch, and sends
    /// it the next round if the budget allows.
    pub fn after_batch(&mut self, shared: &Shared, mutator: &mut Mutator, scratch: &Scratch) {
        self.hangs.count(shared, scratch);
        {
            let state = shared.lock();
            self.max_len = state.max_len;
            let entries = state.corpus.len() as u32;
            while self.next_entry < entries {
                let id = EntryId(self.next_entry);
                self.next_entry += 1;
                if u64::from(id.0) % self.jobs == self.worker
                    && self.queue.len() < MAX_QUEUED_TRACES
                {
                    self.queue.push_back(Job {
                        data: state.corpus.get(id).data.clone(),
                        parent: id,
                        kind: Kind::Entry,
                    });
                }
            }
            if let Some(auto) = &state.auto_dictionary
                && !self.discard
                && auto.generation() != self.auto_generation
            {
                self.auto_generation = auto.generation();
                mutator.set_auto_dictionary(auto.dictionary().clone());
            }
        }
        if !self.discard && self.sources.literal_generation() != self.source_generation {
            let (generation, words) = self.sources.comparison_literals();
            self.source_generation = generation;
            mutator.set_source_dictionary(Dictionary::from(words));
        }
        if let Origin::Mutants(mutants) = &scratch.origin {
            for (index, mutant) in mutants.iter().enumerate() {
                self.since_sample += 1;
                if self.since_sample < SAMPLE_EVERY {
                    continue;
                }
                self.since_sample = 0;
                if !scratch.crashed[index] && self.samples_queued < MAX_QUEUED_SAMPLES {
                    self.samples_queued += 1;
                    self.queue.push_back(Job {
                        data: scratch.batch.get(index).to_vec(),
                        parent: mutant.parent,
                        kind: Kind::Sample,
                    });
                }
            }
        }
        let earned = i64::try_from(scratch.executed_blocks()).unwrap_or(i64::MAX) / TRACE_SHARE;
        self.credit = self.credit.saturating_add(earned).min(MAX_CREDIT);
        self.batches += 1;
        while self
            .in_flight
            .front()
            .is_some_and(|round| round.sent + ROUNDS_IN_FLIGHT <= self.batches)
        {
            let round = self.in_flight.pop_front().expect("checked above");
            match self.finish_round(shared, &round.batch) {
                Some(_) if self.discard => {}
                Some(logs) => self.learn_round(mutator, round.jobs, logs),
                None => self.queue.clear(),
            }
        }
        let round = (scratch.batch.len() / BATCH_INPUTS_PER_TRACE).clamp(1, TRACES_PER_ROUND);
        if self.credit > 0 && !self.queue.is_empty() && !self.submit_round(shared, round) {
            self.queue.clear();
        }
    }

    /// Arms the tracer's known-hang limit, as the worker's: a traced input
    /// stuck where a known hang was stalls the worker no longer.
    pub fn stop_known_hangs(&mut self, limit: Duration, known: KnownHang) {
        self.known_hangs = Some((limit, known));
    }

    /// Waits for the rounds in flight and drops them: the campaign ends,
    /// and a tracer shut down mid-round would take a while to exit.
    pub fn finish(&mut self, shared: &Shared) {
        while let Some(round) = self.in_flight.pop_front() {
            let _ = self.finish_round(shared, &round.batch);
        }
    }

    /// Moves up to `max` pending candidates into `scratch`: those that fit
    /// `length_limit(parent length)`; longer ones wait until the limit grows.
    pub fn fill_batch(
        &mut self,
        scratch: &mut Scratch,
        max: usize,
        parent_len: impl Fn(EntryId) -> usize,
        length_limit: impl Fn(usize) -> usize,
        risky: impl Fn(EntryId) -> bool,
        fits: impl Fn(&[u8]) -> bool,
    ) -> usize {
        if self.hangs.spent() {
            return 0;
        }
        let mut added = 0;
        let mut waiting = self.deferred.len();
        while added < max {
            // Deferred candidates first, each looked at once per batch.
            let pending = if waiting > 0 {
                waiting -= 1;
                self.deferred.pop_front()
            } else {
                self.candidates.pop_front()
            };
            let Some(pending) = pending else {
                break;
            };
            if !fits(&pending.candidate.data) {
                continue;
            }
            let parent_len = parent_len(pending.parent);
            // Like every mutant, a candidate obeys length control: longer
            // than the limit (or its parent, which the limit never cuts), it
            // waits for the limit to grow. One of a risky parent waits while
            // the batch holds another mutant of it (see `build_batch`).
            let too_long = pending.candidate.data.len() > length_limit(parent_len);
            if too_long || (risky(pending.parent) && scratch.has_mutant_of(pending.parent)) {
                if self.deferred.len() == MAX_DEFERRED {
                    self.deferred.pop_front();
                }
                self.deferred.push_back(pending);
                continue;
            }
            scratch.push_candidate(
                pending.parent,
                parent_len,
                &pending.candidate.data,
                &pending.candidate.token,
            );
            added += 1;
        }
        added
    }

    /// Sends the tracer the next queued inputs, at most `max`, without
    /// waiting for them. False if the tracer is off.
    fn submit_round(&mut self, shared: &Shared, max: usize) -> bool {
        let take = self.queue.len().min(max);
        let jobs: Vec<Job> = self.queue.drain(..take).collect();
        self.samples_queued -= jobs
            .iter()
            .filter(|j| matches!(j.kind, Kind::Sample))
            .count();
        let mut batch = Batch::new();
        for job in &jobs {
            batch.push(&job.data);
        }
        let Some(executor) = ready(&mut self.tracer, shared) else {
            return false;
        };
        if let Some((limit, known)) = self.known_hangs.take() {
            executor.stop_known_hangs(limit, known);
        }
        if let Err(err) = executor.submit(&batch) {
            self.stop_tracing(shared, &err);
            return false;
        }
        self.in_flight.push_back(Round {
            jobs,
            batch,
            sent: self.batches,
        });
        true
    }

    /// Waits for the oldest round in flight, `batch` (sent `ROUNDS_IN_FLIGHT`
    /// batches ago, so it is done unless the tracer is far slower than the
    /// main harness): each input's comparison log. `None` if the tracer
    /// failed.
    fn finish_round(&mut self, shared: &Shared, batch: &Batch) -> Option<Vec<Vec<u8>>> {
        let Tracer::Ready(executor) = &mut self.tracer else {
            return None;
        };
        let mut logs = vec![Vec::new(); batch.len()];
        let mut cost = 0u64;
        let counter = &mut self.counter;
        let result = executor.finish(batch, |run| {
            counter.clear();
            run.coverage.add_to(counter);
            let logged = records(run.cmp_log).count() as u64;
            cost += counter.total_hits().max(1) + RECORD_COST * logged;
            logs[run.index] = run.cmp_log.to_vec();
        });
        if let Err(err) = result {
            self.stop_tracing(shared, &err);
            return None;
        }
        self.traced += batch.len() as u64;
        self.credit -= i64::try_from(cost).unwrap_or(i64::MAX);
        Some(logs)
    }

    fn stop_tracing(&mut self, shared: &Shared, err: &HarnessError) {
        shared.out.line(&format!(
            "WARNING: comparison tracing stops for this worker: {err}"
        ));
        self.tracer = Tracer::Off;
        self.in_flight.clear();
    }

    /// Takes a round's comparison logs, in the order its inputs were sent.
    fn learn_round(&mut self, mutator: &mut Mutator, jobs: Vec<Job>, logs: Vec<Vec<u8>>) {
        let mut repaired = Vec::new();
        let mut repairs = Vec::new();
        for (job, log) in jobs.into_iter().zip(logs) {
            match job.kind {
                Kind::Repair { log: parent, token } => {
                    let parent: Vec<Record<'_>> = records(&parent).collect();
                    let after: Vec<Record<'_>> = records(&log).collect();
                    if let Some(data) = i2s::repair(&parent, &job.data, &after, self.max_len) {
                        repaired.push(Pending {
                            candidate: Candidate { data, token },
                            parent: job.parent,
                        });
                    }
                }
                Kind::Entry | Kind::Sample => {
                    repairs.extend(self.learn(mutator, &job, log));
                }
            }
        }
        // Repaired candidates run first, and repairs are traced next.
        self.candidates_made += repaired.len() as u64;
        for pending in repaired.into_iter().rev() {
            self.candidates.push_front(pending);
        }
        self.candidates.truncate(MAX_PENDING_CANDIDATES);
        for job in repairs.into_iter().rev() {
            self.queue.push_front(job);
        }
    }

    /// Takes one traced input's comparisons: into the TORC, and as
    /// input-to-state candidates. Returns the candidates to trace again
    /// when they may break a checksum the input passed.
    fn learn(&mut self, mutator: &mut Mutator, job: &Job, log: Vec<u8>) -> Vec<Job> {
        let parent: Vec<Record<'_>> = records(&log).collect();
        for record in &parent {
            mutator.observe_comparison(record);
        }
        let limit = match job.kind {
            Kind::Entry => CANDIDATES_PER_ENTRY,
            _ => CANDIDATES_PER_SAMPLE,
        };
        let candidates =
            i2s::input_to_state(&job.data, parent.iter().copied(), self.max_len, limit);
        let mut repairs = Vec::new();
        if !candidates.is_empty() && guards_input(&parent, &job.data) {
            let log: Arc<[u8]> = Arc::from(log.as_slice());
            repairs = candidates
                .iter()
                .take(MAX_REPAIRS)
                .map(|candidate| Job {
                    data: candidate.data.clone(),
                    parent: job.parent,
                    kind: Kind::Repair {
                        log: Arc::clone(&log),
                        token: candidate.token.clone(),
                    },
                })
                .collect();
        }
        self.candidates_made += candidates.len() as u64;
        for candidate in candidates {
            if self.candidates.len() >= MAX_PENDING_CANDIDATES {
                break;
            }
            self.candidates.push_back(Pending {
                candidate,
                parent: job.parent,
            });
        }
        repairs
    }
}

/// The tracer's executor, once it has started; `None` if it is off.
fn ready<'t>(tracer: &'t mut Tracer, shared: &Shared) -> Option<&'t mut Executor> {
    if let Tracer::Starting(_) = tracer {
        let Tracer::Starting(start) = std::mem::replace(tracer, Tracer::Off) else {
            unreachable!("checked above");
        };
        match start.join() {
            Ok(Ok(executor)) => *tracer = Tracer::Ready(Box::new(executor)),
            Ok(Err(err)) => shared.out.line(&format!(
                "WARNING: the comparison tracer cannot start, comparison feedback is off: {err}"
            )),
            Err(_) => shared
                .out
                .line("WARNING: the comparison tracer panicked while starting"),
        }
    }
    match tracer {
        Tracer::Ready(executor) => Some(executor),
        _ => None,
    }
}

/// Whether the input's run passed a comparison of an operand that the
/// input holds (a checksum or length stored in it): a replacement elsewhere
/// may break that comparison, which is then worth repairing.
fn guards_input(records: &[Record<'_>], input: &[u8]) -> bool {
    let holds = |pattern: &[u8]| memchr::memmem::find(input, pattern).is_some();
    records.iter().filter(|r| r.is_equal()).any(|r| match r.a {
        Operand::Int(v) if !(-255..=255).contains(&v) => {
            let (le, be) = (v.to_le_bytes(), v.to_be_bytes());
            let widths: &[usize] = match v {
                -0x8000..=0xffff => &[2, 4, 8],
                -0x8000_0000..=0xffff_ffff => &[4, 8],
                _ => &[8],
            };
            widths
                .iter()
                .any(|&w| holds(&le[..w]) || holds(&be[8 - w..]))
                || holds(v.to_string().as_bytes())
        }
        Operand::Bytes(bytes, _) if bytes.len() >= 4 => holds(bytes),
        _ => false,
    })
}

/// The share of the campaign's time that input-to-state candidates may
/// spend hanging. A candidate puts a compared operand in place of an
/// input's bytes, and a template engine compares loop bounds: on Twig, a
/// loop of 10,000 turned into one of 191,000 each cost a whole timeout,
/// over half the campaign (58 exec/s with the tracer, 1,974 without).
const CANDIDATE_HANG_SHARE: f64 = 0.1;

/// Pauses the candidates while those that hung cost more than
/// [`CANDIDATE_HANG_SHARE`] of the time so far; they wait in their queue.
/// Nothing changes until a candidate hangs, so `--seed` replays of
/// campaigns without hangs stay as they were.
#[derive(Debug)]
struct HangBudget {
    started: std::time::Instant,
    hung: std::time::Duration,
}

impl HangBudget {
    fn new() -> HangBudget {
        HangBudget {
            started: std::time::Instant::now(),
            hung: std::time::Duration::ZERO,
        }
    }

    /// Adds a timeout for each candidate of the batch that hung.
    fn count(&mut self, shared: &Shared, scratch: &Scratch) {
        let Origin::Mutants(mutants) = &scratch.origin else {
            return;
        };
        for (index, crash) in &scratch.crashes {
            let candidate = mutants[*index]
                .sequence
                .bytes
                .is_some_and(|s| s.kinds() == [MutatorKind::InputToState]);
            if candidate && crash.kind == php_fuzz_harness::CrashKind::Timeout {
                self.hung += shared.harness().timeout;
            }
        }
    }

    fn spent(&self) -> bool {
        self.spent_after(self.started.elapsed())
    }

    fn spent_after(&self, elapsed: std::time::Duration) -> bool {
        !self.hung.is_zero()
            && self.hung.as_secs_f64() > elapsed.as_secs_f64() * CANDIDATE_HANG_SHARE
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::HangBudget;

    #[test]
    fn candidates_pause_while_their_hangs_cost_over_a_tenth_of_the_time() {
        let mut budget = HangBudget::new();
        assert!(!budget.spent_after(Duration::ZERO));
        budget.hung = Duration::from_secs(1);
        assert!(budget.spent_after(Duration::from_secs(3)));
        assert!(budget.spent_after(Duration::from_millis(9_900)));
        assert!(!budget.spent_after(Duration::from_millis(10_100)));
        budget.hung += Duration::from_secs(1);
        assert!(budget.spent_after(Duration::from_secs(15)));
    }
}

//! Runs batches of inputs on a harness process, and keeps one alive.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use php_fuzz_coverage::EdgeCounter;
use php_fuzz_instrument::StubStyle;

use rustix::process::Signal;

use crate::process::{HarnessProcess, POLL_SLICE, TargetInfo, Wait};
use crate::protocol::{self, Event, InputList, Request};
use crate::run_coverage::Coverage;
use crate::sources::SourceServer;
use crate::watch::Watch;
use crate::{Batch, Crash, CrashKind, HarnessConfig, HarnessError, Problem, StopWhen};
use crate::{allocation, triage};

mod lifecycle;
mod stuck;

pub use stuck::KnownHang;

/// How long a harness that sent `Died` may take to exit before its group
/// is killed.
const DIED_EXIT_GRACE: Duration = Duration::from_millis(50);

use crate::fork_server::Forker;
use crate::spare::Spare;
/// How much of the raw trace of a run's coverage chunks is kept for triage.
const CHUNK_TAIL_BYTES: usize = 16 * 1024;

/// One input's result.
#[derive(Debug)]
pub struct RunResult<'a> {
    /// Index of the input in the batch.
    pub index: usize,
    pub crash: Option<Crash>,
    pub coverage: Coverage<'a>,
    /// Hash of the run's trace (0 if none): equal hashes, equal coverage.
    pub trace_hash: u64,
    /// How long the run took by the harness's clock, in microseconds; 0
    /// for a crash.
    pub micros: u32,
    /// The run took a path already reported in full by this harness
    /// process, which then sent only the hash: `coverage` is empty.
    pub repeat: bool,
    /// The comparisons the run logged (code in the `cmplog` rendering;
    /// records as docs/protocol.md describes them), else empty.
    pub cmp_log: &'a [u8],
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ExecutorStats {
    pub executions: u64,
    pub harness_starts: u64,
    /// Of those, harnesses the fork server forked (the rest started `php`).
    pub forks: u64,
    /// Restarts because memory grew across many runs; not bugs.
    pub memory_restarts: u64,
    /// Last measured RSS of the harness, in MiB.
    pub rss_mb: u64,
    pub peak_rss_mb: u64,
    /// Runs stopped at the known-hang limit, where a known hang was stuck.
    pub known_hang_stops: u64,
}

pub struct Executor {
    config: Arc<HarnessConfig>,
    sources: Arc<SourceServer>,
    process: Option<HarnessProcess>,
    info: Option<TargetInfo>,
    stats: ExecutorStats,
    /// Batches submitted and not yet finished, oldest first.
    queued: VecDeque<Queued>,
    /// The harness's memory when the last Run was sent.
    baseline_rss: u64,
    /// The harness was dropped for memory growth: the next start is
    /// counted as a memory restart (one that never happens, at the end of
    /// a campaign, is not).
    retired_for_memory: bool,
    /// Coverage pieces of the run in progress, folded.
    earlier: EdgeCounter,
    has_earlier: bool,
    /// The end of those pieces as sent (trace style): where a run that died
    /// without a word was last seen, and whether it was recursing.
    chunk_tail: Vec<u8>,
    ends: Vec<usize>,
    /// Comparison logs of the round trip in progress, by input index, in
    /// order; `cmp_log` holds the one of the run being reported.
    cmp_logs: VecDeque<(usize, Vec<u8>)>,
    cmp_log: Vec<u8>,
    stop: StopWhen,
    /// The next harness, loading while this one runs (after a first death).
    spare: Option<Spare>,
    forker: Forker,
    stuck: Option<stuck::StuckLimit>,
}

/// A submitted batch.
struct Queued {
    /// Its Run request reached the current harness process.
    sent: bool,
}

/// How the inputs of a batch go to the harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pace {
    /// All the rest in one round trip.
    Batch,
    /// One per round trip, so the next death names its input; `streaming`
    /// has the harness send its trace as it goes, so a death that kills
    /// the process still shows where the run was.
    Alone { streaming: bool },
}

/// Why a round trip ended without every outcome.
enum Interrupted {
    /// The harness said why it is dying, and for which input, with the end of its trace.
    Died {
        index: usize,
        crash: Crash,
        retry_alone: bool,
        last: Vec<u8>,
    },
    /// It died, went silent or broke the protocol without saying which
    /// input was to blame: the first unreported one, or one after it.
    Unexplained(Crash),
    /// The executor's `StopWhen` was reached.
    Stopped,
}

impl Executor {
    pub fn new(config: Arc<HarnessConfig>, sources: Arc<SourceServer>) -> Executor {
        let config_fork_server = config.fork_server;
        Executor {
            config,
            sources,
            process: None,
            info: None,
            stats: ExecutorStats::default(),
            queued: VecDeque::new(),
            baseline_rss: 0,
            retired_for_memory: false,
            earlier: EdgeCounter::new(),
            has_earlier: false,
            chunk_tail: Vec::new(),
            ends: Vec::new(),
            cmp_logs: VecDeque::new(),
            cmp_log: Vec::new(),
            stop: StopWhen::default(),
            spare: None,
            forker: Forker::new(config_fork_server),
            stuck: None,
        }
    }

    pub fn config(&self) -> &HarnessConfig {
        &self.config
    }

    pub fn sources(&self) -> &Arc<SourceServer> {
        &self.sources
    }

    pub fn stats(&self) -> ExecutorStats {
        self.stats
    }

    /// From the next batch on, runs use `config` (its timeout, which the
    /// running harness takes with the batch). The target and the rest of
    /// what a harness starts with must be the same.
    pub fn set_config(&mut self, config: Arc<HarnessConfig>) {
        self.config = config;
    }

    /// From now on, batches stop early once `stop` is reached: `finish`
    /// then reports only the inputs that finished.
    pub fn stop_when(&mut self, stop: StopWhen) {
        self.stop = stop;
    }

    /// Starts the harness now (it starts lazily otherwise) and returns what
    /// the target file configured. Errors here are the target's own.
    pub fn start(&mut self) -> Result<&TargetInfo, HarnessError> {
        self.ensure_process()?;
        Ok(self.info.as_ref().expect("set by ensure_process"))
    }

    /// Stops the harness process, if one runs, and any spare.
    pub fn shutdown(&mut self) {
        self.spare = None;
        if let Some(process) = self.process.take() {
            process.shutdown();
        }
        self.forker.shutdown();
    }

    /// Runs every input of `batch` and calls `on_result` once per input, in order.
    pub fn run_batch(
        &mut self,
        batch: &Batch,
        on_result: impl FnMut(RunResult<'_>),
    ) -> Result<(), HarnessError> {
        self.submit(batch)?;
        self.finish(batch, on_result)
    }

    /// Queues `batch` for the harness without waiting for it, so the caller
    /// can work while PHP runs it. Every submitted batch must be passed to
    /// [`Executor::finish`], in the order submitted. At most two may be queued.
    pub fn submit(&mut self, batch: &Batch) -> Result<(), HarnessError> {
        assert!(self.queued.len() < 2, "at most two batches in flight");
        let mut sent = false;
        // Never ahead of a batch still to be sent (its harness died): the
        // harness runs requests in the order they arrive, and outcomes are
        // matched to batches in that order.
        let behind_unsent = self.queued.iter().any(|queued| !queued.sent);
        if !self.stop.reached()
            && !behind_unsent
            && (self.process.is_some() || self.queued.is_empty())
        {
            self.ensure_process()?;
            sent = self.send(batch, 0, batch.len(), false);
        }
        self.queued.push_back(Queued { sent });
        Ok(())
    }

    /// Waits for the oldest submitted batch and reports each of its inputs,
    /// in order: all of them, unless the `StopWhen` is reached first.
    pub fn finish(
        &mut self,
        batch: &Batch,
        mut on_result: impl FnMut(RunResult<'_>),
    ) -> Result<(), HarnessError> {
        let queued = self.queued.pop_front().expect("finish() follows submit()");
        let mut already_sent = queued.sent && self.process.is_some();
        let mut next = 0;
        let mut pace = Pace::Batch;
        // A death pinned on one input but not located: the input runs again,
        // streaming; if it does not die without a word again, this is reported.
        let mut pinned: Option<Crash> = None;
        // A crash that belongs to one of batch[next..=until], whose inputs
        // run again one at a time to find which.
        let mut suspect: Option<(Crash, usize)> = None;
        // An input that made one large allocation, to run again alone on a
        // harness that catches its stack.
        let mut catch_at: Option<usize> = None;
        while next < batch.len() {
            if suspect.as_ref().is_some_and(|(_, until)| next > *until) {
                suspect = None;
            }
            if self.stop.reached() {
                self.drop_process();
                self.emit_suspect(next, suspect, &mut on_result);
                return Ok(());
            }
            let (end, streaming) = match pace {
                Pace::Batch => (batch.len(), false),
                Pace::Alone { streaming } => (next + 1, streaming),
            };
            let catching = catch_at.take() == Some(next);
            if catching {
                self.start_catching()?;
            }
            if !already_sent {
                self.ensure_process()?;
                self.send(batch, next, end, streaming);
            }
            already_sent = false;
            let (reported, interrupted) =
                self.receive(next, end, streaming, &mut pinned, &mut on_result)?;
            next += reported;
            if catching {
                // The next input gets an ordinary harness.
                self.drop_process_and_queue();
            }
            let Some(interrupted) = interrupted else {
                continue;
            };
            self.drop_process_and_queue();
            match interrupted {
                Interrupted::Stopped => {
                    self.emit_suspect(next, suspect, &mut on_result);
                    return Ok(());
                }
                Interrupted::Died {
                    index,
                    crash,
                    retry_alone,
                    last,
                } => {
                    pinned = None;
                    if retry_alone {
                        // Memory grown over earlier runs ran out: a restart
                        // for memory growth, as in `replace_if_grown`.
                        self.retired_for_memory = true;
                        pace = Pace::Alone { streaming: false };
                        self.clear_earlier();
                        next = index;
                    } else if !catching && allocation::wants_stack(&crash) {
                        // Reported as it is if the re-run does not die.
                        self.clear_earlier();
                        pinned = Some(crash);
                        catch_at = Some(index);
                        pace = Pace::Alone { streaming: false };
                        next = index;
                    } else {
                        suspect = None;
                        self.emit_crash(index, crash, &last, &mut on_result);
                        next = index + 1;
                    }
                }
                Interrupted::Unexplained(crash) => {
                    let located =
                        !crash.problem.file.is_empty() || self.coverage(&[]).last_block().is_some();
                    if end - next > 1 {
                        self.clear_earlier();
                        pace = Pace::Alone {
                            streaming: !located,
                        };
                        suspect = Some((crash, end - 1));
                    } else if located || streaming {
                        pinned = None;
                        suspect = None;
                        self.emit_crash(next, crash, &[], &mut on_result);
                        next += 1;
                    } else {
                        self.clear_earlier();
                        suspect = Some((crash.clone(), next));
                        pinned = Some(crash);
                        pace = Pace::Alone { streaming: true };
                    }
                }
            }
        }
        self.replace_if_grown();
        Ok(())
    }

    /// Stopped while re-running inputs to find which one a crash belongs
    /// to: it goes to the first of them rather than being lost.
    fn emit_suspect(
        &mut self,
        next: usize,
        suspect: Option<(Crash, usize)>,
        on_result: &mut impl FnMut(RunResult<'_>),
    ) {
        if let Some((mut crash, _)) = suspect {
            crash.note = Some(
                "stopped before it could be re-run alone: it is the first input that had not finished when the harness died".into(),
            );
            self.clear_earlier();
            self.emit_crash(next, crash, &[], on_result);
        }
    }

    /// Writes the Run request for `batch[start..end]`; false if the
    /// harness is gone (the receive that follows then reports its death).
    fn send(&mut self, batch: &Batch, start: usize, end: usize, streaming: bool) -> bool {
        let stuck_ms = match self.stuck_limit() {
            Some(limit) if !streaming => limit.as_millis().max(1) as u64,
            _ => 0,
        };
        let Some(process) = self.process.as_mut() else {
            return false;
        };
        self.baseline_rss = process.rss_mb();
        let data = batch.slice(start, end, &mut self.ends);
        process
            .send(&Request::Run {
                streaming,
                timeout_ms: self.config.timeout.as_millis().max(1) as u64,
                stuck_ms,
                inputs: InputList {
                    data,
                    ends: &self.ends,
                },
            })
            .is_ok()
    }

    /// Between batches: a harness whose memory grew past half the limit
    /// across many runs is replaced before it runs out mid-run.
    fn replace_if_grown(&mut self) {
        let Some(process) = &self.process else {
            return;
        };
        let rss_kb = process.rss_kb();
        let rss = rss_kb >> 10;
        self.note_rss(rss);
        if rss > self.config.rss_limit_mb / 2 {
            self.retired_for_memory = true;
            self.drop_process_and_queue();
        }
    }

    fn note_rss(&mut self, rss: u64) {
        self.stats.rss_mb = rss;
        self.stats.peak_rss_mb = self.stats.peak_rss_mb.max(rss);
    }

    fn drop_process(&mut self) {
        if let Some(mut process) = self.process.take() {
            process.kill();
        }
    }

    /// The coverage of the run in progress: the pieces already folded, then `last`.
    fn coverage<'a>(&'a self, last: &'a [u8]) -> Coverage<'a> {
        Coverage {
            style: self.sources.style(),
            earlier: self.has_earlier.then_some(&self.earlier),
            last,
        }
    }

    /// Folds a piece of the coverage of the run in progress.
    fn add_earlier(&mut self, piece: &[u8]) {
        match self.sources.style() {
            StubStyle::Trace => {
                self.earlier.add_trace(piece);
                let keep = piece.len().min(CHUNK_TAIL_BYTES);
                self.chunk_tail
                    .extend_from_slice(&piece[piece.len() - keep..]);
                let excess = self.chunk_tail.len().saturating_sub(CHUNK_TAIL_BYTES);
                self.chunk_tail.drain(..excess);
            }
            StubStyle::EdgeMap => self.earlier.add_edge_counts(piece),
        }
        self.has_earlier = true;
    }

    fn clear_earlier(&mut self) {
        if self.has_earlier {
            self.earlier.clear();
            self.has_earlier = false;
            self.chunk_tail.clear();
        }
    }

    /// Reports a run the harness finished, crashed or not.
    fn emit_outcome(
        &mut self,
        index: usize,
        outcome: &protocol::Outcome<'_>,
        on_result: &mut impl FnMut(RunResult<'_>),
    ) {
        if let Some(crash) = triage::crash_from_status(outcome.status, outcome.problem.as_ref()) {
            self.emit_crash(index, crash, outcome.coverage, on_result);
            return;
        }
        self.stats.executions += 1;
        self.take_cmp_log(index);
        on_result(RunResult {
            index,
            crash: None,
            coverage: self.coverage(outcome.coverage),
            trace_hash: outcome.trace_hash,
            micros: outcome.micros,
            repeat: outcome.repeat && !self.has_earlier,
            cmp_log: &self.cmp_log,
        });
        self.clear_earlier();
    }

    /// Reports a crash, pointed at the target's code; `last` ends its coverage.
    fn emit_crash(
        &mut self,
        index: usize,
        mut crash: Crash,
        last: &[u8],
        on_result: &mut impl FnMut(RunResult<'_>),
    ) {
        self.stats.executions += 1;
        self.take_cmp_log(index);
        let coverage = self.coverage(last);
        triage::attribute(
            &mut crash,
            &self.sources,
            self.config.runtime.root(),
            coverage,
        );
        on_result(RunResult {
            index,
            crash: Some(crash),
            coverage,
            trace_hash: 0,
            micros: 0,
            repeat: false,
            cmp_log: &self.cmp_log,
        });
        self.clear_earlier();
    }

    /// Makes the comparison log of run `index` (if it sent one) the current one.
    fn take_cmp_log(&mut self, index: usize) {
        self.cmp_log.clear();
        while let Some((logged, _)) = self.cmp_logs.front() {
            if *logged > index {
                break;
            }
            let (logged, log) = self.cmp_logs.pop_front().expect("peeked");
            if logged == index {
                self.cmp_log = log;
            }
        }
    }

    /// Reports the outcomes of `batch[start..end]`, already sent, until all
    /// arrived or the harness stopped answering. Returns how many were
    /// reported. The outcome of a `pinned` input is replaced by its crash.
    fn receive(
        &mut self,
        start: usize,
        end: usize,
        streaming: bool,
        pinned: &mut Option<Crash>,
        on_result: &mut impl FnMut(RunResult<'_>),
    ) -> Result<(usize, Option<Interrupted>), HarnessError> {
        // On an error the process is dropped, and so killed.
        let mut process = self.process.take().expect("ensured by the caller");
        self.clear_earlier();
        self.cmp_logs.clear();
        let count = end - start;
        let mut reported = 0;
        let mut watch = Watch::new(
            &self.config,
            process.info.signals,
            Instant::now(),
            self.baseline_rss << 10,
        )
        .streaming(streaming)
        .stuck_limit(self.stuck_limit());
        let mut last_poll = Instant::now();
        let interrupted = loop {
            if reported == count {
                break None;
            }
            if self.stop.reached() {
                break Some(Interrupted::Stopped);
            }
            let until = watch.slice().map(|slice| Instant::now() + slice);
            match process.wait_frame(until).map_err(HarnessError::Pipe)? {
                Wait::Frame => {}
                Wait::Eof => {
                    let status = process.wait_exit(Duration::from_secs(2));
                    let stderr = process.stderr_tail();
                    let runtime = self.config.runtime.root();
                    let crash = if watch.timing_out() {
                        triage::timeout_death(
                            self.overdue_message(&watch),
                            stderr,
                            runtime,
                            &self.sources,
                        )
                    } else {
                        let message = triage::death_message(status, &stderr);
                        triage::unexplained_crash(CrashKind::HarnessDied, message, stderr, runtime)
                    };
                    break Some(Interrupted::Unexplained(crash));
                }
                Wait::Garbage(what) => {
                    process.kill();
                    break Some(Interrupted::Unexplained(triage::protocol_violation(
                        what,
                        process.stderr_tail(),
                    )));
                }
                Wait::Idle => {
                    last_poll = Instant::now();
                    match self.watch_silent(&mut process, &mut watch) {
                        Some(interrupted) => break Some(interrupted),
                        None => continue,
                    }
                }
            }
            let event = match protocol::decode_event(process.frame_bytes()) {
                Ok(event) => event,
                Err(err) => {
                    break Some(Interrupted::Unexplained(triage::protocol_violation(
                        format!("an event that does not decode ({err})"),
                        String::new(),
                    )));
                }
            };
            match event {
                Event::Outcomes { first, outcomes } => {
                    if first as usize != reported {
                        break Some(Interrupted::Unexplained(triage::protocol_violation(
                            format!("outcomes from input {first} where {reported} was next"),
                            String::new(),
                        )));
                    }
                    for outcome in &outcomes {
                        match pinned.take() {
                            Some(mut crash) => {
                                crash.note = Some(
                                    "it did not happen again when the input was re-run alone"
                                        .into(),
                                );
                                self.emit_crash(start + reported, crash, &[], on_result);
                            }
                            None => self.emit_outcome(start + reported, outcome, on_result),
                        }
                        reported += 1;
                    }
                    process.consume_frame();
                    watch.heard(Instant::now());
                }
                Event::CoverageChunk { index, coverage } => {
                    if index as usize == reported {
                        self.add_earlier(coverage);
                    }
                    process.consume_frame();
                    // Chunks do not end the silence, and may come faster
                    // than a poll slice: the watch must still see its slices.
                    if last_poll.elapsed() >= POLL_SLICE {
                        last_poll = Instant::now();
                        if let Some(interrupted) = self.watch_silent(&mut process, &mut watch) {
                            break Some(interrupted);
                        }
                    }
                }
                Event::CmpLog { index, log } => {
                    self.cmp_logs
                        .push_back((start + index as usize, log.to_vec()));
                    process.consume_frame();
                }
                Event::SourceRequest { path } => {
                    let path = path.to_vec();
                    process.answer_source_request(&path, &self.sources)?;
                    watch.heard(Instant::now());
                }
                Event::Stuck {
                    index,
                    micros,
                    problem,
                } => {
                    let (index, problem) = (index as usize, Problem::from_wire(&problem));
                    process.consume_frame();
                    watch.asked_stuck(Instant::now(), Duration::from_micros(micros));
                    if index != reported {
                        break Some(Interrupted::Unexplained(triage::protocol_violation(
                            format!("a stuck run {index} where {reported} was next"),
                            String::new(),
                        )));
                    }
                    if let Some(crash) = self.known_hang(problem) {
                        process.kill();
                        break Some(Interrupted::Died {
                            index: start + index,
                            crash,
                            retry_alone: false,
                            last: Vec::new(),
                        });
                    }
                }
                Event::Died {
                    index,
                    status,
                    problem,
                    coverage,
                } => {
                    let index = index as usize;
                    if index != reported {
                        break Some(Interrupted::Unexplained(triage::protocol_violation(
                            format!("a death on input {index} where {reported} was next"),
                            String::new(),
                        )));
                    }
                    let problem = Problem::from_wire(&problem);
                    let last = coverage.to_vec();
                    process.consume_frame();
                    // Its last word is said (PHP wrote any error to stderr
                    // before the shutdown function ran): what is left is
                    // the target's own shutdown, not worth a restart's wait.
                    process.wait_exit(DIED_EXIT_GRACE);
                    let stderr = process.stderr_tail();
                    // The pieces sent before count when telling a recursion apart.
                    let mut tail = std::mem::take(&mut self.chunk_tail);
                    tail.extend_from_slice(&last);
                    let crash = triage::crash_from_death(
                        status,
                        problem,
                        &tail,
                        stderr,
                        &self.sources,
                        &self.config,
                    );
                    // A run that started on a bloated harness may not be to blame.
                    let retry_alone = crash.kind == CrashKind::OutOfMemory
                        && count > 1
                        && self.baseline_rss > self.config.rss_limit_mb / 4;
                    break Some(Interrupted::Died {
                        index: start + index,
                        crash,
                        retry_alone,
                        last,
                    });
                }
                other => {
                    break Some(Interrupted::Unexplained(triage::protocol_violation(
                        format!("an unexpected event during a batch: {other:?}"),
                        String::new(),
                    )));
                }
            }
        };
        self.process = Some(process);
        Ok((reported, interrupted))
    }

    /// A poll slice passed without a word from the harness: notes its
    /// memory, kills a harness that grew too large, and takes the next step
    /// of the timeout or of the memory watch (see `watch.rs`).
    fn watch_silent(
        &mut self,
        process: &mut HarnessProcess,
        watch: &mut Watch,
    ) -> Option<Interrupted> {
        let limit_mb = self.config.rss_limit_mb;
        let rss_kb = process.rss_kb();
        let rss = rss_kb >> 10;
        self.note_rss(rss);
        // PHP's memory_limit (the same number) counts only its own
        // heap and reports where it ran out; the process as a whole
        // gets some slack before it is killed from here.
        if rss > limit_mb + rss_slack_mb(limit_mb) {
            process.kill();
            let message =
                format!("the harness's memory reached {rss} MB, over the limit of {limit_mb} MB");
            return Some(Interrupted::Unexplained(triage::unexplained_crash(
                CrashKind::OutOfMemory,
                message,
                process.stderr_tail(),
                self.config.runtime.root(),
            )));
        }
        let now = Instant::now();
        let actions = watch.poll(now, rss_kb, process.cpu_time());
        if actions.progress {
            process.signal(Signal::USR1);
        }
        if let Some(signal) = actions.signal {
            process.signal(signal);
        }
        if actions.kill {
            process.kill();
            return Some(Interrupted::Unexplained(triage::timeout_death(
                self.overdue_message(watch),
                process.stderr_tail(),
                self.config.runtime.root(),
                &self.sources,
            )));
        }
        None
    }

    fn overdue_message(&self, watch: &Watch) -> String {
        format!(
            "no answer for {:.1} s (timeout {:.1} s); the harness was stopped from outside",
            watch.silence(Instant::now()).as_secs_f64(),
            self.config.timeout.as_secs_f64()
        )
    }

    /// The target's configuration, once a harness has loaded it.
    pub fn target_info(&self) -> Option<&TargetInfo> {
        self.info.as_ref()
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// How far past the limit a harness's RSS may go before it is killed.
fn rss_slack_mb(limit_mb: u64) -> u64 {
    (limit_mb / 8).max(64)
}

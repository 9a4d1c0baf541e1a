//! Runs batches of inputs on a harness process, and keeps one alive.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use php_fuzz_coverage::EdgeCounter;
use php_fuzz_instrument::{BlockId, BlockKind, StubStyle};
use rustc_hash::FxHashMap;

use crate::process::{HarnessProcess, TargetInfo, Wait, describe_status};
use crate::protocol::{self, Event, InputList, Request, status};
use crate::sources::SourceServer;
use crate::{Batch, Crash, CrashKind, HarnessConfig, HarnessError, Problem};

/// After this many harness deaths while starting, give up.
const MAX_START_FAILURES: u32 = 5;
/// Extra time past the timeout before the engine kills a silent harness.
const KILL_GRACE: Duration = Duration::from_millis(1500);

/// The coverage of one run. A long run sends its coverage in pieces; the
/// earlier pieces arrive already folded into edge counts (see docs/protocol.md).
#[derive(Debug, Clone, Copy)]
pub struct Coverage<'a> {
    pub style: StubStyle,
    /// Edges of the pieces sent while the run was still going.
    pub earlier: Option<&'a EdgeCounter>,
    /// The rest: block ids (trace style) or edge/count pairs (edge-map style).
    pub last: &'a [u8],
}

impl Coverage<'_> {
    /// The last block that ran, in trace style.
    pub fn last_block(&self) -> Option<BlockId> {
        if self.style != StubStyle::Trace {
            return None;
        }
        if self.last.len() >= 4 {
            let tail = &self.last[self.last.len() - 4..];
            return Some(BlockId(u32::from_le_bytes(
                tail.try_into().expect("4 bytes"),
            )));
        }
        self.earlier.and_then(EdgeCounter::last_block).map(BlockId)
    }

    /// Adds this run's edges to `counter` (which the caller cleared).
    pub fn add_to(&self, counter: &mut EdgeCounter) {
        if let Some(earlier) = self.earlier {
            counter.merge(earlier);
        }
        match self.style {
            StubStyle::Trace => counter.add_trace(self.last),
            StubStyle::EdgeMap => counter.add_edge_counts(self.last),
        }
    }
}

/// One input's result.
#[derive(Debug)]
pub struct RunResult<'a> {
    /// Index of the input in the batch.
    pub index: usize,
    pub crash: Option<Crash>,
    pub coverage: Coverage<'a>,
    /// Hash of the run's trace (0 if none): equal hashes, equal coverage.
    pub trace_hash: u64,
    /// The run took a path already reported in full by this harness
    /// process, which then sent only the hash: `coverage` is empty.
    pub repeat: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ExecutorStats {
    pub executions: u64,
    pub harness_starts: u64,
    /// Restarts because memory grew across many runs; not bugs.
    pub memory_restarts: u64,
    /// Last measured RSS of the harness, in MiB.
    pub rss_mb: u64,
    pub peak_rss_mb: u64,
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
    /// Coverage pieces of the run in progress, folded.
    earlier: EdgeCounter,
    has_earlier: bool,
    ends: Vec<usize>,
}

/// A submitted batch.
struct Queued {
    /// Its Run request reached the current harness process.
    sent: bool,
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
    /// It died or went silent without saying which input was to blame.
    Unexplained { kind: CrashKind, message: String },
}

impl Executor {
    pub fn new(config: Arc<HarnessConfig>, sources: Arc<SourceServer>) -> Executor {
        Executor {
            config,
            sources,
            process: None,
            info: None,
            stats: ExecutorStats::default(),
            queued: VecDeque::new(),
            baseline_rss: 0,
            earlier: EdgeCounter::new(),
            has_earlier: false,
            ends: Vec::new(),
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

    /// Starts the harness now (it starts lazily otherwise) and returns what
    /// the target file configured. Errors here are the target's own.
    pub fn start(&mut self) -> Result<&TargetInfo, HarnessError> {
        self.ensure_process()?;
        Ok(self.info.as_ref().expect("set by ensure_process"))
    }

    fn ensure_process(&mut self) -> Result<(), HarnessError> {
        if self.process.is_some() {
            return Ok(());
        }
        let mut failures = 0;
        loop {
            match HarnessProcess::spawn(&self.config, &self.sources) {
                Ok(process) => {
                    self.stats.harness_starts += 1;
                    self.info = Some(process.info.clone());
                    self.process = Some(process);
                    return Ok(());
                }
                // The target loaded before: a harness dying at load is flaky, retry.
                Err(HarnessError::Load(failure))
                    if self.info.is_some() && failure.problem.is_none() =>
                {
                    failures += 1;
                    if failures >= MAX_START_FAILURES {
                        return Err(HarnessError::KeepsDying {
                            count: failures,
                            last: failure.summary,
                        });
                    }
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// Stops the harness process, if one runs.
    pub fn shutdown(&mut self) {
        if let Some(process) = self.process.take() {
            process.shutdown();
        }
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
        if self.process.is_some() || self.queued.is_empty() {
            self.ensure_process()?;
            sent = self.send(batch, 0, batch.len());
        }
        self.queued.push_back(Queued { sent });
        Ok(())
    }

    /// Waits for the oldest submitted batch and reports each of its inputs.
    pub fn finish(
        &mut self,
        batch: &Batch,
        mut on_result: impl FnMut(RunResult<'_>),
    ) -> Result<(), HarnessError> {
        let queued = self.queued.pop_front().expect("finish() follows submit()");
        let mut already_sent = queued.sent && self.process.is_some();
        let mut next = 0;
        // After a death nobody explained, inputs go one per round trip, so the
        // next death names its input.
        let mut one_at_a_time = false;
        while next < batch.len() {
            let end = if one_at_a_time { next + 1 } else { batch.len() };
            if !already_sent {
                self.ensure_process()?;
                self.send(batch, next, end);
            }
            already_sent = false;
            let (reported, interrupted) = self.receive(next, end, &mut on_result)?;
            next += reported;
            if interrupted.is_some() {
                // Whatever else was queued went down with the process.
                for other in &mut self.queued {
                    other.sent = false;
                }
            }
            match interrupted {
                None => {}
                Some(Interrupted::Died {
                    index,
                    crash,
                    retry_alone,
                    last,
                }) => {
                    self.drop_process();
                    if retry_alone {
                        one_at_a_time = true;
                        self.clear_earlier();
                        next = index;
                    } else {
                        self.stats.executions += 1;
                        self.emit_crash(index, crash, &last, &mut on_result);
                        next = index + 1;
                    }
                }
                Some(Interrupted::Unexplained { kind, message }) => {
                    let stderr = self
                        .process
                        .as_mut()
                        .map(|p| p.stderr_tail())
                        .unwrap_or_default();
                    self.drop_process();
                    if end - next == 1 {
                        let runtime = self.config.runtime.root().display().to_string();
                        let crash = match fatal_from_stderr(&stderr, &runtime) {
                            Some(fatal) if kind == CrashKind::HarnessDied => fatal,
                            _ => Crash {
                                kind,
                                problem: Problem {
                                    class: kind_class(kind).into(),
                                    message,
                                    ..Problem::default()
                                },
                                stderr: None,
                                note: None,
                            },
                        };
                        let crash = Crash {
                            stderr: Some(stderr).filter(|s| !s.trim().is_empty()),
                            ..crash
                        };
                        self.stats.executions += 1;
                        self.emit_crash(next, crash, &[], &mut on_result);
                        next += 1;
                    } else {
                        self.clear_earlier();
                        one_at_a_time = true;
                    }
                }
            }
        }
        if self.queued.is_empty()
            && let Some(process) = &self.process
        {
            let rss = process.rss_mb();
            self.note_rss(rss);
            if rss > self.config.rss_limit_mb / 2 {
                self.stats.memory_restarts += 1;
                self.drop_process();
            }
        }
        Ok(())
    }

    /// Writes the Run request for `batch[start..end]`; false if the
    /// harness is gone (the receive that follows then reports its death).
    fn send(&mut self, batch: &Batch, start: usize, end: usize) -> bool {
        let Some(process) = self.process.as_mut() else {
            return false;
        };
        self.baseline_rss = process.rss_mb();
        let data = batch.slice(start, end, &mut self.ends);
        process
            .send(&Request::Run {
                inputs: InputList {
                    data,
                    ends: &self.ends,
                },
            })
            .is_ok()
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

    fn emit_crash(
        &mut self,
        index: usize,
        mut crash: Crash,
        last: &[u8],
        on_result: &mut impl FnMut(RunResult<'_>),
    ) {
        let coverage = Coverage {
            style: self.sources.style(),
            earlier: self.has_earlier.then_some(&self.earlier),
            last,
        };
        hide_runtime(&mut crash.problem, self.config.runtime.root());
        locate(&self.sources, &mut crash, coverage);
        on_result(RunResult {
            index,
            crash: Some(crash),
            coverage,
            trace_hash: 0,
            repeat: false,
        });
        self.clear_earlier();
    }

    fn clear_earlier(&mut self) {
        if self.has_earlier {
            self.earlier.clear();
            self.has_earlier = false;
        }
    }

    /// Reports the outcomes of `batch[start..end]`, already sent, until all
    /// arrived or the harness stopped answering. Returns how many were reported.
    fn receive(
        &mut self,
        start: usize,
        end: usize,
        on_result: &mut impl FnMut(RunResult<'_>),
    ) -> Result<(usize, Option<Interrupted>), HarnessError> {
        let style = self.sources.style();
        let limit_mb = self.config.rss_limit_mb;
        let silence_limit = self.config.timeout + KILL_GRACE + self.config.flush_interval;
        let mut process = self.process.take().expect("ensured by the caller");
        let baseline_rss = self.baseline_rss;
        self.clear_earlier();

        let count = end - start;
        let mut reported = 0;
        let mut deadline = Instant::now() + silence_limit;
        let result = loop {
            if reported == count {
                break None;
            }
            let wait = process
                .wait_frame(Some(deadline))
                .map_err(HarnessError::Pipe)?;
            match wait {
                Wait::Frame => {}
                Wait::Eof => {
                    let status = process.wait_exit(Duration::from_secs(2));
                    let stderr = process.stderr_tail();
                    let message = match php_fatal_line(&stderr) {
                        Some(line) => {
                            format!("the harness died ({}): {line}", describe_status(status))
                        }
                        None => format!("the harness died ({})", describe_status(status)),
                    };
                    break Some(Interrupted::Unexplained {
                        kind: CrashKind::HarnessDied,
                        message,
                    });
                }
                Wait::Idle => {
                    let rss = process.rss_mb();
                    self.note_rss(rss);
                    // PHP's memory_limit (the same number) counts only its own
                    // heap and reports where it ran out; the process as a whole
                    // gets some slack before it is killed from here.
                    if rss > limit_mb + rss_slack_mb(limit_mb) {
                        process.kill();
                        let message = format!(
                            "the harness's memory reached {rss} MB, over the limit of {limit_mb} MB"
                        );
                        break Some(Interrupted::Unexplained {
                            kind: CrashKind::OutOfMemory,
                            message,
                        });
                    }
                    if process.info.signals {
                        // A poll slice (50 ms) of silence means a long run, piling
                        // up trace (about a million blocks, 16 MB of PHP array,
                        // per slice): have what it has sent over.
                        process.request_coverage();
                    }
                    if Instant::now() >= deadline {
                        process.kill();
                        let message = format!(
                            "no answer within {:.1} s (timeout {:.1} s); the harness was killed",
                            silence_limit.as_secs_f64(),
                            self.config.timeout.as_secs_f64()
                        );
                        break Some(Interrupted::Unexplained {
                            kind: CrashKind::Timeout,
                            message,
                        });
                    }
                    continue;
                }
            }
            let event = protocol::decode_event(process.frame_bytes())
                .map_err(|e| HarnessError::Protocol(e.to_string()))?;
            match event {
                Event::Outcomes { first, outcomes } => {
                    if first as usize != reported {
                        return Err(HarnessError::Protocol(format!(
                            "outcomes start at {first}, expected {reported}"
                        )));
                    }
                    for outcome in &outcomes {
                        let index = start + reported;
                        let crash = crash_from_status(outcome.status, outcome.problem.as_ref());
                        let earlier = self.has_earlier.then_some(&self.earlier);
                        let coverage = Coverage {
                            style,
                            earlier,
                            last: outcome.coverage,
                        };
                        self.stats.executions += 1;
                        let (trace_hash, repeat) =
                            (outcome.trace_hash, outcome.repeat && !self.has_earlier);
                        match crash {
                            None => on_result(RunResult {
                                index,
                                crash: None,
                                coverage,
                                trace_hash,
                                repeat,
                            }),
                            Some(mut crash) => {
                                hide_runtime(&mut crash.problem, self.config.runtime.root());
                                locate(&self.sources, &mut crash, coverage);
                                on_result(RunResult {
                                    index,
                                    crash: Some(crash),
                                    coverage,
                                    trace_hash: 0,
                                    repeat: false,
                                });
                            }
                        }
                        if self.has_earlier {
                            self.earlier.clear();
                            self.has_earlier = false;
                        }
                        reported += 1;
                    }
                    process.consume_frame();
                    deadline = Instant::now() + silence_limit;
                }
                Event::CoverageChunk { index, coverage } => {
                    if index as usize == reported {
                        match style {
                            StubStyle::Trace => self.earlier.add_trace(coverage),
                            StubStyle::EdgeMap => self.earlier.add_edge_counts(coverage),
                        }
                        self.has_earlier = true;
                    }
                    process.consume_frame();
                }
                Event::SourceRequest { path } => {
                    let path = Path::new(OsStr::from_bytes(path)).to_path_buf();
                    process.consume_frame();
                    let code = self.sources.serve(&path)?;
                    process
                        .send(&Request::Source {
                            code: code.as_deref(),
                        })
                        .map_err(HarnessError::Pipe)?;
                    deadline = Instant::now() + silence_limit;
                }
                Event::Died {
                    index,
                    status: died_status,
                    problem,
                    coverage,
                } => {
                    let index = index as usize;
                    if index != reported {
                        return Err(HarnessError::Protocol(format!(
                            "died on input {index}, expected {reported}"
                        )));
                    }
                    let problem = Problem::from_wire(&problem);
                    let last = coverage.to_vec();
                    process.consume_frame();
                    process.wait_exit(Duration::from_secs(2));
                    let stderr = process.stderr_tail();
                    let mut kind = kind_of(died_status);
                    let mut note = None;
                    if kind == CrashKind::OutOfMemory
                        && (stack_page_allocation(&problem.message)
                            || looks_like_recursion(
                                &self.sources,
                                Coverage {
                                    style,
                                    earlier: None,
                                    last: &last,
                                },
                            ))
                    {
                        kind = CrashKind::StackOverflow;
                        note = Some(
                            "memory ran out deep inside repeated calls: unbounded recursion"
                                .to_string(),
                        );
                    }
                    // A run that started on a bloated harness may not be to blame.
                    let retry_alone =
                        kind == CrashKind::OutOfMemory && count > 1 && baseline_rss > limit_mb / 4;
                    let crash = Crash {
                        kind,
                        problem,
                        stderr: (matches!(
                            kind,
                            CrashKind::Fatal | CrashKind::OutOfMemory | CrashKind::StackOverflow
                        ) && !stderr.trim().is_empty())
                        .then_some(stderr),
                        note,
                    };
                    break Some(Interrupted::Died {
                        index: start + index,
                        crash,
                        retry_alone,
                        last,
                    });
                }
                other => {
                    return Err(HarnessError::Protocol(format!(
                        "unexpected event during a batch: {other:?}"
                    )));
                }
            }
        };
        self.process = Some(process);
        Ok((reported, result))
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

fn crash_from_status(code: u8, problem: Option<&protocol::Problem<'_>>) -> Option<Crash> {
    if code == status::OK {
        return None;
    }
    Some(Crash {
        kind: kind_of(code),
        problem: problem.map(Problem::from_wire).unwrap_or_default(),
        stderr: None,
        note: None,
    })
}

fn kind_of(code: u8) -> CrashKind {
    match code {
        status::EXCEPTION => CrashKind::Exception,
        status::WARNING => CrashKind::Warning,
        status::TIMEOUT => CrashKind::Timeout,
        status::EXIT => CrashKind::Exit,
        status::OUT_OF_MEMORY => CrashKind::OutOfMemory,
        _ => CrashKind::Fatal,
    }
}

fn kind_class(kind: CrashKind) -> &'static str {
    match kind {
        CrashKind::Timeout => "Timeout",
        CrashKind::OutOfMemory => "OutOfMemory",
        _ => "HarnessDied",
    }
}

/// Takes php-fuzz's own runtime out of a problem's location and stack: a
/// crash inside `traceBlock()` (memory running out there, say) belongs to the
/// code that called it.
fn hide_runtime(problem: &mut Problem, runtime: &Path) {
    let ours = |file: &str| !file.is_empty() && Path::new(file).starts_with(runtime);
    let before = problem.frames.len();
    problem.frames.retain(|f| !ours(&f.file));
    if ours(&problem.file) {
        match problem.frames.first() {
            Some(frame) => (problem.file, problem.line) = (frame.file.clone(), frame.line),
            None => (problem.file, problem.line) = (String::new(), 0),
        }
    }
    if problem.frames.len() != before {
        problem.trace = problem
            .frames
            .iter()
            .enumerate()
            .map(|(n, f)| format!("#{n} {} at {}:{}\n", f.function, f.file, f.line))
            .collect();
    }
}

/// Fills in what PHP could not tell: the location of a crash without one
/// (the last block that ran), and a first frame naming the function.
fn locate(sources: &SourceServer, crash: &mut Crash, coverage: Coverage<'_>) {
    if !crash.problem.file.is_empty() && !crash.problem.frames.is_empty() {
        return;
    }
    if crash.problem.file.is_empty() {
        let Some(location) = coverage.last_block().and_then(|id| sources.locate(id)) else {
            return;
        };
        crash.problem.file = location.path.display().to_string();
        crash.problem.line = location.block.line;
    }
    if crash.problem.frames.is_empty() {
        let (file, line) = (crash.problem.file.clone(), crash.problem.line);
        let function = sources
            .function_at(Path::new(&file), line)
            .unwrap_or_else(|| "{main}".into());
        if crash.problem.trace.is_empty() {
            crash.problem.trace = format!("#0 {function} at {file}:{line}\n");
        }
        crash.problem.frames.push(crate::Frame {
            file,
            line,
            function,
        });
    }
}

/// How far past the limit a harness's RSS may go before it is killed.
fn rss_slack_mb(limit_mb: u64) -> u64 {
    (limit_mb / 8).max(64)
}

/// PHP grows its VM stack in pages of 256 KiB: failing to get one more is
/// a call stack too deep.
fn stack_page_allocation(message: &str) -> bool {
    message.contains("(tried to allocate 262144 bytes)")
}

/// A crash from the `Fatal error: … in FILE on line N` a dying PHP printed,
/// for deaths the harness could not report itself.
fn fatal_from_stderr(stderr: &str, runtime_dir: &str) -> Option<Crash> {
    stderr.lines().find_map(|line| {
        let text = &line[line.find("Fatal error:")? + "Fatal error:".len()..];
        let (rest, line_no) = text.rsplit_once(" on line ")?;
        let (message, file) = rest.rsplit_once(" in ")?;
        let file = file.trim();
        if file.starts_with(runtime_dir) {
            return None;
        }
        let message = message.trim().to_string();
        let (kind, note) = if message.starts_with("Allowed memory size")
            || message.starts_with("Out of memory")
        {
            if stack_page_allocation(&message) {
                (
                    CrashKind::StackOverflow,
                    Some("memory ran out growing the call stack: unbounded recursion".to_string()),
                )
            } else {
                (CrashKind::OutOfMemory, None)
            }
        } else if message.starts_with("Maximum execution time") {
            (CrashKind::Timeout, None)
        } else {
            (CrashKind::Fatal, None)
        };
        Some(Crash {
            kind,
            problem: Problem {
                class: "Fatal error".into(),
                message,
                file: file.to_string(),
                line: line_no.trim().parse().ok()?,
                ..Problem::default()
            },
            stderr: None,
            note,
        })
    })
}

/// Memory ran out while the same function kept being entered: recursion.
fn looks_like_recursion(sources: &SourceServer, coverage: Coverage<'_>) -> bool {
    if coverage.style != StubStyle::Trace {
        return false;
    }
    let mut entries: FxHashMap<u32, u32> = FxHashMap::default();
    let mut total = 0u32;
    let mut kinds: FxHashMap<u32, bool> = FxHashMap::default();
    for id in coverage.last.chunks_exact(4) {
        let id = u32::from_le_bytes(id.try_into().expect("4 bytes"));
        total += 1;
        let is_entry = *kinds.entry(id).or_insert_with(|| {
            sources.locate(BlockId(id)).is_some_and(|l| {
                matches!(
                    l.block.kind,
                    BlockKind::FunctionEntry | BlockKind::MethodEntry | BlockKind::ClosureEntry
                )
            })
        });
        if is_entry {
            *entries.entry(id).or_default() += 1;
        }
    }
    let most = entries.values().copied().max().unwrap_or(0);
    let all_entries: u32 = entries.values().sum();
    most >= 64 && all_entries * 4 >= total
}

/// The `PHP Fatal error: …` line a dying PHP printed, if any.
fn php_fatal_line(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .rev()
        .find(|l| l.contains("Fatal error") || l.contains("Segmentation fault"))
        .map(|l| l.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Frame;

    #[test]
    fn a_fatal_error_printed_by_a_dying_php_becomes_a_located_crash() {
        let stderr = "PHP Notice: something\nPHP Fatal error:  Allowed memory size of 268435456 bytes exhausted (tried to allocate 262144 bytes) in /lib/Parser.php on line 42\nFatal error: Allowed memory size of 1 bytes exhausted in /tmp/rt/Harness.php on line 9\n";
        let crash = fatal_from_stderr(stderr, "/tmp/rt").unwrap();
        assert_eq!(
            crash.kind,
            CrashKind::StackOverflow,
            "a VM stack page could not be had"
        );
        assert_eq!(
            (crash.problem.file.as_str(), crash.problem.line),
            ("/lib/Parser.php", 42)
        );
        let plain = fatal_from_stderr(
            "Fatal error: Cannot redeclare f() in /a b/in x.php on line 3",
            "/tmp/rt",
        )
        .unwrap();
        assert_eq!(plain.kind, CrashKind::Fatal);
        assert_eq!(plain.problem.message, "Cannot redeclare f()");
        assert_eq!(plain.problem.file, "/a b/in x.php");
        assert!(fatal_from_stderr("Segmentation fault", "/tmp/rt").is_none());
        assert!(
            fatal_from_stderr("Fatal error: x in /tmp/rt/Wire.php on line 1", "/tmp/rt").is_none()
        );
    }

    #[test]
    fn the_runtime_is_hidden_from_locations_and_traces() {
        let frame = |file: &str, line, function: &str| Frame {
            file: file.into(),
            line,
            function: function.into(),
        };
        let mut problem = Problem {
            class: "Fatal error".into(),
            message: "Allowed memory size".into(),
            file: "/tmp/rt/FuzzingContext.php".into(),
            line: 65,
            trace: String::new(),
            frames: vec![
                frame("/tmp/rt/FuzzingContext.php", 65, "PhpFuzz\\traceBlock()"),
                frame("/lib/P.php", 7, "P->f()"),
            ],
        };
        hide_runtime(&mut problem, Path::new("/tmp/rt"));
        assert_eq!((problem.file.as_str(), problem.line), ("/lib/P.php", 7));
        assert_eq!(problem.frames.len(), 1);
        assert_eq!(problem.trace, "#0 P->f() at /lib/P.php:7\n");
    }
}

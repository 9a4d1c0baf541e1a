//! One `php` harness process and the two pipes to it.

mod handle;
mod stderr;
mod walled;

pub use walled::output_walled;

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use command_fds::{CommandFdExt, FdMapping};
use php_fuzz_detectors::DetectorSet;
use rustix::event::{PollFd, PollFlags, poll};
use rustix::process::{Pid, Resource, Signal, getrlimit, kill_process, kill_process_group};

pub(crate) use handle::{Handle, describe_status};
pub(crate) use stderr::StderrTail;

use crate::groups::LiveGroup;
use crate::protocol::{self, Event, HEADER_BYTES, Header, MAGIC, Request};
use crate::sources::SourceServer;
use crate::{HarnessConfig, HarnessError, LoadFailure, Problem, SandboxLayers};

/// Pipe capacity asked for; Linux caps it at /proc/sys/fs/pipe-max-size.
const PIPE_BYTES: usize = 1 << 20;
/// How often a wait for the harness wakes up to check its memory.
pub(crate) const POLL_SLICE: Duration = Duration::from_millis(50);
/// A read buffer grown past this for one large frame shrinks back afterwards.
const KEPT_BUFFER_BYTES: usize = 16 << 20;

/// The descriptors the pipes get in the harness: high ones, out of the way
/// of a target that opens `php://fd/3`, 4, 5… (PHP refuses a descriptor at
/// or above the open-files limit, so they stay below it).
fn pipe_descriptors() -> (i32, i32) {
    let limit = getrlimit(Resource::Nofile)
        .current
        .unwrap_or(1024)
        .min(1024);
    if limit < 128 {
        return (3, 4);
    }
    (limit as i32 - 2, limit as i32 - 1)
}

/// What the harness said when it finished loading the target.
#[derive(Debug, Clone)]
pub struct TargetInfo {
    pub php_version: String,
    /// The harness handles SIGALRM/SIGUSR1: in-harness timeouts with a stack trace.
    pub signals: bool,
    /// From `$config->setMaxLen()`.
    pub max_len: Option<usize>,
    /// From `$config->addDictionary()`, absolute paths.
    pub dictionaries: Vec<std::path::PathBuf>,
    pub allowed_exceptions: Vec<String>,
    /// Warnings, notices and deprecations raised while the target file loaded.
    pub load_warnings: Vec<Problem>,
    /// Coverage of loading the target file (top-level code of what it includes).
    pub load_coverage: Vec<u8>,
    /// From `$config->setGrammar()`: the grammar for grammar-aware mutation.
    pub grammar: Option<String>,
    /// `setCustomMutator()` / `setCustomCrossOver()` were called.
    pub custom: CustomHooks,
    /// The bug detectors on: `--detectors`, else `$config->setDetectors()`.
    pub detectors: DetectorSet,
    /// Where runs may write (empty with `--allow-side-effects`).
    pub writable: Vec<std::path::PathBuf>,
    /// A typed target's parameter schema, JSON (docs/autofuzz.md); `None`
    /// for a target that takes bytes.
    pub arguments: Option<Vec<u8>>,
    /// The layers of the wall around the harness (docs/sandbox.md).
    pub sandbox: php_fuzz_sandbox::Layers,
}

/// Which custom mutation hooks the target file set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CustomHooks {
    pub mutator: bool,
    pub crossover: bool,
}

impl CustomHooks {
    pub fn any(self) -> bool {
        self.mutator || self.crossover
    }
}

/// The result of waiting for the next frame.
pub(crate) enum Wait {
    Frame,
    /// The poll slice passed without a frame; the caller may check limits.
    Idle,
    Eof,
    /// Bytes that are not a frame of the harness: something else wrote
    /// into the event pipe. The process cannot be trusted any more.
    Garbage(String),
}

pub(crate) struct HarnessProcess {
    handle: Handle,
    pid: Pid,
    requests: File,
    events: File,
    request_buf: Vec<u8>,
    /// Sequence numbers of the next request sent and the next event expected.
    requests_sent: u32,
    events_seen: u32,
    /// The largest frame believed: no payload can outgrow the harness's memory limit.
    max_frame: usize,
    event_fd: i32,
    /// Request bytes not yet taken by the pipe: requests are written without
    /// blocking, so a queued batch never waits for the harness to read it.
    outbox: Vec<u8>,
    outbox_sent: usize,
    /// Bytes read from the events pipe; `frame` is the current frame's payload range.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    pub(crate) frame: (usize, usize),
    stderr: StderrTail,
    pub(crate) info: TargetInfo,
    status: Option<ExitStatus>,
    /// Listed until the harness is reaped (fields drop after `Drop::drop`).
    _group: LiveGroup,
}

impl HarnessProcess {
    /// Starts `php`, loads the target and waits until it is ready to run inputs.
    pub(crate) fn spawn(
        config: &HarnessConfig,
        sources: &SourceServer,
    ) -> Result<HarnessProcess, HarnessError> {
        let pipes = Pipes::new().map_err(HarnessError::Spawn)?;
        let (request_fd, event_fd) = pipe_descriptors();
        let mut command = Command::new(&config.php.path);
        command
            .arg("-d")
            .arg(format!("memory_limit={}M", config.php_memory_limit_mb()))
            .args([
                "-d",
                "display_errors=stderr",
                "-d",
                "log_errors=0",
                "-d",
                "html_errors=0",
            ])
            .args(["-d", "error_reporting=-1", "-d", "max_execution_time=0"])
            // Opcache (not its JIT) keeps the instrumented code compiled and
            // optimised; --ini opcache.enable_cli=0 turns it off.
            .args(["-d", "opcache.enable_cli=1"])
            // Temporary files go to the scratch folder, where runs may write.
            .arg("-d")
            .arg(format!(
                "sys_temp_dir={}",
                config.runtime.scratch().display()
            ))
            .env("TMPDIR", config.runtime.scratch())
            // Opcache's lock file too (its default is /tmp, outside the wall).
            .arg("-d")
            .arg(format!(
                "opcache.lockfile_path={}",
                config.runtime.scratch().display()
            ));
        for (key, value) in &config.ini {
            command.arg("-d").arg(format!("{key}={value}"));
        }
        // Standard input reads as empty and takes writes, as a terminal would.
        let stdin = File::options()
            .read(true)
            .write(true)
            .open("/dev/null")
            .map_err(HarnessError::Spawn)?;
        command
            .arg(config.runtime.entry_script())
            .arg(request_fd.to_string())
            .arg(event_fd.to_string())
            .stdin(stdin)
            .stdout(if config.forward_output {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .stderr(Stdio::piped())
            // Ctrl-C reaches the engine only; the engine stops the harness itself.
            .process_group(0);
        if let Some(dir) = config.target.parent().filter(|d| !d.as_os_str().is_empty()) {
            command.current_dir(dir);
        }
        command
            .fd_mappings(vec![
                FdMapping {
                    parent_fd: pipes.child_requests,
                    child_fd: request_fd,
                },
                FdMapping {
                    parent_fd: pipes.child_events,
                    child_fd: event_fd,
                },
            ])
            .map_err(|err| HarnessError::Spawn(io::Error::other(err)))?;
        let receipt = walled::raise(config, &mut command)?;
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(err) => return Err(walled::spawn_error(config, receipt, err)),
        };
        // The child holds its own copies; drop ours so EOF is seen when it dies.
        drop(command);
        let sandbox = match walled::layers(config, receipt) {
            Ok(layers) => layers,
            Err(err) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(err);
            }
        };

        let stderr = StderrTail::drain(child.stderr.take());
        let pid = Pid::from_child(&child);
        let mut process = HarnessProcess::new(
            Handle::Spawned(child),
            pid,
            (pipes.requests, pipes.events),
            stderr,
            event_fd,
            config,
        );
        let target = config.target.as_os_str().as_bytes();
        let detectors = config.detectors.map(|set| {
            set.names()
                .into_iter()
                .map(str::as_bytes)
                .collect::<Vec<_>>()
        });
        let init = Request::Init {
            target,
            style: style_code(sources.style()),
            timeout_ms: config.timeout.as_millis().max(1) as u64,
            flush_interval_ms: config.flush_interval.as_millis() as u64,
            dedup_traces: config.dedup_traces,
            max_stack_depth: config.max_stack_depth,
            catch_fatal_stack: config.catch_fatal_stack,
            log_comparisons: sources.logs_comparisons(),
            detectors,
            allow_side_effects: config.allow_side_effects,
            scratch_dir: config.runtime.scratch().as_os_str().as_bytes(),
        };
        if process
            .send(&init)
            .and_then(|()| process.flush_outbox())
            .is_err()
        {
            return Err(process.load_failure_from_death(config));
        }
        process.wait_ready(config, sources)?;
        process.info.sandbox = sandbox;
        if walled::learn_allowed_writes(config, &process.info.writable) {
            // Its wall is too narrow for the target's allowWrites(): the
            // next harness's is not.
            process.kill();
            return HarnessProcess::spawn(config, sources);
        }
        // What the detectors' findings and words depend on.
        sources.enable_detector_words(process.info.detectors);
        Ok(process)
    }

    /// A process whose pipes are `requests` and `events`: one this engine
    /// started, or one its fork server forked.
    pub(crate) fn new(
        handle: Handle,
        pid: Pid,
        (requests, events): (OwnedFd, OwnedFd),
        stderr: StderrTail,
        event_fd: i32,
        config: &HarnessConfig,
    ) -> HarnessProcess {
        HarnessProcess {
            handle,
            pid,
            _group: LiveGroup::register(pid),
            requests: File::from(requests),
            events: File::from(events),
            request_buf: Vec::new(),
            requests_sent: 0,
            events_seen: 0,
            max_frame: (config.rss_limit_mb.max(64) as usize) << 20,
            event_fd,
            outbox: Vec::new(),
            outbox_sent: 0,
            buf: vec![0; 64 * 1024],
            start: 0,
            end: 0,
            frame: (0, 0),
            stderr,
            info: TargetInfo {
                php_version: String::new(),
                signals: false,
                max_len: None,
                dictionaries: Vec::new(),
                allowed_exceptions: Vec::new(),
                load_warnings: Vec::new(),
                load_coverage: Vec::new(),
                grammar: None,
                custom: CustomHooks::default(),
                detectors: DetectorSet::NONE,
                writable: Vec::new(),
                arguments: None,
                sandbox: php_fuzz_sandbox::Layers::off(),
            },
            status: None,
        }
    }

    fn wait_ready(
        &mut self,
        config: &HarnessConfig,
        sources: &SourceServer,
    ) -> Result<(), HarnessError> {
        let mut deadline = Instant::now() + config.load_timeout;
        loop {
            match self
                .wait_frame(Some(deadline))
                .map_err(HarnessError::Pipe)?
            {
                Wait::Idle => {
                    if Instant::now() >= deadline {
                        self.kill();
                        return Err(HarnessError::Load(Box::new(LoadFailure {
                            target: config.target.clone(),
                            problem: None,
                            summary: format!(
                                "loading the target did not finish within {} s",
                                config.load_timeout.as_secs()
                            ),
                            stderr: self.stderr_tail(),
                        })));
                    }
                    continue;
                }
                Wait::Eof => return Err(self.load_failure_from_death(config)),
                Wait::Garbage(what) => {
                    self.kill();
                    return Err(HarnessError::Load(Box::new(LoadFailure {
                        target: config.target.clone(),
                        problem: None,
                        summary: format!("while loading the target, {what}"),
                        stderr: self.stderr_tail(),
                    })));
                }
                Wait::Frame => {}
            }
            let (start, end) = self.frame;
            let event = protocol::decode_event(&self.buf[start..end])
                .map_err(|e| HarnessError::Protocol(e.to_string()))?;
            match event {
                Event::SourceRequest { path } => {
                    let path = Path::new(OsStr::from_bytes(path)).to_path_buf();
                    self.consume_frame();
                    let code = sources.serve(&path)?;
                    self.send(&Request::Source {
                        code: code.as_deref(),
                    })
                    .and_then(|()| self.flush_outbox())
                    .map_err(HarnessError::Pipe)?;
                    deadline = Instant::now() + config.load_timeout;
                }
                Event::Ready {
                    php_version,
                    signals,
                    max_len,
                    dictionaries,
                    allowed_exceptions,
                    load_warnings,
                    coverage,
                    grammar,
                    custom_mutator,
                    custom_crossover,
                    detectors,
                    writable,
                    arguments,
                } => {
                    self.info = TargetInfo {
                        php_version: String::from_utf8_lossy(php_version).into_owned(),
                        signals,
                        max_len: (max_len > 0).then_some(max_len as usize),
                        dictionaries: dictionaries
                            .iter()
                            .map(|d| Path::new(OsStr::from_bytes(d)).to_path_buf())
                            .collect(),
                        allowed_exceptions: allowed_exceptions
                            .iter()
                            .map(|c| String::from_utf8_lossy(c).into_owned())
                            .collect(),
                        load_warnings: load_warnings.iter().map(Problem::from_wire).collect(),
                        load_coverage: coverage.to_vec(),
                        grammar: (!grammar.is_empty())
                            .then(|| String::from_utf8_lossy(grammar).into_owned()),
                        custom: CustomHooks {
                            mutator: custom_mutator,
                            crossover: custom_crossover,
                        },
                        detectors: DetectorSet::from_names(
                            detectors
                                .iter()
                                .map(|d| std::str::from_utf8(d).unwrap_or("")),
                        )
                        .map_err(|e| HarnessError::Protocol(e.to_string()))?,
                        writable: writable
                            .iter()
                            .map(|w| Path::new(OsStr::from_bytes(w)).to_path_buf())
                            .collect(),
                        arguments: (!arguments.is_empty()).then(|| arguments.to_vec()),
                        sandbox: std::mem::replace(&mut self.info.sandbox, SandboxLayers::off()),
                    };
                    self.consume_frame();
                    return Ok(());
                }
                Event::LoadFailed { problem } => {
                    let problem = Problem::from_wire(&problem);
                    self.consume_frame();
                    self.status = self.handle.reap(self.pid);
                    return Err(HarnessError::Load(Box::new(LoadFailure {
                        target: config.target.clone(),
                        summary: problem.headline(),
                        problem: Some(problem),
                        stderr: self.stderr_tail(),
                    })));
                }
                other => {
                    return Err(HarnessError::Protocol(format!(
                        "unexpected event while loading: {other:?}"
                    )));
                }
            }
        }
    }

    fn load_failure_from_death(&mut self, config: &HarnessConfig) -> HarnessError {
        let status = self.wait_exit(Duration::from_secs(5));
        let stderr = self.stderr_tail();
        let summary = match stderr
            .lines()
            .rev()
            .find(|l| l.contains("error:") || l.contains("Error"))
        {
            Some(line) => line.trim().to_string(),
            None => format!(
                "the harness exited while loading the target ({})",
                describe_status(status)
            ),
        };
        HarnessError::Load(Box::new(LoadFailure {
            target: config.target.clone(),
            problem: None,
            summary,
            stderr,
        }))
    }

    /// Answers the current frame, a `SourceRequest` for `path`, with the
    /// file's instrumented code (or `None`: include it as it is).
    pub(crate) fn answer_source_request(
        &mut self,
        path: &[u8],
        sources: &SourceServer,
    ) -> Result<(), HarnessError> {
        let path = Path::new(OsStr::from_bytes(path)).to_path_buf();
        self.consume_frame();
        let code = sources.serve(&path)?;
        self.send(&Request::Source {
            code: code.as_deref(),
        })
        .map_err(HarnessError::Pipe)
    }

    /// Queues a request and writes as much of it as the pipe takes now; the
    /// rest goes out while waiting for events.
    pub(crate) fn send(&mut self, request: &Request<'_>) -> io::Result<()> {
        protocol::encode_request(&mut self.request_buf, self.requests_sent, request)?;
        self.requests_sent = self.requests_sent.wrapping_add(1);
        if self.outbox_sent == self.outbox.len() {
            self.outbox.clear();
            self.outbox_sent = 0;
        }
        self.outbox.extend_from_slice(&self.request_buf);
        self.pump_outbox()
    }

    fn pump_outbox(&mut self) -> io::Result<()> {
        while self.outbox_sent < self.outbox.len() {
            match self.requests.write(&self.outbox[self.outbox_sent..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.outbox_sent += n,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }

    /// Blocks until every queued request is in the pipe (used while loading,
    /// where the harness reads each request before doing anything else).
    pub(crate) fn flush_outbox(&mut self) -> io::Result<()> {
        while self.outbox_sent < self.outbox.len() {
            self.pump_outbox()?;
            if self.outbox_sent < self.outbox.len() {
                let mut fds = [PollFd::new(&self.requests, PollFlags::OUT)];
                let timeout = rustix::event::Timespec::try_from(POLL_SLICE).unwrap_or_default();
                match poll(&mut fds, Some(&timeout)) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(err) => return Err(err.into()),
                }
            }
        }
        Ok(())
    }

    /// Waits for the next frame, at most one poll slice or until `deadline`.
    /// On `Wait::Frame`, `self.frame` is the payload; call `consume_frame()` after use.
    pub(crate) fn wait_frame(&mut self, deadline: Option<Instant>) -> io::Result<Wait> {
        loop {
            let available = self.end - self.start;
            if available >= 4 && self.header_word(0) != MAGIC {
                return Ok(Wait::Garbage(self.describe_garbage()));
            }
            if available >= HEADER_BYTES {
                let header = Header::parse(
                    self.buf[self.start..self.start + HEADER_BYTES]
                        .try_into()
                        .expect("a header"),
                );
                if header.seq != self.events_seen {
                    return Ok(Wait::Garbage(format!(
                        "the event pipe skipped from frame {} to frame {}: a second writer (a process the target forked?)",
                        self.events_seen, header.seq
                    )));
                }
                let len = header.len as usize;
                if len > self.max_frame {
                    return Ok(Wait::Garbage(format!(
                        "a frame of {len} bytes announced, more than the harness's memory limit"
                    )));
                }
                let total = HEADER_BYTES + len;
                if available >= total {
                    self.frame = (self.start + HEADER_BYTES, self.start + total);
                    self.events_seen = self.events_seen.wrapping_add(1);
                    return Ok(Wait::Frame);
                }
                if self.buf.len() - self.start < total {
                    self.buf.copy_within(self.start..self.end, 0);
                    self.end -= self.start;
                    self.start = 0;
                    if self.buf.len() < total {
                        self.buf.resize(total.next_power_of_two(), 0);
                    }
                }
            }
            if self.end == self.buf.len() {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
                if self.end == self.buf.len() {
                    self.buf.resize(self.buf.len() * 2, 0);
                }
            }
            let slice = match deadline {
                Some(deadline) => deadline
                    .saturating_duration_since(Instant::now())
                    .min(POLL_SLICE),
                None => POLL_SLICE,
            };
            let timeout = rustix::event::Timespec::try_from(slice).unwrap_or_default();
            let writing = self.outbox_sent < self.outbox.len();
            let mut fds = [
                PollFd::new(&self.events, PollFlags::IN),
                PollFd::new(
                    &self.requests,
                    if writing {
                        PollFlags::OUT
                    } else {
                        PollFlags::empty()
                    },
                ),
            ];
            match poll(&mut fds, Some(&timeout)) {
                Ok(0) => {
                    // A child the target forked may hold the pipe open after
                    // the harness died: no end of file then, but an exit.
                    return Ok(if self.has_exited() {
                        Wait::Eof
                    } else {
                        Wait::Idle
                    });
                }
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(err) => return Err(err.into()),
            }
            let readable = !fds[0].revents().is_empty();
            if writing && !fds[1].revents().is_empty() && self.pump_outbox().is_err() {
                // The harness is gone; reading will show it.
                self.outbox_sent = self.outbox.len();
            }
            if !readable {
                continue;
            }
            match self.events.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    let left = self.end - self.start;
                    if left > 0 && (left < 4 || self.header_word(0) != MAGIC) {
                        return Ok(Wait::Garbage(self.describe_garbage()));
                    }
                    return Ok(Wait::Eof);
                }
                Ok(n) => self.end += n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        }
    }

    fn header_word(&self, at: usize) -> u32 {
        let at = self.start + at;
        u32::from_le_bytes(self.buf[at..at + 4].try_into().expect("4 bytes"))
    }

    /// What lies where a frame should start, for the report.
    fn describe_garbage(&self) -> String {
        let bytes = &self.buf[self.start..self.end.min(self.start + 48)];
        let pipe = match self.event_fd {
            fd if fd >= 0 => format!("the event pipe (descriptor {fd})"),
            _ => "the event pipe".to_string(),
        };
        format!(
            "{pipe} carried bytes that are not a php-fuzz frame: \"{}\"",
            bytes.escape_ascii()
        )
    }

    pub(crate) fn frame_bytes(&self) -> &[u8] {
        &self.buf[self.frame.0..self.frame.1]
    }

    pub(crate) fn consume_frame(&mut self) {
        self.start = self.frame.1;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            if self.buf.len() > KEPT_BUFFER_BYTES {
                self.buf = vec![0; 64 * 1024];
            }
        }
    }

    /// A forked harness's first frame, `Started`, on its own pipes: once
    /// it has come, the harness holds them (see `ForkServer::fork`).
    pub(crate) fn wait_started(&mut self, deadline: Instant) -> Result<(), String> {
        loop {
            match self.wait_frame(Some(deadline)).map_err(|e| e.to_string())? {
                Wait::Frame => break,
                Wait::Idle if Instant::now() < deadline => {}
                Wait::Idle => return Err("the forked harness did not start in time".into()),
                Wait::Eof => return Err("the forked harness died at start".into()),
                Wait::Garbage(what) => return Err(what),
            }
        }
        let started = matches!(
            protocol::decode_event(self.frame_bytes()),
            Ok(Event::Started { pid }) if pid as i32 == self.pid.as_raw_nonzero().get()
        );
        self.consume_frame();
        match started {
            true => Ok(()),
            false => Err("the forked harness's first frame was not Started".into()),
        }
    }

    /// Swaps the pipes for others to the same harness (a forked harness's
    /// one-way ends, once it has opened its own); nothing may be in flight.
    pub(crate) fn replace_pipes(&mut self, requests: OwnedFd, events: OwnedFd) {
        self.requests = File::from(requests);
        self.events = File::from(events);
    }

    /// The server's stderr tail, emptied, for a harness it forks.
    pub(crate) fn share_stderr(&self) -> StderrTail {
        self.stderr.share_cleared()
    }

    /// Resident memory of the harness, in MiB.
    pub(crate) fn rss_mb(&self) -> u64 {
        self.rss_kb() >> 10
    }

    /// The harness's resident memory in KiB (0 where /proc cannot tell).
    pub(crate) fn rss_kb(&self) -> u64 {
        crate::memory::rss_kb(self.pid).unwrap_or(0)
    }

    /// The CPU time the harness has used, and how long it was busy (0
    /// where /proc cannot tell).
    pub(crate) fn cpu_time(&self) -> crate::memory::CpuTime {
        crate::memory::cpu_time(self.pid).unwrap_or(crate::memory::CpuTime::from(0))
    }

    /// Sends `signal` to the harness (not to children the target forked).
    pub(crate) fn signal(&self, signal: Signal) {
        if self.status.is_none() {
            let _ = kill_process(self.pid, signal);
        }
    }

    /// The harness exited (it is not reaped yet, so its pid and group stay ours).
    fn has_exited(&self) -> bool {
        self.status.is_some() || self.handle.has_exited(self.pid)
    }

    /// Kills the harness and whatever the target forked that stayed in its
    /// process group, then reaps it.
    pub(crate) fn kill(&mut self) {
        if self.status.is_none() {
            let _ = kill_process_group(self.pid, Signal::KILL);
            self.status = self.handle.reap(self.pid);
        }
    }

    /// Waits for the process to exit on its own, then kills it.
    pub(crate) fn wait_exit(&mut self, grace: Duration) -> Option<ExitStatus> {
        if self.status.is_some() {
            return self.status;
        }
        let until = Instant::now() + grace;
        while !self.has_exited() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        // Exited or not, its group goes: children the target left behind too.
        self.kill();
        self.status
    }

    /// The last lines the harness wrote to stderr. Waits briefly for the
    /// drain thread so that a dying process's last words are included.
    pub(crate) fn stderr_tail(&mut self) -> String {
        self.stderr.text(self.status.is_some())
    }

    /// Asks the harness to exit and reaps it.
    pub(crate) fn shutdown(mut self) {
        if self.status.is_none() {
            let _ = self
                .send(&Request::Shutdown)
                .and_then(|()| self.flush_outbox());
            self.wait_exit(Duration::from_millis(500));
        }
    }
}

impl Drop for HarnessProcess {
    fn drop(&mut self) {
        if self.status.is_none() {
            self.kill();
        }
    }
}

impl AsFd for HarnessProcess {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.events.as_fd()
    }
}

fn style_code(style: php_fuzz_instrument::StubStyle) -> u8 {
    match style {
        php_fuzz_instrument::StubStyle::Trace => 0,
        php_fuzz_instrument::StubStyle::EdgeMap => 1,
    }
}

/// A new pair of pipes to a harness: the engine's ends, and the harness's
/// ends (the engine holds those only until the harness has them).
pub(crate) struct Pipes {
    pub(crate) requests: OwnedFd,
    pub(crate) events: OwnedFd,
    pub(crate) child_requests: OwnedFd,
    pub(crate) child_events: OwnedFd,
}

impl Pipes {
    pub(crate) fn new() -> io::Result<Pipes> {
        let (requests_read, requests_write) = io::pipe()?;
        let (events_read, events_write) = io::pipe()?;
        // Bigger pipes mean fewer wake-ups per batch; the default is 64 KiB.
        for pipe in [requests_write.as_fd(), events_write.as_fd()] {
            let _ = rustix::pipe::fcntl_setpipe_size(pipe, PIPE_BYTES);
        }
        let flags = rustix::fs::fcntl_getfl(&requests_write)?;
        rustix::fs::fcntl_setfl(&requests_write, flags | rustix::fs::OFlags::NONBLOCK)?;
        Ok(Pipes {
            requests: requests_write.into(),
            events: events_read.into(),
            child_requests: requests_read.into(),
            child_events: events_write.into(),
        })
    }
}

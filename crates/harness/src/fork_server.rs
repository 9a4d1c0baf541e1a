//! The fork server, as AFL's: a `php` that has loaded the runtime, the
//! target and its includes once, and forks a fresh harness for each harness
//! life. A target that kills its harness (exit(), fatal errors, hangs) then
//! costs a fork, not a PHP start and a reload (docs/architecture.md).
//!
//! Each child gets pipes of its own, named pipes (FIFOs) the engine makes
//! for it, so a child that dies mid-frame leaves nothing that the next one,
//! or the engine, would read: requests pipelined to the dead child die with
//! its pipes. See `fifo.rs` for how they are opened without blocking and
//! still end in an end of file when the child dies.

mod fifo;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rustix::process::Pid;

use crate::fork_server::fifo::FifoPair;
use crate::process::{Handle, HarnessProcess, Wait};
use crate::protocol::{self, Event, Request};
use crate::{HarnessConfig, HarnessError, SourceServer};

/// After this many fork servers died or failed, harnesses start plainly.
const MAX_SERVER_FAILURES: u32 = 3;

/// Whether a fallback was already announced on stderr (once per process).
static ANNOUNCED: AtomicBool = AtomicBool::new(false);

/// The executor's way to fresh harnesses: forks while a server serves.
pub(crate) struct Forker {
    enabled: bool,
    server: Option<ForkServer>,
    failures: u32,
    /// Harnesses forked so far.
    pub(crate) forks: u64,
}

impl Forker {
    pub(crate) fn new(enabled: bool) -> Forker {
        Forker {
            enabled,
            server: None,
            failures: 0,
            forks: 0,
        }
    }

    /// A fork server serves: a dead harness's successor is a fork away.
    pub(crate) fn serving(&self) -> bool {
        self.server.is_some()
    }

    /// A fresh harness from the fork server, starting the server first if
    /// need be; `None` when harnesses are to start plainly (no fork server,
    /// or it just failed: then this start is plain, and the next one tries
    /// a new server). An error is the target's own (it does not load).
    pub(crate) fn next(
        &mut self,
        config: &HarnessConfig,
        sources: &SourceServer,
    ) -> Option<Result<HarnessProcess, HarnessError>> {
        if !self.enabled || config.catch_fatal_stack || self.failures >= MAX_SERVER_FAILURES {
            return None;
        }
        if self.server.is_none() {
            let process = match HarnessProcess::spawn(config, sources) {
                Ok(process) => process,
                Err(err) => return Some(Err(err)),
            };
            match ForkServer::start(process, config) {
                Ok(server) => self.server = Some(server),
                Err(Refused::Unavailable(process, reason)) => {
                    self.enabled = false;
                    announce(&format!("the fork server is unavailable ({reason})"));
                    return Some(Ok(*process));
                }
                Err(Refused::Died(reason)) => {
                    self.failed(&reason);
                    return None;
                }
            }
        }
        let server = self.server.as_mut().expect("started above");
        match server.fork(config) {
            Ok(process) => {
                self.forks += 1;
                Some(Ok(process))
            }
            Err(reason) => {
                self.server = None;
                self.failed(&reason);
                None
            }
        }
    }

    fn failed(&mut self, reason: &str) {
        self.failures += 1;
        if self.failures >= MAX_SERVER_FAILURES {
            announce(&format!(
                "the fork server failed {} times (last: {reason})",
                self.failures
            ));
        }
    }

    /// Stops the server (after the harness it forked: see `Executor::shutdown`).
    pub(crate) fn shutdown(&mut self) {
        if let Some(server) = self.server.take() {
            server.process.shutdown();
        }
    }
}

/// Says once on stderr that harnesses start plainly from now on.
fn announce(why: &str) {
    if !ANNOUNCED.swap(true, Ordering::Relaxed) {
        eprintln!("INFO: {why}; each harness starts a new php process");
    }
}

/// A loaded harness serving forks.
pub(crate) struct ForkServer {
    process: HarnessProcess,
}

/// Why a harness did not become a fork server.
pub(crate) enum Refused {
    /// It cannot fork (no pcntl): it goes on as a plain harness.
    Unavailable(Box<HarnessProcess>, String),
    /// It died or broke the protocol.
    Died(String),
}

impl ForkServer {
    /// Asks `process`, freshly loaded, to serve forks.
    pub(crate) fn start(
        mut process: HarnessProcess,
        config: &HarnessConfig,
    ) -> Result<ForkServer, Refused> {
        let deadline = Instant::now() + config.load_timeout;
        if let Err(err) = process
            .send(&Request::ForkServer)
            .and_then(|()| process.flush_outbox())
        {
            return Err(Refused::Died(err.to_string()));
        }
        let answer = next_event(&mut process, deadline, |event| match event {
            Event::ForkServing { available, reason } => {
                Some((available, String::from_utf8_lossy(reason).into_owned()))
            }
            _ => None,
        });
        match answer {
            Ok((true, _)) => Ok(ForkServer { process }),
            Ok((false, reason)) => Err(Refused::Unavailable(Box::new(process), reason)),
            Err(reason) => Err(Refused::Died(reason)),
        }
    }

    /// Forks a fresh harness, on pipes of its own.
    pub(crate) fn fork(&mut self, config: &HarnessConfig) -> Result<HarnessProcess, String> {
        let deadline = Instant::now() + config.load_timeout;
        let fifos = FifoPair::make(&config.runtime.fifo_dir())
            .map_err(|e| format!("cannot make named pipes: {e}"))?;
        let (requests, events) = fifos
            .open_before_child()
            .map_err(|e| format!("cannot open named pipes: {e}"))?;
        let request = Request::Fork {
            request_path: fifos.requests_path(),
            event_path: fifos.events_path(),
        };
        self.process
            .send(&request)
            .and_then(|()| self.process.flush_outbox())
            .map_err(|e| format!("the fork server is gone ({e})"))?;
        let forked = next_event(&mut self.process, deadline, |event| match event {
            Event::Forked { pid, error } => {
                Some((pid, String::from_utf8_lossy(error).into_owned()))
            }
            _ => None,
        })?;
        let pid = match forked {
            (0, error) => return Err(format!("fork failed: {error}")),
            (pid, _) => Pid::from_raw(pid as i32).ok_or("fork answered pid 0")?,
        };
        let mut child = HarnessProcess::new(
            Handle::Forked,
            pid,
            (requests, events),
            self.process.share_stderr(),
            -1,
            config,
        );
        child.info = self.process.info.clone();
        // A child that fails here is killed on drop.
        child.wait_started(deadline)?;
        // The child has its ends open: from now on the engine holds only its
        // own, so the child's death is an end of file (and a broken pipe).
        let (requests, events) = fifos
            .open_after_child()
            .map_err(|e| format!("cannot reopen named pipes: {e}"))?;
        child.replace_pipes(requests, events);
        Ok(child)
    }
}

/// Waits for the next event of `process` and takes what `pick` finds in it.
fn next_event<T>(
    process: &mut HarnessProcess,
    deadline: Instant,
    pick: impl Fn(Event<'_>) -> Option<T>,
) -> Result<T, String> {
    loop {
        match process
            .wait_frame(Some(deadline))
            .map_err(|e| e.to_string())?
        {
            Wait::Frame => break,
            Wait::Idle if Instant::now() < deadline => {}
            Wait::Idle => return Err("the fork server did not answer in time".into()),
            Wait::Eof => {
                let status = process.wait_exit(std::time::Duration::from_millis(100));
                return Err(format!(
                    "the fork server died ({})",
                    crate::process::describe_status(status)
                ));
            }
            Wait::Garbage(what) => return Err(format!("the fork server's {what}")),
        }
    }
    let picked = protocol::decode_event(process.frame_bytes())
        .ok()
        .and_then(pick);
    process.consume_frame();
    picked.ok_or_else(|| "the fork server answered with an unexpected event".into())
}

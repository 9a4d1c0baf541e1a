//! Stop requests from outside: SIGINT, SIGTERM, SIGHUP.
//!
//! - The first one stops the campaign gracefully: summary, flushed files, the
//!   exit code of what was found.
//! - SIGTERM and SIGHUP never do more than that.
//! - A SIGINT within [`REPEAT_WINDOW`] of the previous signal is the same
//!   request delivered twice (`timeout` and `kill 0` signal both the process
//!   and its group); only a later SIGINT, a real second Ctrl-C, exits at once.
//! - Signals sent by a harness process or one of its children (a target
//!   calling `posix_kill(posix_getppid(), SIGTERM)`) are ignored with a
//!   warning: a target cannot stop the fuzzer. So are SIGUSR1, SIGUSR2 and
//!   SIGALRM, whose default action would end php-fuzz.
//! - SIGXFSZ (a write past `ulimit -f`) is ignored, so that write fails
//!   with an error php-fuzz reports instead of killing it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use signal_hook::consts::{SIGALRM, SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGXFSZ};
use signal_hook::iterator::SignalsInfo;
use signal_hook::iterator::exfiltrator::WithOrigin;

/// Signals closer together than this are one request.
pub const REPEAT_WINDOW: Duration = Duration::from_secs(1);

/// The exit code after a second Ctrl-C, as a shell reports death by SIGINT.
const EXIT_AT_ONCE: i32 = 130;

/// Installs the handlers; the returned flag is set on the first stop request.
pub fn install() -> anyhow::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    let mut signals = SignalsInfo::<WithOrigin>::new([
        SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGXFSZ,
    ])
    .context("cannot install the signal handlers")?;
    let stop = Arc::clone(&flag);
    std::thread::Builder::new()
        .name("php-fuzz-signals".into())
        .spawn(move || {
            let mut requests = StopRequests::default();
            let mut warned = false;
            for origin in signals.forever() {
                if origin.signal == SIGXFSZ {
                    continue;
                }
                let sender = origin.process.map(|p| p.pid);
                if let Some(pid) = sender.filter(|&pid| is_descendant(pid)) {
                    if !warned {
                        warned = true;
                        eprintln!(
                            "WARNING: ignored {} sent to php-fuzz by process {pid}, a harness process or one of its children: the target signals its parent",
                            name(origin.signal)
                        );
                    }
                    continue;
                }
                match requests.on(origin.signal, Instant::now()) {
                    Action::Stop => {
                        stop.store(true, Ordering::SeqCst);
                        if origin.signal == SIGINT {
                            eprintln!("php-fuzz: stopping (Ctrl-C again to exit at once)…");
                        } else {
                            eprintln!("php-fuzz: {}: stopping…", name(origin.signal));
                        }
                    }
                    Action::ExitNow => {
                        eprintln!("php-fuzz: interrupted twice, exiting now");
                        std::process::exit(EXIT_AT_ONCE);
                    }
                    Action::Ignore => {}
                }
            }
        })
        .context("cannot start the signal thread")?;
    Ok(flag)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Stop,
    ExitNow,
    Ignore,
}

/// What each stop signal means, given the ones before it.
#[derive(Debug, Default)]
struct StopRequests {
    stopping: bool,
    last: Option<Instant>,
}

impl StopRequests {
    fn on(&mut self, signal: i32, now: Instant) -> Action {
        if ![SIGINT, SIGTERM, SIGHUP].contains(&signal) {
            return Action::Ignore;
        }
        let repeat = self
            .last
            .is_some_and(|last| now.saturating_duration_since(last) < REPEAT_WINDOW);
        self.last = Some(now);
        if !self.stopping {
            self.stopping = true;
            return Action::Stop;
        }
        if signal == SIGINT && !repeat {
            Action::ExitNow
        } else {
            Action::Ignore
        }
    }
}

fn name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        SIGUSR1 => "SIGUSR1",
        SIGUSR2 => "SIGUSR2",
        SIGALRM => "SIGALRM",
        _ => "a signal",
    }
}

/// Whether process `pid` descends from php-fuzz: a harness (or what a target
/// forked), as opposed to a user, `timeout` or a CI runner. A zombie still
/// names its parent, so a child that signalled and exited is recognised
/// until it is reaped.
fn is_descendant(pid: i32) -> bool {
    let me = std::process::id() as i32;
    let mut current = pid;
    for _ in 0..64 {
        if current == me {
            return pid != me;
        }
        match parent_of(current) {
            Some(parent) if parent > 0 => current = parent,
            _ => return false,
        }
    }
    false
}

/// The parent pid from `/proc/PID/stat`: the field after the state, after
/// the command name in parentheses (which may itself hold parentheses).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_delivered_twice_at_once_is_one_request() {
        let start = Instant::now();
        let mut requests = StopRequests::default();
        assert_eq!(requests.on(SIGINT, start), Action::Stop);
        let echo = start + Duration::from_millis(5);
        assert_eq!(requests.on(SIGINT, echo), Action::Ignore);
        let later = echo + REPEAT_WINDOW + Duration::from_millis(1);
        assert_eq!(requests.on(SIGINT, later), Action::ExitNow);
    }

    #[test]
    fn sigterm_only_ever_stops_gracefully() {
        let start = Instant::now();
        let mut requests = StopRequests::default();
        assert_eq!(requests.on(SIGTERM, start), Action::Stop);
        for n in 1..5 {
            let at = start + REPEAT_WINDOW * 2 * n;
            assert_eq!(requests.on(SIGTERM, at), Action::Ignore);
        }
        assert_eq!(
            requests.on(SIGINT, start + REPEAT_WINDOW * 20),
            Action::ExitNow,
            "a Ctrl-C after a SIGTERM still exits at once"
        );
        assert_eq!(StopRequests::default().on(SIGUSR1, start), Action::Ignore);
    }

    #[test]
    fn children_descend_from_us_and_our_parent_does_not() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        assert!(is_descendant(child.id() as i32));
        child.kill().unwrap();
        child.wait().unwrap();
        let parent = parent_of(std::process::id() as i32).unwrap();
        assert!(!is_descendant(parent));
        assert!(!is_descendant(std::process::id() as i32));
        assert!(!is_descendant(i32::MAX), "no such process");
    }
}

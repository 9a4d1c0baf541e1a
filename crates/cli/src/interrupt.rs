//! Stop requests from outside: SIGINT, SIGTERM, SIGHUP.
//!
//! - The first one stops the campaign gracefully: summary, flushed files, the
//!   exit code of what was found.
//! - SIGTERM and SIGHUP never do more than that.
//! - A second SIGINT (a second Ctrl-C) during that stop ends php-fuzz at
//!   once, 130, after saving the findings in flight and killing the
//!   harnesses ([`exit_at_once`]), however soon it comes after the first.
//! - Except one request delivered twice, which counts once: `timeout`
//!   signals php-fuzz, then its group (the same sender twice), and a parent
//!   that forwards the terminal's Ctrl-C adds its own copy to the kernel's.
//!   Within [`REPEAT_WINDOW`] of a request, a SIGINT from a sender it
//!   already came from, or from a process after the kernel's, is that
//!   request again ([`StopRequests`]). Two from the terminal (the kernel)
//!   are two key presses: a terminal signals each process once per Ctrl-C.
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
use signal_hook::low_level::siginfo::Origin;

/// How long after a request a copy of it may still arrive.
pub const REPEAT_WINDOW: Duration = Duration::from_secs(1);

/// The exit code after a second Ctrl-C, as a shell reports death by SIGINT.
const EXIT_AT_ONCE: i32 = 130;

/// Installs the handlers; the returned flag is set on the first stop request.
pub fn install() -> anyhow::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    let signals = SignalsInfo::<WithOrigin>::new([
        SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGXFSZ,
    ])
    .context("cannot install the signal handlers")?;
    let stop = Arc::clone(&flag);
    std::thread::Builder::new()
        .name("php-fuzz-signals".into())
        .spawn(move || listen(signals, &stop))
        .context("cannot start the signal thread")?;
    Ok(flag)
}

/// The signal thread: acts on each signal as it comes.
fn listen(mut signals: SignalsInfo<WithOrigin>, stop: &AtomicBool) {
    let mut requests = StopRequests::default();
    let mut warned = false;
    for origin in signals.forever() {
        if origin.signal == SIGXFSZ || from_a_harness(&origin, &mut warned) {
            continue;
        }
        let sender = origin.process.map(|p| p.pid);
        match requests.on(origin.signal, sender, Instant::now()) {
            Action::Stop => {
                stop.store(true, Ordering::SeqCst);
                if origin.signal == SIGINT {
                    eprintln!("php-fuzz: stopping (Ctrl-C again to exit at once)…");
                } else {
                    eprintln!("php-fuzz: {}: stopping…", name(origin.signal));
                }
            }
            Action::ExitNow => exit_at_once(),
            Action::Ignore => {}
        }
    }
}

/// Whether a harness process or one of its children sent the signal (the
/// first time, with a warning).
fn from_a_harness(origin: &Origin, warned: &mut bool) -> bool {
    let Some(pid) = origin
        .process
        .map(|p| p.pid)
        .filter(|&pid| is_descendant(pid))
    else {
        return false;
    };
    if !*warned {
        *warned = true;
        eprintln!(
            "WARNING: ignored {} sent to php-fuzz by process {pid}, a harness process or one of its children: the target signals its parent",
            name(origin.signal)
        );
    }
    true
}

/// A second Ctrl-C: saves the findings in flight (no file write begins
/// after that), kills the harnesses, and exits 130, cutting whatever the
/// graceful stop was waiting for (a harness loading, a re-run alone).
fn exit_at_once() -> ! {
    eprintln!("php-fuzz: interrupted twice, exiting now");
    for line in php_fuzz_engine::save_in_flight() {
        eprintln!("php-fuzz: {line}");
    }
    php_fuzz_harness::kill_all_harnesses();
    std::process::exit(EXIT_AT_ONCE);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Stop,
    ExitNow,
    Ignore,
}

/// What each stop signal means, given the ones before it. A sender is a
/// process id, or `None` for the kernel (a terminal's Ctrl-C).
#[derive(Debug, Default)]
struct StopRequests {
    /// The latest request: when it came, and every sender it came from.
    last: Option<Request>,
}

#[derive(Debug)]
struct Request {
    at: Instant,
    kernel: bool,
    senders: Vec<i32>,
}

impl Request {
    fn new(sender: Option<i32>, at: Instant) -> Request {
        Request {
            at,
            kernel: sender.is_none(),
            senders: sender.into_iter().collect(),
        }
    }

    /// Whether a signal from `sender` at `now` is this request again (and
    /// notes the sender if so).
    fn repeated_by(&mut self, sender: Option<i32>, now: Instant) -> bool {
        if now.saturating_duration_since(self.at) >= REPEAT_WINDOW {
            return false;
        }
        match sender {
            // The kernel signals each process once per Ctrl-C: a second is a
            // second key press, unless a forwarding parent's copy came first.
            None if self.kernel => false,
            None => {
                self.kernel = true;
                true
            }
            Some(pid) if self.kernel || self.senders.contains(&pid) => {
                self.senders.push(pid);
                true
            }
            Some(_) => false,
        }
    }
}

impl StopRequests {
    fn on(&mut self, signal: i32, sender: Option<i32>, now: Instant) -> Action {
        if ![SIGINT, SIGTERM, SIGHUP].contains(&signal) {
            return Action::Ignore;
        }
        let Some(last) = &mut self.last else {
            self.last = Some(Request::new(sender, now));
            return Action::Stop;
        };
        if last.repeated_by(sender, now) {
            return Action::Ignore;
        }
        *last = Request::new(sender, now);
        if signal == SIGINT {
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

    const TIMEOUT: Option<i32> = Some(4242);
    const KERNEL: Option<i32> = None;

    #[test]
    fn a_signal_delivered_twice_at_once_is_one_request() {
        let start = Instant::now();
        let soon = |ms| start + Duration::from_millis(ms);
        // `timeout -s INT`: the process, then its group, from one sender.
        let mut requests = StopRequests::default();
        assert_eq!(requests.on(SIGINT, TIMEOUT, start), Action::Stop);
        assert_eq!(requests.on(SIGINT, TIMEOUT, soon(5)), Action::Ignore);
        let later = soon(5) + REPEAT_WINDOW;
        assert_eq!(requests.on(SIGINT, TIMEOUT, later), Action::ExitNow);
        // A parent forwarding the terminal's Ctrl-C, before or after it.
        for (first, second) in [(KERNEL, Some(7)), (Some(7), KERNEL)] {
            let mut requests = StopRequests::default();
            assert_eq!(requests.on(SIGINT, first, start), Action::Stop);
            assert_eq!(requests.on(SIGINT, second, soon(3)), Action::Ignore);
        }
    }

    #[test]
    fn a_second_ctrl_c_soon_after_the_first_exits_at_once() {
        let start = Instant::now();
        let soon = start + Duration::from_millis(150);
        // Two key presses in a terminal: the kernel, twice.
        let mut requests = StopRequests::default();
        assert_eq!(requests.on(SIGINT, KERNEL, start), Action::Stop);
        assert_eq!(requests.on(SIGINT, KERNEL, soon), Action::ExitNow);
        // Even with a forwarding parent's copies in between.
        let mut requests = StopRequests::default();
        assert_eq!(requests.on(SIGINT, KERNEL, start), Action::Stop);
        assert_eq!(requests.on(SIGINT, Some(7), start), Action::Ignore);
        assert_eq!(requests.on(SIGINT, KERNEL, soon), Action::ExitNow);
        // Two `kill -INT -PGID` commands: two senders.
        let mut requests = StopRequests::default();
        assert_eq!(requests.on(SIGINT, Some(7), start), Action::Stop);
        assert_eq!(requests.on(SIGINT, Some(8), soon), Action::ExitNow);
    }

    #[test]
    fn sigterm_only_ever_stops_gracefully() {
        let start = Instant::now();
        let mut requests = StopRequests::default();
        assert_eq!(requests.on(SIGTERM, TIMEOUT, start), Action::Stop);
        for n in 1..5 {
            let at = start + REPEAT_WINDOW * 2 * n;
            assert_eq!(requests.on(SIGTERM, Some(n as i32), at), Action::Ignore);
            assert_eq!(requests.on(SIGHUP, KERNEL, at), Action::Ignore);
        }
        assert_eq!(
            requests.on(SIGINT, KERNEL, start + REPEAT_WINDOW * 20),
            Action::ExitNow,
            "a Ctrl-C after a SIGTERM still exits at once"
        );
        assert_eq!(
            StopRequests::default().on(SIGUSR1, KERNEL, start),
            Action::Ignore
        );
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

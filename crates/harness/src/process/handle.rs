//! How the engine waits for a harness process and learns how it ended: a
//! `php` it started itself is its child; a harness the fork server forked
//! is the server's child, whose end the engine reads from /proc (the server
//! leaves it a zombie until the engine asks for the next fork).

use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use rustix::process::{Pid, WaitId, WaitIdOptions, waitid};

/// How long a killed forked harness may take to become a zombie.
const FORKED_REAP: Duration = Duration::from_secs(2);

pub(crate) enum Handle {
    Spawned(Child),
    Forked,
}

impl Handle {
    /// The process exited (it is not reaped yet, so its pid stays ours).
    pub(crate) fn has_exited(&self, pid: Pid) -> bool {
        match self {
            Handle::Spawned(_) => waitid(
                WaitId::Pid(pid),
                WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT,
            )
            .is_ok_and(|status| status.is_some()),
            Handle::Forked => !matches!(forked_state(pid), Forked::Running),
        }
    }

    /// Waits for the process to end (the caller killed it or saw it exit)
    /// and returns how it ended.
    pub(crate) fn reap(&mut self, pid: Pid) -> Option<ExitStatus> {
        match self {
            Handle::Spawned(child) => child.wait().ok(),
            Handle::Forked => {
                let until = Instant::now() + FORKED_REAP;
                loop {
                    match forked_state(pid) {
                        Forked::Zombie(status) => return Some(status),
                        Forked::Gone => return None,
                        Forked::Running if Instant::now() >= until => return None,
                        Forked::Running => std::thread::sleep(Duration::from_millis(1)),
                    }
                }
            }
        }
    }
}

enum Forked {
    Running,
    /// Exited, not reaped: its status as waitpid() would report it.
    Zombie(ExitStatus),
    /// Reaped by someone else (its fork server died, and init took it).
    Gone,
}

/// Field 3 of /proc/PID/stat is the state; field 52 the exit code in
/// waitpid()'s form (Linux 3.5 and later).
fn forked_state(pid: Pid) -> Forked {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero())) else {
        return Forked::Gone;
    };
    let Some((_, fields)) = stat.rsplit_once(')') else {
        return Forked::Gone;
    };
    let fields: Vec<&str> = fields.split_whitespace().collect();
    match fields.first() {
        Some(&"Z") | Some(&"X") => {
            let code = fields.get(49).and_then(|c| c.parse::<i32>().ok());
            code.map_or(Forked::Gone, |c| Forked::Zombie(ExitStatus::from_raw(c)))
        }
        Some(_) => Forked::Running,
        None => Forked::Gone,
    }
}

pub(crate) fn describe_status(status: Option<ExitStatus>) -> String {
    match status {
        None => "exit status unknown".to_string(),
        Some(status) => match (status.code(), status.signal()) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("killed by signal {signal} ({})", signal_name(signal)),
            _ => status.to_string(),
        },
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => "signal",
    }
}

//! The process groups of the harnesses alive, so that a php-fuzz about to
//! exit at once (a second Ctrl-C) kills them first: each harness runs in a
//! group of its own, which a terminal's Ctrl-C does not reach, and a harness
//! stuck in a hang would otherwise outlive php-fuzz.

use std::sync::Mutex;

use rustix::process::{Pid, Signal, kill_process_group};

static LIVE: Mutex<Vec<Pid>> = Mutex::new(Vec::new());

/// A harness's group, listed while this lives: drop it only once the
/// harness is reaped, so that its pid cannot name another process yet.
pub(crate) struct LiveGroup(Pid);

impl LiveGroup {
    pub(crate) fn register(pid: Pid) -> LiveGroup {
        live().push(pid);
        LiveGroup(pid)
    }
}

impl Drop for LiveGroup {
    fn drop(&mut self) {
        live().retain(|&pid| pid != self.0);
    }
}

fn live() -> std::sync::MutexGuard<'static, Vec<Pid>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Kills every harness alive and whatever its target forked in its group,
/// without waiting: for a process about to exit. Returns how many.
pub fn kill_all_harnesses() -> usize {
    let groups = live();
    for &pid in groups.iter() {
        let _ = kill_process_group(pid, Signal::KILL);
    }
    groups.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_group_is_killed_and_an_unlisted_one_is_not() {
        use std::os::unix::process::CommandExt;
        let spawn = || {
            std::process::Command::new("sleep")
                .arg("30")
                .process_group(0)
                .spawn()
                .unwrap()
        };
        let (mut listed, mut other) = (spawn(), spawn());
        let group = LiveGroup::register(Pid::from_child(&listed));
        assert!(kill_all_harnesses() >= 1);
        let status = listed.wait().unwrap();
        assert!(!status.success(), "killed: {status:?}");
        drop(group);
        assert_eq!(other.try_wait().unwrap(), None, "not listed, still running");
        other.kill().unwrap();
        other.wait().unwrap();
    }
}

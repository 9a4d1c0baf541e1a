//! Resident memory (RSS) as Linux's /proc reports it, for the harness
//! processes and for php-fuzz itself.

use rustix::process::Pid;

/// Resident memory of this process, in MiB (0 where /proc cannot tell).
pub fn own_rss_mb() -> u64 {
    resident_mb("/proc/self/statm").unwrap_or(0)
}

/// Peak resident memory of this process (VmHWM), in MiB (0 where /proc cannot tell).
pub fn own_peak_rss_mb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map(|kb| kb / 1024)
        .unwrap_or(0)
}

/// Resident memory of process `pid`, in KiB.
pub(crate) fn rss_kb(pid: Pid) -> Option<u64> {
    resident_kb(&format!("/proc/{}/statm", pid.as_raw_nonzero()))
}

/// CPU time process `pid` has used (user and system), in milliseconds.
pub(crate) fn cpu_ms(pid: Pid) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero())).ok()?;
    // After the command name in parentheses (which may hold any byte):
    // state is field 3, utime 14 and stime 15, in clock ticks.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks_per_second = rustix::param::clock_ticks_per_second().max(1);
    Some((utime + stime) * 1000 / ticks_per_second)
}

/// The CPU time process `pid` has used, and the time it was busy: on a CPU
/// or waiting in a run queue for one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CpuTime {
    /// User and system time, in ms.
    pub used_ms: u64,
    /// Time on a CPU plus time runnable but waiting for one, in ms: a
    /// spinning process on a loaded machine is busy all along, though it
    /// used only the share of a core it was given; a sleeping one is not.
    pub busy_ms: u64,
}

impl From<u64> for CpuTime {
    /// A process that ran whenever it wanted to: busy as long as it used.
    fn from(used_ms: u64) -> CpuTime {
        CpuTime {
            used_ms,
            busy_ms: used_ms,
        }
    }
}

/// `pid`'s [`CpuTime`]; busy time from `/proc/PID/schedstat` (on-CPU and
/// run-queue nanoseconds), or the CPU time used where the kernel keeps no
/// scheduler statistics.
pub(crate) fn cpu_time(pid: Pid) -> Option<CpuTime> {
    let used_ms = cpu_ms(pid)?;
    let busy_ms = scheduled_ms(pid).unwrap_or(used_ms);
    Some(CpuTime { used_ms, busy_ms })
}

/// On-CPU plus run-queue-wait time of `pid`'s main thread, in ms.
fn scheduled_ms(pid: Pid) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{}/schedstat", pid.as_raw_nonzero())).ok()?;
    let mut fields = stat.split_whitespace();
    let on_cpu_ns: u64 = fields.next()?.parse().ok()?;
    let waiting_ns: u64 = fields.next()?.parse().ok()?;
    Some((on_cpu_ns + waiting_ns) / 1_000_000)
}

fn resident_mb(statm: &str) -> Option<u64> {
    resident_kb(statm).map(|kb| kb >> 10)
}

/// The second field of a `statm` file counts resident pages.
fn resident_kb(statm: &str) -> Option<u64> {
    let statm = std::fs::read_to_string(statm).ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * rustix::param::page_size() as u64 / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_in_use_counts_in_the_own_rss() {
        let held = std::hint::black_box(vec![1u8; 64 << 20]);
        let own = own_rss_mb();
        let by_pid = rss_kb(rustix::process::getpid()).unwrap() >> 10;
        assert!(own >= 64 && by_pid >= 64, "{own} MiB, {by_pid} MiB");
        assert!(own_peak_rss_mb() >= 64);
        drop(held);
    }

    #[test]
    fn cpu_time_grows_with_work() {
        let pid = rustix::process::getpid();
        let before = cpu_ms(pid).unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_millis(200);
        let mut n = 0u64;
        while std::time::Instant::now() < until {
            n = std::hint::black_box(n.wrapping_add(1));
        }
        assert!(cpu_ms(pid).unwrap() > before, "{n}");
    }

    #[test]
    fn a_spinning_thread_is_busy_and_a_sleeping_one_is_not() {
        // This test's own thread: /proc/PID/schedstat is the main thread's.
        let tid = rustix::thread::gettid();
        let before = scheduled_ms(tid).unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_millis(200);
        let mut n = 0u64;
        while std::time::Instant::now() < until {
            n = std::hint::black_box(n.wrapping_add(1));
        }
        let spun = scheduled_ms(tid).unwrap();
        assert!(spun >= before + 150, "{before} ms, then {spun} ms ({n})");
        std::thread::sleep(std::time::Duration::from_millis(300));
        let slept = scheduled_ms(tid).unwrap();
        assert!(slept < spun + 100, "{spun} ms, then {slept} ms");
    }
}

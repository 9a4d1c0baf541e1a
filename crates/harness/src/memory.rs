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

/// Resident memory of process `pid`, in MiB.
pub(crate) fn rss_mb(pid: Pid) -> Option<u64> {
    resident_mb(&format!("/proc/{}/statm", pid.as_raw_nonzero()))
}

/// The second field of a `statm` file counts resident pages.
fn resident_mb(statm: &str) -> Option<u64> {
    let statm = std::fs::read_to_string(statm).ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * rustix::param::page_size() as u64 / (1024 * 1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_in_use_counts_in_the_own_rss() {
        let held = std::hint::black_box(vec![1u8; 64 << 20]);
        let own = own_rss_mb();
        let by_pid = rss_mb(rustix::process::getpid()).unwrap();
        assert!(own >= 64 && by_pid >= 64, "{own} MiB, {by_pid} MiB");
        assert!(own_peak_rss_mb() >= 64);
        drop(held);
    }
}

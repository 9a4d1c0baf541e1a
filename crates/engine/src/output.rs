//! Where the engine's messages go: stderr, like libFuzzer. A closed pipe
//! (`php-fuzz ... 2>&1 | head`) silences output instead of panicking.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Debug, Default)]
pub struct Output {
    lock: Mutex<()>,
    closed: AtomicBool,
    quiet: bool,
}

impl Output {
    pub fn new(quiet: bool) -> Output {
        Output {
            lock: Mutex::new(()),
            closed: AtomicBool::new(false),
            quiet,
        }
    }

    /// Progress and status lines; suppressed by `--quiet`.
    pub fn status(&self, text: &str) {
        if !self.quiet {
            self.line(text);
        }
    }

    /// Always shown: crash reports, warnings, the final summary.
    pub fn line(&self, text: &str) {
        if self.closed.load(Ordering::Relaxed) {
            return;
        }
        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut err = std::io::stderr().lock();
        if writeln!(err, "{text}").and_then(|_| err.flush()).is_err() {
            self.closed.store(true, Ordering::Relaxed);
        }
    }
}

pub use php_fuzz_harness::own_rss_mb;

/// Peak resident memory of this process (VmHWM), in MiB.
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

/// An input shown in a report: printable ASCII as is, the rest escaped,
/// cut after `limit` bytes.
pub fn preview(input: &[u8], limit: usize) -> String {
    let mut out = String::from("\"");
    for &b in input.iter().take(limit) {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    if input.len() > limit {
        out.push_str(&format!("… ({} more bytes)", input.len() - limit));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_escapes_and_cuts() {
        assert_eq!(preview(b"a\"\n\x00", 10), r#""a\"\n\x00""#);
        assert_eq!(preview(b"abcdef", 3), "\"abc\"… (3 more bytes)");
    }
}

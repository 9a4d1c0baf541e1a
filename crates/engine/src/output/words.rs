//! php-fuzz's words: a campaign's opening lines, status lines, crash
//! reports and summary lines, and `run-single`'s replayed crashes. Pure
//! text: [`Output`](super::Output) writes it.

use std::fmt::{self, Write as _};
use std::path::Path;

use php_fuzz_harness::{Crash, CrashKind};

use super::{AdaptedTimeout, CampaignEvent, NewCrash, Opening, StatusLine};
use crate::KnownCrash;
use crate::{ADAPTIVE_TIMEOUT_FACTOR, ADAPTIVE_TIMEOUT_MAX, ADAPTIVE_TIMEOUT_MIN};

/// What `event` says in php-fuzz's words; under `--quiet` (`quiet`) only a
/// new crash says anything.
pub(super) fn campaign(event: CampaignEvent<'_>, quiet: bool) -> Option<String> {
    match event {
        CampaignEvent::NewCrash(new) => Some(new_crash(new)),
        _ if quiet => None,
        CampaignEvent::Opening(opening) => Some(opening_lines(opening)),
        CampaignEvent::Status(status) => Some(status.to_string()),
        CampaignEvent::TimeoutAdapted(adapted) => Some(timeout_line(adapted)),
    }
}

/// The settings of the campaign and its seeds, in two lines.
fn opening_lines(o: &Opening<'_>) -> String {
    let timeout = if o.adaptive_timeout {
        format!("adaptive (seeds: {} s)", o.timeout_secs)
    } else {
        format!("{} s", o.timeout_secs)
    };
    format!(
        "INFO: seed: {}  target: {}  php: {}  timeout: {timeout}  rss limit: {} MB  coverage: {}\n\
         INFO: corpus: {} ({} files, {} bytes)  artifacts: {}  dictionary: {} entries  max len: {}  jobs: {}",
        o.seed,
        o.target,
        o.php_version,
        o.rss_limit_mb,
        o.coverage,
        o.corpus_dir.display(),
        o.seed_files,
        o.seed_bytes,
        o.artifact_dir.display(),
        o.dictionary_entries,
        o.max_len,
        o.jobs
    )
}

/// The timeout chosen once the seeds ran, and why.
pub(super) fn timeout_line(adapted: AdaptedTimeout) -> String {
    format!(
        "INFO: timeout: {:.1} s ({ADAPTIVE_TIMEOUT_FACTOR} × the slowest seed, {:.1} ms, within {}–{} s; \
         --timeout sets it)",
        adapted.timeout.as_secs_f64(),
        adapted.slowest_seed.as_secs_f64() * 1000.0,
        ADAPTIVE_TIMEOUT_MIN.as_secs(),
        ADAPTIVE_TIMEOUT_MAX.as_secs(),
    )
}

fn new_crash(new: &NewCrash<'_>) -> String {
    let context = CrashContext::Found {
        number: new.number,
        runs: new.runs,
        seconds: new.seconds,
        saved: new.saved,
    };
    crash_report(new.crash, new.input, context)
}

impl fmt::Display for StatusLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "#{:<8} {:<6} cov: {} ft: {} corp: {}/{} lim: {} exec/s: {:.0} rss: {}/{}Mb crashes: {} t: {}s",
            self.runs,
            self.event,
            self.edges,
            self.features,
            self.corpus_entries,
            human_bytes(self.corpus_bytes),
            self.len_limit,
            self.exec_per_sec,
            self.engine_rss_mb,
            self.harness_rss_mb,
            self.new_crashes,
            self.seconds
        )?;
        if let Some(words) = self.dictionary {
            write!(f, " dict: {words}")?;
        }
        if let Some(mix) = self.mix {
            write!(f, " {mix}")?;
        }
        if let Some((len, sequence)) = self.input {
            write!(f, " L: {len}/{} MS: {sequence}", self.len_limit)?;
        }
        Ok(())
    }
}

fn human_bytes(n: usize) -> String {
    match n {
        0..1024 => format!("{n}b"),
        1024..1_048_576 => format!("{}Kb", n / 1024),
        _ => format!("{}Mb", n / 1_048_576),
    }
}

/// Where a crash being reported comes from.
#[derive(Debug, Clone, Copy)]
pub enum CrashContext<'a> {
    /// The `number`th new crash of a campaign, saved as `saved`.
    Found {
        number: usize,
        runs: u64,
        seconds: u64,
        saved: &'a KnownCrash,
    },
    /// An input file run again (`run-single`).
    Replayed { path: &'a Path },
}

/// How much of a crash a report shows and how it is indented: a campaign's
/// log stays short, a replay shows the whole stack.
struct Layout {
    message_indent: &'static str,
    trace_indent: &'static str,
    trace_lines: usize,
    stderr_lines: usize,
    preview_bytes: usize,
}

/// The report of one crash: what happened, where, the input, and for a
/// campaign where it was saved and how to reproduce it. Several lines, with
/// no newline at the end.
pub fn crash_report(crash: &Crash, input: &[u8], context: CrashContext<'_>) -> String {
    let mut out = String::new();
    let layout = match context {
        CrashContext::Found {
            number,
            runs,
            seconds,
            ..
        } => {
            let _ = writeln!(
                out,
                "==== {} #{number} after {runs} runs, {seconds} s: {}",
                crash.kind.artifact_prefix().to_uppercase(),
                crash.headline()
            );
            Layout {
                message_indent: "     ",
                trace_indent: "  ",
                trace_lines: 12,
                stderr_lines: 8,
                preview_bytes: 120,
            }
        }
        CrashContext::Replayed { path } => {
            let _ = writeln!(
                out,
                "{}: {} ({})",
                path.display(),
                replay_label(crash.kind),
                crash.kind.name()
            );
            let _ = writeln!(out, "  {}", crash.problem.headline());
            Layout {
                message_indent: "  ",
                trace_indent: "    ",
                trace_lines: usize::MAX,
                stderr_lines: 10,
                preview_bytes: 200,
            }
        }
    };
    for line in crash.problem.message.lines().skip(1) {
        let _ = writeln!(out, "{}{line}", layout.message_indent);
    }
    for line in crash.problem.trace.lines().take(layout.trace_lines) {
        let _ = writeln!(out, "{}{line}", layout.trace_indent);
    }
    if let Some(note) = &crash.note {
        let _ = writeln!(out, "  note: {note}");
    }
    if let Some(stderr) = crash.stderr.as_deref().filter(|s| !s.trim().is_empty()) {
        out.push_str("  php stderr:\n");
        let lines: Vec<&str> = stderr.lines().collect();
        for line in &lines[lines.len().saturating_sub(layout.stderr_lines)..] {
            let _ = writeln!(out, "    {line}");
        }
    }
    let _ = writeln!(
        out,
        "  input ({} bytes): {}",
        input.len(),
        preview(input, layout.preview_bytes)
    );
    if let CrashContext::Found { saved, .. } = context {
        let _ = writeln!(
            out,
            "  saved: {} (report: {})",
            saved.artifact.display(),
            saved.artifact.with_extension("json").display()
        );
        let _ = writeln!(out, "  reproduce: {}", saved.record.reproduce);
    }
    out.pop();
    out
}

/// How `run-single` labels a crash of this kind.
fn replay_label(kind: CrashKind) -> &'static str {
    match kind {
        CrashKind::Timeout => "TIMEOUT",
        CrashKind::OutOfMemory => "OUT OF MEMORY",
        CrashKind::Fatal | CrashKind::HarnessDied | CrashKind::StackOverflow | CrashKind::Exit => {
            "FATAL"
        }
        CrashKind::Exception | CrashKind::Warning => "CRASH",
        CrashKind::Security => "SECURITY",
        CrashKind::SideEffect => "SIDE EFFECT",
    }
}

/// A distinct crash in a campaign's summary: kind, class, message, where
/// (with the calls below it that its signature names), the artifact and how
/// often it was hit.
pub fn summary_line(crash: &KnownCrash) -> String {
    let r = &crash.record;
    let mut line = format!(
        "  {} {}: {}",
        r.kind,
        r.class,
        r.message.lines().next().unwrap_or("")
    );
    if !r.file.is_empty() {
        line.push_str(&format!(" at {}", r.file));
        if r.line > 0 {
            line.push_str(&format!(":{}", r.line));
        }
    }
    if let Some(callers) = &crash.callers {
        line.push_str(&format!(" (via {callers})"));
    }
    line.push_str(&format!(
        "  [{}, {}]",
        crash.artifact.display(),
        hits_label(crash)
    ));
    if let Some(note) = &r.note {
        line.push_str(&format!("\n      note: {note}"));
    }
    line
}

/// `hit 12 times`, and for a finding saved earlier its hits in all and the
/// copies an older php-fuzz saved of it.
fn hits_label(crash: &KnownCrash) -> String {
    let mut label = match crash.hits {
        1 => "hit once".to_string(),
        n => format!("hit {n} times"),
    };
    if !crash.new {
        label.push_str(&format!(", {} in all, saved earlier", crash.total_hits()));
        if crash.artifacts_on_disk > 1 {
            label.push_str(&format!(" (with {} copies)", crash.artifacts_on_disk - 1));
        }
    }
    label
}

/// A crash saved by an earlier session, met again by this one.
pub(crate) fn known_crash_line(crash: &Crash, saved: &KnownCrash) -> String {
    format!(
        "==== known {} hit again: {} (saved earlier as {})",
        crash.kind.name(),
        crash.headline(),
        saved.artifact.display()
    )
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

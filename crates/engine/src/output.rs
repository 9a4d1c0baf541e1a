//! The engine's messages and where they go: stderr, like libFuzzer. A closed
//! pipe (`php-fuzz ... 2>&1 | head`) silences output instead of panicking.
//! Each message has one writer here: the status line, the crash report.

use std::fmt::{self, Write as _};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use php_fuzz_harness::{Crash, CrashKind};

use crate::KnownCrash;

#[derive(Debug, Default)]
pub struct Output {
    lock: Mutex<()>,
    closed: AtomicBool,
    quiet: bool,
    /// Words a campaign's messages another way; php-fuzz's own if `None`.
    voice: Option<Box<dyn CampaignVoice>>,
}

/// A campaign's messages worded another way (libFuzzer's, say): the opening
/// lines, status lines and new crashes go to the voice instead of being
/// written in php-fuzz's words. Warnings and errors stay as they are.
pub trait CampaignVoice: Send + Sync + fmt::Debug {
    fn opening(&self, out: &Output, opening: &Opening<'_>);
    fn status(&self, out: &Output, status: &StatusLine<'_>);
    /// A new crash, already saved as `saved`; `runs` and `seconds` so far.
    fn new_crash(&self, out: &Output, crash: &Crash, input: &[u8], saved: &KnownCrash);
    /// The timeout adapted to the seeds (no timeout was given): `line`
    /// says so in php-fuzz's words.
    fn timeout_adapted(&self, out: &Output, line: &str, timeout_secs: f64) {
        let _ = timeout_secs;
        out.status(line);
    }
}

/// What a campaign says before it runs the corpus.
#[derive(Debug, Clone, Copy)]
pub struct Opening<'a> {
    pub seed: u64,
    pub target: &'a str,
    pub php_version: &'a str,
    pub timeout_secs: f64,
    /// The timeout adapts to the seeds (none was given): `timeout_secs` is
    /// the seeds' own, and the campaign's is printed once they ran.
    pub adaptive_timeout: bool,
    pub rss_limit_mb: u64,
    pub corpus_dir: &'a Path,
    pub seed_files: usize,
    pub seed_bytes: usize,
    pub smallest_seed: usize,
    pub largest_seed: usize,
    pub artifact_dir: &'a Path,
    pub dictionary_entries: usize,
    pub max_len: usize,
    pub jobs: usize,
    /// Which blocks the target records (`--coverage`).
    pub coverage: php_fuzz_instrument::Coverage,
}

impl Output {
    pub fn new(quiet: bool) -> Output {
        Output {
            lock: Mutex::new(()),
            closed: AtomicBool::new(false),
            quiet,
            voice: None,
        }
    }

    /// Output whose campaign messages `voice` words.
    pub fn with_voice(quiet: bool, voice: Box<dyn CampaignVoice>) -> Output {
        Output {
            voice: Some(voice),
            ..Output::new(quiet)
        }
    }

    pub(crate) fn opening(&self, opening: &Opening<'_>) {
        if self.quiet {
            return;
        }
        if let Some(voice) = &self.voice {
            return voice.opening(self, opening);
        }
        let o = opening;
        let timeout = if o.adaptive_timeout {
            format!("adaptive (seeds: {} s)", o.timeout_secs)
        } else {
            format!("{} s", o.timeout_secs)
        };
        self.line(&format!(
            "INFO: seed: {}  target: {}  php: {}  timeout: {timeout}  rss limit: {} MB  coverage: {}",
            o.seed, o.target, o.php_version, o.rss_limit_mb, o.coverage
        ));
        self.line(&format!(
            "INFO: corpus: {} ({} files, {} bytes)  artifacts: {}  dictionary: {} entries  max len: {}  jobs: {}",
            o.corpus_dir.display(),
            o.seed_files,
            o.seed_bytes,
            o.artifact_dir.display(),
            o.dictionary_entries,
            o.max_len,
            o.jobs
        ));
    }

    pub(crate) fn status_line(&self, status: &StatusLine<'_>) {
        if self.quiet {
            return;
        }
        match &self.voice {
            Some(voice) => voice.status(self, status),
            None => self.line(&status.to_string()),
        }
    }

    /// A campaign's new crash, saved as `saved`.
    pub(crate) fn new_crash(
        &self,
        crash: &Crash,
        input: &[u8],
        number: usize,
        runs: u64,
        seconds: u64,
        saved: &KnownCrash,
    ) {
        match &self.voice {
            Some(voice) => voice.new_crash(self, crash, input, saved),
            None => self.line(&crash_report(
                crash,
                input,
                CrashContext::Found {
                    number,
                    runs,
                    seconds,
                    saved,
                },
            )),
        }
    }

    /// False under `--quiet`: status lines need not be built.
    pub fn shows_status(&self) -> bool {
        !self.quiet
    }

    /// Progress and status lines; suppressed by `--quiet`.
    /// The timeout adapted to the seeds: `line` says so.
    pub(crate) fn timeout_adapted(&self, line: &str, timeout_secs: f64) {
        match &self.voice {
            Some(voice) => voice.timeout_adapted(self, line, timeout_secs),
            None => self.status(line),
        }
    }

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

/// What a status line reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The corpus from disk has run.
    Inited,
    /// An input reached a new feature and joined the corpus.
    New,
    /// A shorter input replaced the corpus entry it was mutated from.
    Reduce,
    /// Nothing happened for a while.
    Pulse,
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Event::Inited => "INITED",
            Event::New => "NEW",
            Event::Reduce => "REDUCE",
            Event::Pulse => "pulse",
        })
    }
}

/// A libFuzzer-style status line:
/// `#1234     NEW    cov: 80 ft: 150 corp: 20/1Kb lim: 64 exec/s: ... L: 12/64 MS: 2 InsertByte-CopyPart-`.
#[derive(Clone, Copy)]
pub struct StatusLine<'a> {
    pub runs: u64,
    pub event: Event,
    pub edges: usize,
    pub features: usize,
    pub corpus_entries: usize,
    pub corpus_bytes: usize,
    pub len_limit: usize,
    pub exec_per_sec: f64,
    pub engine_rss_mb: u64,
    pub harness_rss_mb: u64,
    pub new_crashes: usize,
    pub seconds: u64,
    /// Words of the persistent auto-dictionary (comparison feedback on).
    pub dictionary: Option<usize>,
    /// For NEW and REDUCE: the input's length and the mutations that made it.
    pub input: Option<(usize, &'a dyn fmt::Display)>,
}

impl fmt::Display for StatusLine<'_> {
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

pub use php_fuzz_harness::{own_peak_rss_mb, own_rss_mb};

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

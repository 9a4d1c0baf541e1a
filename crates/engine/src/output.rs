//! The engine's messages and where they go: stderr, like libFuzzer. A closed
//! pipe (`php-fuzz ... 2>&1 | head`) silences output instead of panicking.
//!
//! One direction: a campaign says what happened as plain values
//! ([`CampaignEvent`]), the [`Voice`] its caller chose words them (pure
//! functions, `words.rs` for php-fuzz's, `libfuzzer.rs` for libFuzzer's),
//! and [`Output`] writes the words. Nothing here calls back into the
//! campaign, and the campaign reads nothing back from here.

use std::fmt;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use php_fuzz_arguments::TypedMutation;
use php_fuzz_grammar::GrammarMutation;
use php_fuzz_harness::Crash;
use php_fuzz_mutate::Sequence;

use crate::KnownCrash;

mod libfuzzer;
mod words;

pub use libfuzzer::{LibFuzzerVoice, ReportContext, crash_report as libfuzzer_crash_report};
pub(crate) use words::known_crash_line;
pub use words::{CrashContext, crash_report, preview, summary_line};

#[derive(Debug, Default)]
pub struct Output {
    lock: Mutex<()>,
    closed: AtomicBool,
    quiet: bool,
    voice: Voice,
}

/// Whose words a campaign's opening lines, status lines, new crashes and
/// adapted timeout are in; warnings and errors are the same in both.
#[derive(Debug, Clone, Default)]
pub enum Voice {
    /// php-fuzz's own.
    #[default]
    PhpFuzz,
    /// libFuzzer's (`php-fuzz libfuzzer`), as ClusterFuzz parses them.
    LibFuzzer(LibFuzzerVoice),
}

/// What a campaign says as it goes, in no one's words yet.
#[derive(Debug, Clone, Copy)]
pub enum CampaignEvent<'a> {
    /// Before it runs the corpus.
    Opening(&'a Opening<'a>),
    /// INITED, NEW, REDUCE or a pulse.
    Status(&'a StatusLine),
    /// A new crash, already saved.
    NewCrash(&'a NewCrash<'a>),
    /// The timeout adapted to the seeds (no timeout was given).
    TimeoutAdapted(AdaptedTimeout),
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
    /// php-fuzz's own resident memory once the seeds are loaded.
    pub engine_rss_mb: u64,
}

/// A campaign's new crash, saved as `saved`.
#[derive(Debug, Clone, Copy)]
pub struct NewCrash<'a> {
    pub crash: &'a Crash,
    pub input: &'a [u8],
    /// The campaign's `number`th new crash, after `runs` runs and `seconds`.
    pub number: usize,
    pub runs: u64,
    pub seconds: u64,
    pub saved: &'a KnownCrash,
    /// The campaign's timeout when it crashed.
    pub timeout: Duration,
}

/// The timeout a campaign chose once its seeds ran: a multiple of the
/// slowest one's run.
#[derive(Debug, Clone, Copy)]
pub struct AdaptedTimeout {
    pub timeout: Duration,
    pub slowest_seed: Duration,
}

impl Output {
    /// Output in php-fuzz's words; `quiet` (`--quiet`) leaves out progress
    /// and status lines.
    pub fn new(quiet: bool) -> Output {
        Output {
            quiet,
            ..Output::default()
        }
    }

    /// Output whose campaign messages are in `voice`'s words.
    pub fn with_voice(voice: Voice) -> Output {
        Output {
            voice,
            ..Output::default()
        }
    }

    /// Writes what `event` says in the voice's words, if it says anything.
    pub fn campaign(&self, event: CampaignEvent<'_>) {
        let text = match &self.voice {
            Voice::PhpFuzz => words::campaign(event, self.quiet),
            Voice::LibFuzzer(voice) => voice.campaign(event),
        };
        if let Some(text) = text {
            self.line(&text);
        }
    }

    /// False when no status line would be shown: they need not be built.
    pub fn shows_status(&self) -> bool {
        match &self.voice {
            Voice::PhpFuzz => !self.quiet,
            Voice::LibFuzzer(voice) => !voice.quiet,
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

impl Event {
    /// As status lines say it.
    pub fn name(self) -> &'static str {
        match self {
            Event::Inited => "INITED",
            Event::New => "NEW",
            Event::Reduce => "REDUCE",
            Event::Pulse => "pulse",
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// A status line's numbers:
/// `#1234     NEW    cov: 80 ft: 150 corp: 20/1Kb lim: 64 exec/s: ... L: 12/64 MS: 2 InsertByte-CopyPart-`.
#[derive(Debug, Clone, Copy)]
pub struct StatusLine {
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
    /// The learned mutation schedule's draw (`--mutation-schedule learned`).
    pub mix: Option<php_fuzz_mutate::Mix>,
    /// For NEW and REDUCE: the input's length and the mutations that made it.
    pub input: Option<(usize, Mutations)>,
}

/// The mutations that made a mutant: a grammar mutation, byte mutations
/// (stacked on the grammar one if both), shown as
/// `MS: 2 GrammarReplace-ChangeByte-`.
#[derive(Debug, Clone, Copy)]
pub struct Mutations {
    pub grammar: Option<GrammarMutation>,
    pub bytes: Option<Sequence>,
    /// A typed entry's mutation (docs/autofuzz.md): which argument, and
    /// how; its string's byte mutations are in `bytes`.
    pub typed: Option<TypedMutation>,
}

impl fmt::Display for Mutations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = self.bytes.as_ref().map_or(&[][..], Sequence::kinds);
        let stacked = usize::from(self.grammar.is_some()) + usize::from(self.typed.is_some());
        write!(f, "{} ", stacked + bytes.len())?;
        if let Some(typed) = &self.typed {
            write!(f, "{}-", typed.name())?;
        }
        if let Some(grammar) = self.grammar {
            write!(f, "{}-", grammar.name())?;
        }
        for kind in bytes {
            write!(f, "{}-", kind.name())?;
        }
        Ok(())
    }
}

pub use php_fuzz_harness::{own_peak_rss_mb, own_rss_mb};

#[cfg(test)]
mod tests {
    use super::*;

    fn status(event: Event) -> StatusLine {
        StatusLine {
            runs: 1234,
            event,
            edges: 80,
            features: 150,
            corpus_entries: 20,
            corpus_bytes: 1500,
            len_limit: 64,
            exec_per_sec: 99.6,
            engine_rss_mb: 30,
            harness_rss_mb: 40,
            new_crashes: 0,
            seconds: 7,
            dictionary: None,
            mix: None,
            input: None,
        }
    }

    fn libfuzzer(quiet: bool) -> LibFuzzerVoice {
        LibFuzzerVoice {
            artifact_prefix: "./".into(),
            rss_limit_mb: 2048,
            max_len_given: false,
            quiet,
        }
    }

    #[test]
    fn each_voice_words_a_status_line_its_own_way() {
        let line = status(Event::New);
        let event = CampaignEvent::Status(&line);
        assert_eq!(
            words::campaign(event, false).as_deref(),
            Some(
                "#1234     NEW    cov: 80 ft: 150 corp: 20/1Kb lim: 64 exec/s: 100 rss: 30/40Mb crashes: 0 t: 7s"
            )
        );
        assert_eq!(
            libfuzzer(false).campaign(event).as_deref(),
            Some("#1234\tNEW    cov: 80 ft: 150 corp: 20/1500b lim: 64 exec/s: 100 rss: 40Mb")
        );
    }

    #[test]
    fn quiet_leaves_out_status_lines_and_the_adapted_timeout() {
        let line = status(Event::Pulse);
        let adapted = AdaptedTimeout {
            timeout: Duration::from_secs(2),
            slowest_seed: Duration::from_millis(90),
        };
        for event in [
            CampaignEvent::Status(&line),
            CampaignEvent::TimeoutAdapted(adapted),
        ] {
            assert_eq!(words::campaign(event, true), None);
            assert_eq!(libfuzzer(true).campaign(event), None);
            assert!(words::campaign(event, false).is_some());
            assert!(libfuzzer(false).campaign(event).is_some());
        }
        let output = Output::with_voice(Voice::LibFuzzer(libfuzzer(true)));
        assert!(!output.shows_status());
        assert!(Output::new(false).shows_status());
    }
}

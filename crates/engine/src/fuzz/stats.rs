//! The campaign's statistics file (`--stats`, else
//! `CORPUS/.php-fuzz/stats.jsonl`): a `start` line when the session begins,
//! a `sample` after the seeds ran and then every second for a minute and
//! every [`STATS_EVERY`] after that (from the monitor thread), a `crash`
//! line for each new distinct crash, and an `end` line. Never written from
//! the workers' loop, except for a new crash.
//!
//! A resumed campaign continues the file: its `elapsed` and `runs` start
//! where the last session's stopped. A failed write is said once and the
//! campaign goes on without statistics.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use php_fuzz_storage::{STATS_VERSION, Sample, StatsEvent, StatsFile, StatsLine};

use super::{Shared, State};
use crate::EngineError;
use crate::output::{Output, own_rss_mb};

/// How often the monitor appends a sample…
pub(super) const STATS_EVERY: Duration = Duration::from_secs(5);
/// … after the first minute of a session, when coverage grows fastest and
/// a sample a second draws its curve.
pub(super) const STATS_EARLY: (Duration, Duration) =
    (Duration::from_secs(60), Duration::from_secs(1));

/// The time between samples `elapsed` into a session.
pub(super) fn stats_interval(elapsed: Duration) -> Duration {
    if elapsed < STATS_EARLY.0 {
        STATS_EARLY.1
    } else {
        STATS_EVERY
    }
}

pub(super) struct CampaignStats {
    file: StatsFile,
    session: u32,
    /// `elapsed` and `runs` of the sessions before this one.
    elapsed_before: f64,
    runs_before: u64,
    /// When this session began.
    started: Instant,
    /// The previous sample, for exec/s: when, and the session's runs then.
    last_sample: Option<(Instant, u64)>,
    failed: bool,
}

impl CampaignStats {
    /// Opens the file for appending; a file that cannot be opened is an error.
    pub(super) fn open(path: &Path, started: Instant) -> Result<CampaignStats, EngineError> {
        let (file, resume) = StatsFile::open(path)?;
        Ok(CampaignStats {
            file,
            session: resume.last_session + 1,
            elapsed_before: resume.elapsed,
            runs_before: resume.runs,
            started,
            last_sample: None,
            failed: false,
        })
    }

    pub(super) fn path(&self) -> &Path {
        self.file.path()
    }

    pub(super) fn start(&mut self, out: &Output, seed: u64, jobs: usize, target: &str) {
        self.write(
            out,
            StatsEvent::Start {
                pid: std::process::id(),
                seed,
                jobs,
                target: target.to_string(),
            },
        );
    }

    /// Appends a sample of `shared`'s numbers now.
    pub(super) fn sample(&mut self, shared: &Shared, numbers: Numbers) {
        let sample = self.take_sample(shared, numbers);
        self.write(&shared.out, StatsEvent::Sample(sample));
    }

    pub(super) fn end(&mut self, shared: &Shared, numbers: Numbers, reason: &str) {
        let sample = self.take_sample(shared, numbers);
        self.write(
            &shared.out,
            StatsEvent::End {
                sample,
                reason: reason.to_string(),
            },
        );
    }

    pub(super) fn crash(&mut self, out: &Output, kind: &str, summary: String, artifact: &Path) {
        self.write(
            out,
            StatsEvent::Crash {
                kind: kind.to_string(),
                summary,
                artifact: artifact.display().to_string(),
            },
        );
    }

    fn take_sample(&mut self, shared: &Shared, numbers: Numbers) -> Sample {
        let now = Instant::now();
        let runs = shared.runs.load(Ordering::Relaxed);
        let (since, runs_then) = self.last_sample.unwrap_or((self.started, 0));
        let window = now.duration_since(since).as_secs_f64();
        let execs_per_sec = if window > 0.0 {
            runs.saturating_sub(runs_then) as f64 / window
        } else {
            0.0
        };
        self.last_sample = Some((now, runs));
        Sample {
            runs: self.runs_before + runs,
            execs_per_sec: (execs_per_sec * 10.0).round() / 10.0,
            cov: numbers.cov,
            ft: numbers.ft,
            corpus_entries: numbers.corpus_entries,
            corpus_bytes: numbers.corpus_bytes,
            crashes: numbers.crashes,
            rss_mb: own_rss_mb(),
            harness_rss_mb: shared.harness_rss.load(Ordering::Relaxed),
            mix: numbers.mix.map(|mix| {
                mix.groups()
                    .into_iter()
                    .filter(|(_, share)| *share > 0.0)
                    .map(|(name, share)| (name.to_string(), (share * 1000.0).round() / 1000.0))
                    .collect()
            }),
        }
    }

    fn write(&mut self, out: &Output, event: StatsEvent) {
        if self.failed {
            return;
        }
        let time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let elapsed = self.elapsed_before + self.started.elapsed().as_secs_f64();
        let line = StatsLine {
            v: STATS_VERSION,
            time: (time * 1000.0).round() / 1000.0,
            elapsed: (elapsed * 1000.0).round() / 1000.0,
            session: self.session,
            event,
        };
        if let Err(err) = self.file.append(&line) {
            self.failed = true;
            out.line(&format!(
                "WARNING: {err}; no more statistics are written this session"
            ));
        }
    }
}

/// The state's numbers a sample needs, taken under the lock.
#[derive(Debug, Clone, Copy)]
pub(super) struct Numbers {
    cov: usize,
    ft: usize,
    corpus_entries: usize,
    corpus_bytes: usize,
    crashes: usize,
    mix: Option<php_fuzz_mutate::Mix>,
}

impl Numbers {
    pub(super) fn of(state: &State) -> Numbers {
        Numbers {
            cov: state.features.edges(),
            ft: state.features.features(),
            corpus_entries: state.corpus.len(),
            corpus_bytes: state.corpus.total_bytes(),
            crashes: state.crashes.known_count(),
            mix: state.mix,
        }
    }
}

//! What to do about a harness that has gone quiet during a batch, decided
//! each poll slice from how long it has been silent and how much it grew.
//! A run that behaves never sees a signal (docs/protocol.md, "Signals").

use std::time::{Duration, Instant};

use rustix::process::Signal;

use crate::HarnessConfig;

/// How long the harness's own timeout handler gets to answer SIGALRM.
const ALARM_GRACE: Duration = Duration::from_millis(200);
/// Between PHP's two SIGPROFs: the first sets its time-limit flag (a fatal
/// error at the next opcode), the second ends a process stuck inside one
/// internal call, printing the file and line it was at.
const PROF_GRACE: Duration = Duration::from_millis(100);
/// After the second SIGPROF, before SIGKILL.
const KILL_GRACE: Duration = Duration::from_millis(300);
/// Growth since the last look that makes the engine look again, at least:
/// a 64th of the limit (32 MB of 2 GB) bounds what a chunk of trace weighs.
const MIN_GROWTH_MB: u64 = 16;
/// How often a streaming run is asked for its trace.
pub(crate) const STREAM_SLICE: Duration = Duration::from_millis(5);

/// What to do after one poll slice of silence.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Actions {
    /// Ask for the trace so far (SIGUSR1): the harness also checks its stack depth.
    pub progress: bool,
    /// A step of the timeout: SIGALRM, then SIGPROF twice.
    pub signal: Option<Signal>,
    pub kill: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Quiet,
    Alarmed,
    Profiled(u8),
}

#[derive(Debug)]
pub(crate) struct Watch {
    timeout: Duration,
    flush: Duration,
    /// The harness handles SIGALRM and SIGUSR1 (pcntl); without, they would kill it.
    signals: bool,
    /// Ask for the trace at every poll (a run re-done to learn where it dies).
    streaming: bool,
    /// When silence began: the last frame that ended a run or asked for source.
    since: Instant,
    stage: Stage,
    stage_at: Instant,
    looked_at_mb: u64,
    growth_mb: u64,
}

impl Watch {
    pub(crate) fn new(config: &HarnessConfig, signals: bool, now: Instant, rss_mb: u64) -> Watch {
        Watch {
            timeout: config.timeout,
            flush: config.flush_interval,
            signals,
            streaming: false,
            since: now,
            stage: Stage::Quiet,
            stage_at: now,
            looked_at_mb: rss_mb,
            growth_mb: (config.rss_limit_mb / 64).max(MIN_GROWTH_MB),
        }
    }

    /// Asks for the trace at every poll, whatever the growth.
    pub(crate) fn streaming(mut self, streaming: bool) -> Watch {
        self.streaming = streaming && self.signals;
        self
    }

    /// How long a wait for a frame may last before `poll` is due.
    pub(crate) fn slice(&self) -> Option<Duration> {
        self.streaming.then_some(STREAM_SLICE)
    }

    /// A frame that ends silence arrived.
    pub(crate) fn heard(&mut self, now: Instant) {
        self.since = now;
        self.stage = Stage::Quiet;
    }

    /// The timeout steps have begun: a death from here on is a timeout.
    pub(crate) fn timing_out(&self) -> bool {
        self.stage != Stage::Quiet
    }

    /// How long the harness has been silent.
    pub(crate) fn silence(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.since)
    }

    pub(crate) fn poll(&mut self, now: Instant, rss_mb: u64) -> Actions {
        let mut actions = Actions::default();
        if self.streaming || self.signals && rss_mb >= self.looked_at_mb + self.growth_mb {
            self.looked_at_mb = rss_mb;
            actions.progress = true;
        }
        // Outcomes are flushed at least every flush interval, so a silence
        // longer than timeout + flush means the current run is past the timeout.
        let overdue = self.silence(now) >= self.timeout + self.flush;
        let waited = now.saturating_duration_since(self.stage_at);
        match self.stage {
            Stage::Quiet if overdue => {
                self.stage = Stage::Alarmed;
                self.stage_at = now;
                actions.signal = Some(if self.signals {
                    Signal::ALARM
                } else {
                    self.stage = Stage::Profiled(1);
                    Signal::PROF
                });
            }
            Stage::Quiet => {}
            Stage::Alarmed if waited >= ALARM_GRACE => {
                self.stage = Stage::Profiled(1);
                self.stage_at = now;
                actions.signal = Some(Signal::PROF);
            }
            // The harness ignores an early alarm (time spent waiting for source).
            Stage::Alarmed => actions.signal = Some(Signal::ALARM),
            Stage::Profiled(1) if waited >= PROF_GRACE => {
                self.stage = Stage::Profiled(2);
                self.stage_at = now;
                actions.signal = Some(Signal::PROF);
            }
            Stage::Profiled(_) if waited >= KILL_GRACE => actions.kill = true,
            Stage::Profiled(_) => {}
        }
        actions
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::sync::Arc;

    fn config() -> HarnessConfig {
        let php = crate::PhpBinary {
            path: PathBuf::from("php"),
            version: "8.2.0".into(),
            version_id: 80200,
            signals: true,
        };
        let mut config = HarnessConfig::new(
            php,
            Arc::new(crate::Runtime::unpack().unwrap()),
            PathBuf::from("/t.php"),
        );
        config.timeout = Duration::from_secs(1);
        config.flush_interval = Duration::from_millis(100);
        config.rss_limit_mb = 1024;
        config
    }

    fn at(start: Instant, ms: u64) -> Instant {
        start + Duration::from_millis(ms)
    }

    #[test]
    fn a_run_within_the_timeout_sees_no_signal() {
        let start = Instant::now();
        let mut watch = Watch::new(&config(), true, start, 40);
        for ms in (50..1100).step_by(50) {
            assert_eq!(watch.poll(at(start, ms), 50), Actions::default(), "{ms} ms");
        }
        assert!(!watch.timing_out());
    }

    #[test]
    fn an_overrun_is_alarmed_then_profiled_twice_then_killed() {
        let start = Instant::now();
        let mut watch = Watch::new(&config(), true, start, 40);
        let steps: Vec<_> = (1000..2200)
            .step_by(50)
            .map(|ms| (ms, watch.poll(at(start, ms), 40)))
            .filter(|(_, a)| *a != Actions::default())
            .collect();
        assert_eq!(
            steps[0],
            (
                1100,
                Actions {
                    signal: Some(Signal::ALARM),
                    ..Actions::default()
                }
            )
        );
        let prof: Vec<_> = steps
            .iter()
            .filter(|(_, a)| a.signal == Some(Signal::PROF))
            .map(|s| s.0)
            .collect();
        assert_eq!(prof, vec![1300, 1400]);
        let kill = steps.iter().find(|(_, a)| a.kill).expect("killed").0;
        assert_eq!(kill, 1700, "a stuck harness costs about timeout + 0.6 s");
        assert!(watch.timing_out());
        watch.heard(at(start, 2000));
        assert!(!watch.timing_out());
    }

    #[test]
    fn without_pcntl_the_timeout_starts_with_sigprof_and_growth_asks_nothing() {
        let start = Instant::now();
        let mut watch = Watch::new(&config(), false, start, 40);
        assert!(
            !watch.poll(at(start, 50), 900).progress,
            "SIGUSR1 would kill it"
        );
        assert_eq!(watch.poll(at(start, 1100), 900).signal, Some(Signal::PROF));
    }

    #[test]
    fn growth_asks_for_progress_once_per_step() {
        let start = Instant::now();
        let mut watch = Watch::new(&config(), true, start, 40);
        assert!(!watch.poll(at(start, 50), 50).progress, "less than 16 MB");
        assert!(watch.poll(at(start, 100), 60).progress);
        assert!(!watch.poll(at(start, 150), 70).progress);
        assert!(watch.poll(at(start, 200), 80).progress);
    }
}

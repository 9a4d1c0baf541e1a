//! What to do about a harness that has gone quiet during a batch, decided
//! each poll slice from how long it has been silent and how much it grew.
//! A run that behaves never sees a signal (docs/protocol.md, "Signals").

use std::time::{Duration, Instant};

use rustix::process::Signal;

use crate::HarnessConfig;
use crate::memory::CpuTime;

// Each step of the timeout waits for the harness's own CPU time, not the
// clock's: on a loaded machine a harness that gets little CPU must not be
// stopped in the middle of its report (a second SIGPROF, say, would cut it
// short and leave the engine to search for the input at fault).

/// How long the harness's own timeout handler gets to answer SIGALRM. A
/// run in PHP code answers within microseconds of CPU; one that has not
/// after this is inside one long internal call.
const ALARM_GRACE: Duration = Duration::from_millis(80);
/// Between PHP's two SIGPROFs: the first sets its time-limit flag (a fatal
/// error at the next opcode, whose shutdown function then blocks SIGPROF),
/// the second ends a process stuck inside one internal call, printing the
/// file and line it was at.
const PROF_GRACE: Duration = Duration::from_millis(40);
/// After the second SIGPROF, before SIGKILL.
const KILL_GRACE: Duration = Duration::from_millis(300);
/// A harness blocked in a system call uses no CPU: a step waits this long
/// by the clock at most.
const STEP_WALL_LIMIT: Duration = Duration::from_millis(1500);
/// How often a streaming run is asked for its trace.
pub(crate) const STREAM_SLICE: Duration = Duration::from_millis(5);
/// The span over which the growth rate of a run running out of memory is measured.
const GROWTH_WINDOW: Duration = Duration::from_millis(300);
/// A run on its way to the memory limit is left to reach it for at most
/// this many timeouts of silence.
const MAX_OOM_WAIT: u32 = 5;

/// A run that grew more than this since its silence began, or that grows
/// fast enough to reach the memory limit within a timeout, is not asked
/// where it is stuck: it may be running out of memory.
const STUCK_GROWTH_KB: u64 = 8 << 10;
/// Growth below this (a few pages) is noise, not a rate to project.
const STUCK_NOISE_KB: u64 = 64;
/// A run's measured growth understates its rate (a loaded machine gives it
/// less of a core), so the projection is doubled: a run left alone costs a
/// timeout, a run asked wrongly loses an out-of-memory.
const STUCK_GROWTH_MARGIN: f64 = 2.0;
/// A run's CPU and memory are measured over at least this span before it
/// is asked where it is stuck: a loaded machine's late poll would leave
/// no more than that.
const STUCK_WINDOW_MS: u64 = 50;
/// The steps in which a growing harness's RSS climbs: Zend MM takes memory
/// in 2 MiB chunks, and first reuses pages freed earlier (the harness's own
/// 1 MiB trace buffer is freed at every drain and taken again). A run
/// growing 15 MB/s was seen flat for over 100 ms between steps, and 1 MiB
/// lower than the poll before (docs/hardening.md, "Known hangs").
const STUCK_STEP_KB: u64 = 2 << 10;

/// What to do after one poll slice of silence.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Actions {
    /// Ask for the trace so far (SIGUSR1), in streaming mode only.
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
    /// The harness's CPU time (ms) when the stage began.
    stage_cpu_ms: u64,
    limit_mb: u64,
    /// The harness's memory when the watch began (the Run was sent), in MiB.
    start_mb: u64,
    /// Memory samples of the last `GROWTH_WINDOW` or so, oldest first.
    samples: std::collections::VecDeque<(Instant, u64, u64)>,
    running_out: bool,
    /// The known-hang limit, if armed: a busy run past it is asked where it is.
    stuck: Option<Duration>,
    /// The harness's (time, CPU ms, RSS KiB) at the first poll of this silence.
    busy_from: Option<(Instant, u64, u64)>,
    /// The harness's highest RSS (KiB) at a poll of this silence.
    peak_kb: u64,
    /// This silence's run was asked where it is.
    asked_stuck: bool,
}

impl Watch {
    /// `rss_kb`: the harness's resident memory now, in KiB.
    pub(crate) fn new(config: &HarnessConfig, signals: bool, now: Instant, rss_kb: u64) -> Watch {
        Watch {
            timeout: config.timeout,
            flush: config.flush_interval,
            signals,
            streaming: false,
            since: now,
            stage: Stage::Quiet,
            stage_at: now,
            stage_cpu_ms: 0,
            limit_mb: config.rss_limit_mb,
            start_mb: rss_kb >> 10,
            samples: std::collections::VecDeque::new(),
            running_out: false,
            stuck: None,
            busy_from: None,
            peak_kb: 0,
            asked_stuck: false,
        }
    }

    /// Arms the known-hang limit (not for streaming runs): a run past it
    /// that keeps the CPU busy gets one SIGALRM, which the harness answers
    /// with where the run is (`Event::Stuck`) and goes on. A run that
    /// sleeps or waits is never asked: the signal would cut its wait short.
    pub(crate) fn stuck_limit(mut self, limit: Option<Duration>) -> Watch {
        self.stuck = limit.filter(|_| self.signals && !self.streaming);
        self
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
        self.busy_from = None;
        self.peak_kb = 0;
        self.asked_stuck = false;
    }

    /// The run in progress answered the known-hang limit's SIGALRM after
    /// running for `ran`. The outcomes the harness flushed before its
    /// answer reset the silence; the timeout counts from the run's start
    /// again, and the run is not asked twice.
    pub(crate) fn asked_stuck(&mut self, now: Instant, ran: Duration) {
        if let Some(start) = now.checked_sub(ran) {
            self.since = self.since.min(start);
        }
        self.asked_stuck = true;
    }

    /// Whether to ask the run in progress where it is: not asked yet, past
    /// the known-hang limit (outcomes are flushed every flush interval, so
    /// a silence of limit + flush means it began at least `limit` ago),
    /// busy (`busy_ms`: on a CPU or waiting in a run queue for one, a
    /// quarter of the time or more, so that a run starved on a loaded
    /// machine still counts and a sleeping one does not), and not growing (an out-of-memory on its
    /// way, in the function of a known hang say, is left to the memory watch).
    /// Memory is counted in KiB (pages), so that a slow out-of-memory,
    /// a megabyte or two into its run when the limit comes, is seen, and
    /// over `stuck_window_ms`, so that its steps are.
    fn stuck_due(&mut self, now: Instant, busy_ms: u64, rss_kb: u64) -> bool {
        let Some(limit) = self.stuck else {
            return false;
        };
        let (from, from_busy, from_kb) = *self.busy_from.get_or_insert((now, busy_ms, rss_kb));
        let wall_ms = now.saturating_duration_since(from).as_millis() as u64;
        let watched = wall_ms >= self.stuck_window_ms(rss_kb);
        let busy = busy_ms.saturating_sub(from_busy) * 4 >= wall_ms;
        // From its highest (noted at every poll, the memory watch's too): a
        // run that reached PHP's memory limit gives its memory back while it
        // reports the out-of-memory, and would look flat then.
        let grown = self.peak_kb.saturating_sub(from_kb);
        let reaches_limit = || {
            let rate_kb_per_ms = grown as f64 / wall_ms.max(1) as f64;
            rate_kb_per_ms * self.timeout.as_millis() as f64 * STUCK_GROWTH_MARGIN
                >= (self.limit_mb << 10).saturating_sub(rss_kb) as f64
        };
        let growing = grown > STUCK_GROWTH_KB || (grown >= STUCK_NOISE_KB && reaches_limit());
        !self.asked_stuck && watched && busy && !growing && self.silence(now) >= limit + self.flush
    }

    /// How long a run's memory is watched before it may be called flat:
    /// long enough for the slowest growth that matters (one that reaches
    /// the limit within `STUCK_GROWTH_MARGIN` timeouts) to climb two of
    /// its `STUCK_STEP_KB` steps, so that neither a flat stretch between
    /// steps nor a dip hides it. Under 50 ms with the default 2 GB limit;
    /// 1.4 s with 64 MB and an 8 s timeout.
    fn stuck_window_ms(&self, rss_kb: u64) -> u64 {
        let left_kb = (self.limit_mb << 10).saturating_sub(rss_kb).max(1) as f64;
        let slowest_kb_per_ms = left_kb / (self.timeout.as_millis() as f64 * STUCK_GROWTH_MARGIN);
        let window_ms = (2 * STUCK_STEP_KB) as f64 / slowest_kb_per_ms;
        (window_ms.ceil() as u64).max(STUCK_WINDOW_MS)
    }

    /// The timeout steps have begun: a death from here on is a timeout.
    pub(crate) fn timing_out(&self) -> bool {
        self.stage != Stage::Quiet
    }

    /// How long the harness has been silent.
    pub(crate) fn silence(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.since)
    }

    /// Whether the current stage has lasted `grace`, in the harness's CPU
    /// time as well as by the clock, or `STEP_WALL_LIMIT` by the clock.
    fn step_due(&self, now: Instant, cpu_ms: u64, grace: Duration) -> bool {
        let waited = now.saturating_duration_since(self.stage_at);
        let spent = Duration::from_millis(cpu_ms.saturating_sub(self.stage_cpu_ms));
        waited >= grace && spent >= grace || waited >= STEP_WALL_LIMIT
    }

    fn next_stage(&mut self, stage: Stage, now: Instant, cpu_ms: u64) {
        self.stage = stage;
        self.stage_at = now;
        self.stage_cpu_ms = cpu_ms;
    }

    /// Whether the run is on its way to run out of memory: it has taken a
    /// 16th of the limit or more since it began, and at the rate it grew
    /// over the last `GROWTH_WINDOW`, per second of its own CPU time, it
    /// reaches the limit within another timeout. Such a run is an
    /// out-of-memory, not a hang, however slowly a loaded machine lets it
    /// get there; it is left to reach PHP's memory limit, which then says
    /// where it ran out. A window with too little CPU to tell keeps the
    /// last answer; `MAX_OOM_WAIT` timeouts of silence end the wait.
    fn running_out_of_memory(&mut self, now: Instant, rss_mb: u64, cpu_ms: u64) -> bool {
        if self.silence(now) >= self.timeout * MAX_OOM_WAIT {
            return false;
        }
        self.samples.push_back((now, rss_mb, cpu_ms));
        while self.samples.len() > 2
            && now.saturating_duration_since(self.samples[1].0) >= GROWTH_WINDOW
        {
            self.samples.pop_front();
        }
        let (then, then_mb, then_cpu) = self.samples[0];
        let cpu_s = cpu_ms.saturating_sub(then_cpu) as f64 / 1000.0;
        if now.saturating_duration_since(then) < GROWTH_WINDOW / 2 || cpu_s < 0.03 {
            return self.running_out;
        }
        self.running_out = rss_mb > then_mb && rss_mb >= self.start_mb + self.limit_mb / 16 && {
            let rate_mb_per_cpu_s = (rss_mb - then_mb) as f64 / cpu_s;
            self.limit_mb.saturating_sub(rss_mb) as f64 / rate_mb_per_cpu_s
                <= self.timeout.as_secs_f64()
        };
        self.running_out
    }

    /// One poll slice of silence: `rss_kb` and `cpu` are the harness's
    /// memory (KiB) and CPU time so far.
    pub(crate) fn poll(&mut self, now: Instant, rss_kb: u64, cpu: impl Into<CpuTime>) -> Actions {
        let cpu = cpu.into();
        let cpu_ms = cpu.used_ms;
        let mut actions = Actions::default();
        self.peak_kb = self.peak_kb.max(rss_kb);
        let running_out = self.running_out_of_memory(now, rss_kb >> 10, cpu_ms);
        // A run that behaves gets no signal: its trace is bounded by its
        // own counters (FuzzingContext::drain), not by asking for it.
        actions.progress = self.streaming;
        // Outcomes are flushed at least every flush interval, so a silence
        // longer than timeout + flush means the current run is past the timeout.
        let overdue = self.silence(now) >= self.timeout + self.flush;
        let stuck =
            self.stage == Stage::Quiet && !running_out && self.stuck_due(now, cpu.busy_ms, rss_kb);
        match self.stage {
            Stage::Quiet if overdue && !running_out => {
                if self.signals {
                    self.next_stage(Stage::Alarmed, now, cpu_ms);
                    actions.signal = Some(Signal::ALARM);
                } else {
                    self.next_stage(Stage::Profiled(1), now, cpu_ms);
                    actions.signal = Some(Signal::PROF);
                }
            }
            Stage::Quiet if stuck && !overdue => {
                self.asked_stuck = true;
                actions.signal = Some(Signal::ALARM);
            }
            Stage::Quiet => {}
            Stage::Alarmed if self.step_due(now, cpu_ms, ALARM_GRACE) => {
                self.next_stage(Stage::Profiled(1), now, cpu_ms);
                actions.signal = Some(Signal::PROF);
            }
            // The harness ignores an early alarm (time spent waiting for source).
            Stage::Alarmed => actions.signal = Some(Signal::ALARM),
            Stage::Profiled(1) if self.step_due(now, cpu_ms, PROF_GRACE) => {
                self.next_stage(Stage::Profiled(2), now, cpu_ms);
                actions.signal = Some(Signal::PROF);
            }
            Stage::Profiled(_) if self.step_due(now, cpu_ms, KILL_GRACE) => actions.kill = true,
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

    /// `n` MiB in KiB, the unit the watch takes.
    fn mb(n: u64) -> u64 {
        n << 10
    }

    fn at(start: Instant, ms: u64) -> Instant {
        start + Duration::from_millis(ms)
    }

    #[test]
    fn a_run_within_the_timeout_sees_no_signal() {
        let start = Instant::now();
        let mut watch = Watch::new(&config(), true, start, mb(40));
        for ms in (50..1100).step_by(50) {
            assert_eq!(
                watch.poll(at(start, ms), mb(50), ms),
                Actions::default(),
                "{ms} ms"
            );
        }
        assert!(!watch.timing_out());
    }

    #[test]
    fn an_overrun_is_alarmed_then_profiled_twice_then_killed() {
        let start = Instant::now();
        let mut watch = Watch::new(&config(), true, start, mb(40));
        let steps: Vec<_> = (1000..2200)
            .step_by(50)
            .map(|ms| (ms, watch.poll(at(start, ms), mb(40), ms)))
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
        assert_eq!(prof, vec![1200, 1250]);
        let kill = steps.iter().find(|(_, a)| a.kill).expect("killed").0;
        assert_eq!(kill, 1550, "a stuck harness costs about timeout + 0.45 s");
        assert!(watch.timing_out());
        watch.heard(at(start, 2000));
        assert!(!watch.timing_out());
    }

    #[test]
    fn a_harness_that_gets_no_cpu_is_not_hurried_past_its_report() {
        // On a loaded machine: the harness had no CPU since the alarm, so it
        // has had no chance to answer. The clock alone moves it on, later.
        let start = Instant::now();
        let mut watch = Watch::new(&config(), true, start, mb(40));
        let steps: Vec<_> = (1000..5650)
            .step_by(50)
            .map(|ms| (ms, watch.poll(at(start, ms), mb(40), 0)))
            .filter(|(_, a)| a.signal == Some(Signal::PROF) || a.kill)
            .map(|s| s.0)
            .collect();
        assert_eq!(steps, vec![2600, 4100, 5600], "two SIGPROFs, then SIGKILL");
        // A harness that runs gets its grace in CPU time: 80 ms of it.
        let mut watch = Watch::new(&config(), true, start, mb(40));
        let cpu = |ms: u64| 5000 + ms.saturating_sub(1100) / 4;
        let prof = (1000..6000)
            .step_by(50)
            .find(|&ms| watch.poll(at(start, ms), mb(40), cpu(ms)).signal == Some(Signal::PROF));
        assert_eq!(
            prof,
            Some(1450),
            "a quarter of a core: 320 ms for 80 ms of CPU"
        );
    }

    #[test]
    fn a_busy_run_past_the_known_hang_limit_is_asked_once_where_it_is() {
        let start = Instant::now();
        let limit = Some(Duration::from_millis(200));
        let alarms = |watch: &mut Watch, cpu: &dyn Fn(u64) -> u64| -> Vec<u64> {
            (50..1100)
                .step_by(50)
                .filter(|&ms| watch.poll(at(start, ms), mb(40), cpu(ms)).signal.is_some())
                .collect()
        };
        // Busy: asked once past limit + flush (300 ms), then nothing until the timeout.
        let mut watch = Watch::new(&config(), true, start, mb(40)).stuck_limit(limit);
        assert_eq!(alarms(&mut watch, &|ms| ms), vec![300]);
        // Asleep (no CPU): never asked.
        let mut watch = Watch::new(&config(), true, start, mb(40)).stuck_limit(limit);
        assert_eq!(alarms(&mut watch, &|_| 7), Vec::<u64>::new());
        // Starved on a loaded machine: a tenth of a core used, but runnable
        // (waiting for a CPU) all along. Busy, so asked.
        let mut watch = Watch::new(&config(), true, start, mb(40)).stuck_limit(limit);
        let starved: Vec<u64> = (50..1100)
            .step_by(50)
            .filter(|&ms| {
                let cpu = CpuTime {
                    used_ms: ms / 10,
                    busy_ms: ms,
                };
                watch.poll(at(start, ms), mb(40), cpu).signal.is_some()
            })
            .collect();
        assert_eq!(starved, vec![300]);
        // Growing by 100 MB/s: over 8 MB since its first poll when due, not asked.
        let mut watch = Watch::new(&config(), true, start, mb(40)).stuck_limit(limit);
        let grown: Vec<u64> = (50..1100)
            .step_by(50)
            .filter(|&ms| {
                watch
                    .poll(at(start, ms), mb(40 + ms / 10), ms)
                    .signal
                    .is_some()
            })
            .collect();
        assert_eq!(grown, Vec::<u64>::new());
        // A frame starts a new silence: the next run may be asked again.
        let mut watch = Watch::new(&config(), true, start, mb(40)).stuck_limit(limit);
        watch.poll(at(start, 300), mb(40), 300);
        watch.heard(at(start, 320));
        let again = (350..800)
            .step_by(50)
            .find(|&ms| watch.poll(at(start, ms), mb(40), ms).signal.is_some());
        assert_eq!(again, Some(650));
        // The answer's flushed outcomes do not delay the timeout: it counts
        // from the run's start (here 0), and the run is not asked again.
        let mut watch = Watch::new(&config(), true, start, mb(40)).stuck_limit(limit);
        assert!(watch.poll(at(start, 250), mb(40), 250).signal.is_none());
        assert!(watch.poll(at(start, 300), mb(40), 300).signal.is_some());
        watch.heard(at(start, 305));
        watch.asked_stuck(at(start, 306), Duration::from_millis(306));
        let steps: Vec<u64> = (350..1200)
            .step_by(50)
            .filter(|&ms| watch.poll(at(start, ms), mb(40), ms).signal.is_some())
            .collect();
        assert_eq!(
            steps,
            vec![1100, 1150],
            "the timeout's SIGALRM, from the run's start"
        );
        // Not armed without pcntl, nor for streaming runs.
        let mut watch = Watch::new(&config(), false, start, mb(40)).stuck_limit(limit);
        assert_eq!(alarms(&mut watch, &|ms| ms), Vec::<u64>::new());
        let mut watch = Watch::new(&config(), true, start, mb(40))
            .streaming(true)
            .stuck_limit(limit);
        assert_eq!(alarms(&mut watch, &|ms| ms), Vec::<u64>::new());
    }

    #[test]
    fn a_slow_out_of_memory_whose_memory_climbs_in_steps_is_not_asked_where_it_is() {
        // hostile_e2e's 'm' as /proc showed it: 15 MB/s in steps of up to
        // 2 MiB, flat for 100 ms and more between them, dipping by 1 MiB when
        // the harness's trace buffer is freed. 64 MB limit, 8 s timeout,
        // known-hang limit 100 ms: flat from the first poll (50 ms) to the
        // limit's (150 ms), which alone once got it stopped as the hang.
        let start = Instant::now();
        let mut small = config();
        small.timeout = Duration::from_secs(8);
        small.flush_interval = Duration::from_millis(50);
        small.rss_limit_mb = 64;
        let limit = Some(Duration::from_millis(100));
        let stairs = |ms: u64| {
            let climbed = ms.saturating_sub(30) * 15 / 2048 * 2048;
            let dip = if ms / 50 % 4 == 3 {
                climbed.min(1024)
            } else {
                0
            };
            mb(19) + climbed - dip
        };
        let mut watch = Watch::new(&small, true, start, mb(19)).stuck_limit(limit);
        let asked = (50..3000)
            .step_by(50)
            .find(|&ms| watch.poll(at(start, ms), stairs(ms), ms).signal.is_some());
        assert_eq!(asked, None, "a climbing run is left to run out of memory");
        // A flat run there is asked once its memory was watched long enough
        // to see the slowest growth that matters climb two steps: 1.42 s.
        let mut watch = Watch::new(&small, true, start, mb(19)).stuck_limit(limit);
        let asked = (50..3000)
            .step_by(50)
            .find(|&ms| watch.poll(at(start, ms), mb(19), ms).signal.is_some());
        assert_eq!(asked, Some(1500), "well before the 8 s timeout");
    }

    #[test]
    fn a_run_that_gave_its_memory_back_reporting_an_out_of_memory_is_not_asked() {
        // 'm' again: 15 MB/s up to the 64 MB limit at 3 s, where PHP's
        // fatal error frees it all while the harness, busy, reports it.
        let start = Instant::now();
        let mut small = config();
        small.timeout = Duration::from_secs(8);
        small.flush_interval = Duration::from_millis(50);
        small.rss_limit_mb = 64;
        let rss = |ms: u64| if ms < 3000 { mb(19) + ms * 15 } else { mb(19) };
        let mut watch =
            Watch::new(&small, true, start, mb(19)).stuck_limit(Some(Duration::from_millis(100)));
        let asked = (50..3500)
            .step_by(50)
            .find(|&ms| watch.poll(at(start, ms), rss(ms), ms).signal.is_some());
        assert_eq!(asked, None, "asked while reporting its out-of-memory");
    }

    #[test]
    fn without_pcntl_the_timeout_starts_with_sigprof_and_growth_asks_nothing() {
        let start = Instant::now();
        let mut watch = Watch::new(&config(), false, start, mb(40));
        assert!(
            !watch.poll(at(start, 50), mb(900), 50).progress,
            "SIGUSR1 would kill it"
        );
        assert_eq!(
            watch.poll(at(start, 1100), mb(900), 1100).signal,
            Some(Signal::PROF)
        );
    }

    #[test]
    fn a_run_on_its_way_to_the_memory_limit_is_left_to_reach_it() {
        // 1024 MB limit, 1 s timeout: at 1100 ms the run holds 700 MB and
        // grows 400 MB/s, so it runs out within another timeout: no alarm.
        let start = Instant::now();
        let mut watch = Watch::new(&config(), true, start, mb(40));
        let rss = |ms: u64| 40 + ms * 6 / 10;
        let alarm = (50..2000)
            .step_by(50)
            .find(|&ms| watch.poll(at(start, ms), mb(rss(ms)), ms).signal.is_some());
        assert_eq!(alarm, None, "left to reach the limit");
        // Growth that stops is a hang again.
        let mut watch = Watch::new(&config(), true, start, mb(40));
        let flat = |ms: u64| 40 + ms.min(1000) * 6 / 10;
        let alarm = (50..2000)
            .step_by(50)
            .find(|&ms| watch.poll(at(start, ms), mb(flat(ms)), ms).signal.is_some());
        assert_eq!(alarm, Some(1150), "alarmed once the growth slows");
        // A hang whose trace grows a little is alarmed on time.
        let mut watch = Watch::new(&config(), true, start, mb(40));
        let slow = |ms: u64| 40 + ms / 20;
        let alarm = (50..2000)
            .step_by(50)
            .find(|&ms| watch.poll(at(start, ms), mb(slow(ms)), ms).signal.is_some());
        assert_eq!(alarm, Some(1100));
        // On a loaded machine: a quarter of a core, 300 MB/s by the clock,
        // 1.2 GB per second of its CPU: it runs out within a timeout of CPU.
        let mut watch = Watch::new(&config(), true, start, mb(40));
        let loaded = |ms: u64| 40 + ms * 3 / 10;
        let alarm = (50..4000).step_by(50).find(|&ms| {
            watch
                .poll(at(start, ms), mb(loaded(ms)), ms / 4)
                .signal
                .is_some()
        });
        assert_eq!(alarm, None, "left to reach the limit, loaded");
    }

    #[test]
    fn a_growing_run_gets_no_signal_and_a_streaming_one_is_asked_at_every_poll() {
        let start = Instant::now();
        let mut watch = Watch::new(&config(), true, start, mb(40));
        for ms in (50..1000).step_by(50) {
            assert_eq!(
                watch.poll(at(start, ms), mb(40 + ms), ms),
                Actions::default(),
                "{ms} ms: growing by 1 MB per ms, within the timeout"
            );
        }
        let mut watch = Watch::new(&config(), true, start, mb(40)).streaming(true);
        assert!(watch.poll(at(start, 50), mb(40), 50).progress);
        assert!(watch.poll(at(start, 100), mb(40), 100).progress);
    }
}

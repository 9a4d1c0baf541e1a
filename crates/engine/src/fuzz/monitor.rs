//! The monitor thread: it watches the limits, picks up entries for
//! --reload, prints a pulse line while nothing else happens, samples the
//! statistics and writes the findings' hit counts to their reports.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::setup::report_load;
use super::stats::{Numbers, stats_interval};
use super::{Shared, StopReason};
use crate::output::Event;

const PULSE_EVERY: Duration = Duration::from_secs(3);
/// How often the hits of known findings reach their reports on disk: a
/// campaign killed with SIGKILL loses at most this much of them.
const HITS_EVERY: Duration = Duration::from_secs(2);

/// Watches the limits and prints a pulse line while nothing else happens.
pub(super) fn monitor(shared: &Shared) {
    let mut last_pulse = Instant::now();
    let mut last_reload = Instant::now();
    let mut last_sample = Instant::now();
    let mut last_hits = Instant::now();
    let mut hits_failed = false;
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let mut state = shared.lock();
        if shared.interrupted.load(Ordering::Relaxed) {
            state.stop.get_or_insert(StopReason::Interrupted);
        }
        if shared.max_time_reached() {
            state.stop.get_or_insert(StopReason::MaxTime);
        }
        if shared
            .options
            .max_runs
            .is_some_and(|max| shared.runs.load(Ordering::Relaxed) >= max)
        {
            state.stop.get_or_insert(StopReason::MaxRuns);
        }
        if state.stop.is_some() {
            return;
        }
        if let Some(every) = shared.options.reload
            && last_reload.elapsed() >= every
        {
            last_reload = Instant::now();
            match state.corpus_dir.load_new() {
                Ok(loaded) => {
                    report_load(&shared.out, &loaded, Some(state.max_len));
                    let mut pending = shared.reloaded.lock().unwrap_or_else(|p| p.into_inner());
                    pending.extend(loaded.files);
                }
                Err(err) => shared.out.line(&format!("WARNING: --reload: {err}")),
            }
        }
        if last_hits.elapsed() >= HITS_EVERY {
            last_hits = Instant::now();
            // Said once: the end of the campaign tries again, and says why.
            if let Err(err) = state.crashes.flush_hits()
                && !std::mem::replace(&mut hits_failed, true)
            {
                shared.out.line(&format!(
                    "WARNING: cannot update the hit counts of the crash reports: {err}"
                ));
            }
        }
        if last_pulse.elapsed() >= PULSE_EVERY && state.last_status.elapsed() >= PULSE_EVERY {
            last_pulse = Instant::now();
            shared.print_status(&mut state, Event::Pulse, None);
        }
        if shared.stats.is_some()
            && last_sample.elapsed() >= stats_interval(shared.started.elapsed())
        {
            last_sample = Instant::now();
            let numbers = Numbers::of(&state);
            drop(state);
            if let Some(mut stats) = shared.stats() {
                stats.sample(shared, numbers);
            }
        }
    }
}

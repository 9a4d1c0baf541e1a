//! The known-hang limit, as AFL splits its fuzzing timeout from its hang
//! timeout: a run past a short limit is asked where it is, and stopped at
//! once if a hang already found was stuck at that place. Only a hang that
//! is new costs the whole `--timeout`, so a target that hangs often spends
//! its time running inputs rather than waiting out the same hang
//! (docs/hardening.md, "Known hangs").

use std::sync::Arc;
use std::time::Duration;

use super::Executor;
use crate::{Crash, CrashKind, Problem, triage};

/// Whether a timeout at this place is a hang already found. The engine
/// answers, by its signatures (two hangs are one when caught in the same
/// function).
pub type KnownHang = Arc<dyn Fn(&Crash) -> bool + Send + Sync>;

/// The limit and the judge, once armed.
pub(super) struct StuckLimit {
    limit: Duration,
    known: KnownHang,
}

impl Executor {
    /// From the next batch on, a run that keeps the CPU busy past `limit`
    /// is asked where it is (one SIGALRM, which the harness answers and
    /// goes on), and stopped there as a timeout if `known` says a hang was
    /// found at that place; else it runs on to the timeout. A `limit` not
    /// below half the timeout arms nothing.
    pub fn stop_known_hangs(&mut self, limit: Duration, known: KnownHang) {
        self.stuck = Some(StuckLimit { limit, known });
    }

    /// The known-hang limit of the next batch, if armed and useful.
    pub(super) fn stuck_limit(&self) -> Option<Duration> {
        let limit = self.stuck.as_ref()?.limit;
        (limit < self.config.timeout / 2).then_some(limit)
    }

    /// The run stuck where `problem` says: its timeout, if a known hang was
    /// stuck there.
    pub(super) fn known_hang(&mut self, problem: Problem) -> Option<Crash> {
        let mut crash = Crash {
            kind: CrashKind::Timeout,
            problem,
            stderr: None,
            note: None,
        };
        let coverage = self.coverage(&[]);
        triage::attribute(
            &mut crash,
            &self.sources,
            self.config.runtime.root(),
            coverage,
        );
        let known = (self.stuck.as_ref()?.known)(&crash);
        if known {
            self.stats.known_hang_stops += 1;
        }
        known.then_some(crash)
    }
}

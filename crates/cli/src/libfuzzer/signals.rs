//! libFuzzer's signal behaviour: SIGINT stops the run and exits with
//! `-interrupted_exitcode` (72); SIGTERM stops it, prints the final stats
//! and exits 0. Either way the engine stops at its next check.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use signal_hook::consts::{SIGINT, SIGTERM};

pub struct StopSignals {
    /// Set by either signal: what the engine watches.
    pub stop: Arc<AtomicBool>,
    interrupted: Arc<AtomicBool>,
    terminated: Arc<AtomicBool>,
}

impl StopSignals {
    pub fn install() -> anyhow::Result<StopSignals> {
        let signals = StopSignals {
            stop: Arc::new(AtomicBool::new(false)),
            interrupted: Arc::new(AtomicBool::new(false)),
            terminated: Arc::new(AtomicBool::new(false)),
        };
        for (signal, flag) in [
            (SIGINT, &signals.stop),
            (SIGINT, &signals.interrupted),
            (SIGTERM, &signals.stop),
            (SIGTERM, &signals.terminated),
        ] {
            signal_hook::flag::register(signal, Arc::clone(flag))
                .context("cannot install the SIGINT/SIGTERM handlers")?;
        }
        Ok(signals)
    }

    /// SIGINT arrived.
    pub fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
    }

    /// SIGTERM arrived (and no SIGINT).
    pub fn terminated(&self) -> bool {
        self.terminated.load(Ordering::SeqCst) && !self.interrupted()
    }
}

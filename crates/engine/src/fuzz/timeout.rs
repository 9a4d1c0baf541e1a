//! The adaptive timeout: without `--timeout`, the seeds run with the upper
//! bound, and the campaign then uses a multiple of the slowest seed's run
//! (`crate::adaptive_timeout`), as AFL derives its `-t` from calibration;
//! and the known-hang limit, AFL's split of its fuzzing timeout from its
//! hang timeout.

use std::sync::Arc;
use std::time::Duration;

use php_fuzz_harness::{CrashKind, Executor, HarnessConfig, KnownHang};

use super::Shared;
use crate::crashes::replay_flags;
use crate::output::{AdaptedTimeout, CampaignEvent};

/// Sets the campaign's timeout from the slowest seed (`slowest_micros`),
/// if it adapts: for `first` (whose harness takes it with its next batch),
/// for every harness started from now on, and in reproduce commands.
pub(super) fn adapt_to_seeds(shared: &Shared, first: &mut Executor, slowest_micros: u32) {
    if !shared.options.adaptive_timeout {
        return;
    }
    let slowest = Duration::from_micros(u64::from(slowest_micros));
    let timeout = crate::adaptive_timeout(slowest);
    let mut config: HarnessConfig = (*shared.harness()).clone();
    config.timeout = timeout;
    let config = Arc::new(config);
    first.set_config(Arc::clone(&config));
    *shared.harness.write().unwrap_or_else(|p| p.into_inner()) = Arc::clone(&config);
    shared
        .lock()
        .crashes
        .set_replay_flags(replay_flags(&config, shared.sources.style()));
    shared
        .out
        .campaign(CampaignEvent::TimeoutAdapted(AdaptedTimeout {
            timeout,
            slowest_seed: slowest,
        }));
}

/// The known-hang limit is this many times the slowest seed's run...
const KNOWN_HANG_FACTOR: u32 = 5;
/// ...and at least this.
const KNOWN_HANG_FLOOR: Duration = Duration::from_millis(50);

/// The known-hang limit and its judge: a run that keeps the CPU busy for
/// five times the slowest seed's run (at least 50 ms) is stopped there if
/// it is stuck where a hang already found was (same signature); else it
/// runs on to the timeout. So only a new hang costs the whole timeout.
pub(super) fn known_hangs(shared: &Arc<Shared>, slowest_micros: u32) -> (Duration, KnownHang) {
    let slowest = Duration::from_micros(u64::from(slowest_micros));
    let limit = slowest
        .saturating_mul(KNOWN_HANG_FACTOR)
        .max(KNOWN_HANG_FLOOR);
    let shared = Arc::clone(shared);
    let known: KnownHang = Arc::new(move |crash| {
        crash.kind == CrashKind::Timeout && shared.lock().crashes.knows(crash)
    });
    (limit, known)
}

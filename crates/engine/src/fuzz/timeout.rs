//! The adaptive timeout: without `--timeout`, the seeds run with the upper
//! bound, and the campaign then uses a multiple of the slowest seed's run
//! (`crate::adaptive_timeout`), as AFL derives its `-t` from calibration.

use std::sync::Arc;
use std::time::Duration;

use php_fuzz_harness::{Executor, HarnessConfig};

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

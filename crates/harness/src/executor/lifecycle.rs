//! Starting the executor's harness process: a spare when one is loaded,
//! retries for a harness that dies while loading a target that loaded
//! before, and the stack-catching harness of a re-run.

use std::sync::Arc;

use super::Executor;
use crate::HarnessError;
use crate::process::HarnessProcess;
use crate::spare::Spare;

/// After this many harness deaths while starting, give up.
const MAX_START_FAILURES: u32 = 5;

impl Executor {
    /// Ends the current harness, so that the next batch runs on a fresh
    /// one, and starts loading that one now (a re-run alone wants a fresh
    /// harness every time, and should not wait for it).
    pub fn retire_process(&mut self) {
        self.drop_process_and_queue();
        if self.spare.is_none() && self.info.is_some() && !self.forker.serving() {
            let config = Arc::clone(&self.config);
            self.spare = Some(Spare::start(config, Arc::clone(&self.sources)));
        }
    }

    pub(super) fn ensure_process(&mut self) -> Result<(), HarnessError> {
        if self.process.is_some() {
            return Ok(());
        }
        let mut failures = 0;
        loop {
            let spawned = match self.forker.next(&self.config, &self.sources) {
                Some(forked) => forked,
                None => match self.spare.take().and_then(Spare::take) {
                    Some(spawned) => spawned,
                    None => HarnessProcess::spawn(&self.config, &self.sources),
                },
            };
            match spawned {
                Ok(process) => {
                    self.stats.harness_starts += 1;
                    if std::mem::take(&mut self.retired_for_memory) {
                        self.stats.memory_restarts += 1;
                    }
                    self.stats.forks = self.forker.forks;
                    let restart = self.info.is_some();
                    self.info = Some(process.info.clone());
                    self.process = Some(process);
                    if restart && !self.forker.serving() {
                        // This target kills its harness: have the next one ready.
                        let config = Arc::clone(&self.config);
                        self.spare = Some(Spare::start(config, Arc::clone(&self.sources)));
                    }
                    return Ok(());
                }
                // The target loaded before: a harness dying at load is flaky, retry.
                Err(HarnessError::Load(failure))
                    if self.info.is_some() && failure.problem.is_none() =>
                {
                    failures += 1;
                    if failures >= MAX_START_FAILURES {
                        return Err(HarnessError::KeepsDying {
                            count: failures,
                            last: failure.summary,
                        });
                    }
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// Replaces the harness with one that notes the PHP stack at every
    /// block, to re-run one input whose fatal error needs its stack (one
    /// large allocation: docs/protocol.md). Never used to fuzz.
    pub(super) fn start_catching(&mut self) -> Result<(), HarnessError> {
        self.drop_process();
        let mut config = (*self.config).clone();
        config.catch_fatal_stack = true;
        self.process = Some(HarnessProcess::spawn(&config, &self.sources)?);
        self.stats.harness_starts += 1;
        Ok(())
    }

    /// Drops the harness, and with it whatever else was queued on it.
    pub(super) fn drop_process_and_queue(&mut self) {
        self.drop_process();
        for other in &mut self.queued {
            other.sent = false;
        }
    }
}

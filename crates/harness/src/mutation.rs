//! The target's custom mutator and crossover, run in a `php` process of
//! their own (the target file loaded, but never fuzzed), so a crash of the
//! target never takes the mutator down and a failing mutator is never taken
//! for a crash of the target. One `Mutate` request carries a whole batch.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::process::{HarnessProcess, Wait};
use crate::protocol::{self, Event, MutationItem, Request};
use crate::{HarnessConfig, HarnessError, Problem, SourceServer, triage};

/// The custom mutator failed: it threw, raised a warning, returned something
/// other than a string, or its process died or hung.
#[derive(Debug, Clone)]
pub struct MutatorFailure {
    pub summary: String,
    /// PHP's report, when the mutator threw or warned.
    pub problem: Option<Problem>,
    pub stderr: String,
}

impl std::fmt::Display for MutatorFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "mutator error: {}", self.summary)?;
        match &self.problem {
            Some(problem) => {
                for line in problem.trace.lines() {
                    write!(f, "\n    {line}")?;
                }
            }
            None => {
                for line in self
                    .stderr
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .take(10)
                {
                    write!(f, "\n    php: {line}")?;
                }
            }
        }
        Ok(())
    }
}

/// A `\PhpFuzz\mutate()` call: the `call`-th of the mutator call with `seed`.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinMutation<'a> {
    pub seed: u32,
    pub call: u32,
    pub data: &'a [u8],
    pub max_len: usize,
}

pub struct MutatorProcess {
    config: Arc<HarnessConfig>,
    sources: Arc<SourceServer>,
    process: HarnessProcess,
    reply: Vec<u8>,
}

impl MutatorProcess {
    pub fn spawn(
        config: Arc<HarnessConfig>,
        sources: Arc<SourceServer>,
    ) -> Result<MutatorProcess, HarnessError> {
        let process = HarnessProcess::spawn(&config, &sources)?;
        Ok(MutatorProcess {
            config,
            sources,
            process,
            reply: Vec::new(),
        })
    }

    /// Has the PHP side make one mutant per item and passes each to
    /// `on_mutant`, in order. `builtin` answers `\PhpFuzz\mutate()`: it
    /// writes the mutant into its (empty) output buffer.
    pub fn mutate(
        &mut self,
        items: &[MutationItem<'_>],
        builtin: &mut dyn FnMut(BuiltinMutation<'_>, &mut Vec<u8>),
        mut on_mutant: impl FnMut(usize, &[u8]),
    ) -> Result<(), HarnessError> {
        let process = &mut self.process;
        process
            .send(&Request::Mutate { items })
            .map_err(HarnessError::Pipe)?;
        // A mutator has the target's timeout per item, loosely.
        let silence = self.config.timeout + self.config.load_timeout;
        let mut deadline = Instant::now() + silence;
        loop {
            match process
                .wait_frame(Some(deadline))
                .map_err(HarnessError::Pipe)?
            {
                Wait::Frame => {}
                Wait::Idle if Instant::now() < deadline => continue,
                Wait::Idle => {
                    process.kill();
                    return Err(self.failure(format!(
                        "the custom mutator did not answer within {} s",
                        silence.as_secs()
                    )));
                }
                Wait::Eof => {
                    let status = process.wait_exit(Duration::from_secs(2));
                    let stderr = process.stderr_tail();
                    let message = triage::death_message(status, &stderr).replacen(
                        "the harness died",
                        "the custom mutator's php process died",
                        1,
                    );
                    return Err(self.failure(message));
                }
                Wait::Garbage(what) => {
                    process.kill();
                    return Err(self.failure(format!(
                        "the custom mutator's php process wrote into the protocol pipe: {what}"
                    )));
                }
            }
            let event = protocol::decode_event(process.frame_bytes())
                .map_err(|e| HarnessError::Protocol(e.to_string()))?;
            match event {
                Event::Mutants { mutants } => {
                    if mutants.len() != items.len() {
                        return Err(HarnessError::Protocol(format!(
                            "{} mutants for {} items",
                            mutants.len(),
                            items.len()
                        )));
                    }
                    for (index, mutant) in mutants.iter().enumerate() {
                        let max_len = items[index].max_len as usize;
                        on_mutant(index, &mutant[..mutant.len().min(max_len)]);
                    }
                    process.consume_frame();
                    return Ok(());
                }
                Event::MutateRequest {
                    seed,
                    call,
                    max_len,
                    data,
                } => {
                    self.reply.clear();
                    let call = BuiltinMutation {
                        seed,
                        call,
                        data,
                        max_len: max_len as usize,
                    };
                    builtin(call, &mut self.reply);
                    process.consume_frame();
                    process
                        .send(&Request::Mutated { data: &self.reply })
                        .map_err(HarnessError::Pipe)?;
                }
                Event::SourceRequest { path } => {
                    let path = path.to_vec();
                    process.answer_source_request(&path, &self.sources)?;
                }
                Event::MutatorFailed { problem } => {
                    let problem = Problem::from_wire(&problem);
                    process.consume_frame();
                    return Err(HarnessError::Mutator(Box::new(MutatorFailure {
                        summary: problem.headline(),
                        problem: Some(problem),
                        stderr: String::new(),
                    })));
                }
                other => {
                    return Err(HarnessError::Protocol(format!(
                        "unexpected event while mutating: {other:?}"
                    )));
                }
            }
            deadline = Instant::now() + silence;
        }
    }

    fn failure(&mut self, summary: String) -> HarnessError {
        HarnessError::Mutator(Box::new(MutatorFailure {
            summary,
            problem: None,
            stderr: self.process.stderr_tail(),
        }))
    }
}

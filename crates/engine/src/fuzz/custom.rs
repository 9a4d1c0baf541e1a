//! Mutants from the target's own mutator and crossover (`setCustomMutator()`,
//! `setCustomCrossOver()`), made in PHP a batch at a time.
//!
//! Mix: with a custom mutator, every mutant comes from PHP, as in libFuzzer;
//! if a custom crossover is set too, half of them come from it. With only a
//! custom crossover, one mutant in `CROSSOVER_ONLY_ONE_IN` comes from it and
//! the rest from the built-in mutators. Every choice and every seed handed
//! to PHP comes from the worker's generator, so `--seed` replays a campaign.

use std::ops::Range;
use std::sync::Arc;

use php_fuzz_harness::{
    BuiltinMutation, CustomHooks, HarnessConfig, HarnessError, MutationItem, MutatorProcess,
    SourceServer,
};
use php_fuzz_mutate::{Dictionary, FuzzRng, Mutator, MutatorKind, Sequence};
use rand::RngExt;

use super::scratch::Scratch;
use crate::corpus::EntryId;

/// With only a custom crossover: how often a mutant comes from it.
const CROSSOVER_ONLY_ONE_IN: u32 = 8;

/// What a campaign needs to start custom mutation processes.
pub(super) struct CustomSetup {
    pub hooks: CustomHooks,
    pub harness: Arc<HarnessConfig>,
    pub sources: Arc<SourceServer>,
}

/// A mutant to be made in PHP.
struct Plan {
    parent: EntryId,
    parent_len: usize,
    crossover: bool,
    seed: u32,
    max_len: usize,
    data: Range<usize>,
    partner: Range<usize>,
}

/// One worker's custom mutation: its PHP process (started on first use),
/// the mutants planned for the batch being built, and the built-in mutator
/// that answers `\PhpFuzz\mutate()`.
pub(super) struct CustomMutation {
    hooks: CustomHooks,
    harness: Arc<HarnessConfig>,
    sources: Arc<SourceServer>,
    process: Option<MutatorProcess>,
    builtin: Mutator,
    plans: Vec<Plan>,
    /// The parents and partners of `plans`, back to back.
    arena: Vec<u8>,
}

impl CustomMutation {
    pub fn new(setup: &CustomSetup, dictionary: Dictionary) -> CustomMutation {
        CustomMutation {
            hooks: setup.hooks,
            harness: Arc::clone(&setup.harness),
            sources: Arc::clone(&setup.sources),
            process: None,
            builtin: Mutator::new(0, dictionary),
            plans: Vec::new(),
            arena: Vec::new(),
        }
    }

    /// Decides with `rng` whether the next mutant of `parent` comes from PHP,
    /// and if so, plans it; false leaves it to the built-in mutators.
    pub fn plan(
        &mut self,
        rng: &mut FuzzRng,
        parent: EntryId,
        parent_data: &[u8],
        partner_data: &[u8],
        max_len: usize,
    ) -> bool {
        let crossover = if self.hooks.mutator {
            self.hooks.crossover && rng.random_bool(0.5)
        } else if rng.random_ratio(1, CROSSOVER_ONLY_ONE_IN) {
            true
        } else {
            return false;
        };
        let seed: u32 = rng.random();
        let start = self.arena.len();
        self.arena.extend_from_slice(parent_data);
        let middle = self.arena.len();
        if crossover {
            self.arena.extend_from_slice(partner_data);
        }
        self.plans.push(Plan {
            parent,
            parent_len: parent_data.len(),
            crossover,
            seed,
            max_len,
            data: start..middle,
            partner: middle..self.arena.len(),
        });
        true
    }

    /// Has PHP make the planned mutants and queues them in `scratch`.
    pub fn run(&mut self, scratch: &mut Scratch) -> Result<(), HarnessError> {
        if self.plans.is_empty() {
            return Ok(());
        }
        if self.process.is_none() {
            self.process = Some(MutatorProcess::spawn(
                Arc::clone(&self.harness),
                Arc::clone(&self.sources),
            )?);
        }
        let CustomMutation {
            process,
            builtin,
            plans,
            arena,
            ..
        } = self;
        let items: Vec<MutationItem<'_>> = plans
            .iter()
            .map(|plan| MutationItem {
                crossover: plan.crossover,
                seed: plan.seed,
                max_len: plan.max_len as u64,
                data: &arena[plan.data.clone()],
                partner: &arena[plan.partner.clone()],
            })
            .collect();
        let result = process.as_mut().expect("started above").mutate(
            &items,
            &mut |call: BuiltinMutation<'_>, out: &mut Vec<u8>| {
                builtin.reseed((u64::from(call.seed) << 32) | u64::from(call.call));
                out.extend_from_slice(call.data);
                builtin.mutate(out, call.max_len, None);
            },
            |index, mutant| {
                let plan = &plans[index];
                let kind = if plan.crossover {
                    MutatorKind::CustomCrossOver
                } else {
                    MutatorKind::Custom
                };
                scratch.push_custom_mutant(
                    plan.parent,
                    plan.parent_len,
                    mutant,
                    Sequence::single(kind),
                );
            },
        );
        drop(items);
        plans.clear();
        arena.clear();
        result
    }
}

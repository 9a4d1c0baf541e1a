//! Which mutations to make: the mutation schedule (docs/scheduling.md).
//!
//! Every source of mutants is an *arm*: each byte mutator of
//! [`MutatorKind::ALL`] (the dictionaries and CMP among them), input-to-state
//! candidates, grammar mutants and the target's custom mutator. The
//! [`Schedule::Uniform`] schedule is libFuzzer's: byte mutators drawn
//! uniformly, the other sources at fixed shares. [`Schedule::Learned`]
//! credits each arm with what its mutants find, new features per unit of
//! execution cost, and draws arms in proportion to that rate (probability
//! matching, as in adaptive operator selection), with a floor so none
//! starves:
//!
//! - **credit:** a mutant that finds `f` new features gives `f` to the
//!   arms that made it (a stack of byte mutations shares it); every mutant
//!   costs its arms the blocks its run executed, plus a fixed overhead per
//!   run. Both are counts the harness reports, never a clock, so `--seed`
//!   replays a campaign;
//! - **recency:** every [`DECAY_EVERY`] runs, credit and cost are halved,
//!   so the rates follow what pays *now* (a dictionary word pays early, a
//!   crossover late);
//! - **draw:** an arm's weight is `FLOOR / n + (1 - FLOOR) × scale × rate
//!   / Σ scale × rate`, its rate `(credit + prior) / (cost + prior cost)`:
//!   an arm that has found nothing yet starts at the average. The scale
//!   makes equal rates give fixed odds (input-to-state candidates half of
//!   a batch, grammar mutants a third of the rest: the uniform schedule's
//!   until it gave grammar mutants a share of the target's work instead,
//!   and what docs/evaluations/scheduling measured), so the learned
//!   schedule starts where the uniform one was, and moves only on
//!   evidence.
//!
//! Updating costs a few additions per run and one pass over the arms per
//! batch; drawing a byte mutator is a walk over 14 weights.

use rand::RngExt;

use crate::{FuzzRng, MutatorKind};

/// How many arms there are: the byte mutators, then the other sources.
pub const ARMS: usize = MutatorKind::ALL.len() + 3;

/// The arms that are no byte mutator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    InputToState,
    Grammar,
    Custom,
}

/// How many byte mutators' worth of the draw an arm weighs at equal rates.
fn scale(arm: usize) -> f64 {
    let bytes = MutatorKind::ALL.len() as f64;
    match arm {
        // Odds of 1/2: as much as all the byte mutators together.
        a if a == Source::InputToState.arm() => bytes,
        // Odds of 1/3: half as much.
        a if a == Source::Grammar.arm() => bytes / 2.0,
        // A custom mutator makes every mutant it is given the turn for.
        a if a == Source::Custom.arm() => bytes,
        _ => 1.0,
    }
}

impl Source {
    fn arm(self) -> usize {
        MutatorKind::ALL.len()
            + match self {
                Source::InputToState => 0,
                Source::Grammar => 1,
                Source::Custom => 2,
            }
    }
}

/// The share of the draw spread evenly over all arms, whatever they earn.
pub const FLOOR: f64 = 0.1;
/// Runs between two halvings of every arm's credit and cost.
pub const DECAY_EVERY: u64 = 20_000;
/// Blocks one run costs beyond those it executes: the harness's own work.
pub const RUN_OVERHEAD_BLOCKS: u64 = 200;
/// What an arm is assumed to have spent before it is tried, in runs of
/// average cost: the weight of the prior.
const PRIOR_RUNS: f64 = 50.0;

/// The odds of a grammar mutant the learned schedule starts from, and the
/// largest share of a batch input-to-state candidates take under the
/// uniform schedule. (The uniform schedule's grammar odds are the engine's:
/// a quarter of the target's work, crates/engine/src/fuzz/grammar/budget.rs.)
pub const UNIFORM_GRAMMAR_SHARE: f64 = 1.0 / 3.0;
pub const UNIFORM_I2S_SHARE: f64 = 0.5;

/// The mutation schedule: `--mutation-schedule`.
#[derive(Debug, Clone)]
pub enum Schedule {
    Uniform,
    Learned(Box<Learned>),
}

/// The learned schedule's tallies.
#[derive(Debug, Clone)]
pub struct Learned {
    credit: [f64; ARMS],
    cost: [f64; ARMS],
    /// Arms that can make mutants in this campaign.
    available: [bool; ARMS],
    weights: [f64; ARMS],
    /// Running sums of the byte mutators' weights, for the draw.
    cumulative: [f64; MutatorKind::ALL.len()],
    runs: u64,
    total_cost: f64,
    total_credit: f64,
}

impl Schedule {
    pub fn learned() -> Schedule {
        let mut learned = Learned {
            credit: [0.0; ARMS],
            cost: [0.0; ARMS],
            available: [true; ARMS],
            weights: [0.0; ARMS],
            cumulative: [0.0; MutatorKind::ALL.len()],
            runs: 0,
            total_cost: 0.0,
            total_credit: 0.0,
        };
        for source in [Source::InputToState, Source::Grammar, Source::Custom] {
            learned.available[source.arm()] = false;
        }
        learned.reweigh();
        Schedule::Learned(Box::new(learned))
    }

    pub fn is_learned(&self) -> bool {
        matches!(self, Schedule::Learned(_))
    }

    /// Says whether `source` can make mutants in this campaign (a grammar
    /// is on, the comparison tracer runs, the target has a custom mutator).
    pub fn set_available(&mut self, source: Source, available: bool) {
        if let Schedule::Learned(learned) = self {
            learned.available[source.arm()] = available;
            learned.reweigh();
        }
    }

    /// The byte mutator to try next.
    pub fn pick_kind(&self, rng: &mut FuzzRng) -> MutatorKind {
        let kinds = MutatorKind::ALL.len();
        match self {
            Schedule::Uniform => MutatorKind::ALL[rng.random_range(0..kinds)],
            Schedule::Learned(learned) => {
                let at = rng.random::<f64>() * learned.cumulative[kinds - 1];
                let index = learned.cumulative.partition_point(|sum| *sum <= at);
                MutatorKind::ALL[index.min(kinds - 1)]
            }
        }
    }

    /// The odds that a mutant slot goes to `source` rather than to byte
    /// mutations: fixed under the uniform schedule, the arm's weight
    /// against the byte mutators' under the learned one.
    pub fn odds(&self, source: Source) -> f64 {
        match self {
            Schedule::Uniform => match source {
                Source::Grammar => UNIFORM_GRAMMAR_SHARE,
                Source::InputToState => UNIFORM_I2S_SHARE,
                Source::Custom => 1.0,
            },
            Schedule::Learned(learned) => {
                let bytes: f64 = learned.weights[..MutatorKind::ALL.len()].iter().sum();
                let own = learned.weights[source.arm()];
                own / (own + bytes).max(f64::MIN_POSITIVE)
            }
        }
    }

    /// Credits the arms of one mutant's run: `kinds` (its byte mutations)
    /// and `source`, with `new_features` found and `blocks` executed.
    pub fn credit(
        &mut self,
        kinds: &[MutatorKind],
        source: Option<Source>,
        new_features: usize,
        blocks: u64,
    ) {
        let Schedule::Learned(learned) = self else {
            return;
        };
        let cost = (blocks + RUN_OVERHEAD_BLOCKS) as f64;
        let reward = new_features as f64;
        let arms = kinds.len() + usize::from(source.is_some());
        if arms == 0 {
            return;
        }
        let share = 1.0 / arms as f64;
        let mut add = |arm: usize| {
            learned.cost[arm] += cost * share;
            learned.credit[arm] += reward * share;
        };
        for kind in kinds {
            // MutatorKind::ALL lists the byte mutators in declaration order.
            let arm = *kind as usize;
            if arm < MutatorKind::ALL.len() {
                add(arm);
            }
        }
        if let Some(source) = source {
            add(source.arm());
        }
        learned.total_cost += cost;
        learned.total_credit += reward;
        learned.runs += 1;
        if learned.runs % DECAY_EVERY == 0 {
            learned.decay();
        }
    }

    /// Recomputes the weights from the tallies: once per batch.
    pub fn update(&mut self) {
        if let Schedule::Learned(learned) = self {
            learned.reweigh();
        }
    }

    /// Each arm's share of the draw (arms that cannot make mutants: 0),
    /// in [`MutatorKind::ALL`]'s order, then input-to-state, grammar and
    /// custom; `None` under the uniform schedule.
    pub fn shares(&self) -> Option<[f64; ARMS]> {
        let Schedule::Learned(learned) = self else {
            return None;
        };
        let total: f64 = learned.weights.iter().sum();
        let mut shares = learned.weights;
        for share in &mut shares {
            *share /= total.max(f64::MIN_POSITIVE);
        }
        Some(shares)
    }
}

/// The current draw by group, for the status line, the statistics file
/// and the report: `mix: bytes 41% dict 12% i2s 20% grammar 27%`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Mix {
    /// The byte mutators that invent bytes (EraseBytes … CrossOver).
    pub bytes: f64,
    /// Those that insert words: ManualDict, SourceDict, PersAutoDict, CMP.
    pub dict: f64,
    pub i2s: f64,
    pub grammar: f64,
    pub custom: f64,
}

impl Mix {
    /// The groups by name, in display order.
    pub fn groups(&self) -> [(&'static str, f64); 5] {
        [
            ("bytes", self.bytes),
            ("dict", self.dict),
            ("i2s", self.i2s),
            ("grammar", self.grammar),
            ("custom", self.custom),
        ]
    }
}

impl std::fmt::Display for Mix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("mix:")?;
        for (name, share) in self.groups() {
            if share > 0.0 {
                write!(f, " {name} {:.0}%", share * 100.0)?;
            }
        }
        Ok(())
    }
}

impl Schedule {
    /// The draw by group; `None` under the uniform schedule.
    pub fn mix(&self) -> Option<Mix> {
        let shares = self.shares()?;
        let mut mix = Mix::default();
        for (kind, share) in MutatorKind::ALL.iter().zip(&shares) {
            match kind {
                MutatorKind::ManualDict
                | MutatorKind::SourceDict
                | MutatorKind::PersAutoDict
                | MutatorKind::Cmp => mix.dict += share,
                _ => mix.bytes += share,
            }
        }
        mix.i2s = shares[Source::InputToState.arm()];
        mix.grammar = shares[Source::Grammar.arm()];
        mix.custom = shares[Source::Custom.arm()];
        Some(mix)
    }
}

impl Learned {
    fn decay(&mut self) {
        for value in self.credit.iter_mut().chain(self.cost.iter_mut()) {
            *value *= 0.5;
        }
        self.total_cost *= 0.5;
        self.total_credit *= 0.5;
    }

    fn reweigh(&mut self) {
        let available = self.available.iter().filter(|a| **a).count().max(1) as f64;
        // The prior: PRIOR_RUNS runs of average cost at the average rate.
        let runs = self.runs.max(1) as f64;
        let prior_cost = PRIOR_RUNS * (self.total_cost / runs).max(RUN_OVERHEAD_BLOCKS as f64);
        let average_rate = (self.total_credit + 1.0) / (self.total_cost + prior_cost);
        let prior_credit = prior_cost * average_rate;
        let rates: [f64; ARMS] = std::array::from_fn(|arm| {
            if !self.available[arm] {
                return 0.0;
            }
            let rate = (self.credit[arm] + prior_credit) / (self.cost[arm] + prior_cost);
            scale(arm) * rate
        });
        let total: f64 = rates.iter().sum::<f64>().max(f64::MIN_POSITIVE);
        self.weights = std::array::from_fn(|arm| {
            if self.available[arm] {
                FLOOR / available + (1.0 - FLOOR) * rates[arm] / total
            } else {
                0.0
            }
        });
        let mut sum = 0.0;
        for (cumulative, weight) in self.cumulative.iter_mut().zip(&self.weights) {
            sum += weight;
            *cumulative = sum;
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    fn learned_shares(schedule: &Schedule) -> [f64; ARMS] {
        schedule.shares().expect("learned")
    }

    #[test]
    fn a_fresh_learned_schedule_draws_the_byte_mutators_evenly() {
        let schedule = Schedule::learned();
        let shares = learned_shares(&schedule);
        let byte = 1.0 / MutatorKind::ALL.len() as f64;
        for share in &shares[..MutatorKind::ALL.len()] {
            assert!((share - byte).abs() < 1e-9, "{shares:?}");
        }
        assert_eq!(
            schedule.odds(Source::Grammar),
            0.0,
            "no grammar: no grammar mutants"
        );
        // With every source on, it starts near the uniform schedule's odds.
        let mut schedule = Schedule::learned();
        schedule.set_available(Source::InputToState, true);
        schedule.set_available(Source::Grammar, true);
        let i2s = schedule.odds(Source::InputToState);
        let grammar = schedule.odds(Source::Grammar);
        assert!((i2s - UNIFORM_I2S_SHARE).abs() < 0.05, "{i2s}");
        assert!((grammar - UNIFORM_GRAMMAR_SHARE).abs() < 0.05, "{grammar}");
    }

    fn index(kind: MutatorKind) -> usize {
        MutatorKind::ALL.iter().position(|k| *k == kind).unwrap()
    }

    /// Runs `runs` mutants drawn from `schedule`, each of one byte mutator,
    /// finding what `finds` says; the weights follow every 100 runs.
    fn simulate(
        schedule: &mut Schedule,
        rng: &mut FuzzRng,
        runs: u64,
        finds: impl Fn(MutatorKind, u64) -> bool,
    ) {
        for run in 0..runs {
            let kind = schedule.pick_kind(rng);
            schedule.credit(&[kind], None, usize::from(finds(kind, run)), 1_000);
            if run % 100 == 0 {
                schedule.update();
            }
        }
        schedule.update();
    }

    #[test]
    fn an_arm_that_finds_gets_more_of_the_draw_and_none_starves() {
        let mut schedule = Schedule::learned();
        let mut rng = FuzzRng::seed_from_u64(1);
        let dict = MutatorKind::ManualDict;
        simulate(&mut schedule, &mut rng, 20_000, |kind, run| {
            kind == dict && run % 3 == 0
        });
        let shares = learned_shares(&schedule);
        assert!(shares[index(dict)] > 0.5, "{shares:?}");
        let floor = FLOOR / MutatorKind::ALL.len() as f64;
        for share in &shares[..MutatorKind::ALL.len()] {
            assert!(*share >= floor - 1e-12, "{shares:?}");
        }
    }

    #[test]
    fn cheaper_mutants_earn_more_for_the_same_finds() {
        let mut schedule = Schedule::learned();
        schedule.set_available(Source::Grammar, true);
        for run in 0..2_000 {
            let found = usize::from(run % 20 == 0);
            schedule.credit(&[MutatorKind::EraseBytes], None, found, 500);
            schedule.credit(&[], Some(Source::Grammar), found, 20_000);
        }
        schedule.update();
        let shares = learned_shares(&schedule);
        assert!(shares[0] > shares[Source::Grammar.arm()], "{shares:?}");
    }

    #[test]
    fn old_credit_fades() {
        let mut schedule = Schedule::learned();
        let mut rng = FuzzRng::seed_from_u64(2);
        let early = MutatorKind::CopyPart;
        let late = MutatorKind::ShuffleBytes;
        simulate(&mut schedule, &mut rng, 2 * DECAY_EVERY, |kind, run| {
            kind == early && run % 2 == 0
        });
        let before = learned_shares(&schedule)[index(early)];
        assert!(before > 0.5, "{before}");
        simulate(&mut schedule, &mut rng, 4 * DECAY_EVERY, |kind, run| {
            kind == late && run % 2 == 0
        });
        let shares = learned_shares(&schedule);
        assert!(
            shares[index(early)] < before / 4.0,
            "{before} -> {shares:?}"
        );
        assert!(shares[index(late)] > 0.5, "{shares:?}");
    }

    #[test]
    fn the_byte_mutators_are_listed_in_declaration_order() {
        for (index, kind) in MutatorKind::ALL.iter().enumerate() {
            assert_eq!(*kind as usize, index, "{kind:?}");
        }
    }

    #[test]
    fn the_uniform_schedule_keeps_libfuzzers_draw() {
        let schedule = Schedule::Uniform;
        let mut rng = FuzzRng::seed_from_u64(7);
        let mut again = FuzzRng::seed_from_u64(7);
        for _ in 0..100 {
            let expected = MutatorKind::ALL[again.random_range(0..MutatorKind::ALL.len())];
            assert_eq!(schedule.pick_kind(&mut rng), expected);
        }
        assert_eq!(schedule.odds(Source::Grammar), UNIFORM_GRAMMAR_SHARE);
        assert!(schedule.shares().is_none());
    }
}

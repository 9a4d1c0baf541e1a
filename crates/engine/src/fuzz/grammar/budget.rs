//! How many mutants are grammar mutants under the uniform schedule: as many
//! as make a quarter of the target's work, not a fixed share of the mutants.
//!
//! A grammar mutant of a valid input usually stays valid, and a valid input
//! runs deeper into the target than the byte mutants, most of which its
//! parser rejects early: on PHP-Parser a grammar mutant costs the target
//! 3.7 times a byte mutant of the same length (docs/grammar.md). The fixed
//! third of the mutants that grammar mutants were before spent two thirds
//! of the campaign's time on them, and the campaign ran at 0.57× the exec/s
//! of bytes alone. The budget keeps the running cost of each kind, in the
//! blocks their runs executed plus a fixed overhead per run (counts the
//! harness reports, never a clock, so `--seed` replays a campaign), and
//! sets the odds so that grammar mutants take [`WORK_SHARE`] of it. Where
//! both kinds cost alike (YAML, JSON) that is a quarter of the mutants;
//! byte mutation, which reaches a parser's error paths best, keeps the
//! rest.

use php_fuzz_mutate::RUN_OVERHEAD_BLOCKS;

/// The share of the target's work that grammar mutants get by default.
pub(in crate::fuzz) const WORK_SHARE: f64 = 1.0 / 4.0;

/// How many mutants are grammar mutants under the uniform schedule
/// (`--grammar-share`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GrammarShare {
    /// `work:F`: as many as make the share F of the target's work (the
    /// default, F = 1/4).
    Work(f64),
    /// `mutants:F`: the share F of the mutants, whatever they cost (before
    /// a21d36c: 1/3).
    Mutants(f64),
}

impl Default for GrammarShare {
    fn default() -> GrammarShare {
        GrammarShare::Work(WORK_SHARE)
    }
}

impl std::str::FromStr for GrammarShare {
    type Err = String;

    fn from_str(text: &str) -> Result<GrammarShare, String> {
        let (kind, share) = text
            .split_once(':')
            .ok_or_else(|| format!("{text:?}: expected work:F or mutants:F, F between 0 and 1"))?;
        let share: f64 = share
            .trim()
            .parse()
            .ok()
            .filter(|f: &f64| *f > 0.0 && *f < 1.0)
            .ok_or_else(|| {
                format!("{text:?}: the share must be a number between 0 and 1, such as 0.25")
            })?;
        match kind.trim() {
            "work" => Ok(GrammarShare::Work(share)),
            "mutants" => Ok(GrammarShare::Mutants(share)),
            other => Err(format!("{text:?}: {other:?} is neither work nor mutants")),
        }
    }
}
/// The odds never leave these bounds, whatever the costs: grammar mutants
/// stay in the mix, and byte mutants keep at least half.
const MIN_ODDS: f64 = 1.0 / 32.0;
const MAX_ODDS: f64 = 0.5;
/// Runs of each kind before their costs decide the odds.
const MIN_RUNS: f64 = 64.0;
/// Runs between two halvings of both sums, so the odds follow the corpus.
const DECAY_EVERY: u64 = 20_000;

/// The summed cost of one kind of mutant.
#[derive(Debug, Default, Clone, Copy)]
struct Cost {
    runs: f64,
    blocks: f64,
}

impl Cost {
    fn mean(&self) -> f64 {
        self.blocks / self.runs
    }

    fn halve(&mut self) {
        self.runs /= 2.0;
        self.blocks /= 2.0;
    }
}

/// One worker's running costs of grammar and byte mutants.
#[derive(Debug, Default)]
pub(in crate::fuzz) struct GrammarBudget {
    share: GrammarShare,
    grammar: Cost,
    bytes: Cost,
    since_decay: u64,
}

impl GrammarBudget {
    pub fn new(share: GrammarShare) -> GrammarBudget {
        GrammarBudget {
            share,
            ..GrammarBudget::default()
        }
    }

    /// Counts a mutant's run: `grammar` says whether a grammar mutation
    /// made it, `blocks` is what it executed.
    pub fn record(&mut self, grammar: bool, blocks: u32) {
        let cost = if grammar {
            &mut self.grammar
        } else {
            &mut self.bytes
        };
        cost.runs += 1.0;
        cost.blocks += f64::from(blocks) + RUN_OVERHEAD_BLOCKS as f64;
        self.since_decay += 1;
        if self.since_decay >= DECAY_EVERY {
            self.since_decay = 0;
            self.grammar.halve();
            self.bytes.halve();
        }
    }

    /// The odds that the next mutant is a grammar mutant.
    pub fn odds(&self) -> f64 {
        let share = match self.share {
            GrammarShare::Mutants(share) => return share,
            GrammarShare::Work(share) => share,
        };
        if self.grammar.runs < MIN_RUNS || self.bytes.runs < MIN_RUNS {
            return share;
        }
        // odds × grammar / (odds × grammar + (1 - odds) × bytes) = share
        let grammar = self.grammar.mean();
        let bytes = self.bytes.mean();
        let odds = share * bytes / (share * bytes + (1.0 - share) * grammar);
        odds.clamp(MIN_ODDS, MAX_ODDS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(grammar_blocks: u32, byte_blocks: u32, runs: usize) -> GrammarBudget {
        let mut budget = GrammarBudget::default();
        for _ in 0..runs {
            budget.record(true, grammar_blocks);
            budget.record(false, byte_blocks);
        }
        budget
    }

    #[test]
    fn equal_costs_give_a_quarter_of_the_mutants() {
        let odds = budget(500, 500, 100).odds();
        assert!((odds - WORK_SHARE).abs() < 1e-9, "{odds}");
    }

    #[test]
    fn dearer_grammar_mutants_get_a_quarter_of_the_work() {
        let budget = budget(3_800, 800, 100);
        let odds = budget.odds();
        let grammar = odds * (3_800.0 + RUN_OVERHEAD_BLOCKS as f64);
        let bytes = (1.0 - odds) * (800.0 + RUN_OVERHEAD_BLOCKS as f64);
        let share = grammar / (grammar + bytes);
        assert!(odds < 0.1, "{odds}");
        assert!((share - WORK_SHARE).abs() < 1e-9, "{share}");
    }

    #[test]
    fn the_prior_holds_until_both_kinds_ran_and_the_bounds_hold_after() {
        assert_eq!(budget(100_000, 0, 10).odds(), WORK_SHARE);
        assert_eq!(budget(1_000_000, 0, 100).odds(), MIN_ODDS);
        assert_eq!(budget(0, 1_000_000, 100).odds(), MAX_ODDS);
    }

    #[test]
    fn a_share_of_the_mutants_ignores_the_costs() {
        let mut budget = GrammarBudget::new(GrammarShare::Mutants(1.0 / 3.0));
        for _ in 0..1000 {
            budget.record(true, 3_800);
            budget.record(false, 800);
        }
        assert_eq!(budget.odds(), 1.0 / 3.0);
    }

    #[test]
    fn shares_parse_and_bad_ones_say_why() {
        assert_eq!("work:0.25".parse(), Ok(GrammarShare::Work(0.25)));
        assert_eq!("mutants:0.333".parse(), Ok(GrammarShare::Mutants(0.333)));
        for bad in ["0.25", "work:1.5", "work:x", "bytes:0.1", "mutants:0"] {
            let error = bad.parse::<GrammarShare>().unwrap_err();
            assert!(error.contains(bad), "{error}");
        }
    }

    #[test]
    fn old_costs_fade() {
        let mut budget = budget(10_000, 100, 10_000);
        let before = budget.odds();
        for _ in 0..100_000 {
            budget.record(true, 100);
            budget.record(false, 100);
        }
        let after = budget.odds();
        assert!(before < 0.05, "{before}");
        assert!(after > 0.2, "{after}");
    }
}

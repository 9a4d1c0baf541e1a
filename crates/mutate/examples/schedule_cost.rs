//! What the learned mutation schedule costs per mutant (docs/scheduling.md):
//! a mutant's draws (up to five byte mutators) and its credit, and the
//! per-batch update, timed over many mutants against the uniform draw.
//!
//!     cargo run --release -p php-fuzz-mutate --example schedule_cost

use std::hint::black_box;
use std::time::Instant;

use php_fuzz_mutate::{FuzzRng, MutatorKind, Schedule, Source};
use rand::{RngExt, SeedableRng};

const MUTANTS: u64 = 2_000_000;
const BATCH: u64 = 1_000;

fn per_mutant(schedule: &mut Schedule) -> f64 {
    let mut rng = FuzzRng::seed_from_u64(1);
    let started = Instant::now();
    for run in 0..MUTANTS {
        let steps = rng.random_range(1..=5);
        let mut kinds = [MutatorKind::EraseBytes; 5];
        for kind in kinds.iter_mut().take(steps) {
            *kind = schedule.pick_kind(&mut rng);
        }
        let found = usize::from(run % 997 == 0);
        schedule.credit(black_box(&kinds[..steps]), None, found, 2_000);
        if run % BATCH == 0 {
            schedule.update();
        }
    }
    started.elapsed().as_nanos() as f64 / MUTANTS as f64
}

fn main() {
    let uniform = per_mutant(&mut Schedule::Uniform);
    let mut learned = Schedule::learned();
    learned.set_available(Source::InputToState, true);
    let learned = per_mutant(&mut learned);
    println!("per mutant: uniform draw {uniform:.1} ns, learned draw and credit {learned:.1} ns");
    println!(
        "the learned schedule adds {:.1} ns per mutant",
        learned - uniform
    );
}

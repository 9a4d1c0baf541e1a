//! Each grammar mutation keeps a parseable input parseable most of the
//! time: measured over mutants of the fixtures' corpora, fixed seed.
//!
//! Re-parsing every mutant is the cost (PHP: ~0.5 ms each), so the asserted
//! tests make 1,000 mutants per mutation and ask for 95 %: a mutation whose
//! true share were the 90 % would reach 950 of 1,000 with
//! probability below 1e-6 (5 standard deviations), so this is a stricter
//! check than 90 % of 10,000. The ignored test makes the full 10,000 of
//! every grammar for docs/grammar.md.

mod common;

use php_fuzz_grammar::{FragmentPool, Grammar, GrammarMutation, GrammarMutator, InputParser};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Mutants per mutation in the asserted tests, and their minimum share.
const ASSERTED_MUTANTS: usize = 1_000;
const MIN_VALID_PERCENT: f64 = 95.0;
/// Mutants per mutation for the figures in docs/grammar.md.
const FIGURES_MUTANTS: usize = 10_000;

/// (mutation, mutants made, of which parse without error)
fn measure(name: &str, mutants: usize) -> Vec<(GrammarMutation, usize, usize)> {
    let grammar = Grammar::load(name).unwrap();
    let corpus = common::valid_corpus(&grammar, common::fixture_dirs(name));
    let mut pool = FragmentPool::default();
    for entry in &corpus {
        pool.add(entry);
    }
    let mut parser = InputParser::new(&grammar);
    let mut mutator = GrammarMutator::new(grammar.info().code);
    let fusion = mutator.enable_fusion(&grammar);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(14);
    let mut out = Vec::new();
    let mut results = Vec::new();
    for kind in GrammarMutation::ALL {
        if kind == GrammarMutation::Adapt && !grammar.info().code
            || kind == GrammarMutation::Fusion && !fusion
        {
            continue;
        }
        let (mut made, mut valid) = (0, 0);
        for _ in 0..mutants * 20 {
            if made == mutants {
                break;
            }
            let sources = common::random_sources(&mut rng, &corpus, &pool);
            if !mutator.apply(kind, &mut rng, sources, 1 << 20, &mut out) {
                continue;
            }
            made += 1;
            if !parser.parse(&out).has_error() {
                valid += 1;
            }
        }
        println!(
            "{name} {:18} {made:6} mutants, {:5.1}% valid",
            kind.name(),
            100.0 * valid as f64 / made.max(1) as f64
        );
        results.push((kind, made, valid));
    }
    results
}

fn assert_valid(name: &str) {
    for (kind, made, valid) in measure(name, ASSERTED_MUTANTS) {
        assert_eq!(
            made, ASSERTED_MUTANTS,
            "{name}: {kind} applied only {made} times"
        );
        let percent = 100.0 * valid as f64 / made as f64;
        assert!(
            percent >= MIN_VALID_PERCENT,
            "{name}: {kind} keeps only {percent:.1}% valid"
        );
    }
}

#[test]
fn php_mutants_stay_parseable() {
    assert_valid("php");
}

#[test]
fn json_mutants_stay_parseable() {
    assert_valid("json");
}

/// Every grammar, 10,000 mutants per mutation, for docs/grammar.md: run
/// with --ignored --nocapture (a few minutes in release).
#[test]
#[ignore]
fn all_grammars_validity_figures() {
    for info in php_fuzz_grammar::grammars() {
        measure(info.name, FIGURES_MUTANTS);
    }
}

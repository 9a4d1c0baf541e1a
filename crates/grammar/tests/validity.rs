//! Each grammar mutation keeps a parseable input parseable most of the
//! time: measured over 10,000 mutants of the fixtures' corpora, fixed seed.

mod common;

use php_fuzz_grammar::{FragmentPool, Grammar, GrammarMutation, GrammarMutator, InputParser};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const MUTANTS: usize = 10_000;

/// (mutation, mutants made, of which parse without error)
fn measure(name: &str) -> Vec<(GrammarMutation, usize, usize)> {
    let grammar = Grammar::load(name).unwrap();
    let corpus = common::valid_corpus(&grammar, common::fixture_dirs(name));
    let mut pool = FragmentPool::default();
    for entry in &corpus {
        pool.add(entry);
    }
    let mut parser = InputParser::new(&grammar);
    let mut mutator = GrammarMutator::new(grammar.info().code);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(14);
    let mut out = Vec::new();
    let mut results = Vec::new();
    for kind in GrammarMutation::ALL {
        if kind == GrammarMutation::Adapt && !grammar.info().code {
            continue;
        }
        let (mut made, mut valid) = (0, 0);
        for _ in 0..MUTANTS * 20 {
            if made == MUTANTS {
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

fn assert_valid(name: &str, min_percent: f64) {
    for (kind, made, valid) in measure(name) {
        assert_eq!(made, MUTANTS, "{name}: {kind} applied only {made} times");
        let percent = 100.0 * valid as f64 / made as f64;
        assert!(
            percent >= min_percent,
            "{name}: {kind} keeps only {percent:.1}% valid"
        );
    }
}

#[test]
fn php_mutants_stay_parseable() {
    assert_valid("php", 92.0);
}

#[test]
fn json_mutants_stay_parseable() {
    assert_valid("json", 92.0);
}

/// The other grammars, measured for docs/grammar.md: run with --ignored --nocapture.
#[test]
#[ignore]
fn other_grammars_validity_figures() {
    for info in php_fuzz_grammar::grammars() {
        if !matches!(info.name, "php" | "json") {
            measure(info.name);
        }
    }
}

//! Whatever the bytes, parsing and mutating never panic and never exceed
//! the length limit.

use php_fuzz_grammar::{FragmentPool, Grammar, GrammarMutator, InputParser, Sources};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

fn fuzz_one(grammar: &str, bytes: &[u8], partner: &[u8], seed: u64, max_len: usize) {
    let grammar = Grammar::load(grammar).unwrap();
    let mut parser = InputParser::new(&grammar);
    let input = parser.parse(bytes);
    let partner = parser.parse(partner);
    let mut pool = FragmentPool::default();
    pool.add(&input);
    pool.add(&partner);
    pool.add(&parser.parse(grammar.info().sample.as_bytes()));
    let mut mutator = GrammarMutator::new(grammar.info().code);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut out = Vec::new();
    let max_len = max_len.max(bytes.len());
    for _ in 0..20 {
        let sources = Sources {
            input: &input,
            partner: Some(&partner),
            pool: &pool,
        };
        if mutator
            .mutate(&mut rng, sources, max_len, &mut out)
            .is_some()
        {
            assert!(out.len() <= max_len);
        }
    }
}

/// Bytes that look a little like the grammar, so tree-sitter recovers
/// into partial trees rather than one ERROR node.
fn noisy(alphabet: &'static [u8]) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![any::<u8>(), prop::sample::select(alphabet)],
        0..200,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn php_noise_never_panics(a in noisy(b"<?php $a=1;{}()[],'\"?> if echo"), b in noisy(b"<?php $b;"), seed: u64, max_len in 0usize..300) {
        fuzz_one("php", &a, &b, seed, max_len);
    }

    #[test]
    fn json_noise_never_panics(a in noisy(b"{}[],:\"1true null"), b in noisy(b"[1,\"x\"]"), seed: u64, max_len in 0usize..300) {
        fuzz_one("json", &a, &b, seed, max_len);
    }
}

#[test]
fn every_grammar_survives_its_sample_cut_anywhere() {
    for info in php_fuzz_grammar::grammars() {
        let sample = info.sample.as_bytes();
        for cut in (0..sample.len()).step_by(7) {
            fuzz_one(info.name, &sample[..cut], &sample[cut..], cut as u64, 512);
        }
    }
}

//! fixtures/grammar-bug without the engine: a loop that keeps a mutant when
//! it reaches a new step of RouteTable.php's path (a stand-in for coverage)
//! builds the bug's nested document from the seeds with grammar mutations.
//! The engine's own test (--grammar json vs bytes only) comes with the
//! integration; see docs/grammar.md.

mod common;

use std::path::Path;

use php_fuzz_grammar::{FragmentPool, Grammar, GrammarMutator, InputParser};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::Value;

/// The steps of RouteTable::load a document reaches, as bits; 1 << 5 is the bug.
fn steps(input: &[u8]) -> u32 {
    let Ok(Value::Object(config)) = serde_json::from_slice::<Value>(input) else {
        return 0;
    };
    let Some(Value::Array(routes)) = config.get("routes") else {
        return 1;
    };
    let mut reached = 2;
    for route in routes {
        let Value::Object(route) = route else {
            continue;
        };
        reached |= 4;
        let Some(Value::Array(children)) = route.get("children") else {
            continue;
        };
        reached |= 8;
        let mut seen = Vec::new();
        for child in children {
            if let Some(Value::String(handler)) = child.get("handler") {
                reached |= 16;
                if seen.contains(&handler) {
                    reached |= 32;
                }
                seen.push(handler);
            }
        }
    }
    reached
}

#[test]
fn grammar_mutation_builds_the_nested_bug_input_from_the_seeds() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/grammar-bug");
    let bug = br#"{"routes": [{"children": [{"handler": "h"}, {"handler": "h"}]}]}"#;
    assert_eq!(steps(bug) & 32, 32, "the predicate mirrors RouteTable.php");

    let grammar = Grammar::load("json").unwrap();
    let mut parser = InputParser::new(&grammar);
    let mut pool = FragmentPool::default();
    let mut corpus = Vec::new();
    let mut covered = 0;
    let mut paths: Vec<_> = std::fs::read_dir(fixture.join("seeds"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        let data = std::fs::read(path).unwrap();
        assert_eq!(steps(&data) & 32, 0, "a seed must not crash");
        covered |= steps(&data);
        let parsed = parser.parse(&data);
        pool.add(&parsed);
        corpus.push(parsed);
    }

    let mut mutator = GrammarMutator::new(false);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(14);
    let mut out = Vec::new();
    let mut found_after = None;
    for run in 1..=20_000 {
        let sources = common::random_sources(&mut rng, &corpus, &pool);
        if mutator.mutate(&mut rng, sources, 512, &mut out).is_none() {
            continue;
        }
        let reached = steps(&out);
        if reached & 32 != 0 {
            found_after = Some(run);
            break;
        }
        if reached & !covered != 0 {
            covered |= reached;
            let parsed = parser.parse(&out);
            pool.add(&parsed);
            corpus.push(parsed);
        }
    }
    let runs = found_after.expect("grammar mutation reaches the bug within 20,000 mutants");
    println!("bug input built after {runs} grammar mutants");
}

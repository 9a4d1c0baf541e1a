//! What grammar mutation costs the engine, per grammar: parsing an entry
//! once (µs per KB; tree-sitter's own parse alone for comparison), learning
//! it into the pool, and mutations per second.
//! Run: cargo run --release -p php-fuzz-grammar --example bench_grammar

use std::path::Path;
use std::time::Instant;

use php_fuzz_grammar::{FragmentPool, Grammar, GrammarMutator, InputParser, Sources, grammars};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The fixture inputs of a grammar, or its sample repeated.
fn corpus(grammar: &Grammar) -> Vec<Vec<u8>> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let dir = match grammar.name() {
        "php" => "instrument/behaviour",
        "json" => "bench/json-small",
        "yaml" => "bench/yaml",
        "markdown" => "bench/commonmark",
        "html" => "bench/html5",
        _ => "",
    };
    let mut inputs: Vec<Vec<u8>> = match std::fs::read_dir(fixtures.join(dir)) {
        Ok(entries) if !dir.is_empty() => {
            let mut paths: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
            paths.sort();
            paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
        }
        _ => Vec::new(),
    };
    inputs.push(grammar.info().sample.as_bytes().to_vec());
    inputs
}

fn main() {
    println!(
        "{:11} {:>6} {:>6} {:>12} {:>11} {:>10} {:>12} {:>8}",
        "grammar",
        "inputs",
        "avg B",
        "tree-sitter",
        "parse µs/KB",
        "pool µs/KB",
        "mutations/s",
        "applied"
    );
    for info in grammars() {
        let grammar = Grammar::from_info(info).unwrap();
        let inputs = corpus(&grammar);
        let bytes: usize = inputs.iter().map(Vec::len).sum();
        let mut parser = InputParser::new(&grammar);

        let rounds = (2_000_000 / bytes.max(1)).clamp(1, 200);
        let mut raw = tree_sitter::Parser::new();
        raw.set_language(grammar.language()).unwrap();
        let start = Instant::now();
        for _ in 0..rounds {
            for input in &inputs {
                std::hint::black_box(raw.parse(input, None));
            }
        }
        let raw_us_per_kb = start.elapsed().as_secs_f64() * 1e6 / (rounds * bytes) as f64 * 1024.0;

        let start = Instant::now();
        let mut parsed = Vec::new();
        for _ in 0..rounds {
            parsed = inputs.iter().map(|input| parser.parse(input)).collect();
        }
        let parse_us_per_kb =
            start.elapsed().as_secs_f64() * 1e6 / (rounds * bytes) as f64 * 1024.0;

        let start = Instant::now();
        let mut pool = FragmentPool::default();
        for entry in &parsed {
            pool.add(entry);
        }
        let pool_us_per_kb = start.elapsed().as_secs_f64() * 1e6 / bytes as f64 * 1024.0;

        let mut mutator = GrammarMutator::new(info.code);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut out = Vec::with_capacity(1 << 16);
        let tries = 200_000;
        let mut applied = 0;
        let start = Instant::now();
        for _ in 0..tries {
            let input = &parsed[rng.random_range(0..parsed.len())];
            let partner = &parsed[rng.random_range(0..parsed.len())];
            let sources = Sources {
                input,
                partner: Some(partner),
                pool: &pool,
            };
            if mutator
                .mutate(&mut rng, sources, 1 << 16, &mut out)
                .is_some()
            {
                applied += 1;
            }
        }
        let per_second = tries as f64 / start.elapsed().as_secs_f64();
        println!(
            "{:11} {:>6} {:>6} {:>12.1} {:>11.1} {:>10.1} {:>12.0} {:>7.1}% {:>7.1}",
            info.name,
            inputs.len(),
            bytes / inputs.len(),
            raw_us_per_kb,
            parse_us_per_kb,
            pool_us_per_kb,
            per_second,
            100.0 * applied as f64 / tries as f64,
            parsed.iter().map(|p| p.heap_bytes()).sum::<usize>() as f64 / bytes as f64
        );
    }
}

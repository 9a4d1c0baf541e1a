//! Mutations per second, so the mutator is known not to be the bottleneck.
//! Run: cargo run --release -p php-fuzz-mutate --example bench_mutate

use std::path::Path;
use std::time::Instant;

use php_fuzz_mutate::{Dictionary, Mutator};

fn main() {
    let dictionary =
        Dictionary::parse(b"\"{\"\n\"}\"\n\"true\"\n\"\\\\u\"", Path::new("bench")).unwrap();
    for (label, len) in [("small inputs (16 B)", 16usize), ("2 KB inputs", 2048)] {
        let mut mutator = Mutator::new(1, dictionary.clone());
        let seed: Vec<u8> = (0..len)
            .map(|i| b"{\"a\": [1, 2.5, true]}"[i % 21])
            .collect();
        let partner = seed.clone();
        let mut data = Vec::with_capacity(4096);
        let runs = 2_000_000;
        let start = Instant::now();
        for _ in 0..runs {
            data.clear();
            data.extend_from_slice(&seed);
            mutator.mutate(&mut data, 4096, Some(&partner));
        }
        let secs = start.elapsed().as_secs_f64();
        println!("{label}: {:.2} M mutations/s", runs as f64 / secs / 1e6);
    }
}

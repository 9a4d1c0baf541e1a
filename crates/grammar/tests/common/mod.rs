//! Sample corpora from the repository's fixtures, for the integration tests.
// Each test binary uses its own share of these helpers.
#![allow(dead_code)]

use std::path::Path;

use php_fuzz_grammar::{FragmentPool, Grammar, InputParser, ParsedInput, Sources};
use rand::{Rng, RngExt};

/// A random entry of `corpus` to mutate, with a random partner.
pub fn random_sources<'a, R: Rng>(
    rng: &mut R,
    corpus: &'a [ParsedInput],
    pool: &'a FragmentPool,
) -> Sources<'a> {
    let input = &corpus[rng.random_range(0..corpus.len())];
    let partner = &corpus[rng.random_range(0..corpus.len())];
    Sources {
        input,
        partner: Some(partner),
        pool,
    }
}

/// Files under `fixtures/<dir>` (one level), sorted, that the grammar
/// parses without a syntax error; the grammar's sample first.
pub fn valid_corpus(grammar: &Grammar, dirs: &[&str]) -> Vec<ParsedInput> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut parser = InputParser::new(grammar);
    let mut corpus = vec![parser.parse(grammar.info().sample.as_bytes())];
    for dir in dirs {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap_or_else(|err| panic!("fixtures/{dir}: {err}"))
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.is_file())
            .collect();
        paths.sort();
        for path in paths {
            let parsed = parser.parse(&std::fs::read(&path).unwrap());
            if !parsed.has_error() && !parsed.sites().is_empty() {
                corpus.push(parsed);
            }
        }
    }
    corpus
}

/// The fixture directories that hold inputs of a grammar.
pub fn fixture_dirs(grammar: &str) -> &'static [&'static str] {
    match grammar {
        "php" => &["instrument/behaviour", "report", "json-parser", "targets"],
        "json" => &["bench/json-small", "json-parser/seeds"],
        "yaml" => &["bench/yaml"],
        "markdown" => &["bench/commonmark"],
        "html" => &["bench/html5"],
        _ => &[],
    }
}

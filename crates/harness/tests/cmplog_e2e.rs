//! The `cmplog` rendering through a real harness: comparison logs reach
//! the engine with each run, coverage is the coverage rendering's, and the
//! source server gathers the dictionary taken from the source.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use php_fuzz_harness::{Batch, Executor, HarnessConfig, PhpBinary, Runtime, SourceServer};
use php_fuzz_instrument::StubStyle;

fn target() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/cmp/string_calls/target.php")
        .canonicalize()
        .unwrap()
}

fn executor(sources: &Arc<SourceServer>) -> Executor {
    let php = PhpBinary::probe(Path::new("php")).expect("php must be installed (scripts/setup)");
    let config = HarnessConfig::new(php, Arc::new(Runtime::unpack().unwrap()), target());
    Executor::new(Arc::new(config), Arc::clone(sources))
}

/// Each input's (trace, comparison log).
fn run(executor: &mut Executor, inputs: &[&[u8]]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut batch = Batch::new();
    for input in inputs {
        batch.push(input);
    }
    let mut results = Vec::new();
    executor
        .run_batch(&batch, |r| {
            assert!(r.coverage.earlier.is_none(), "short runs send one piece");
            results.push((r.coverage.last.to_vec(), r.cmp_log.to_vec()));
        })
        .unwrap();
    results
}

fn holds(log: &[u8], word: &[u8]) -> bool {
    log.windows(word.len()).any(|w| w == word)
}

#[test]
fn cmplog_runs_log_their_comparisons_and_cover_the_same_blocks() {
    let inputs: [&[u8]; 3] = [b"x", b"CMD:DEPLOYtest", b"CMD:deployproduction"];
    let plain_sources = Arc::new(SourceServer::new(StubStyle::Trace));
    let cmplog_sources = Arc::new(SourceServer::with_cmplog(StubStyle::Trace));
    assert!(cmplog_sources.logs_comparisons() && !plain_sources.logs_comparisons());
    let plain = run(&mut executor(&plain_sources), &inputs);
    let logged = run(&mut executor(&cmplog_sources), &inputs);

    for ((plain_trace, plain_log), (trace, _)) in plain.iter().zip(&logged) {
        assert!(plain_log.is_empty(), "the coverage rendering logs nothing");
        assert_eq!(plain_trace, trace, "both renderings run the same blocks");
    }
    let (first, second) = (&logged[0].1, &logged[1].1);
    assert!(holds(first, b"CMD:"), "str_starts_with logged its needle");
    assert!(
        !holds(first, b"deploy"),
        "comparisons that did not run are not logged"
    );
    assert!(
        holds(second, b"DEPLOY") && holds(second, b"deploy"),
        "strncasecmp"
    );
    assert!(
        holds(second, b"staging") && holds(second, b"production"),
        "in_array logs the needle against the haystack"
    );
    // The third input crashes (an Error): its log still arrives.
    assert!(holds(&logged[2].1, b"production"));

    for sources in [&plain_sources, &cmplog_sources] {
        let (generation, words) = sources.comparison_literals();
        assert!(generation > 0);
        assert_eq!(generation, sources.literal_generation());
        for word in [&b"CMD:"[..], b"deploy", b"staging", b"production"] {
            assert!(words.iter().any(|w| w == word), "{word:?} in {words:?}");
        }
    }
}

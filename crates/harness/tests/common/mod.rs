//! Helpers for tests that run real `php` harness processes on fixtures.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use php_fuzz_harness::{Batch, Crash, Executor, HarnessConfig, PhpBinary, Runtime, SourceServer};
use php_fuzz_instrument::StubStyle;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

pub fn executor_with(
    target: &Path,
    style: StubStyle,
    tweak: impl FnOnce(&mut HarnessConfig),
) -> Executor {
    let php = PhpBinary::probe(Path::new("php")).expect("php must be installed (scripts/setup)");
    let mut config = HarnessConfig::new(
        php,
        Arc::new(Runtime::unpack().unwrap()),
        target.canonicalize().unwrap(),
    );
    config.timeout = Duration::from_secs(2);
    config.rss_limit_mb = 256;
    tweak(&mut config);
    Executor::new(Arc::new(config), Arc::new(SourceServer::new(style)))
}

pub fn executor(target: &str) -> Executor {
    executor_with(&repo().join(target), StubStyle::Trace, |_| {})
}

/// Runs inputs; returns each one's crash (if any) and trace length in blocks.
pub fn run(executor: &mut Executor, inputs: &[&[u8]]) -> Vec<(Option<Crash>, usize)> {
    let mut batch = Batch::new();
    for input in inputs {
        batch.push(input);
    }
    let mut results = Vec::new();
    executor
        .run_batch(&batch, |r| {
            assert_eq!(r.index, results.len(), "results arrive in order");
            let mut edges = php_fuzz_coverage::EdgeCounter::new();
            r.coverage.add_to(&mut edges);
            let blocks = edges.total_hits() as usize;
            results.push((r.crash, blocks));
        })
        .unwrap();
    assert_eq!(results.len(), inputs.len());
    results
}

/// The crash of each input, as `kind: headline` or "ok".
pub fn verdicts(results: &[(Option<Crash>, usize)]) -> Vec<String> {
    results
        .iter()
        .map(|(crash, _)| match crash {
            Some(crash) => crash.headline(),
            None => "ok".to_string(),
        })
        .collect()
}

//! Two batches in flight (the worker queues the next before waiting for the
//! current one) and a harness that dies: every crash is still pinned on the
//! input that caused it.

mod common;

use php_fuzz_harness::{Batch, Executor};
use php_fuzz_instrument::StubStyle;

use common::{executor_with, repo};

fn batch(inputs: &[&str]) -> Batch {
    let mut batch = Batch::new();
    for input in inputs {
        batch.push(input.as_bytes());
    }
    batch
}

/// Finishes the oldest batch; returns each input's crash message, or
/// "exit" for the death.
fn finish(executor: &mut Executor, batch: &Batch) -> Vec<String> {
    let mut messages = Vec::new();
    executor
        .finish(batch, |r| {
            let crash = r.crash.expect("every input crashes");
            messages.push(if crash.problem.class == "Exit" {
                "exit".to_string()
            } else {
                crash.problem.message
            });
        })
        .unwrap();
    messages
}

#[test]
fn a_death_with_a_batch_queued_behind_never_shifts_outcomes_onto_another_batch() {
    let target = repo().join("fixtures/hostile/echo_errors.php");
    let mut ex = executor_with(&target, StubStyle::Trace, |_| {});
    let a = batch(&["a1", "D", "a3"]);
    let b = batch(&["b1", "b2"]);
    let c = batch(&["c1", "c2"]);
    // As the worker does: A and B in flight; A kills its harness, so B,
    // sent to that harness, must be sent again; C is queued meanwhile.
    ex.submit(&a).unwrap();
    ex.submit(&b).unwrap();
    assert_eq!(finish(&mut ex, &a), ["a1", "exit", "a3"]);
    ex.submit(&c).unwrap();
    assert_eq!(finish(&mut ex, &b), ["b1", "b2"]);
    assert_eq!(finish(&mut ex, &c), ["c1", "c2"]);
}

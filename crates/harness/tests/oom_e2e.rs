//! One large allocation (docs/hardening.md, "One large allocation"): named an
//! out-of-memory, never a recursion, with its PHP stack from the target
//! closure down to the internal function that asked; and the malloc limit.

mod common;

use common::{executor_with, repo, run};
use php_fuzz_harness::{Crash, CrashKind, LARGE_ALLOCATION, MALLOC_LIMIT};
use php_fuzz_instrument::StubStyle;

const TARGET: &str = "fixtures/oom/huge_allocation.php";

/// The functions of a crash's stack, innermost first.
fn functions(crash: &Crash) -> Vec<&str> {
    crash
        .problem
        .frames
        .iter()
        .map(|f| f.function.as_str())
        .collect()
}

const STACK: [&str; 5] = [
    "str_repeat()",
    "Record::fill()",
    "Record::body()",
    "Record::parse()",
    "{closure}()",
];

/// 2.9 GB asked for after a byte-by-byte pass over 1.2 KB of input: the
/// end of the trace is one function entered 1,200 times, which once made
/// php-fuzz call it a runaway recursion with one frame.
fn huge_request() -> Vec<u8> {
    let mut input = b"N2900000000 ".to_vec();
    input.extend_from_slice(&[b'p'; 1200]);
    input
}

#[test]
fn one_huge_allocation_is_an_out_of_memory_with_its_stack() {
    for style in [StubStyle::Trace, StubStyle::EdgeMap] {
        let mut ex = executor_with(&repo().join(TARGET), style, |_| {});
        let huge = huge_request();
        let results = run(&mut ex, &[b"N5000", &huge, b"N6000"]);
        let crash = results[1].0.as_ref().expect("the huge request crashes");
        assert_eq!(crash.kind, CrashKind::OutOfMemory, "{style:?}: {crash:?}");
        assert_eq!(crash.problem.class, MALLOC_LIMIT);
        assert!(crash.problem.message.contains("(tried to allocate 2900000"));
        assert_eq!(
            functions(crash),
            STACK,
            "{style:?}: {}",
            crash.problem.trace
        );
        assert!(crash.problem.file.ends_with("huge_allocation.php"));
        assert_eq!(crash.problem.frames[1].line, 36, "the line of the call");
        assert_eq!(crash.problem.frames[3].line, 16);
        assert!(crash.note.is_none(), "{:?}", crash.note);
        assert!(results[0].0.is_none() && results[2].0.is_none());
    }
}

#[test]
fn an_allocation_over_the_malloc_limit_is_one_under_a_higher_memory_limit() {
    let mut ex = executor_with(&repo().join(TARGET), StubStyle::Trace, |c| {
        c.rss_limit_mb = 512;
        c.malloc_limit_mb = 64;
    });
    // 100 MB: over the 64 MB malloc limit, well under the 512 MB RSS limit.
    // 66 MB (63 MiB): under the malloc limit, yet more than the heap has left.
    // 20 MB: fits.
    let results = run(&mut ex, &[b"N100000000", b"N66000000", b"N20000000"]);
    let over = results[0].0.as_ref().expect("over the malloc limit");
    assert_eq!(
        (over.kind, over.problem.class.as_str()),
        (CrashKind::OutOfMemory, MALLOC_LIMIT)
    );
    assert_eq!(functions(over), STACK);
    let large = results[1].0.as_ref().expect("more than is left");
    assert_eq!(
        (large.kind, large.problem.class.as_str()),
        (CrashKind::OutOfMemory, LARGE_ALLOCATION)
    );
    assert_eq!(functions(large), STACK);
    assert!(results[2].0.is_none(), "{:?}", results[2].0);
}

#[test]
fn a_recursion_is_still_a_stack_overflow_under_a_malloc_limit() {
    let mut ex = executor_with(
        &repo().join("fixtures/targets/recursion.php"),
        StubStyle::Trace,
        |c| {
            c.rss_limit_mb = 512;
            c.malloc_limit_mb = 64;
        },
    );
    let results = run(&mut ex, &[b"((", b"()"]);
    let crash = results[0].0.as_ref().unwrap();
    assert_eq!(crash.kind, CrashKind::StackOverflow, "{crash:?}");
    assert!(results[1].0.is_none());
}

//! The fork server (issue #26 §3) against real `php`: harnesses forked from
//! a warm parent start from its post-load state, a child killed mid-frame
//! leaves the next one clean, a dead parent means plain starts and then a
//! new server, and no process outlives the executor.

mod common;

use std::collections::BTreeSet;

use common::{executor_with, repo, run, verdicts};
use php_fuzz_harness::{Crash, CrashKind, Executor, HarnessConfig};
use php_fuzz_instrument::StubStyle;

fn counter(tweak: impl FnOnce(&mut HarnessConfig)) -> Executor {
    executor_with(
        &repo().join("fixtures/fork-server/counter.php"),
        StubStyle::Trace,
        tweak,
    )
}

/// What a run of 'n' said: (runs of its harness, its pid, the pid that loaded the target).
fn said(crash: &Option<Crash>) -> (u32, i32, i32) {
    let message = &crash.as_ref().expect("'n' throws").problem.message;
    let words: Vec<&str> = message.split_whitespace().collect();
    match words.as_slice() {
        ["run", runs, "of", "pid", pid, "loaded", "by", loader] => (
            runs.parse().unwrap(),
            pid.parse().unwrap(),
            loader.parse().unwrap(),
        ),
        _ => panic!("not a counter message: {message}"),
    }
}

fn kind(crash: &Option<Crash>) -> Option<CrashKind> {
    crash.as_ref().map(|c| c.kind)
}

/// Running, not a zombie.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.contains(") Z ") && !stat.contains(") X "))
}

#[test]
fn a_target_that_exits_keeps_being_fuzzed_on_fresh_forked_harnesses() {
    let mut ex = counter(|_| {});
    let results = run(&mut ex, &[b"n", b"x", b"n", b"", b"n", b"x", b"n"]);
    let runs: Vec<_> = [0, 2, 4, 6].iter().map(|&i| said(&results[i].0)).collect();
    assert_eq!(kind(&results[1].0), Some(CrashKind::Exit));
    assert_eq!(kind(&results[5].0), Some(CrashKind::Exit));
    // Each harness counts from the state the target had when loaded.
    assert_eq!(
        runs.iter().map(|r| r.0).collect::<Vec<_>>(),
        [1, 1, 3, 1],
        "{runs:?}"
    );
    // One parent loaded the target; three children ran it.
    let loaders: BTreeSet<_> = runs.iter().map(|r| r.2).collect();
    let pids: BTreeSet<_> = runs.iter().map(|r| r.1).collect();
    assert_eq!(loaders.len(), 1, "{runs:?}");
    assert_eq!(pids.len(), 3, "{runs:?}");
    assert!(pids.is_disjoint(&loaders), "{runs:?}");
    let stats = ex.stats();
    assert_eq!((stats.harness_starts, stats.forks), (3, 3), "{stats:?}");
    drop(ex);
    for pid in pids.iter().chain(&loaders) {
        assert!(!alive(*pid), "pid {pid} outlived the executor");
    }
}

#[test]
fn a_harness_killed_in_the_middle_of_a_frame_leaves_the_next_one_clean() {
    let mut ex = counter(|_| {});
    let inputs: &[&[u8]] = &[b"n", b"K", b"n", b"", b"n", b"K", b"K", b"n"];
    let results = run(&mut ex, inputs);
    let v = verdicts(&results);
    for i in [1, 5, 6] {
        assert_eq!(kind(&results[i].0), Some(CrashKind::HarnessDied), "{v:?}");
    }
    let runs: Vec<_> = [0, 2, 4, 7]
        .iter()
        .map(|&i| said(&results[i].0).0)
        .collect();
    assert_eq!(runs, [1, 1, 3, 1], "{v:?}");
    // Each death, and the re-run alone that names its input, on a fork.
    let stats = ex.stats();
    assert!(
        stats.forks >= 4 && stats.forks == stats.harness_starts,
        "{stats:?}"
    );
}

#[test]
fn a_dead_fork_server_means_a_plain_start_then_a_new_server() {
    let mut ex = counter(|_| {});
    let first = said(&run(&mut ex, &[b"n"])[0].0);
    // SIGKILL the parent: the live child goes on; its successor cannot fork.
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(first.2).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    let results = run(&mut ex, &[b"n", b"x", b"n", b"x", b"n"]);
    let (second, plain, forked) = (
        said(&results[0].0),
        said(&results[2].0),
        said(&results[4].0),
    );
    assert_eq!((second.0, second.1), (2, first.1), "the same child goes on");
    assert_eq!(
        plain.1, plain.2,
        "started plainly: it loaded the target itself"
    );
    assert_ne!(forked.1, forked.2, "forked again, by a new server");
    assert_ne!(forked.2, first.2);
    let stats = ex.stats();
    assert_eq!((stats.harness_starts, stats.forks), (3, 2), "{stats:?}");
    drop(ex);
    for pid in [first.1, first.2, plain.1, forked.1, forked.2] {
        assert!(!alive(pid), "pid {pid} outlived the executor");
    }
}

#[test]
fn without_the_fork_server_every_harness_loads_the_target_itself() {
    let mut ex = counter(|c| c.fork_server = false);
    let results = run(&mut ex, &[b"n", b"x", b"n"]);
    for i in [0, 2] {
        let (runs, pid, loader) = said(&results[i].0);
        assert_eq!((runs, pid), (1, loader), "input {i}");
    }
    let stats = ex.stats();
    assert_eq!((stats.harness_starts, stats.forks), (2, 0), "{stats:?}");
}

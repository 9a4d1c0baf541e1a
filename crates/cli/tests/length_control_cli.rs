//! Length control holds for every mutant, comparison-feedback candidates
//! included: a status line never shows `L: 33/32` (issue 26, section 5).

mod common;

use common::{fixture, php_fuzz};

#[test]
fn no_input_is_longer_than_the_length_limit() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("cmp/switch_tag/target.php");
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "1",
            "--max-runs",
            "30000",
        ],
        dir.path(),
    );
    let err = run.stderr();
    let lengths: Vec<(usize, usize)> = err
        .lines()
        .filter_map(|line| line.split(" L: ").nth(1))
        .filter_map(|rest| {
            let (len, limit) = rest.split_whitespace().next()?.split_once('/')?;
            Some((len.parse().ok()?, limit.parse().ok()?))
        })
        .collect();
    assert!(!lengths.is_empty(), "NEW and REDUCE lines show L: {err}");
    let over: Vec<_> = lengths.iter().filter(|(len, limit)| len > limit).collect();
    assert!(over.is_empty(), "inputs over the limit: {over:?}\n{err}");
}

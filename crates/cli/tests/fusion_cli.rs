//! Dataflow fusion end to end (`--fusion`, docs/grammar.md#dataflow-fusion):
//! a `--grammar php` campaign on PHP-Parser fuses corpus programs with it,
//! never without it, and `--fusion` without the php grammar is an error.

mod common;

use std::fs;
use std::path::Path;

use common::{fixture, php_fuzz};

/// Runs a campaign of `runs` runs of `fixtures/real/php-parser` with its
/// seeds and `flags`; returns its stderr. None, loudly, when PHP-Parser is
/// not installed (outside CI; in CI that is a failure).
fn php_parser_campaign(flags: &[&str], runs: &str) -> Option<String> {
    let library = Path::new("/usr/share/php/PhpParser");
    if !library.is_dir() {
        let message = format!(
            "{} is missing: run `scripts/setup --test-libs`",
            library.display()
        );
        if std::env::var_os("CI").is_some() {
            panic!("{message}");
        }
        eprintln!("SKIPPED (not in CI): {message}");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    fs::create_dir(&corpus).unwrap();
    for seed in fs::read_dir(fixture("real/php-parser/seeds")).unwrap() {
        let seed = seed.unwrap().path();
        fs::copy(&seed, corpus.join(seed.file_name().unwrap())).unwrap();
    }
    let target = fixture("real/php-parser/target.php");
    let mut args = vec![
        "fuzz",
        target.to_str().unwrap(),
        "corpus",
        "--grammar",
        "php",
        "--seed",
        "1",
        "--max-runs",
        runs,
        "--no-cmp",
    ];
    args.extend_from_slice(flags);
    let run = php_fuzz(&args, dir.path());
    // PHP-Parser raises a warning on some inputs: 77 when one is found.
    assert!(matches!(run.code(), 0 | 77), "{}", run.all());
    Some(run.stderr())
}

/// (tried, made) from the summary's "fusion: tried T, made M".
fn fusion_counts(err: &str) -> (u64, u64) {
    let at = err
        .find("fusion: tried ")
        .unwrap_or_else(|| panic!("no fusion summary in {err}"));
    let mut numbers = err[at..]
        .lines()
        .next()
        .unwrap()
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty())
        .map(|n| n.parse::<u64>().unwrap());
    (numbers.next().unwrap(), numbers.next().unwrap())
}

#[test]
fn fusion_makes_mutants_with_the_flag_and_none_without() {
    let Some(on) = php_parser_campaign(&["--fusion"], "30000") else {
        return;
    };
    let (tried, made) = fusion_counts(&on);
    // Grammar mutants are about a tenth of PHP-Parser's runs (a quarter of
    // its work), and most fusions of its corpus find no link.
    assert!(
        tried >= 100 && made >= 20,
        "tried {tried}, made {made}:\n{on}"
    );
    for flags in [&["--no-fusion"][..], &["--fusion", "--no-fusion"], &[]] {
        let off = php_parser_campaign(flags, "5000").unwrap();
        assert!(off.contains("fusion: off"), "{flags:?}:\n{off}");
        assert!(
            !off.contains("fusion: tried") && !off.contains("GrammarFusion"),
            "{off}"
        );
    }
}

#[test]
fn fusion_without_the_php_grammar_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("json-parser/target.php");
    let target = target.to_str().unwrap();
    for grammar in [&["--grammar", "json"][..], &["--grammar", "none"], &[]] {
        let mut args = vec!["fuzz", target, "--fusion", "--max-runs", "10"];
        args.extend_from_slice(grammar);
        let run = php_fuzz(&args, dir.path());
        assert_eq!(run.code(), 1, "{grammar:?}: {}", run.all());
        assert!(
            run.stderr()
                .contains("--fusion fuses PHP programs and needs the php grammar"),
            "{}",
            run.all()
        );
    }
}

//! `--grammar auto` and `--grammar none` end to end (issue #33 §2): auto
//! picks the grammar the seeds parse in and says so, binary seeds get none,
//! and `none` wins over the target's `setGrammar()`.

mod common;

use std::fs;
use std::path::Path;

use common::{fixture, php_fuzz};

/// A campaign of `target` on a corpus holding `seeds` (name, bytes); its stderr.
fn campaign(target: &str, seeds: &[(String, Vec<u8>)], extra: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    fs::create_dir_all(&corpus).unwrap();
    for (name, data) in seeds {
        fs::write(corpus.join(name), data).unwrap();
    }
    let target = fixture(target);
    let mut args = vec![
        "fuzz",
        target.to_str().unwrap(),
        "corpus",
        "--seed",
        "1",
        "--max-runs",
        "3000",
        "--no-cmp",
    ];
    args.extend_from_slice(extra);
    let run = php_fuzz(&args, dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    run.stderr()
}

fn php_seeds() -> Vec<(String, Vec<u8>)> {
    files_of(&fixture("real/php-parser/seeds"))
}

fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            (name, fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// Grammar mutants tried, from the campaign's last lines; None without a grammar.
fn grammar_mutants(err: &str) -> Option<u64> {
    let rest = err.split("INFO: grammar mutation: tried for ").nth(1)?;
    rest.split(' ').next()?.parse().ok()
}

#[test]
fn php_seeds_with_grammar_auto_are_mutated_as_php() {
    let seeds = php_seeds();
    let bytes: usize = seeds.iter().map(|(_, data)| data.len()).sum();
    let err = campaign("targets/php_tokens.php", &seeds, &["--grammar", "auto"]);
    let banner = format!("INFO: grammar: php (auto: 100 % of {bytes} seed bytes parse as php)");
    assert!(err.contains(&banner), "no {banner:?} in\n{err}");
    assert!(err.contains("INFO: grammar: php  pool: "), "{err}");
    assert!(grammar_mutants(&err).is_some_and(|n| n > 0), "{err}");

    // The default for PHP seeds (docs/evaluations/bugs-lexicon): without
    // --grammar, the same grammar, and a line that says why.
    let err = campaign("targets/php_tokens.php", &seeds, &[]);
    let banner = format!(
        "INFO: grammar: php (the default for seeds in it, auto: 100 % of {bytes} seed bytes parse as php; --grammar none turns it off)"
    );
    assert!(err.contains(&banner), "no {banner:?} in\n{err}");
    assert!(grammar_mutants(&err).is_some_and(|n| n > 0), "{err}");

    let err = campaign("targets/php_tokens.php", &seeds, &["--grammar", "none"]);
    assert!(!err.contains("INFO: grammar: php"), "{err}");
    assert_eq!(grammar_mutants(&err), None, "{err}");
}

#[test]
fn seeds_in_another_grammar_get_no_grammar_by_default() {
    // auto would pick json here; only php is a default (DEFAULT_GRAMMARS).
    let seeds: Vec<(String, Vec<u8>)> = (0..4)
        .map(|i| {
            (
                format!("s{i}.json"),
                format!("{{\"k{i}\": [1, 2, {{\"x\": null}}]}}").into_bytes(),
            )
        })
        .collect();
    let err = campaign("targets/php_tokens.php", &seeds, &[]);
    assert!(!err.contains("INFO: grammar"), "{err}");
    assert_eq!(grammar_mutants(&err), None, "{err}");
    let err = campaign("targets/php_tokens.php", &seeds, &["--grammar", "auto"]);
    assert!(err.contains("INFO: grammar: json (auto: "), "{err}");
}

#[test]
fn binary_seeds_with_grammar_auto_get_no_grammar() {
    let seeds: Vec<(String, Vec<u8>)> = (0..4u8)
        .map(|i| {
            let data = (0..200u32).map(|b| (b * 37 + u32::from(i)) as u8).collect();
            (format!("seed{i}"), data)
        })
        .collect();
    let err = campaign("targets/php_tokens.php", &seeds, &["--grammar", "auto"]);
    assert!(
        err.contains("INFO: grammar: none (auto: no grammar parses 80 % of the 800 seed bytes; 4 of 4 seeds binary)"),
        "{err}"
    );
    assert_eq!(grammar_mutants(&err), None, "{err}");

    // Mostly binary, a little PHP: under 80 %, so still none.
    let mut mixed = seeds;
    mixed.push(("a.php".into(), b"<?php echo 1;\n".to_vec()));
    let err = campaign("targets/php_tokens.php", &mixed, &["--grammar", "auto"]);
    assert!(
        err.contains(
            "INFO: grammar: none (auto: no grammar parses 80 % of the 814 seed bytes; 4 of 5 seeds binary)"
        ),
        "{err}"
    );
    assert_eq!(grammar_mutants(&err), None, "{err}");
}

#[test]
fn set_grammar_wins_over_auto_and_grammar_none_wins_over_set_grammar() {
    let target = "targets/php_tokens_grammar.php";
    let binary = vec![("seed".to_string(), vec![0u8, 0xff, 0xfe, 7])];
    // setGrammar('php') is used, even where auto would find none.
    let err = campaign(target, &binary, &["--grammar", "auto"]);
    assert!(err.contains("INFO: grammar: php  pool: "), "{err}");
    assert!(grammar_mutants(&err).is_some_and(|n| n > 0), "{err}");

    let err = campaign(target, &php_seeds(), &["--grammar", "none"]);
    assert!(
        err.contains(
            "INFO: grammar: none (--grammar none; the target's setGrammar('php') is not used)"
        ),
        "{err}"
    );
    assert!(!err.contains("INFO: grammar: php"), "{err}");
    assert_eq!(grammar_mutants(&err), None, "{err}");
}

#[test]
fn fragments_need_a_grammar_that_auto_or_none_did_not_give() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("f.php"), "<?php echo 1;\n").unwrap();
    let target = fixture("targets/php_tokens_grammar.php");
    for choice in ["none", "auto"] {
        let run = php_fuzz(
            &[
                "fuzz",
                target.to_str().unwrap(),
                "--grammar",
                choice,
                "--fragments",
                "f.php",
                "--max-runs",
                "10",
            ],
            dir.path(),
        );
        if choice == "none" {
            assert_eq!(run.code(), 1, "{}", run.all());
            assert!(
                run.stderr().contains("--fragments needs a grammar"),
                "{}",
                run.all()
            );
        } else {
            // setGrammar('php') gives auto its grammar.
            assert_eq!(run.code(), 0, "{}", run.all());
            assert!(
                run.stderr().contains("from 1 fragment files"),
                "{}",
                run.all()
            );
        }
    }
}

#[test]
fn grammars_mentions_auto_and_none() {
    let dir = tempfile::tempdir().unwrap();
    let run = php_fuzz(&["grammars"], dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    let out = run.stdout();
    assert!(out.contains("also takes auto"), "{out}");
    assert!(
        out.contains("and none (no grammar, even over setGrammar())"),
        "{out}"
    );
    assert!(
        out.contains("Without --grammar: setGrammar(), else php when auto would pick it"),
        "{out}"
    );
}

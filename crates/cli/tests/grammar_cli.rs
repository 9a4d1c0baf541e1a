//! Grammar-aware mutation end to end: `php-fuzz grammars`, `--grammar`,
//! `setGrammar()`, `--fragments`, and the bug only valid nested JSON reaches.

mod common;

use std::fs;
use std::path::Path;

use common::{artifacts, fixture, php_fuzz, sidecar};

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// The corpus files' names, sorted: each is its content's sha1.
fn corpus_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn grammars_lists_each_grammar_with_whether_it_is_code_and_has_a_lexicon() {
    let dir = tempfile::tempdir().unwrap();
    let run = php_fuzz(&["grammars"], dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    let out = run.stdout();
    // name, code, lexicon, description
    let column = |name: &str, column: usize| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row for {name}\n{out}"))
            .split_whitespace()
            .nth(column)
            .unwrap()
            .to_string()
    };
    assert_eq!(column("php", 1), "yes");
    assert_eq!(column("javascript", 1), "yes");
    for data in ["json", "css", "html", "yaml", "markdown"] {
        assert_eq!(column(data, 1), "no", "{out}");
    }
    assert_eq!(column("php", 2), "yes", "{out}");
    assert_eq!(column("json", 2), "no", "{out}");
    assert!(out.contains("JSON (tree-sitter-json)"), "{out}");
}

#[test]
fn an_unknown_grammar_is_an_error_listing_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("json-parser/target.php");
    let run = php_fuzz(
        &["fuzz", target.to_str().unwrap(), "--grammar", "klingon"],
        dir.path(),
    );
    assert_eq!(run.code(), 2, "clap's usage error\n{}", run.all());
    let err = run.stderr();
    assert!(err.contains("unknown grammar 'klingon'"), "{err}");
    assert!(err.contains("php, json"), "{err}");

    let target = fixture("bad-targets/unknown_grammar.php");
    let run = php_fuzz(
        &["fuzz", target.to_str().unwrap(), "--max-runs", "10"],
        dir.path(),
    );
    assert_eq!(run.code(), 1, "{}", run.all());
    let err = run.stderr();
    assert!(
        err.contains(
            "$config->setGrammar() in the target: unknown grammar 'klingon' (known: php, json"
        ),
        "{err}"
    );
}

#[test]
fn set_grammar_is_used_and_the_command_line_wins() {
    let dir = tempfile::tempdir().unwrap();
    let target = fixture("targets/json_grammar.php");
    let target = target.to_str().unwrap();
    let fuzz = |extra: &[&str]| {
        let corpus = tempfile::tempdir().unwrap();
        copy_dir(&fixture("json-parser/seeds"), corpus.path());
        let mut args = vec![
            "fuzz",
            target,
            corpus.path().to_str().unwrap(),
            "--seed",
            "3",
            "--max-runs",
            "2000",
        ];
        args.extend_from_slice(extra);
        let run = php_fuzz(&args, dir.path());
        // The parser's planted bug is shallow enough to be found within
        // these runs (exit 77); this test is about which grammar is used.
        assert!(matches!(run.code(), 0 | 77), "{}", run.all());
        run.stderr()
    };
    let declared = fuzz(&[]);
    assert!(declared.contains("INFO: grammar: json "), "{declared}");
    assert!(
        declared.contains("INFO: grammar mutation: tried for"),
        "{declared}"
    );
    let overridden = fuzz(&["--grammar", "yaml"]);
    assert!(overridden.contains("INFO: grammar: yaml "), "{overridden}");
}

#[test]
fn new_entries_made_by_grammar_mutation_name_it_in_ms() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("json-parser/seeds"), &dir.path().join("corpus"));
    let target = fixture("json-parser/target.php");
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--grammar",
            "json",
            "--seed",
            "5",
            "--max-runs",
            "20000",
        ],
        dir.path(),
    );
    // The JSON parser has planted bugs: 77 when one is found.
    assert!(matches!(run.code(), 0 | 77), "{}", run.all());
    let err = run.stderr();
    let by_grammar = err
        .lines()
        .filter(|l| l.contains(" NEW "))
        .filter_map(|l| l.split(" MS: ").nth(1))
        .filter(|ms| {
            ms.split(' ')
                .nth(1)
                .is_some_and(|m| m.starts_with("Grammar"))
        })
        .count();
    assert!(by_grammar > 0, "{err}");
}

#[test]
fn the_same_seed_replays_the_same_grammar_campaign() {
    let target = fixture("json-parser/target.php");
    let seeds = fixture("json-parser/seeds");
    let run_once = || {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&seeds, &dir.path().join("corpus"));
        let run = php_fuzz(
            &[
                "fuzz",
                target.to_str().unwrap(),
                "corpus",
                "--grammar",
                "json",
                "--seed",
                "42",
                "--max-runs",
                "5000",
            ],
            dir.path(),
        );
        assert!(matches!(run.code(), 0 | 77), "{}", run.all());
        corpus_names(&dir.path().join("corpus"))
    };
    let a = run_once();
    assert!(a.len() > 10, "{a:?}");
    assert_eq!(a, run_once(), "same corpus from the same seed");
}

#[test]
fn fragments_are_pinned_in_the_pool_and_need_a_grammar() {
    let dir = tempfile::tempdir().unwrap();
    let fragments = dir.path().join("fragments");
    fs::create_dir_all(fragments.join("deeper")).unwrap();
    fs::write(fragments.join("a.json"), br#"{"fragment": [1, 2, 3]}"#).unwrap();
    fs::write(fragments.join("deeper/b.json"), br#"[true, {"k": null}]"#).unwrap();
    let target = fixture("json-parser/target.php");
    let target = target.to_str().unwrap();
    let fragments = fragments.to_str().unwrap();

    let run = php_fuzz(
        &[
            "fuzz",
            target,
            "--grammar",
            "json",
            "--fragments",
            fragments,
            "--max-runs",
            "100",
        ],
        dir.path(),
    );
    // The parser's planted bug may be found within these runs (exit 77).
    assert!(matches!(run.code(), 0 | 77), "{}", run.all());
    let info = run
        .stderr()
        .lines()
        .find(|l| l.starts_with("INFO: grammar: json"))
        .unwrap_or_else(|| panic!("{}", run.all()))
        .to_string();
    assert!(info.contains("from 2 fragment files"), "{info}");
    assert!(!info.contains("(0 pinned"), "{info}");

    let run = php_fuzz(
        &[
            "fuzz",
            target,
            "--fragments",
            fragments,
            "--max-runs",
            "100",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 1, "{}", run.all());
    assert!(
        run.stderr().contains("--fragments needs a grammar"),
        "{}",
        run.all()
    );
}

/// fixtures/grammar-bug needs a route whose `children` list names one
/// handler twice: two kept grammar mutations, but no partial byte edit of
/// JSON gets past json_decode. Same seed, same run limit, with and without.
#[test]
fn the_grammar_bug_is_found_with_grammar_and_not_without() {
    let target = fixture("grammar-bug/target.php");
    let campaign = |grammar: bool| {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&fixture("grammar-bug/seeds"), &dir.path().join("corpus"));
        let mut args = vec![
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "1",
            "--max-runs",
            "50000",
            "--max-crashes",
            "1",
            "--quiet",
        ];
        if grammar {
            args.extend_from_slice(&["--grammar", "json"]);
        }
        let run = php_fuzz(&args, dir.path());
        (dir, run)
    };

    let (dir, run) = campaign(true);
    assert_eq!(run.code(), 77, "{}", run.all());
    let found = artifacts(dir.path(), "crash-");
    assert_eq!(found.len(), 1, "{}", run.all());
    let record = sidecar(&found[0]);
    assert!(
        record["message"]
            .as_str()
            .unwrap()
            .contains("RouteTable::duplicate()"),
        "{record:#}"
    );

    let (dir, run) = campaign(false);
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(artifacts(dir.path(), "crash-").is_empty(), "{}", run.all());
}

/// On the no-op target the corpus stays one tiny entry that grammar
/// mutation soon cannot change; it stops trying it (it used to try a third
/// of all runs, a quarter of the loop's time) until the pool grows.
#[test]
fn an_entry_grammar_mutation_keeps_failing_on_is_left_to_bytes() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("bench/json-small"), &dir.path().join("corpus"));
    let target = fixture("targets/noop.php");
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--grammar",
            "json",
            "--seed",
            "1",
            "--max-runs",
            "300000",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    let err = run.stderr();
    let tried: u64 = err
        .split("grammar mutation: tried for ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no grammar summary in\n{err}"));
    assert!(tried < 3_000, "tried {tried} times\n{err}");
}

/// A campaign that ends at --max-time makes no mutants it does not run:
/// grammar mutation is tried for at most a quarter of the runs (its share
/// of the target's work, less where its mutants cost more), and the
/// workers did not go on building batches until the limit's watcher woke.
#[test]
fn grammar_mutants_are_tried_for_a_share_of_the_runs_up_to_max_time() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &fixture("real/php-parser/seeds"),
        &dir.path().join("corpus"),
    );
    let target = fixture("real/php-parser/target.php");
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--grammar",
            "php",
            "--seed",
            "1",
            "--max-time",
            "8",
            "--no-cmp",
        ],
        dir.path(),
    );
    // PHP-Parser raises a warning on some inputs: 77 when one is found.
    assert!(matches!(run.code(), 0 | 77), "{}", run.all());
    let err = run.stderr();
    let number_after = |marker: &str| -> u64 {
        let at = err
            .find(marker)
            .unwrap_or_else(|| panic!("no {marker:?} in {err}"))
            + marker.len();
        err[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let tried = number_after("grammar mutation: tried for ");
    let runs = number_after("==== Done (reached --max-time): ");
    // Enough runs for the share to show, even on a loaded machine (3 s once
    // gave fewer than 300 while two test suites shared the 2 cores).
    assert!(runs > 200, "{err}");
    assert!(
        tried * 3 < runs,
        "grammar mutation tried for {tried} mutants in {runs} runs:\n{err}"
    );
}

/// `(grammar µs, grammar bytes, other µs, other bytes, grammar's share of
/// the runs in %)` from the campaign's "mean run of the mutants" line.
fn mean_runs(err: &str) -> Option<(u64, u64, u64, u64, u64)> {
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("INFO: mean run of the mutants: "))?;
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    match numbers[..] {
        [g_micros, g_bytes, o_micros, o_bytes, share] => {
            Some((g_micros, g_bytes, o_micros, o_bytes, share))
        }
        _ => None,
    }
}

#[test]
fn the_last_lines_say_how_long_grammar_mutants_ran_against_the_others() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("json-parser/seeds"), &dir.path().join("corpus"));
    let target = fixture("targets/valid_json_is_slow.php");
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "2",
            "--max-runs",
            "600",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    let err = run.stderr();
    let (grammar_micros, grammar_bytes, other_micros, other_bytes, share) =
        mean_runs(&err).unwrap_or_else(|| panic!("no mean-run line\n{err}"));
    // Grammar mutants of valid JSON stay valid, so nearly every one sleeps
    // its 2 ms; byte mutants break the syntax often enough to average less.
    assert!(grammar_micros >= 1_500, "{err}");
    assert!(other_micros < grammar_micros * 9 / 10, "{err}");
    assert!(grammar_bytes > 0 && other_bytes > 0, "{err}");
    // The sleep executes no block, so both kinds cost the budget alike:
    // about a quarter of the mutants are grammar mutants (those it could
    // not make fell back to bytes).
    assert!((2..=30).contains(&share), "{err}");
}

#[test]
fn grammar_share_mutants_gives_that_share_of_the_mutants_whatever_they_cost() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("json-parser/seeds"), &dir.path().join("corpus"));
    let target = fixture("targets/valid_json_is_slow.php");
    let run = php_fuzz(
        &[
            "fuzz",
            target.to_str().unwrap(),
            "corpus",
            "--seed",
            "2",
            "--max-runs",
            "600",
            "--grammar-share",
            "mutants:0.6",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    let err = run.stderr();
    let tried: u64 = err
        .split("grammar mutation: tried for ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no grammar mutation line\n{err}"));
    // Tried for 60 % of the 600 runs' mutants (input-to-state candidates
    // and the seeds are no mutants), though a grammar mutant costs the
    // target fourteen times a byte mutant here: the default would try a
    // quarter at most.
    assert!((300..=400).contains(&tried), "{err}");

    let bad = php_fuzz(
        &["fuzz", target.to_str().unwrap(), "--grammar-share", "half"],
        dir.path(),
    );
    assert_eq!(bad.code(), 2, "{}", bad.all());
    assert!(
        bad.stderr().contains("expected work:F or mutants:F"),
        "{}",
        bad.all()
    );
}

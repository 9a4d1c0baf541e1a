use super::*;
use crate::find;

fn clean(grammar: &str, data: &[u8]) -> usize {
    let info = find(grammar).unwrap();
    let mut parser = Parser::new();
    parser.set_language(&info.language()).unwrap();
    clean_bytes(&mut parser, info, data)
}

fn picked<'a>(seeds: impl IntoIterator<Item = &'a [u8]>) -> Option<&'static str> {
    choose(seeds).chosen().map(|g| g.name)
}

#[test]
fn an_error_node_and_a_missing_nodes_parent_do_not_count() {
    let valid = b"<?php\necho 1;\n";
    assert_eq!(clean("php", valid), valid.len());
    // The array lacks its `]`: the array is incomplete, the rest parses.
    let missing = b"<?php\n$a = [1, 2;\n";
    assert_eq!(clean("php", missing), missing.len() - "[1, 2".len());
    let error = br#"{"a": 1, ]]]] "b": 2}"#;
    let parsed = clean("json", error);
    assert!(parsed > 0 && parsed < error.len() - 3, "{parsed}");
}

#[test]
fn text_any_grammar_takes_does_not_count() {
    // Inline HTML is valid PHP, but it is not PHP code.
    for grammar in ["php", "html", "yaml", "markdown"] {
        assert_eq!(clean(grammar, b"just some text"), 0, "{grammar}");
    }
    assert_eq!(clean("markdown", b"<?php echo 1;"), 0);
    let list = b"- one\n- two\n";
    assert_eq!(clean("markdown", list), list.len());
}

#[test]
fn binary_seeds_parse_in_no_grammar() {
    assert_eq!(clean("json", b"[1, \0]"), 0);
    assert_eq!(clean("php", b"<?php echo '\xff';"), 0);
    let binary: &[&[u8]] = &[b"\x7fELF\x02\x01\x01\0\0\0", b"\xff\xfe\x00\x01"];
    let choice = choose(binary.iter().copied());
    assert!(choice.chosen().is_none());
    assert!(choice.shares.iter().all(|s| s.clean == 0));
    assert_eq!(
        choice.describe(),
        "auto: no grammar parses 80 % of the 14 seed bytes; 2 of 2 seeds binary"
    );
}

#[test]
fn no_seed_bytes_pick_nothing() {
    assert_eq!(picked([]), None);
    let choice = choose([&b""[..], b""]);
    assert!(choice.chosen().is_none());
    assert_eq!(choice.describe(), "auto: no seed bytes to look at");
}

#[test]
fn each_grammars_sample_is_best_parsed_by_that_grammar() {
    for info in grammars() {
        let choice = choose([info.sample.as_bytes()]);
        // Markdown's sample is a fifth prose, which any grammar takes.
        let expected = (info.name != "markdown").then_some(info.name);
        assert_eq!(choice.chosen().map(|g| g.name), expected);
    }
}

#[test]
fn the_share_is_over_all_seed_bytes_and_must_reach_80_percent() {
    let php = b"<?php\nfunction f($a) { return $a + 1; }\n";
    assert_eq!(php.len() % 4, 0, "the test needs a length divisible by 4");
    let junk = |n: usize| vec![0xffu8; n];
    // 80 % exactly is enough; just under is not.
    let exact = junk(php.len() / 4);
    let under = junk(php.len() / 4 + 1);
    assert_eq!(picked([&php[..], &exact]), Some("php"));
    assert_eq!(picked([&php[..], &under]), None);
    let choice = choose([&php[..], &exact]);
    let best = choice.best().unwrap();
    assert_eq!(
        (best.clean, choice.bytes),
        (php.len(), php.len() + exact.len())
    );
    assert_eq!(
        choice.describe(),
        format!(
            "auto: 80 % of {} seed bytes parse as php; 1 of 2 seeds binary",
            choice.bytes
        )
    );
    let choice = choose([&php[..], &under]);
    assert_eq!(
        choice.describe(),
        format!(
            "auto: no grammar parses 80 % of the {} seed bytes; 1 of 2 seeds binary",
            choice.bytes
        )
    );
}

#[test]
fn a_grammar_stops_parsing_once_it_cannot_reach_80_percent() {
    // Shortest first: the binary seed fails every grammar before the JSON.
    let seeds: [&[u8]; 2] = [b"[1, 2, 3, 4, 5, 6, 7]", b"\0\0\0\0\0\0\0\0\0"];
    let choice = choose(seeds);
    assert!(
        choice.shares.iter().all(|s| !s.complete && s.clean == 0),
        "{choice:?}"
    );
    assert!(choice.chosen().is_none());
    let choice = choose([seeds[0]]);
    let json = choice
        .shares
        .iter()
        .find(|s| s.grammar.name == "json")
        .unwrap();
    assert!(json.complete && json.clean == seeds[0].len());
    let css = choice
        .shares
        .iter()
        .find(|s| s.grammar.name == "css")
        .unwrap();
    assert!(!css.complete, "{css:?}");
}

#[test]
fn equal_shares_go_to_a_strict_grammar_then_registry_order() {
    // Valid JSON is valid YAML and JavaScript: json is strict and first.
    let json = b"{\"a\": [1, 2]}";
    let choice = choose([&json[..]]);
    let full: Vec<&str> = choice
        .shares
        .iter()
        .filter(|s| s.clean == json.len())
        .map(|s| s.grammar.name)
        .collect();
    assert!(
        full.contains(&"yaml") && full.contains(&"javascript"),
        "{full:?}"
    );
    assert_eq!(choice.chosen().unwrap().name, "json");
    // `a: 1` is a YAML mapping and a JavaScript label: javascript is strict,
    // so it wins although yaml comes first in the registry.
    let labels = b"a: 1\nb: 2\n";
    let choice = choose([&labels[..]]);
    let yaml = choice.shares.iter().find(|s| s.grammar.name == "yaml");
    assert_eq!(yaml.unwrap().clean, labels.len());
    assert_eq!(choice.chosen().unwrap().name, "javascript");
    // A YAML list is a Markdown list: both are lenient, yaml comes first.
    let list = b"- one: 1\n- two: 2\n";
    let choice = choose([&list[..]]);
    let clean_in = |name: &str| {
        let share = choice.shares.iter().find(|s| s.grammar.name == name);
        share.unwrap().clean
    };
    assert_eq!(
        (clean_in("yaml"), clean_in("markdown")),
        (list.len(), list.len())
    );
    assert_eq!(choice.chosen().unwrap().name, "yaml");
}

#[test]
fn a_mostly_php_corpus_picks_php_and_reports_the_share() {
    let seeds: Vec<&[u8]> = vec![
        b"<?php\nclass A { public function f() { return [1, 2]; } }\n",
        b"<?php\n$x = fn($a) => $a * 2;\necho $x(3);\n",
        b"<?php\necho 1\n",
    ];
    let choice = choose(seeds.iter().copied());
    assert_eq!(choice.chosen().unwrap().name, "php");
    assert_eq!(choice.files, 3);
    assert!(
        choice.describe().starts_with("auto: 9") && choice.describe().ends_with("parse as php"),
        "{}",
        choice.describe()
    );
}

#[test]
fn seeds_over_the_sampling_limits_are_left_out() {
    let big = vec![b'a'; AUTO_MAX_SEED_BYTES + 1];
    let json = b"[1, 2, 3]";
    let choice = choose([&big[..], &json[..]]);
    assert_eq!((choice.files, choice.left_out), (1, 1));
    assert_eq!(choice.chosen().unwrap().name, "json");
    assert!(
        choice
            .describe()
            .contains("1 seeds over the sampling limits left out")
    );
    let many = vec![&json[..]; AUTO_MAX_FILES + 5];
    let choice = choose(many.iter().copied());
    assert_eq!((choice.files, choice.left_out), (AUTO_MAX_FILES, 5));
    let large = vec![b' '; AUTO_MAX_SEED_BYTES];
    let choice = choose([&large[..]; 20]);
    assert!(
        choice.bytes <= AUTO_MAX_BYTES && choice.left_out > 0,
        "{choice:?}"
    );
}

#[test]
fn overlapping_spans_are_counted_once() {
    assert_eq!(covered(vec![(0, 4), (2, 6), (10, 12), (11, 11)]), 8);
    assert_eq!(covered(vec![]), 0);
}

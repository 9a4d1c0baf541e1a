//! One test per grammar mutation, on inputs small enough to list every
//! mutant they can produce.

use std::collections::BTreeSet;

use php_fuzz_grammar::{
    FragmentPool, Grammar, GrammarMutation, GrammarMutator, InputParser, ParsedInput, Sources,
};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

struct Setup {
    parser: InputParser,
    pool: FragmentPool,
    mutator: GrammarMutator,
}

fn setup(grammar: &str, pool_sources: &[&str]) -> Setup {
    let grammar = Grammar::load(grammar).unwrap();
    let mut parser = InputParser::new(&grammar);
    let mut pool = FragmentPool::default();
    for source in pool_sources {
        pool.add(&parser.parse(source.as_bytes()));
    }
    Setup {
        parser,
        pool,
        mutator: GrammarMutator::new(grammar.info().code),
    }
}

/// Every distinct mutant `kind` makes of `input` in 300 tries.
fn mutants(
    setup: &mut Setup,
    kind: GrammarMutation,
    input: &str,
    partner: Option<&str>,
) -> BTreeSet<String> {
    let input = setup.parser.parse(input.as_bytes());
    let partner: Option<ParsedInput> = partner.map(|p| setup.parser.parse(p.as_bytes()));
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for _ in 0..300 {
        let sources = Sources {
            input: &input,
            partner: partner.as_ref(),
            pool: &setup.pool,
        };
        if setup.mutator.apply(kind, &mut rng, sources, 1024, &mut out) {
            seen.insert(String::from_utf8(out.clone()).unwrap());
        }
    }
    seen
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn replace_puts_a_pool_fragment_of_the_same_kind_in_place_of_a_subtree() {
    let mut s = setup("json", &["[7]"]);
    // The pool holds the array `[7]` and the number `7`.
    let got = mutants(&mut s, GrammarMutation::Replace, "{\"a\": [1]}", None);
    assert_eq!(got, set(&["{\"a\": [7]}"]));
}

#[test]
fn insert_adds_a_pool_fragment_with_the_lists_own_separator() {
    let mut s = setup("json", &["[7]"]);
    let got = mutants(&mut s, GrammarMutation::Insert, "[1,  2]", None);
    // The root array has no list to grow; the numbers do.
    assert_eq!(got, set(&["[7,  1,  2]", "[1,  7,  2]", "[1,  2,  7]"]));
}

#[test]
fn insert_into_a_one_element_list_uses_a_separator_learned_from_the_pool() {
    let mut s = setup("json", &["[5, 6]"]);
    let got = mutants(&mut s, GrammarMutation::Insert, "[1]", None);
    assert_eq!(got, set(&["[1, 5]", "[1, 6]", "[5, 1]", "[6, 1]"]));
}

#[test]
fn insert_does_nothing_where_the_kind_is_not_known_to_repeat() {
    let mut s = setup("json", &["{\"k\": 5}"]);
    assert!(mutants(&mut s, GrammarMutation::Insert, "{\"a\": 1}", None).is_empty());
}

#[test]
fn duplicate_repeats_a_list_element_next_to_itself() {
    let mut s = setup("json", &[]);
    let got = mutants(
        &mut s,
        GrammarMutation::Duplicate,
        "{\"a\": 1, \"b\": [true]}",
        None,
    );
    assert_eq!(
        got,
        set(&[
            "{\"a\": 1, \"a\": 1, \"b\": [true]}",
            "{\"a\": 1, \"b\": [true], \"b\": [true]}"
        ])
    );
}

#[test]
fn delete_removes_an_element_and_one_separator() {
    let mut s = setup("json", &[]);
    let got = mutants(&mut s, GrammarMutation::Delete, "[1, 2, 3]", None);
    assert_eq!(got, set(&["[2, 3]", "[1, 3]", "[1, 2]"]));
    assert!(
        mutants(&mut s, GrammarMutation::Delete, "[1]", None).is_empty(),
        "keeps the last element"
    );
}

#[test]
fn delete_keeps_key_and_value_of_a_pair_apart_from_list_elements() {
    let mut s = setup("json", &[]);
    let got = mutants(
        &mut s,
        GrammarMutation::Delete,
        "{\"k\": \"v\", \"l\": \"w\"}",
        None,
    );
    assert_eq!(got, set(&["{\"l\": \"w\"}", "{\"k\": \"v\"}"]));
}

#[test]
fn swap_exchanges_two_subtrees_of_the_same_kind() {
    let mut s = setup("json", &[]);
    let got = mutants(&mut s, GrammarMutation::Swap, "[1, \"x\", 2]", None);
    assert_eq!(got, set(&["[2, \"x\", 1]"]));
}

#[test]
fn cross_over_takes_a_subtree_of_the_same_kind_from_the_partner() {
    let mut s = setup("json", &[]);
    let got = mutants(
        &mut s,
        GrammarMutation::CrossOver,
        "[1]",
        Some("[\"x\", 7]"),
    );
    assert_eq!(got, set(&["[7]", "[\"x\", 7]"]));
    assert!(mutants(&mut s, GrammarMutation::CrossOver, "[1]", None).is_empty());
}

#[test]
fn adapt_renames_a_fragments_variables_to_ones_in_scope() {
    let mut s = setup("php", &["<?php $z = $z + 1;"]);
    let input = "<?php function f($inner) { $inner = 2; } $outer = 3;";
    let got = mutants(&mut s, GrammarMutation::Adapt, input, None);
    assert!(
        got.contains("<?php function f($inner) { $inner = $inner + 1; } $outer = 3;"),
        "{got:?}"
    );
    for mutant in &got {
        assert!(!mutant.contains("$z"), "not renamed: {mutant}");
        let body = &mutant[mutant.find('{').unwrap()..mutant.rfind('}').unwrap()];
        assert!(
            !body.contains("$outer"),
            "renamed to a variable out of scope: {mutant}"
        );
        assert!(!s.parser.parse(mutant.as_bytes()).has_error(), "{mutant}");
    }
}

#[test]
fn adapt_also_inserts_renamed_fragments_into_lists() {
    let mut s = setup("php", &["<?php $z = $z + 1;"]);
    let input = "<?php function f($a) { $a = 2; $a = 3; } $b = 4;";
    let got = mutants(&mut s, GrammarMutation::Adapt, input, None);
    assert!(
        got.contains("<?php function f($a) { $a = 2; $a = $a + 1; $a = 3; } $b = 4;"),
        "{got:?}"
    );
}

#[test]
fn adapt_only_applies_to_code_grammars() {
    let mut s = setup("json", &["{\"k\": 1}"]);
    assert!(mutants(&mut s, GrammarMutation::Adapt, "{\"a\": 2}", None).is_empty());
}

#[test]
fn mutations_are_named_for_ms_output() {
    let names: Vec<_> = GrammarMutation::ALL.iter().map(|m| m.name()).collect();
    assert_eq!(
        names,
        [
            "GrammarReplace",
            "GrammarInsert",
            "GrammarDuplicate",
            "GrammarDelete",
            "GrammarSwap",
            "GrammarCrossOver",
            "GrammarAdapt",
            "GrammarFusion"
        ]
    );
}

#[test]
fn mutate_respects_max_len_and_leaves_the_buffer_alone_when_nothing_applies() {
    let mut s = setup("json", &["[1, 2, 3, 4, 5, 6, 7, 8]"]);
    let input = s.parser.parse(b"[1, 2]");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let mut out = Vec::new();
    let mut applied = 0;
    for _ in 0..500 {
        let sources = Sources {
            input: &input,
            partner: None,
            pool: &s.pool,
        };
        if s.mutator
            .mutate(&mut rng, sources, input.data().len(), &mut out)
            .is_some()
        {
            assert!(
                out.len() <= input.data().len(),
                "{}",
                String::from_utf8_lossy(&out)
            );
            applied += 1;
        }
    }
    assert!(applied > 100);

    let garbage = s.parser.parse(b"\x00\x01");
    out.clear();
    out.extend_from_slice(b"untouched");
    let sources = Sources {
        input: &garbage,
        partner: None,
        pool: &s.pool,
    };
    assert_eq!(s.mutator.mutate(&mut rng, sources, 100, &mut out), None);
    assert_eq!(out, b"untouched");
}

#[test]
fn the_same_seed_gives_the_same_mutants() {
    let run = || {
        let mut s = setup("php", &["<?php $a = [1, 2]; echo $a[0] . 'x';"]);
        let input = s
            .parser
            .parse(b"<?php function g($p) { return $p * 2; } echo g(3), g(4);");
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(99);
        let mut out = Vec::new();
        (0..200)
            .map(|_| {
                let sources = Sources {
                    input: &input,
                    partner: Some(&input),
                    pool: &s.pool,
                };
                let kind = s.mutator.mutate(&mut rng, sources, 4096, &mut out);
                (kind, out.clone())
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}

#[test]
fn inputs_with_syntax_errors_are_mutated_in_their_valid_subtrees_only() {
    let mut s = setup("json", &["[9]"]);
    let broken = "{\"a\": [1, 2,, 3] \"b\": {\"c\": [4, 5]}}";
    let input = s.parser.parse(broken.as_bytes());
    assert!(input.has_error());
    assert!(!input.sites().is_empty());
    let got = mutants(&mut s, GrammarMutation::Replace, broken, None);
    assert!(!got.is_empty());
    for mutant in &got {
        // The broken region is never touched, only what parsed cleanly.
        assert!(mutant.contains(",,"), "{mutant}");
    }
}

#[test]
fn php_statements_closed_by_the_end_tag_are_not_copied_after_themselves() {
    let mut s = setup("php", &[]);
    let got = mutants(
        &mut s,
        GrammarMutation::Duplicate,
        "<?php $a = 1;\n$b = 2 ?>",
        None,
    );
    assert!(got.contains("<?php $a = 1;\n$a = 1;\n$b = 2 ?>"), "{got:?}");
    for mutant in &got {
        assert!(!s.parser.parse(mutant.as_bytes()).has_error(), "{mutant}");
    }
}

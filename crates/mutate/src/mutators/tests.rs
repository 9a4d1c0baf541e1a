//! Unit tests of the mutators and their dispatcher.

use super::*;
use crate::cmp::Value;
use std::path::Path;

fn mutator(seed: u64) -> Mutator {
    Mutator::new(seed, Dictionary::new())
}

fn with_dict(words: &str) -> Mutator {
    let mut m = Mutator::new(
        7,
        Dictionary::parse(words.as_bytes(), Path::new("t")).unwrap(),
    );
    // Every mutator can apply: the comparison ones get words too.
    m.set_source_dictionary(Dictionary::parse(b"\"src\"", Path::new("s")).unwrap());
    m.set_auto_dictionary(Dictionary::parse(b"\"auto-word\"", Path::new("a")).unwrap());
    let log =
        crate::cmp::tests::encode(&[(1, crate::cmp::kind::EQUAL, Value::Int(7), Value::Int(300))]);
    for record in crate::cmp::records(&log) {
        m.observe_comparison(&record);
    }
    m
}

/// Applies `kind` many times from `start`; returns the distinct results.
fn outcomes(
    m: &mut Mutator,
    kind: MutatorKind,
    start: &[u8],
    max_len: usize,
    partner: Option<&[u8]>,
) -> Vec<Vec<u8>> {
    let mut seen = Vec::new();
    for _ in 0..2000 {
        let mut data = start.to_vec();
        if m.apply(kind, &mut data, max_len, partner) {
            assert!(
                data.len() <= max_len,
                "{kind:?} grew past max_len: {data:?}"
            );
            if !seen.contains(&data) {
                seen.push(data);
            }
        }
    }
    seen
}

#[test]
fn every_mutator_respects_max_len_and_never_panics_on_edge_sizes() {
    let mut m = with_dict("\"word\"\n\"longer-word\"");
    for kind in MutatorKind::ALL {
        for start in [
            &b""[..],
            b"x",
            b"ab",
            b"0123456789",
            b"\xff\x00\x01\x02\x03\x04\x05\x06\x07\x08",
        ] {
            for max_len in [start.len(), start.len() + 1, start.len() + 50] {
                for partner in [None, Some(&b""[..]), Some(&b"partner data 42"[..])] {
                    outcomes(&mut m, kind, start, max_len, partner);
                }
            }
        }
    }
}

#[test]
fn inapplicable_mutators_say_so() {
    let mut m = mutator(1);
    let mut empty = Vec::new();
    assert!(!m.apply(MutatorKind::EraseBytes, &mut b"a".to_vec(), 10, None));
    assert!(!m.apply(MutatorKind::ChangeByte, &mut empty, 10, None));
    assert!(!m.apply(MutatorKind::InsertByte, &mut b"ab".to_vec(), 2, None));
    assert!(!m.apply(
        MutatorKind::InsertRepeatedBytes,
        &mut b"ab".to_vec(),
        4,
        None
    ));
    assert!(!m.apply(
        MutatorKind::ChangeAsciiInt,
        &mut b"no digits".to_vec(),
        20,
        None
    ));
    assert!(!m.apply(MutatorKind::CrossOver, &mut b"ab".to_vec(), 10, None));
    assert!(!m.apply(MutatorKind::ManualDict, &mut b"ab".to_vec(), 10, None));
    assert!(!m.apply(MutatorKind::ShuffleBytes, &mut b"a".to_vec(), 10, None));
}

#[test]
fn the_dispatcher_gives_up_when_nothing_applies() {
    let mut m = mutator(3);
    let mut data = Vec::new();
    assert_eq!(m.mutate(&mut data, 0, None), 0);
    assert!(data.is_empty());
    assert!(m.last_sequence().is_empty());
    let mut data = b"too long".to_vec();
    m.mutate(&mut data, 3, None);
    assert!(data.len() <= 3, "cut to max_len first");
}

#[test]
fn erase_and_insert_change_the_length_as_named() {
    let mut m = mutator(4);
    for out in outcomes(&mut m, MutatorKind::EraseBytes, b"abcdefgh", 8, None) {
        assert!(out.len() < 8 && out.len() >= 4);
    }
    for out in outcomes(&mut m, MutatorKind::InsertByte, b"abc", 8, None) {
        assert_eq!(out.len(), 4);
    }
    let repeated = outcomes(&mut m, MutatorKind::InsertRepeatedBytes, b"ab", 200, None);
    assert!(repeated.iter().all(|o| o.len() >= 5 && o.len() <= 130));
    assert!(
        repeated
            .iter()
            .any(|o| o.windows(3).any(|w| w == [0, 0, 0]))
    );
    assert!(
        repeated
            .iter()
            .any(|o| o.windows(3).any(|w| w == [0xff, 0xff, 0xff]))
    );
}

#[test]
fn change_bit_flips_exactly_one_bit() {
    let mut m = mutator(5);
    for out in outcomes(&mut m, MutatorKind::ChangeBit, b"\x00\x00", 2, None) {
        let bits: u32 = out.iter().map(|b| b.count_ones()).sum();
        assert_eq!(bits, 1);
    }
}

#[test]
fn shuffle_keeps_the_bytes() {
    let mut m = mutator(6);
    let results = outcomes(&mut m, MutatorKind::ShuffleBytes, b"abcdef", 6, None);
    assert!(results.len() > 10);
    for out in results {
        let mut sorted = out.clone();
        sorted.sort();
        assert_eq!(sorted, b"abcdef");
    }
}

#[test]
fn change_ascii_int_rewrites_a_number() {
    let mut m = mutator(8);
    let results = outcomes(&mut m, MutatorKind::ChangeAsciiInt, b"x=41;", 20, None);
    let texts: Vec<String> = results
        .iter()
        .map(|o| String::from_utf8(o.clone()).unwrap())
        .collect();
    for expected in ["x=42;", "x=40;", "x=20;", "x=82;"] {
        assert!(
            texts.iter().any(|t| t == expected),
            "{expected} not in {texts:?}"
        );
    }
    for t in &texts {
        assert!(
            t.starts_with("x=") && t.ends_with(';') && t[2..t.len() - 1].parse::<u64>().is_ok(),
            "{t}"
        );
    }
}

#[test]
fn change_bin_int_writes_both_endiannesses() {
    let mut m = mutator(9);
    let results = outcomes(
        &mut m,
        MutatorKind::ChangeBinInt,
        &[0, 0, 0, 0, 0, 0, 0, 10],
        8,
        None,
    );
    // A length field: the number of bytes after a 2-byte field at the start is 6.
    assert!(
        results.iter().any(|o| o[..2] == [0, 6]),
        "big-endian length"
    );
    assert!(
        results.iter().any(|o| o[..2] == [6, 0]),
        "little-endian length"
    );
}

#[test]
fn copy_part_overwrites_and_inserts() {
    let mut m = mutator(10);
    let results = outcomes(&mut m, MutatorKind::CopyPart, b"abcd", 8, None);
    assert!(
        results.iter().any(|o| o.len() == 4 && o != b"abcd"),
        "overwrite"
    );
    assert!(results.iter().any(|o| o.len() > 4), "insert");
}

#[test]
fn all_crossover_strategies_happen() {
    let mut m = mutator(11);
    let results = outcomes(
        &mut m,
        MutatorKind::CrossOver,
        b"aaaaaa",
        12,
        Some(b"BBBBBB"),
    );
    let has_b = |o: &Vec<u8>| o.contains(&b'B');
    assert!(
        results
            .iter()
            .any(|o| o.len() == 6 && o.contains(&b'a') && has_b(o)),
        "overwrite part"
    );
    assert!(
        results
            .iter()
            .any(|o| o.len() > 6 && o.starts_with(b"a") && o.ends_with(b"a") && has_b(o)),
        "insert part of the other"
    );
    assert!(
        results
            .iter()
            .any(|o| o.len() < 6 && has_b(o) && o.starts_with(b"a")),
        "interleave, cut short"
    );
}

#[test]
fn dictionary_words_are_inserted_and_overwritten() {
    let mut m = with_dict("\"KEY\"");
    let results = outcomes(&mut m, MutatorKind::ManualDict, b"....", 10, None);
    assert!(
        results
            .iter()
            .any(|o| o.len() == 7 && o.windows(3).any(|w| w == b"KEY")),
        "insert"
    );
    assert!(
        results
            .iter()
            .any(|o| o.len() == 4 && o.windows(3).any(|w| w == b"KEY")),
        "overwrite"
    );
}

#[test]
fn source_and_auto_dictionaries_feed_their_own_mutators() {
    let mut m = mutator(12);
    assert!(!m.apply(MutatorKind::SourceDict, &mut b"ab".to_vec(), 10, None));
    assert!(!m.apply(MutatorKind::PersAutoDict, &mut b"ab".to_vec(), 10, None));
    m.set_source_dictionary(Dictionary::parse(b"\"SRC\"", Path::new("s")).unwrap());
    m.set_auto_dictionary(Dictionary::parse(b"\"AUTO\"", Path::new("a")).unwrap());
    let source = outcomes(&mut m, MutatorKind::SourceDict, b"....", 10, None);
    assert!(source.iter().all(|o| o.windows(3).any(|w| w == b"SRC")));
    let auto = outcomes(&mut m, MutatorKind::PersAutoDict, b"....", 10, None);
    assert!(auto.iter().all(|o| o.windows(4).any(|w| w == b"AUTO")));
    // A source word that helped is remembered, an auto-dictionary word is not.
    let mut data = b"....".to_vec();
    m.sequence = Sequence::new();
    m.tokens.clear();
    assert!(m.apply(MutatorKind::SourceDict, &mut data, 10, None));
    assert!(m.apply(MutatorKind::PersAutoDict, &mut data, 10, None));
    assert_eq!(m.last_tokens(), [b"SRC".to_vec()]);
}

#[test]
fn cmp_replaces_an_operand_with_the_other_or_inserts_it() {
    use crate::cmp::{
        kind, records,
        tests::{bytes, encode},
    };
    let mut m = mutator(13);
    assert!(
        !m.apply(MutatorKind::Cmp, &mut b"ab".to_vec(), 10, None),
        "empty TORC"
    );
    let log = encode(&[
        (1, kind::EQUAL, bytes("abcd"), bytes("IHDR")),
        (2, kind::EQUAL, Value::Int(0x0102), Value::Int(0x0a0b)),
    ]);
    for record in records(&log) {
        m.observe_comparison(&record);
    }
    let results = outcomes(&mut m, MutatorKind::Cmp, b"xxabcdyy\x02\x01", 16, None);
    assert!(
        results.contains(&b"xxIHDRyy\x02\x01".to_vec()),
        "raw replacement"
    );
    assert!(
        results.contains(&b"xxabcdyy\x0b\x0a".to_vec()),
        "little-endian replacement"
    );
    assert!(
        results
            .iter()
            .any(|o| o.len() > 10 && o.windows(4).any(|w| w == b"2571")),
        "decimal text inserted"
    );
    let mut data = b"xxabcdyy".to_vec();
    m.tokens.clear();
    while !m.apply(MutatorKind::Cmp, &mut data, 16, None) {}
    assert_eq!(m.last_tokens().len(), 1);
}

#[test]
fn a_seed_reproduces_exactly() {
    let run = |seed| {
        let mut m = with_dict("\"w\"");
        m.rng = FuzzRng::seed_from_u64(seed);
        let mut data = b"seed input 123".to_vec();
        let mut history = Vec::new();
        for _ in 0..500 {
            m.mutate(&mut data, 64, Some(b"partner"));
            history.push((data.clone(), m.last_sequence().to_string()));
        }
        history
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
}

#[test]
fn sequences_print_like_libfuzzer() {
    let mut s = Sequence::new();
    s.push(MutatorKind::InsertByte);
    s.push(MutatorKind::ChangeAsciiInt);
    assert_eq!(s.to_string(), "2 InsertByte-ChangeASCIIInt-");
}

proptest::proptest! {
    #[test]
    fn mutate_never_exceeds_max_len(
        input in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
        partner in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
        max_len in 0usize..80,
        seed in proptest::prelude::any::<u64>(),
        depth in 1usize..10,
    ) {
        let mut m = Mutator::new(seed, Dictionary::parse(b"\"tok\"\n\"\\x00\\xff\"", Path::new("t")).unwrap());
        m.set_depth(depth);
        let mut data = input;
        for _ in 0..20 {
            let applied = m.mutate(&mut data, max_len, Some(&partner));
            proptest::prop_assert!(data.len() <= max_len);
            proptest::prop_assert!(applied <= depth);
            proptest::prop_assert_eq!(applied, m.last_sequence().len());
        }
    }
}

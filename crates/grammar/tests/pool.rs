//! Fragment pools: deduplicated, within their caps, open to late fragments.

use php_fuzz_grammar::{FragmentPool, Grammar, InputParser, PoolLimits};

fn json() -> (Grammar, InputParser) {
    let grammar = Grammar::load("json").unwrap();
    let parser = InputParser::new(&grammar);
    (grammar, parser)
}

fn kind(grammar: &Grammar, name: &str) -> u16 {
    grammar.language().id_for_node_kind(name, true)
}

#[test]
fn fragments_are_kept_per_kind_and_once_each() {
    let (grammar, mut parser) = json();
    let mut pool = FragmentPool::default();
    let entry = parser.parse(br#"[1, 2, 1, {"a": 1}]"#);
    let added = pool.add(&entry);
    assert!(added > 0);
    let numbers: Vec<_> = pool
        .fragments(kind(&grammar, "number"))
        .iter()
        .map(|f| f.text())
        .collect();
    assert_eq!(numbers, [b"1", b"2"]);
    assert_eq!(pool.add(&entry), 0, "the same entry twice adds nothing");
    assert_eq!(pool.fragments(kind(&grammar, "object")).len(), 1);
}

#[test]
fn a_full_kind_still_takes_new_fragments_and_stays_at_its_cap() {
    let (grammar, mut parser) = json();
    let limits = PoolLimits {
        per_kind: 8,
        ..PoolLimits::default()
    };
    let mut pool = FragmentPool::new(limits);
    let number = kind(&grammar, "number");
    for i in 0..100 {
        pool.add(&parser.parse(format!("[{i}]").as_bytes()));
        assert!(pool.fragments(number).len() <= 8);
        let latest = i.to_string();
        assert!(
            pool.fragments(number)
                .iter()
                .any(|f| f.text() == latest.as_bytes()),
            "the newest number {i} got in"
        );
    }
    assert_eq!(pool.fragments(number).len(), 8);
    assert!(pool.stats().evicted >= 92);
}

#[test]
fn the_pool_stays_within_its_byte_budget() {
    let (grammar, mut parser) = json();
    let limits = PoolLimits {
        total_bytes: 4096,
        per_kind: 1000,
        max_fragment_len: 64,
    };
    let mut pool = FragmentPool::new(limits);
    for i in 0..500 {
        let text = format!(r#"{{"key{i}": [{i}, "s{i}", {{"n": {i}.5}}]}}"#);
        pool.add(&parser.parse(text.as_bytes()));
        assert!(pool.stats().bytes <= 4096, "{:?}", pool.stats());
    }
    let stats = pool.stats();
    assert!(stats.fragments > 10 && stats.evicted > 0, "{stats:?}");
    let numbers = pool.fragments(kind(&grammar, "number"));
    assert!(
        numbers.iter().any(|f| f.text() == b"499"),
        "late fragments get in"
    );
}

#[test]
fn pinned_fragments_outlive_any_number_of_newcomers() {
    let (grammar, mut parser) = json();
    let limits = PoolLimits {
        per_kind: 8,
        total_bytes: 8192,
        max_fragment_len: 64,
    };
    let mut pool = FragmentPool::new(limits);
    let number = kind(&grammar, "number");
    // Six user numbers: four fit in half of the kind's slots, pinned; the
    // rest are kept as ordinary fragments.
    pool.add_pinned(&parser.parse(b"[-1, -2, -3, -4, -5, -6]"));
    assert_eq!(pool.stats().pinned, 4 + 1, "four numbers and the array");
    for i in 0..2000 {
        let text = format!(r#"{{"k{i}": [{i}, "s{i}"]}}"#);
        pool.add(&parser.parse(text.as_bytes()));
        let stats = pool.stats();
        assert!(stats.bytes <= 8192, "{stats:?}");
        assert!(pool.fragments(number).len() <= 8);
    }
    let numbers: Vec<_> = pool.fragments(number).iter().map(|f| f.text()).collect();
    for pinned in [b"-1", b"-2", b"-3", b"-4"] {
        assert!(numbers.contains(&&pinned[..]), "{numbers:?}");
    }
    assert!(
        numbers.contains(&&b"1999"[..]),
        "newcomers still get in: {numbers:?}"
    );
    assert!(
        !numbers.contains(&&b"-6"[..]),
        "beyond half the slots, user fragments are ordinary"
    );
    assert!(pool.stats().evicted > 1000);
}

#[test]
fn long_subtrees_are_not_pooled() {
    let (grammar, mut parser) = json();
    let limits = PoolLimits {
        max_fragment_len: 8,
        ..PoolLimits::default()
    };
    let mut pool = FragmentPool::new(limits);
    pool.add(&parser.parse(br#"["a long string here", 1]"#));
    assert!(pool.fragments(kind(&grammar, "array")).is_empty());
    assert!(pool.fragments(kind(&grammar, "string")).is_empty());
    assert_eq!(pool.fragments(kind(&grammar, "number")).len(), 1);
}

#[test]
fn the_pool_learns_which_kinds_repeat_and_their_separator() {
    let (grammar, mut parser) = json();
    let mut pool = FragmentPool::default();
    pool.add(&parser.parse(br#"{"a": [1 ,2], "b": 3}"#));
    let array = kind(&grammar, "array");
    let object = kind(&grammar, "object");
    assert_eq!(
        pool.separator(array, 0, kind(&grammar, "number")),
        Some(&b" ,"[..])
    );
    assert_eq!(
        pool.separator(object, 0, kind(&grammar, "pair")),
        Some(&b", "[..])
    );
    assert_eq!(pool.separator(object, 0, kind(&grammar, "number")), None);
}

#[test]
fn code_fragments_remember_where_their_identifiers_are() {
    let grammar = Grammar::load("php").unwrap();
    let mut parser = InputParser::new(&grammar);
    let mut pool = FragmentPool::default();
    pool.add(&parser.parse(b"<?php $total = $a + $b;"));
    let statement = grammar
        .language()
        .id_for_node_kind("expression_statement", true);
    let fragment = &pool.fragments(statement)[0];
    let names: Vec<_> = fragment
        .identifiers()
        .iter()
        .map(|span| &fragment.text()[span.start as usize..span.end as usize])
        .collect();
    assert_eq!(names, [&b"$total"[..], b"$a", b"$b"]);
}

//! Shrink candidates fit, are smaller, and a greedy loop over them ends.

use rand::SeedableRng;

use super::*;
use crate::generate::{Limits, generate_entry};
use crate::testing::{rich, schema_of};
use crate::text::{parse_entry, write_entry};
use php_fuzz_mutate::FuzzRng;

fn entry(text: &str) -> Vec<Value> {
    parse_entry(format!("php-fuzz arguments v1\n{text}").as_bytes()).unwrap()
}

fn texts(candidates: &[Vec<Value>]) -> Vec<String> {
    candidates
        .iter()
        .map(|c| {
            let mut out = Vec::new();
            write_entry(c, &mut out);
            String::from_utf8_lossy(&out["php-fuzz arguments v1\n".len()..])
                .trim_end()
                .replace('\n', " | ")
        })
        .collect()
}

#[test]
fn candidates_of_generated_entries_fit_and_are_smaller() {
    let schema = rich();
    for seed in 0..300 {
        let values = generate_entry(
            &schema,
            &Limits::default(),
            &mut FuzzRng::seed_from_u64(seed),
        );
        let base = size(&values);
        for candidate in shrink_candidates(&schema, &values) {
            check(&schema, &candidate).unwrap();
            assert!(size(&candidate) < base);
            let changed = (0..values.len().max(candidate.len()))
                .filter(|&i| values.get(i) != candidate.get(i))
                .count();
            assert!(
                changed == 1 || candidate.len() < values.len(),
                "seed {seed}"
            );
            let mut text = Vec::new();
            write_entry(&candidate, &mut text);
            assert_eq!(parse_entry(&text).unwrap(), candidate, "seed {seed}");
        }
    }
}

#[test]
fn a_greedy_loop_ends_at_the_simplest_entry() {
    let schema = rich();
    for seed in 0..40 {
        let mut values = generate_entry(
            &schema,
            &Limits::default(),
            &mut FuzzRng::seed_from_u64(seed),
        );
        let mut steps = 0;
        while let Some(first) = shrink_candidates(&schema, &values).into_iter().next() {
            values = first;
            steps += 1;
            assert!(steps < 10_000, "seed {seed}");
        }
        let text = texts(&[values])[0].clone();
        assert!(
            text.starts_with("\"\" | App\\Mode::"),
            "seed {seed}: {text}"
        );
        assert!(
            text.contains("| 0 | [] | new App\\Point(0, 0) | [\"a\" => 0] | null |"),
            "seed {seed}: {text}"
        );
        assert!(
            text.contains(
                "| new App\\Tree(new App\\Leaf(0), new App\\Leaf(0)) | new App\\Point(0, 0) | [0, "
            ),
            "seed {seed}: {text}"
        );
        assert!(
            text.contains("(\"1970-01-01T00:00:00.000000+00:00\")"),
            "{text}"
        );
    }
}

#[test]
fn each_kind_gets_simpler() {
    let schema = schema_of(
        r#"[{"name": "s", "type": {"kind": "string", "non_empty": true}},
            {"name": "r", "type": {"kind": "int", "min": 1000, "max": 2000}},
            {"name": "l", "type": {"kind": "list", "of": {"kind": "int"}}},
            {"name": "u", "type": {"kind": "union", "of": [{"kind": "null"}, {"kind": "float"}]}},
            {"name": "o", "type": {"kind": "bool"}, "optional": true}]"#,
    );
    let candidates = texts(&shrink_candidates(
        &schema,
        &entry("\"abcd\"\n1500\n[-7, 3]\n2.5\ntrue\n"),
    ));
    let expected = [
        "\"abcd\" | 1500 | [-7, 3] | 2.5",
        "\"ab\" | 1500 | [-7, 3] | 2.5 | true",
        "\"cd\" | 1500 | [-7, 3] | 2.5 | true",
        "\"bcd\" | 1500 | [-7, 3] | 2.5 | true",
        "\"abcd\" | 1000 | [-7, 3] | 2.5 | true",
        "\"abcd\" | 1496 | [-7, 3] | 2.5 | true",
        "\"abcd\" | 1500 | [3] | 2.5 | true",
        "\"abcd\" | 1500 | [-7] | 2.5 | true",
        "\"abcd\" | 1500 | [0, 3] | 2.5 | true",
        "\"abcd\" | 1500 | [-3, 3] | 2.5 | true",
        "\"abcd\" | 1500 | [7, 3] | 2.5 | true",
        "\"abcd\" | 1500 | [-7, 1] | 2.5 | true",
        "\"abcd\" | 1500 | [-7, 3] | null | true",
        "\"abcd\" | 1500 | [-7, 3] | 0.0 | true",
        "\"abcd\" | 1500 | [-7, 3] | 2.0 | true",
        "\"abcd\" | 1500 | [-7, 3] | 1.0 | true",
        "\"abcd\" | 1500 | [-7, 3] | 2.5 | false",
    ];
    for wanted in expected {
        assert!(
            candidates.iter().any(|c| c == wanted),
            "{wanted} not in {candidates:#?}"
        );
    }
    // The non-empty string never becomes empty; the range is never left.
    assert!(!candidates.iter().any(|c| c.starts_with("\"\"")));
    assert!(
        !candidates
            .iter()
            .any(|c| c.contains("| 750 |") || c.contains("| 0 | ["))
    );
}

#[test]
fn sizes_order_values_as_documented() {
    let one = |v: Value| size(&[v]);
    assert!(one(Value::Null) < one(Value::Bool(false)));
    assert!(one(Value::Bool(false)) < one(Value::Bool(true)));
    assert!(one(Value::Int(0)) < one(Value::Int(1)));
    assert!(one(Value::Int(4)) < one(Value::Int(5)));
    assert!(one(Value::Int(5)) < one(Value::Int(-5)));
    assert!(one(Value::Float(0.0)) < one(Value::Float(-0.0)));
    assert!(one(Value::Float(3.0)) < one(Value::Float(2.5)));
    assert!(one(Value::Float(2.5)) < one(Value::Float(f64::NAN)));
    assert!(size(&[]) < size(&[Value::Null]));
    let date = |t: &str| Value::Date {
        class: "DateTime".into(),
        text: t.as_bytes().to_vec(),
    };
    assert!(
        one(date("1970-01-01T00:00:00.000000+00:00"))
            < one(date("1970-01-01T00:00:00.000001+00:00"))
    );
}

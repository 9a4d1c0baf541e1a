//! Generated values always fit, stay within the depth limit, and prefer
//! interesting values.

use rand::SeedableRng;

use super::*;
use crate::conform::check;
use crate::testing::{rich, schema_of};
use crate::text::{parse_entry, write_entry};

/// How many constructors deep a value nests.
pub(crate) fn object_depth(value: &Value) -> usize {
    match value {
        Value::Object { args, .. } => 1 + args.iter().map(object_depth).max().unwrap_or(0),
        Value::Array(items) => items
            .iter()
            .map(|(_, v)| object_depth(v))
            .max()
            .unwrap_or(0),
        Value::Closure(values) => values.iter().map(object_depth).max().unwrap_or(0),
        _ => 0,
    }
}

#[test]
fn every_generated_entry_fits_round_trips_and_respects_the_depth() {
    let schema = rich();
    let limits = Limits::default();
    let mut lengths = [0usize; 24];
    for seed in 0..3000 {
        let mut rng = FuzzRng::seed_from_u64(seed);
        let values = generate_entry(&schema, &limits, &mut rng);
        if let Err(mismatch) = check(&schema, &values) {
            panic!("seed {seed}: {mismatch}\n{values:?}");
        }
        for value in &values {
            assert!(
                object_depth(value) <= limits.max_depth,
                "seed {seed}: {value}"
            );
        }
        let mut text = Vec::new();
        write_entry(&values, &mut text);
        assert_eq!(parse_entry(&text).unwrap(), values, "seed {seed}");
        lengths[values.len()] += 1;
    }
    // Trailing optional arguments and variadic values come and go.
    assert!(
        lengths[18] > 0 && lengths[19] > 0 && lengths[20] > 0 && lengths[21] > 0 && lengths[22] > 0
    );
}

#[test]
fn objects_past_the_depth_are_left_out_or_null() {
    let schema = rich();
    let limits = Limits::default();
    let mut deepest_node = 0;
    for seed in 0..2000 {
        let values = generate_entry(&schema, &limits, &mut FuzzRng::seed_from_u64(seed));
        // The class that needs four constructors is never chosen.
        assert!(matches!(&values[16], Value::Object { class, .. } if class == "App\\Point"));
        deepest_node = deepest_node.max(object_depth(&values[14]));
    }
    assert_eq!(deepest_node, 3);
    let shallow = Limits {
        max_depth: 1,
        ..limits
    };
    for seed in 0..500 {
        let values = generate_entry(&schema, &shallow, &mut FuzzRng::seed_from_u64(seed));
        check(&schema, &values).unwrap();
        assert!(matches!(&values[4], Value::Object { class, .. } if class == "App\\Point"));
        // A Tree needs two levels: built the cheapest way, past the limit.
        assert_eq!(object_depth(&values[15]), 2);
    }
}

#[test]
fn integers_prefer_small_and_boundary_values_within_the_range() {
    let schema = schema_of(
        r#"[{"name": "i", "type": {"kind": "int"}}, {"name": "r", "type": {"kind": "int", "min": 10, "max": 20}}]"#,
    );
    let mut seen = std::collections::BTreeSet::new();
    let mut ends = 0;
    for seed in 0..2000 {
        let values = generate_entry(
            &schema,
            &Limits::default(),
            &mut FuzzRng::seed_from_u64(seed),
        );
        let [Value::Int(i), Value::Int(r)] = values[..] else {
            panic!()
        };
        assert!((10..=20).contains(&r));
        ends += usize::from(r == 10 || r == 20);
        seen.insert(i);
    }
    for wanted in [0, 1, -1, i64::MIN, i64::MAX, 255, 256] {
        assert!(seen.contains(&wanted), "{wanted}");
    }
    assert!(ends > 200, "{ends}");
}

#[test]
fn strings_are_short_and_dates_have_the_format() {
    let schema = schema_of(
        r#"[{"name": "s", "type": {"kind": "string"}}, {"name": "d", "type": {"kind": "date", "class": "DateTime"}},
            {"name": "n", "type": {"kind": "string", "numeric": true}}]"#,
    );
    let limits = Limits {
        max_string: 10,
        ..Limits::default()
    };
    let mut empty = 0;
    for seed in 0..2000 {
        let values = generate_entry(&schema, &limits, &mut FuzzRng::seed_from_u64(seed));
        let Value::Str(s) = &values[0] else { panic!() };
        assert!(s.len() <= 10);
        empty += usize::from(s.is_empty());
        let Value::Date { class, text } = &values[1] else {
            panic!()
        };
        assert_eq!(class, "DateTime");
        assert!(
            Date::parse(text).is_some(),
            "{}",
            String::from_utf8_lossy(text)
        );
        check(&schema, &values).unwrap();
    }
    assert!(empty > 20, "{empty}");
}

#[test]
fn keys_run_out_without_breaking_the_type() {
    let schema = schema_of(
        r#"[{"name": "a", "type": {"kind": "array", "non_empty": true, "key": {"kind": "int", "min": 0, "max": 1}, "value": {"kind": "int"}}},
            {"name": "b", "type": {"kind": "array", "key": {"kind": "literal", "value": "\"k\""}, "value": {"kind": "null"}}}]"#,
    );
    for seed in 0..500 {
        let values = generate_entry(
            &schema,
            &Limits::default(),
            &mut FuzzRng::seed_from_u64(seed),
        );
        check(&schema, &values).unwrap();
        let Value::Array(a) = &values[0] else {
            panic!()
        };
        assert!((1..=2).contains(&a.len()));
    }
}

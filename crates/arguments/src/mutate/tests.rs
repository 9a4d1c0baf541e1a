//! Every mutant fits, differs from its parent in one argument, and the
//! comparison operands the target made find their way into arguments.

use std::collections::BTreeMap;
use std::path::Path;

use php_fuzz_mutate::cmp::{Operand, Record, kind};
use php_fuzz_mutate::{Dictionary, Mutator};

use super::*;
use crate::generate::tests::object_depth;
use crate::testing::{rich, schema_of};

fn mutator_for(schema: Schema) -> ArgumentMutator {
    ArgumentMutator::new(Arc::new(schema), Limits::default())
}

fn observe(bytes: &mut Mutator, a: Operand<'_>, b: Operand<'_>) {
    bytes.observe_comparison(&Record {
        site: 1,
        kind: kind::EQUAL,
        a,
        b,
    });
}

/// The indices where two entries differ (a longer one differs past the end).
fn differing(a: &[Value], b: &[Value]) -> Vec<usize> {
    (0..a.len().max(b.len()))
        .filter(|&i| a.get(i) != b.get(i))
        .collect()
}

#[test]
fn every_mutant_fits_and_changes_one_argument() {
    let schema = rich();
    let mut mutator = mutator_for(schema.clone());
    let mut bytes = Mutator::new(1, Dictionary::parse(b"\"kw\"", Path::new("d")).unwrap());
    observe(&mut bytes, Operand::Int(42), Operand::Int(7));
    observe(
        &mut bytes,
        Operand::Bytes(b"needle", 6),
        Operand::Bytes(b"hay", 3),
    );
    let mut kinds: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut unchanged = 0;
    let mut out = Vec::new();
    let mut partner = Vec::new();
    let mut parent = Vec::new();
    for round in 0..20_000u64 {
        if round % 50 == 0 {
            mutator.generate(bytes.rng_mut(), &mut parent);
            mutator.generate(bytes.rng_mut(), &mut partner);
        }
        let mutation = mutator
            .mutate(&mut bytes, &parent, Some(&partner), &mut out)
            .expect("a mutation");
        let before = parse_entry(&parent).unwrap();
        let after = parse_entry(&out).unwrap();
        if let Err(mismatch) = check(&schema, &after) {
            panic!(
                "round {round}, {mutation}: {mismatch}\n{}",
                String::from_utf8_lossy(&out)
            );
        }
        for value in &after {
            assert!(
                object_depth(value) <= 3,
                "round {round}, {mutation}: {value}"
            );
        }
        let changed = differing(&before, &after);
        assert!(changed.len() <= 1, "round {round}, {mutation}: {changed:?}");
        match changed.first() {
            Some(&i) => assert_eq!(mutation.argument, Some(i), "round {round}, {mutation}"),
            None => unchanged += 1,
        }
        *kinds.entry(mutation.kind.name()).or_default() += 1;
        std::mem::swap(&mut parent, &mut out);
    }
    assert!(
        unchanged < 20_000 / 100,
        "{unchanged} mutants equal their parent"
    );
    for kind in [
        "CrossOver",
        "AddArgument",
        "RemoveArgument",
        "Bytes",
        "StrTorc",
        "StrWord",
        "StrNumeric",
        "IntDelta",
        "IntNegate",
        "IntBoundary",
        "IntRangeEnd",
        "IntTorc",
        "IntBitFlip",
        "FloatSpecial",
        "FloatDelta",
        "FloatNegate",
        "FloatTorc",
        "BoolFlip",
        "EnumCase",
        "Branch",
        "Regenerate",
        "ItemInsert",
        "ItemRemove",
        "ItemDuplicate",
        "ItemSwap",
        "KeyChange",
        "ShapeToggle",
        "ObjectClass",
        "ClosureAdd",
        "ClosureRemove",
        "DateShift",
        "DateOffset",
        "DateRegenerate",
    ] {
        assert!(kinds.contains_key(kind), "{kind} never happened: {kinds:?}");
    }
}

#[test]
fn integer_operands_of_comparisons_are_used_within_the_range() {
    let schema = schema_of(
        r#"[{"name": "n", "type": {"kind": "int", "min": 0, "max": 100000}}, {"name": "s", "type": {"kind": "string"}}]"#,
    );
    let mut mutator = mutator_for(schema);
    let mut bytes = Mutator::new(3, Dictionary::new());
    observe(&mut bytes, Operand::Int(5), Operand::Int(31337));
    observe(&mut bytes, Operand::Int(-9), Operand::Int(1 << 40));
    let parent = b"php-fuzz arguments v1\n0\n\"\"\n";
    let mut out = Vec::new();
    let (mut exact, mut clamped) = (0, 0);
    for _ in 0..3000 {
        let mutation = mutator.mutate(&mut bytes, parent, None, &mut out).unwrap();
        if mutation.kind == MutationKind::IntTorc {
            let values = parse_entry(&out).unwrap();
            match values[0] {
                Value::Int(31336..=31338) => exact += 1,
                Value::Int(100000 | 99999) => clamped += 1,
                _ => {}
            }
        }
    }
    assert!(exact > 20 && clamped > 5, "{exact} {clamped}");
}

#[test]
fn string_operands_and_words_replace_strings_that_fit() {
    let schema = schema_of(r#"[{"name": "s", "type": {"kind": "string", "non_empty": true}}]"#);
    let mut mutator = mutator_for(schema);
    let mut bytes = Mutator::new(
        5,
        Dictionary::parse(b"\"keyword\"", Path::new("d")).unwrap(),
    );
    observe(
        &mut bytes,
        Operand::Bytes(b"magic-token", 11),
        Operand::Bytes(b"", 0),
    );
    let parent = b"php-fuzz arguments v1\n\"x\"\n";
    let mut out = Vec::new();
    let mut seen = BTreeMap::new();
    for _ in 0..2000 {
        let mutation = mutator.mutate(&mut bytes, parent, None, &mut out).unwrap();
        let values = parse_entry(&out).unwrap();
        assert_ne!(values[0], Value::Str(Vec::new()), "{mutation}");
        if let Value::Str(s) = &values[0] {
            seen.insert(s.clone(), mutation.kind);
        }
    }
    assert_eq!(
        seen.get(b"magic-token".as_slice()),
        Some(&MutationKind::StrTorc)
    );
    assert_eq!(
        seen.get(b"keyword".as_slice()),
        Some(&MutationKind::StrWord)
    );
}

#[test]
fn a_parent_that_does_not_parse_or_fit_is_replaced() {
    let schema = schema_of(r#"[{"name": "n", "type": {"kind": "int", "min": 0, "max": 9}}]"#);
    let mut mutator = mutator_for(schema.clone());
    let mut bytes = Mutator::new(7, Dictionary::new());
    let mut out = Vec::new();
    for parent in [
        &b"not an entry"[..],
        b"php-fuzz arguments v1\n[",
        b"php-fuzz arguments v1\n10\n",
    ] {
        let mutation = mutator.mutate(&mut bytes, parent, None, &mut out).unwrap();
        assert_eq!(mutation.to_string(), "Generate");
        check(&schema, &parse_entry(&out).unwrap()).unwrap();
    }
}

#[test]
fn nothing_to_change_is_none() {
    let none = schema_of("[]");
    let mut bytes = Mutator::new(7, Dictionary::new());
    let mut out = Vec::new();
    let entry = b"php-fuzz arguments v1\n";
    assert!(
        mutator_for(none)
            .mutate(&mut bytes, entry, None, &mut out)
            .is_none()
    );
    let literal = schema_of(r#"[{"name": "l", "type": {"kind": "literal", "value": "true"}}]"#);
    let entry = b"php-fuzz arguments v1\ntrue\n";
    assert!(
        mutator_for(literal)
            .mutate(&mut bytes, entry, None, &mut out)
            .is_none()
    );
    assert!(out.is_empty());
}

#[test]
fn crossover_takes_the_partners_argument() {
    let schema = schema_of(
        r#"[{"name": "a", "type": {"kind": "int"}}, {"name": "b", "type": {"kind": "string"}}]"#,
    );
    let mut mutator = mutator_for(schema);
    let mut bytes = Mutator::new(9, Dictionary::new());
    let parent = b"php-fuzz arguments v1\n1\n\"x\"\n";
    let partner = b"php-fuzz arguments v1\n1\n\"from the partner\"\n";
    let mut out = Vec::new();
    let mut crossed = 0;
    for _ in 0..500 {
        let mutation = mutator
            .mutate(&mut bytes, parent, Some(partner), &mut out)
            .unwrap();
        if mutation.kind == MutationKind::CrossOver {
            assert_eq!(mutation.argument, Some(1));
            assert_eq!(out, partner);
            crossed += 1;
        }
    }
    assert!(crossed > 10, "{crossed}");
}

#[test]
fn names_say_the_argument_and_the_mutation() {
    let mut mutator = mutator_for(schema_of(
        r#"[{"name": "a", "type": {"kind": "bool"}}, {"name": "s", "type": {"kind": "string"}}]"#,
    ));
    let mut bytes = Mutator::new(11, Dictionary::new());
    let mut out = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for _ in 0..200 {
        let mutation = mutator
            .mutate(
                &mut bytes,
                b"php-fuzz arguments v1\ntrue\n\"abc\"\n",
                None,
                &mut out,
            )
            .unwrap();
        let name = mutation.name().to_string();
        assert_eq!(
            mutation.bytes().is_some(),
            mutation.kind == MutationKind::Bytes,
            "{name}"
        );
        names.insert(name);
    }
    assert!(names.contains("Arg1:BoolFlip"), "{names:?}");
    assert!(names.contains("Arg2:Bytes"), "{names:?}");
}

#[test]
fn edge_schemas_and_tight_limits_still_fit() {
    let schemas = [
        r#"[{"name": "a", "type": {"kind": "int"}, "optional": true}, {"name": "b", "type": {"kind": "int", "min": 5, "max": 5}}]"#,
        r#"[{"name": "v", "type": {"kind": "string", "numeric": true}, "variadic": true}]"#,
        r#"[{"name": "l", "type": {"kind": "list", "of": {"kind": "shape", "items": [
            {"key": "k", "type": {"kind": "union", "of": [{"kind": "int", "min": -1, "max": 1}, {"kind": "list", "of": {"kind": "string", "non_empty": true}}]}},
            {"key": 0, "optional": true, "type": {"kind": "union", "of": [{"kind": "null"}, {"kind": "mixed"}]}}]}}}]"#,
        r#"[{"name": "m", "type": {"kind": "array", "key": {"kind": "int", "min": 0, "max": 3}, "value": {"kind": "literal", "value": "\"x\""}}},
            {"name": "u", "type": {"kind": "union", "of": [{"kind": "literal", "value": "\"a\""}, {"kind": "literal", "value": "\"b\""}]}}]"#,
        r#"[{"name": "f", "type": {"kind": "closure", "returns": {"kind": "union", "of": [{"kind": "date", "class": "DateTimeImmutable"}, {"kind": "stringable"}, {"kind": "enum", "class": "E", "cases": ["A"]}]}}},
            {"name": "k", "type": {"kind": "array", "key": {"kind": "string", "non_empty": true}, "value": {"kind": "float"}, "non_empty": true}}]"#,
    ];
    let limits = [
        Limits::default(),
        Limits {
            max_string: 0,
            max_items: 1,
            max_depth: 0,
        },
        Limits {
            max_string: 3,
            max_items: 2,
            max_depth: 1,
        },
    ];
    for (s, parameters) in schemas.iter().enumerate() {
        let schema = schema_of(parameters);
        for (l, limits) in limits.iter().enumerate() {
            let mut mutator = ArgumentMutator::new(Arc::new(schema.clone()), *limits);
            let mut bytes = Mutator::new(s as u64 * 10 + l as u64, Dictionary::new());
            observe(&mut bytes, Operand::Int(3), Operand::Bytes(b"17", 2));
            let (mut parent, mut out) = (Vec::new(), Vec::new());
            mutator.generate(bytes.rng_mut(), &mut parent);
            for round in 0..1500 {
                let Some(mutation) = mutator.mutate(&mut bytes, &parent, Some(&parent), &mut out)
                else {
                    continue;
                };
                let values = parse_entry(&out).unwrap();
                if let Err(mismatch) = check(&schema, &values) {
                    panic!("schema {s}, limits {l}, round {round}, {mutation}: {mismatch}");
                }
                std::mem::swap(&mut parent, &mut out);
            }
        }
    }
}

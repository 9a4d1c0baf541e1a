//! Tests of reading and checking schemas.

use super::*;

fn schema(json: &str) -> Result<Schema, SchemaError> {
    Schema::from_json(json.as_bytes())
}

#[test]
fn reads_the_documented_example_with_defaults() {
    let s = schema(
        r#"{
  "version": 1,
  "callee": "App\\Renderer::render",
  "parameters": [
    {"name": "template", "type": {"kind": "string"}, "optional": false, "variadic": false},
    {"name": "at", "type": {"kind": "object", "classes": ["App\\Point"]}}
  ],
  "classes": {
    "App\\Point": {"parameters": [{"name": "x", "type": {"kind": "int"}, "optional": false, "variadic": false}]}
  }
}"#,
    )
    .unwrap();
    assert_eq!(s.callee, "App\\Renderer::render");
    assert_eq!(
        s.parameters[0].ty,
        Type::String {
            non_empty: false,
            numeric: false
        }
    );
    assert!(!s.parameters[1].optional && !s.parameters[1].variadic);
    assert_eq!(s.classes["App\\Point"].parameters[0].name, "x");
    assert_eq!(s.depth_needed(&s.parameters[1].ty), Some(1));
    assert_eq!(s.class("app\\point").unwrap().0, "App\\Point");
}

#[test]
fn every_kind_reads() {
    let s = schema(
        r#"{"callee": "f", "parameters": [
  {"name": "a", "type": {"kind": "union", "of": [
    {"kind": "null"}, {"kind": "bool"}, {"kind": "float"}, {"kind": "mixed"},
    {"kind": "int", "min": null, "max": 3}, {"kind": "string", "numeric": true},
    {"kind": "literal", "value": "\"asc\""}, {"kind": "list", "of": {"kind": "int"}},
    {"kind": "array", "key": {"kind": "string"}, "value": {"kind": "int"}, "non_empty": true},
    {"kind": "shape", "items": [{"key": "a", "type": {"kind": "int"}}, {"key": 1, "optional": true, "type": {"kind": "null"}}]},
    {"kind": "enum", "class": "E", "cases": ["A", "B"]},
    {"kind": "date", "class": "DateTimeInterface"},
    {"kind": "stringable"},
    {"kind": "closure", "returns": {"kind": "int"}},
    {"kind": "closure"}
  ]}}]}"#,
    )
    .unwrap();
    let Type::Union { of } = &s.parameters[0].ty else {
        panic!()
    };
    assert_eq!(of.len(), 15);
    assert_eq!(
        of[4],
        Type::Int {
            min: None,
            max: Some(3)
        }
    );
    assert_eq!(
        of[6],
        Type::Literal {
            value: Value::Str(b"asc".to_vec())
        }
    );
    let Type::Shape { items } = &of[9] else {
        panic!()
    };
    assert_eq!(items[0].key, Key::Str(b"a".to_vec()));
    assert!(items[1].optional);
    assert_eq!(
        of[14],
        Type::Closure {
            returns: Box::new(Type::Mixed)
        }
    );
}

#[test]
fn shape_keys_read_as_literals_or_as_themselves() {
    let s = schema(
        r#"{"callee": "f", "parameters": [{"name": "a", "type": {"kind": "shape", "items": [
    {"key": "\"x\"", "type": {"kind": "int"}}, {"key": "y", "type": {"kind": "int"}},
    {"key": "7", "type": {"kind": "int"}}, {"key": "\"8\"", "type": {"kind": "int"}}]}}]}"#,
    )
    .unwrap();
    let Type::Shape { items } = &s.parameters[0].ty else {
        panic!()
    };
    let keys: Vec<&Key> = items.iter().map(|i| &i.key).collect();
    assert_eq!(
        keys,
        [
            &Key::Str(b"x".to_vec()),
            &Key::Str(b"y".to_vec()),
            &Key::Int(7),
            &Key::Int(8)
        ]
    );
}

#[test]
fn errors_say_what_is_wrong() {
    let unknown =
        schema(r#"{"callee": "f", "parameters": [{"name": "r", "type": {"kind": "resource"}}]}"#);
    let message = unknown.unwrap_err().to_string();
    assert!(message.contains("unknown variant `resource`"), "{message}");
    let cases = [
        (
            r#"{"version": 2, "parameters": []}"#,
            "unsupported schema version 2",
        ),
        (
            r#"{"parameters": [{"name": "p", "type": {"kind": "object", "classes": ["Nope"]}}]}"#,
            "parameter $p: class Nope is not in `classes`",
        ),
        (
            r#"{"parameters": [{"name": "p", "type": {"kind": "int", "min": 5, "max": 1}}]}"#,
            "parameter $p: int<5, 1> is empty",
        ),
        (
            r#"{"parameters": [{"name": "p", "type": {"kind": "union", "of": []}}]}"#,
            "a union of no type",
        ),
        (
            r#"{"parameters": [{"name": "p", "type": {"kind": "enum", "class": "E", "cases": []}}]}"#,
            "an enum without cases",
        ),
        (
            r#"{"parameters": [{"name": "p", "type": {"kind": "date", "class": "Carbon"}}]}"#,
            "Carbon is not a date class",
        ),
        (
            r#"{"parameters": [{"name": "p", "type": {"kind": "int"}, "variadic": true}, {"name": "q", "type": {"kind": "int"}}]}"#,
            "only the last parameter can be variadic",
        ),
        (
            r#"{"parameters": [{"name": "p", "type": {"kind": "literal", "value": "'a'"}}]}"#,
            "literal \"'a'\": 1:1: expected a value",
        ),
        (
            r#"{"parameters": [{"name": "p", "type": {"kind": "object", "classes": ["A"]}}],
                "classes": {"A": {"parameters": [{"name": "a", "type": {"kind": "object", "classes": ["A"]}}]}}}"#,
            "parameter $p cannot be built",
        ),
    ];
    for (json, expected) in cases {
        let message = schema(json).unwrap_err().to_string();
        assert!(message.contains(expected), "{json}: {message}");
    }
}

#[test]
fn depths_take_the_cheapest_way_and_skip_optional_parameters() {
    let s = schema(
        r#"{"parameters": [{"name": "n", "type": {"kind": "object", "classes": ["Node"]}}],
  "classes": {
    "Node": {"parameters": [{"name": "next", "type": {"kind": "union", "of": [{"kind": "null"}, {"kind": "object", "classes": ["Node"]}]}}]},
    "Wrap": {"parameters": [{"name": "inner", "type": {"kind": "object", "classes": ["Wrap2"]}}]},
    "Wrap2": {"parameters": [{"name": "n", "type": {"kind": "object", "classes": ["Node"]}},
                             {"name": "self", "type": {"kind": "object", "classes": ["Loop"]}, "optional": true}]},
    "Loop": {"parameters": [{"name": "l", "type": {"kind": "object", "classes": ["Loop"]}}]}
  }}"#,
    )
    .unwrap();
    assert_eq!(s.class_depth("Node"), 1);
    assert_eq!(s.class_depth("Wrap2"), 2);
    assert_eq!(s.class_depth("Wrap"), 3);
    assert_eq!(
        s.depth_needed(&Type::Object {
            classes: vec!["Loop".into()]
        }),
        None
    );
    let list = Type::List {
        of: Box::new(Type::Object {
            classes: vec!["Loop".into()],
        }),
        non_empty: false,
    };
    assert_eq!(s.depth_needed(&list), Some(0));
}

//! Tests of the corpus format: examples from docs/autofuzz.md, errors with
//! their positions, and the round trip parse(write(v)) == canonical(v).

use proptest::prelude::*;

use super::*;
use crate::value::{Key, Value};

fn entry(lines: &str) -> Result<Vec<Value>, ParseError> {
    parse_entry(format!("php-fuzz arguments v1\n{lines}").as_bytes())
}

fn written(value: &Value) -> String {
    let mut out = Vec::new();
    write_value(value, &mut out);
    String::from_utf8(out).unwrap()
}

fn s(text: &str) -> Value {
    Value::Str(text.as_bytes().to_vec())
}

#[test]
fn reads_the_documented_example() {
    let values = entry(concat!(
        "\"Hello {{ name }}\\n\"\n",
        "App\\RenderMode::Html\n",
        "-3\n",
        "[\"title\" => \"x\", 0 => 1.5, \"tags\" => [\"a\", \"b\"]]\n",
        "new App\\Clock\\FixedClock(new DateTimeImmutable(\"2021-03-04T05:06:07.000000+00:00\"))\n",
    ))
    .unwrap();
    assert_eq!(values.len(), 5);
    assert_eq!(values[0], s("Hello {{ name }}\n"));
    assert_eq!(
        values[1],
        Value::Enum {
            class: "App\\RenderMode".into(),
            case: "Html".into()
        }
    );
    assert_eq!(values[2], Value::Int(-3));
    let Value::Array(items) = &values[3] else {
        panic!()
    };
    assert_eq!(items[0].0, Some(Key::Str(b"title".to_vec())));
    assert_eq!(items[1], (Some(Key::Int(0)), Value::Float(1.5)));
    let date = Value::Date {
        class: "DateTimeImmutable".into(),
        text: b"2021-03-04T05:06:07.000000+00:00".to_vec(),
    };
    assert_eq!(
        values[4],
        Value::Object {
            class: "App\\Clock\\FixedClock".into(),
            args: vec![date]
        }
    );
}

#[test]
fn comments_blank_lines_crlf_and_multi_line_values() {
    let values = entry(
        "# a comment\r\n\r\n  true\r\n[\n  1,\n  # inside\n  \"k\" => 2,\n]\nnew P(\n1,\n)\n  # end\n",
    )
    .unwrap();
    assert_eq!(values[0], Value::Bool(true));
    assert_eq!(
        values[1],
        Value::Array(vec![
            (Some(Key::Int(0)), Value::Int(1)),
            (Some(Key::Str(b"k".to_vec())), Value::Int(2))
        ])
    );
    assert_eq!(
        values[2],
        Value::Object {
            class: "P".into(),
            args: vec![Value::Int(1)]
        }
    );
    assert_eq!(values.len(), 3);
    assert_eq!(parse_entry(b"php-fuzz arguments v1").unwrap(), []);
}

#[test]
fn keywords_numbers_and_special_objects() {
    let values = entry(concat!(
        "NULL\nTrue\nfalse\n-9223372036854775808\n1.0e300\n-0.0\nINF\n-INF\nNAN\n1e3\n",
        "\\App\\E::A\nnew \\datetime(\"x\")\nnew PhpFuzz\\Arguments\\Text(\"t\")\nfn(...) => [0, 1]\n",
        "fn ( ... ) => []\n\"raw\nline $x\"\n",
    ))
    .unwrap();
    assert_eq!(values[0], Value::Null);
    assert_eq!(values[1], Value::Bool(true));
    assert_eq!(values[2], Value::Bool(false));
    assert_eq!(values[3], Value::Int(i64::MIN));
    assert_eq!(values[4], Value::Float(1e300));
    assert_eq!(values[5], Value::Float(-0.0));
    assert_eq!(values[6], Value::Float(f64::INFINITY));
    assert_eq!(values[7], Value::Float(f64::NEG_INFINITY));
    assert_eq!(values[8], Value::Float(f64::NAN));
    assert_eq!(values[9], Value::Float(1000.0));
    assert_eq!(
        values[10],
        Value::Enum {
            class: "App\\E".into(),
            case: "A".into()
        }
    );
    assert_eq!(
        values[11],
        Value::Date {
            class: "DateTime".into(),
            text: b"x".to_vec()
        }
    );
    assert_eq!(values[12], Value::Text(b"t".to_vec()));
    assert_eq!(
        values[13],
        Value::Closure(vec![Value::Int(0), Value::Int(1)])
    );
    assert_eq!(values[14], Value::Closure(vec![]));
    assert_eq!(values[15], s("raw\nline $x"));
}

#[test]
fn string_escapes() {
    let values = entry(r#""\\ \" \$ \n \r \t \v \e \f \0 \x41\xfF""#).unwrap();
    assert_eq!(
        values[0],
        Value::Str(b"\\ \" $ \n \r \t \x0b \x1b \x0c \0 A\xff".to_vec())
    );
}

#[test]
fn errors_name_line_and_column() {
    let cases: &[(&str, &str)] = &[
        ("1\n[1, 2\n", "4:1: expected `,` or `]`"),
        ("\"abc", "2:1: unterminated string"),
        ("foo", "2:1: expected a value"),
        ("1 2", "2:3: expected the end of the line"),
        (
            "9223372036854775808",
            "2:1: integer out of the 64-bit range",
        ),
        ("  010", "2:3: a leading zero (PHP would read octal)"),
        ("\"a\\q\"", "2:3: unknown escape `\\q`"),
        ("\"\\x4\"", "2:2: expected two hex digits after `\\x`"),
        ("[null => 1]", "2:2: an array key is an integer or a string"),
        ("new DateTime(1)", "2:5: `new DateTime` takes one string"),
        ("fn(..) => []", "2:4: expected `...`"),
        ("1e", "2:3: expected the exponent's digits"),
        ("App\\E::", "2:8: expected a name"),
        (
            "[9223372036854775807 => 1, 2]",
            "2:1: an item past the key PHP_INT_MAX has no key",
        ),
        ("-x", "2:2: expected a digit"),
        (
            "\"\\01\"",
            "2:2: `\\0` before an octal digit (PHP would read an octal escape): write `\\x00`",
        ),
    ];
    for (text, message) in cases {
        let error = entry(text).unwrap_err();
        assert_eq!(error.to_string(), *message, "{text:?}");
    }
    let deep = format!("{}{}", "[".repeat(256), "]".repeat(256));
    assert_eq!(entry(&deep).unwrap().len(), 1);
    let deeper = format!("new A({}", "fn(...) => [".repeat(256));
    assert_eq!(
        entry(&deeper).unwrap_err().to_string(),
        "2:3078: more than 256 nested brackets"
    );
    let header = parse_entry(b"php-fuzz arguments v2\n1").unwrap_err();
    assert_eq!(
        header.to_string(),
        "1:1: expected the header `php-fuzz arguments v1`"
    );
}

#[test]
fn header_check() {
    assert!(is_entry(b"php-fuzz arguments v1"));
    assert!(is_entry(b"php-fuzz arguments v1\n1\n"));
    assert!(is_entry(b"php-fuzz arguments v1\r\n"));
    assert!(!is_entry(b"php-fuzz arguments v10\n"));
    assert!(!is_entry(b"<?php"));
}

#[test]
fn single_values() {
    assert_eq!(parse_value(b" \"asc\" ").unwrap(), s("asc"));
    assert_eq!(parse_value(b"42").unwrap(), Value::Int(42));
    assert_eq!(
        parse_value(b"42 x").unwrap_err().to_string(),
        "1:4: expected the end of the value"
    );
}

#[test]
fn canonical_printing() {
    assert_eq!(written(&Value::Float(1.0)), "1.0");
    assert_eq!(written(&Value::Float(1e300)), "1.0e300");
    assert_eq!(written(&Value::Float(1e-7)), "1.0e-7");
    assert_eq!(written(&Value::Float(1.5e16)), "1.5e16");
    assert_eq!(written(&Value::Float(0.1)), "0.1");
    assert_eq!(written(&Value::Float(-0.0)), "-0.0");
    assert_eq!(written(&Value::Float(f64::NEG_INFINITY)), "-INF");
    assert_eq!(
        written(&Value::Str(
            "a\0\"\\$\n\t\x7f é"
                .as_bytes()
                .iter()
                .copied()
                .chain([0xff])
                .collect()
        )),
        "\"a\\x00\\\"\\\\\\$\\n\\t\\x7f é\\xff\""
    );
    let list = Value::Array(vec![
        (Some(Key::Int(0)), Value::Int(1)),
        (None, Value::Array(vec![])),
    ]);
    assert_eq!(written(&list), "[1, []]");
    let map = Value::Array(vec![(Some(Key::Int(1)), Value::Null), (None, Value::Null)]);
    assert_eq!(written(&map), "[1 => null, 2 => null]");
    let nested = Value::Object {
        class: "A\\B".into(),
        args: vec![
            Value::Closure(vec![Value::Text(b"t".to_vec())]),
            Value::Enum {
                class: "E".into(),
                case: "X".into(),
            },
        ],
    };
    assert_eq!(
        written(&nested),
        "new A\\B(fn(...) => [new PhpFuzz\\Arguments\\Text(\"t\")], E::X)"
    );
    let mut out = Vec::new();
    write_entry(&[Value::Int(1), s("x")], &mut out);
    assert_eq!(out, b"php-fuzz arguments v1\n1\n\"x\"\n");
}

fn name() -> impl Strategy<Value = String> {
    "[A-Z][a-z0-9_]{0,5}(\\\\[A-Z][a-zA-Z0-9_]{0,5}){0,2}"
}

fn key() -> impl Strategy<Value = Option<Key>> {
    prop_oneof![
        Just(None),
        any::<i64>().prop_map(|i| Some(Key::Int(i))),
        (0i64..4).prop_map(|i| Some(Key::Int(i))),
        proptest::collection::vec(any::<u8>(), 0..4).prop_map(|s| Some(Key::Str(s))),
        Just(Some(Key::Str(b"1".to_vec()))),
    ]
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..12),
        ".{0,6}".prop_map(String::into_bytes),
    ]
}

pub(crate) fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        any::<f64>().prop_map(Value::Float),
        any::<u64>().prop_map(|bits| Value::Float(f64::from_bits(bits))),
        bytes().prop_map(Value::Str),
        (name(), "[A-Za-z_][A-Za-z0-9_]{0,5}")
            .prop_map(|(class, case)| Value::Enum { class, case }),
        (
            prop_oneof![Just("DateTime"), Just("DateTimeImmutable")],
            bytes()
        )
            .prop_map(|(class, text)| Value::Date {
                class: class.into(),
                text
            }),
        bytes().prop_map(Value::Text),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec((key(), inner.clone()), 0..6).prop_map(Value::Array),
            (name(), proptest::collection::vec(inner.clone(), 0..4))
                .prop_map(|(class, args)| Value::Object { class, args }),
            proptest::collection::vec(inner, 0..4).prop_map(Value::Closure),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parse_of_write_is_the_canonical_value(values in proptest::collection::vec(any_value(), 0..5)) {
        let mut out = Vec::new();
        write_entry(&values, &mut out);
        let parsed = parse_entry(&out).unwrap();
        let mut canonical = values.clone();
        canonical.iter_mut().for_each(Value::canonicalize);
        prop_assert_eq!(&parsed, &canonical);
        // One line per argument.
        prop_assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), values.len() + 1);
        // A canonical entry reads back to itself.
        let mut again = Vec::new();
        write_entry(&parsed, &mut again);
        prop_assert_eq!(parse_entry(&again).unwrap(), parsed);
    }

    #[test]
    fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut text = b"php-fuzz arguments v1\n".to_vec();
        text.extend_from_slice(&bytes);
        let _ = parse_entry(&text);
    }
}

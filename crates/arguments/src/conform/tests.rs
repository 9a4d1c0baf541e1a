//! Tests of the conformance check and its messages.

use super::*;
use crate::testing::{rich, schema_of};
use crate::text::parse_entry;

const GOOD: &str = concat!(
    "\"tpl\"\nApp\\Mode::Html\n7\n[\"x\" => [1, null, \"s\"]]\nnew App\\Circle(new App\\Point(1, 2), 0.5)\n",
    "[\"a\" => 1, \"c\" => [true]]\n\"asc\"\nnew DateTime(\"2021-03-04T05:06:07.000000+00:00\")\n",
    "new PhpFuzz\\Arguments\\Text(\"t\")\nfn(...) => [1, 5]\n\" 1.5e3\"\n2\n[1, 2]\n[10 => \"x\", 0 => \"y\"]\n",
    "new App\\Node(1, new App\\Node(2))\nnew App\\Tree(new App\\Leaf(0), new App\\Tree(new App\\Leaf(1), new App\\Leaf(-5)))\n",
    "new App\\D1(new App\\D2(new App\\D3(new App\\D4())))\n[-3, \"x\"]\n",
);

/// The good entry with line `line` (0-based) replaced.
fn with(line: usize, text: &str) -> Vec<Value> {
    let mut lines: Vec<&str> = GOOD.lines().collect();
    lines[line] = text;
    parse_entry(format!("php-fuzz arguments v1\n{}\n", lines.join("\n")).as_bytes()).unwrap()
}

fn message(line: usize, text: &str) -> String {
    check(&rich(), &with(line, text)).unwrap_err().to_string()
}

#[test]
fn a_good_entry_fits_with_or_without_trailing_optional_and_variadic_values() {
    let schema = rich();
    let mut values = with(0, "\"tpl\"");
    check(&schema, &values).unwrap();
    values.extend([
        Value::Bool(true),
        Value::Float(1.5),
        Value::Int(3),
        Value::Str(b"x".to_vec()),
    ]);
    check(&schema, &values).unwrap();
    values.push(Value::Int(-1));
    assert_eq!(
        check(&schema, &values).unwrap_err().to_string(),
        "argument 23 ($rest): expected non-negative-int|non-empty-string, found -1"
    );
    values.truncate(17);
    assert_eq!(
        check(&schema, &values).unwrap_err().to_string(),
        "argument 18 ($pair): expected array{int<-3, 3>, int|string}, found nothing"
    );
}

#[test]
fn mismatches_name_the_parameter_and_the_place() {
    let cases = [
        (
            2,
            "-5",
            "argument 3 ($depth): expected int<0, 100>, found -5",
        ),
        (
            2,
            "\"5\"",
            "argument 3 ($depth): expected int<0, 100>, found \"5\"",
        ),
        (
            1,
            "App\\Mode::Pdf",
            "argument 2 ($mode): expected App\\Mode, found App\\Mode::Pdf",
        ),
        (
            3,
            "[1 => 2]",
            "argument 4 ($vars): expected array<string, mixed>, found [1 => 2]",
        ),
        (
            3,
            "[\"k\" => App\\Mode::Html]",
            "argument 4 ($vars)[\"k\"]: expected mixed, found App\\Mode::Html",
        ),
        (
            4,
            "new App\\Node(1)",
            "argument 5 ($shape): expected App\\Point|App\\Circle, found new App\\Node(1)",
        ),
        (
            4,
            "new App\\Circle(new App\\Point(1, 2.5), 1.0)",
            "argument 5 ($shape), new App\\Circle($center), new App\\Point($y): expected int, found 2.5",
        ),
        (
            4,
            "new App\\Point(1)",
            "argument 5 ($shape), new App\\Point($y): expected int, found nothing",
        ),
        (
            4,
            "new App\\Point(1, 2, null, 4)",
            "argument 5 ($shape), new App\\Point($…): expected no more arguments, found 4",
        ),
        (
            5,
            "[\"b\" => \"x\"]",
            "argument 6 ($opts): expected array{a: int, b?: non-empty-string, c?: list<bool>}, found [\"b\" => \"x\"]",
        ),
        (
            5,
            "[\"a\" => 1, \"z\" => 1]",
            "argument 6 ($opts): expected array{a: int, b?: non-empty-string, c?: list<bool>}, found [\"a\" => 1, \"z\" => 1]",
        ),
        (
            5,
            "[\"a\" => 1, \"b\" => \"\"]",
            "argument 6 ($opts)[\"b\"]: expected non-empty-string, found \"\"",
        ),
        (
            5,
            "[\"a\" => 1, \"c\" => [1 => true]]",
            "argument 6 ($opts)[\"c\"]: expected list<bool>, found [1 => true]",
        ),
        (
            6,
            "\"ASC\"",
            "argument 7 ($order): expected 'asc'|'desc'|null, found \"ASC\"",
        ),
        (
            7,
            "new DateTime(\"2021-02-30T00:00:00.000000+00:00\")",
            "argument 8 ($when): expected a date in the format Y-m-d\\TH:i:s.uP, found new DateTime(\"2021-02-30T00:00:00.000000+00:00\")",
        ),
        (
            8,
            "\"t\"",
            "argument 9 ($label): expected Stringable, found \"t\"",
        ),
        (
            9,
            "fn(...) => [1, 6]",
            "argument 10 ($pick), returned value 2: expected int<1, 5>, found 6",
        ),
        (
            10,
            "\"1e\"",
            "argument 11 ($num): expected numeric-string, found \"1e\"",
        ),
        (
            12,
            "[]",
            "argument 13 ($ids): expected non-empty-list<positive-int>, found []",
        ),
        (
            12,
            "[0]",
            "argument 13 ($ids)[0]: expected positive-int, found 0",
        ),
        (
            13,
            "[11 => \"x\"]",
            "argument 14 ($map): expected non-empty-array<int<0, 10>, non-empty-string>, found [11 => \"x\"]",
        ),
        (
            15,
            "new App\\Tree(new App\\Leaf(0), new App\\Leaf(9))",
            "argument 16 ($tree), new App\\Tree($right), new App\\Leaf($v): expected int<-5, 5>, found 9",
        ),
        (
            17,
            "[\"0\" => 1, \"1\" => 2, 2 => 3]",
            "argument 18 ($pair): expected array{int<-3, 3>, int|string}, found [1, 2, 3]",
        ),
    ];
    for (line, text, expected) in cases {
        assert_eq!(message(line, text), expected, "{text}");
    }
}

#[test]
fn the_details_php_decides() {
    // A float parameter takes an int; a decimal string key is an integer.
    check(&rich(), &with(11, "3")).unwrap();
    check(&rich(), &with(17, "[\"1\" => \"x\", \"0\" => 0]")).unwrap();
    // Class names ignore case and a leading backslash.
    check(&rich(), &with(4, "new \\app\\point(1, 2)")).unwrap();
    let extra = schema_of(r#"[{"name": "a", "type": {"kind": "int"}}]"#);
    let error = check(&extra, &[Value::Int(1), Value::Int(2)]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "argument 2: expected no more arguments, found 2"
    );
    assert_eq!(error.parameter, None);
}

#[test]
fn numeric_strings_as_php_8_reads_them() {
    for yes in [
        "0",
        " 1",
        "1 ",
        "-1.5",
        "+.5",
        "5.",
        "1e3",
        "1E-3",
        "\t\n12\x0b",
        "007",
    ] {
        assert!(is_numeric(yes.as_bytes()), "{yes:?}");
    }
    for no in [
        "", " ", ".", "-", "1e", "1e+", "0x1A", "1a", "INF", "1 2", "e5", "--1",
    ] {
        assert!(!is_numeric(no.as_bytes()), "{no:?}");
    }
}

//! Types in PHPStan's notation, for messages: `int<0, 100>`,
//! `non-empty-list<string>`, `array{a: int, b?: string}`, `'asc'|'desc'`.

use std::fmt::{self, Display, Formatter, Write};

use crate::schema::{ShapeItem, Type};
use crate::value::{Key, Value};

impl Display for Type {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Type::Null => f.write_str("null"),
            Type::Bool => f.write_str("bool"),
            Type::Float => f.write_str("float"),
            Type::Mixed => f.write_str("mixed"),
            Type::Int { min, max } => int(*min, *max, f),
            Type::String { numeric: true, .. } => f.write_str("numeric-string"),
            Type::String {
                non_empty: true, ..
            } => f.write_str("non-empty-string"),
            Type::String { .. } => f.write_str("string"),
            Type::Literal { value } => literal(value, f),
            Type::Union { of } => join(of, "|", f),
            Type::List { of, non_empty } => {
                write!(
                    f,
                    "{}list<{of}>",
                    if *non_empty { "non-empty-" } else { "" }
                )
            }
            Type::Array {
                key,
                value,
                non_empty,
            } => array(key, value, *non_empty, f),
            Type::Shape { items } => shape(items, f),
            Type::Enum { class, .. } | Type::Date { class } => f.write_str(class),
            Type::Object { classes } => join(classes, "|", f),
            Type::Stringable => f.write_str("Stringable"),
            Type::Closure { returns } => write!(f, "Closure(): {returns}"),
        }
    }
}

fn int(min: Option<i64>, max: Option<i64>, f: &mut Formatter<'_>) -> fmt::Result {
    match (min, max) {
        (None, None) => f.write_str("int"),
        (Some(1), None) => f.write_str("positive-int"),
        (Some(0), None) => f.write_str("non-negative-int"),
        (None, Some(-1)) => f.write_str("negative-int"),
        (None, Some(0)) => f.write_str("non-positive-int"),
        (min, max) => {
            f.write_str("int<")?;
            match min {
                Some(min) => write!(f, "{min}")?,
                None => f.write_str("min")?,
            }
            f.write_str(", ")?;
            match max {
                Some(max) => write!(f, "{max}")?,
                None => f.write_str("max")?,
            }
            f.write_char('>')
        }
    }
}

fn join<T: Display>(parts: &[T], separator: &str, f: &mut Formatter<'_>) -> fmt::Result {
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            f.write_str(separator)?;
        }
        write!(f, "{part}")?;
    }
    Ok(())
}

fn array(key: &Type, value: &Type, non_empty: bool, f: &mut Formatter<'_>) -> fmt::Result {
    let prefix = if non_empty { "non-empty-" } else { "" };
    let any_key = matches!(key, Type::Union { of } if of.len() == 2
        && matches!(of[0], Type::Int { min: None, max: None })
        && matches!(of[1], Type::String { non_empty: false, numeric: false }));
    match (any_key, value) {
        (true, Type::Mixed) => write!(f, "{prefix}array"),
        (true, value) => write!(f, "{prefix}array<{value}>"),
        (false, value) => write!(f, "{prefix}array<{key}, {value}>"),
    }
}

/// `array{int, string}` when the keys are 0, 1… and required; else keyed.
fn shape(items: &[ShapeItem], f: &mut Formatter<'_>) -> fmt::Result {
    let sequential = items
        .iter()
        .enumerate()
        .all(|(i, item)| item.key == Key::Int(i as i64) && !item.optional);
    f.write_str("array{")?;
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        if !sequential {
            match &item.key {
                Key::Int(k) => write!(f, "{k}")?,
                Key::Str(s) if is_identifier(s) => f.write_str(&String::from_utf8_lossy(s))?,
                Key::Str(s) => quoted(s, f)?,
            }
            f.write_str(if item.optional { "?: " } else { ": " })?;
        }
        write!(f, "{}", item.ty)?;
    }
    f.write_char('}')
}

fn is_identifier(s: &[u8]) -> bool {
    s.first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && s.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// A literal as PHPStan writes it: strings in single quotes.
fn literal(value: &Value, f: &mut Formatter<'_>) -> fmt::Result {
    match value {
        Value::Str(s) => quoted(s, f),
        other => write!(f, "{other}"),
    }
}

fn quoted(s: &[u8], f: &mut Formatter<'_>) -> fmt::Result {
    f.write_char('\'')?;
    for c in String::from_utf8_lossy(s).chars() {
        if c == '\'' || c == '\\' {
            f.write_char('\\')?;
        }
        f.write_char(c)?;
    }
    f.write_char('\'')
}

#[cfg(test)]
mod tests {
    use crate::schema::Type;

    fn ty(json: &str) -> Type {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn phpstan_notation() {
        let cases = [
            (r#"{"kind":"int","min":0,"max":100}"#, "int<0, 100>"),
            (r#"{"kind":"int","min":1}"#, "positive-int"),
            (r#"{"kind":"int","max":5}"#, "int<min, 5>"),
            (r#"{"kind":"int"}"#, "int"),
            (r#"{"kind":"string","non_empty":true}"#, "non-empty-string"),
            (
                r#"{"kind":"union","of":[{"kind":"literal","value":"\"asc\""},{"kind":"literal","value":"\"it's\""}]}"#,
                r"'asc'|'it\'s'",
            ),
            (
                r#"{"kind":"union","of":[{"kind":"null"},{"kind":"literal","value":"42"}]}"#,
                "null|42",
            ),
            (
                r#"{"kind":"list","of":{"kind":"string"},"non_empty":true}"#,
                "non-empty-list<string>",
            ),
            (r#"{"kind":"array"}"#, "array"),
            (
                r#"{"kind":"array","key":{"kind":"string"},"value":{"kind":"int"}}"#,
                "array<string, int>",
            ),
            (
                r#"{"kind":"shape","items":[{"key":"a","type":{"kind":"int"}},{"key":"\"b c\"","optional":true,"type":{"kind":"string"}}]}"#,
                "array{a: int, 'b c'?: string}",
            ),
            (
                r#"{"kind":"shape","items":[{"key":0,"type":{"kind":"int"}},{"key":"1","type":{"kind":"int"}}]}"#,
                "array{int, int}",
            ),
            (r#"{"kind":"object","classes":["A\\B","C"]}"#, r"A\B|C"),
            (
                r#"{"kind":"closure","returns":{"kind":"bool"}}"#,
                "Closure(): bool",
            ),
        ];
        for (json, text) in cases {
            assert_eq!(ty(json).to_string(), text, "{json}");
        }
    }
}

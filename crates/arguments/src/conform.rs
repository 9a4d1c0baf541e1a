//! Whether values fit their parameters' types: an entry that does not is
//! an error in `run-single` and is never called while fuzzing.

use std::fmt;

use crate::date::Date;
use crate::schema::{Parameter, Schema, ShapeItem, Type, date_class, required_len};
use crate::value::{Key, KeyRef, Value, keyed};

/// Why an entry does not fit; displays as
/// `argument 3 ($depth): expected int<0, 100>, found -5`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Mismatch {
    /// The argument's index (0-based; displayed 1-based).
    pub argument: usize,
    /// The parameter's name; `None` for an argument past the last parameter.
    pub parameter: Option<String>,
    /// Where in the argument: `["title"][0]`, `, new App\Point($x)`; often empty.
    pub path: String,
    pub expected: String,
    pub found: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "argument {}", self.argument + 1)?;
        if let Some(name) = &self.parameter {
            write!(f, " (${name})")?;
        }
        write!(
            f,
            "{}: expected {}, found {}",
            self.path, self.expected, self.found
        )
    }
}

/// Checks every argument against its parameter; missing trailing optional
/// arguments are fine, and the values past the last ordinary parameter are
/// a variadic parameter's.
pub fn check(schema: &Schema, values: &[Value]) -> Result<(), Mismatch> {
    check_arguments(schema, &schema.parameters, values)
        .map_err(|(argument, fail)| fail.mismatch(argument, &schema.parameters))
}

/// Whether `value` fits `ty`.
pub fn fits(schema: &Schema, ty: &Type, value: &Value) -> bool {
    value_fits(schema, ty, value).is_ok()
}

/// Whether `s` is a numeric string as PHP 8's `is_numeric()` says: blanks,
/// a sign, digits with an optional fraction and exponent, blanks.
pub fn is_numeric(s: &[u8]) -> bool {
    let blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let start = s.iter().position(|b| !blank(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !blank(b)).map_or(start, |i| i + 1);
    let mut rest = &s[start..end];
    if let [b'+' | b'-', tail @ ..] = rest {
        rest = tail;
    }
    let digits = |r: &[u8]| r.iter().take_while(|b| b.is_ascii_digit()).count();
    let whole = digits(rest);
    rest = &rest[whole..];
    let mut fraction = 0;
    if let [b'.', tail @ ..] = rest {
        fraction = digits(tail);
        rest = &tail[fraction..];
    }
    if whole + fraction == 0 {
        return false;
    }
    if let [b'e' | b'E', tail @ ..] = rest {
        let tail = tail
            .strip_prefix(b"+")
            .or_else(|| tail.strip_prefix(b"-"))
            .unwrap_or(tail);
        let exponent = digits(tail);
        return exponent > 0 && exponent == tail.len();
    }
    rest.is_empty()
}

/// Why a value does not fit, and where, built only on failure.
struct Fail<'a> {
    expected: Expected<'a>,
    /// `None`: the argument is missing.
    found: Option<&'a Value>,
    /// Innermost first.
    path: Vec<Segment<'a>>,
}

enum Expected<'a> {
    Type(&'a Type),
    Text(&'static str),
}

enum Segment<'a> {
    Key(KeyRef<'a>),
    Argument { class: &'a str, parameter: &'a str },
    Returned(usize),
}

impl<'a> Fail<'a> {
    fn new(ty: &'a Type, found: &'a Value) -> Fail<'a> {
        Fail {
            expected: Expected::Type(ty),
            found: Some(found),
            path: Vec::new(),
        }
    }

    fn text(expected: &'static str, found: &'a Value) -> Fail<'a> {
        Fail {
            expected: Expected::Text(expected),
            found: Some(found),
            path: Vec::new(),
        }
    }

    fn at(mut self, segment: Segment<'a>) -> Fail<'a> {
        self.path.push(segment);
        self
    }

    fn mismatch(self, argument: usize, parameters: &[Parameter]) -> Mismatch {
        let parameter = parameter_at(parameters, argument).map(|p| p.name.clone());
        let mut path = String::new();
        for segment in self.path.iter().rev() {
            path.push_str(&segment.to_string());
        }
        let expected = match self.expected {
            Expected::Type(ty) => ty.to_string(),
            Expected::Text(text) => text.to_string(),
        };
        let found = self
            .found
            .map_or_else(|| "nothing".to_string(), Value::to_string);
        Mismatch {
            argument,
            parameter,
            path,
            expected,
            found,
        }
    }
}

impl fmt::Display for Segment<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Segment::Key(KeyRef::Int(i)) => write!(f, "[{i}]"),
            Segment::Key(KeyRef::Str(s)) => write!(f, "[{}]", Value::Str(s.to_vec())),
            Segment::Argument { class, parameter } => write!(f, ", new {class}(${parameter})"),
            Segment::Returned(i) => write!(f, ", returned value {}", i + 1),
        }
    }
}

/// The arguments of a call or a constructor against its parameters; on a
/// mismatch, the argument's index.
fn check_arguments<'a>(
    schema: &'a Schema,
    parameters: &'a [Parameter],
    values: &'a [Value],
) -> Result<(), (usize, Fail<'a>)> {
    for (i, value) in values.iter().enumerate() {
        let Some(parameter) = parameter_at(parameters, i) else {
            return Err((i, Fail::text("no more arguments", value)));
        };
        value_fits(schema, &parameter.ty, value).map_err(|fail| (i, fail))?;
    }
    let required = required_len(parameters);
    if values.len() < required {
        let missing = values.len();
        let fail = Fail {
            expected: Expected::Type(&parameters[missing].ty),
            found: None,
            path: Vec::new(),
        };
        return Err((missing, fail));
    }
    Ok(())
}

/// The parameter the `i`th argument is for (the variadic one past the end).
pub(crate) fn parameter_at(parameters: &[Parameter], i: usize) -> Option<&Parameter> {
    parameters
        .get(i)
        .or_else(|| parameters.last().filter(|p| p.variadic))
}

fn value_fits<'a>(schema: &'a Schema, ty: &'a Type, value: &'a Value) -> Result<(), Fail<'a>> {
    let fail = || Err(Fail::new(ty, value));
    match (ty, value) {
        (Type::Mixed, value) if mixed_fits(value) => Ok(()),
        (Type::Null, Value::Null) | (Type::Bool, Value::Bool(_)) => Ok(()),
        (Type::Float, Value::Float(_) | Value::Int(_)) => Ok(()),
        (Type::Int { min, max }, Value::Int(i)) if in_range(*i, *min, *max) => Ok(()),
        (Type::String { non_empty, numeric }, Value::Str(s))
            if string_fits(s, *non_empty, *numeric) =>
        {
            Ok(())
        }
        (Type::Literal { value: literal }, value) if literal == value => Ok(()),
        (Type::Union { of }, value) if of.iter().any(|t| fits(schema, t, value)) => Ok(()),
        (Type::Enum { class, cases }, Value::Enum { class: c, case })
            if same_class(class, c) && cases.contains(case) =>
        {
            Ok(())
        }
        (Type::Stringable, Value::Text(_)) => Ok(()),
        (Type::Date { class }, Value::Date { class: c, text }) if date_fits(class, c) => {
            match Date::parse(text) {
                Some(_) => Ok(()),
                None => Err(Fail::text("a date in the format Y-m-d\\TH:i:s.uP", value)),
            }
        }
        (Type::Closure { returns }, Value::Closure(values)) => {
            values.iter().enumerate().try_for_each(|(i, v)| {
                value_fits(schema, returns, v).map_err(|fail| fail.at(Segment::Returned(i)))
            })
        }
        (Type::Object { classes }, Value::Object { class, args }) => {
            object_fits(schema, ty, classes, value, class, args)
        }
        (Type::List { of, non_empty }, Value::Array(items)) if !*non_empty || !items.is_empty() => {
            items_fit(
                schema,
                ty,
                value,
                items,
                |i, key| key == KeyRef::Int(i as i64),
                of,
            )
        }
        (
            Type::Array {
                key,
                value: of,
                non_empty,
            },
            Value::Array(items),
        ) if !*non_empty || !items.is_empty() => {
            items_fit(schema, ty, value, items, |_, k| key_fits(key, k), of)
        }
        (Type::Shape { items: shape }, Value::Array(items)) => {
            shape_fits(schema, ty, shape, value, items)
        }
        _ => fail(),
    }
}

/// Every key of a list or an array accepted by `key_ok` (given the item's
/// position), and every item of type `of`.
fn items_fit<'a>(
    schema: &'a Schema,
    ty: &'a Type,
    value: &'a Value,
    items: &'a [(Option<Key>, Value)],
    key_ok: impl Fn(usize, KeyRef<'a>) -> bool,
    of: &'a Type,
) -> Result<(), Fail<'a>> {
    for (i, (key, item)) in keyed(items).enumerate() {
        let Some(key) = key.filter(|key| key_ok(i, *key)) else {
            return Err(Fail::new(ty, value));
        };
        value_fits(schema, of, item).map_err(|fail| fail.at(Segment::Key(key)))?;
    }
    Ok(())
}

fn in_range(i: i64, min: Option<i64>, max: Option<i64>) -> bool {
    min.is_none_or(|min| i >= min) && max.is_none_or(|max| i <= max)
}

pub(crate) fn string_fits(s: &[u8], non_empty: bool, numeric: bool) -> bool {
    (!non_empty || !s.is_empty()) && (!numeric || is_numeric(s))
}

/// A class name as PHP compares them: without a leading `\`, any case.
pub(crate) fn same_class(a: &str, b: &str) -> bool {
    fn strip(s: &str) -> &str {
        s.strip_prefix('\\').unwrap_or(s)
    }
    strip(a).eq_ignore_ascii_case(strip(b))
}

fn date_fits(expected: &str, class: &str) -> bool {
    match date_class(expected) {
        Some("DateTimeInterface") => date_class(class).is_some_and(|c| c != "DateTimeInterface"),
        Some(expected) => date_class(class) == Some(expected),
        None => false,
    }
}

/// `mixed` as the generator understands it: scalars and arrays of them.
fn mixed_fits(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => true,
        Value::Array(items) => keyed(items).all(|(key, item)| key.is_some() && mixed_fits(item)),
        _ => false,
    }
}

/// Whether an array key fits the array's key type.
pub(crate) fn key_fits(ty: &Type, key: KeyRef<'_>) -> bool {
    match (ty, key) {
        (Type::Mixed, _) => true,
        (Type::Int { min, max }, KeyRef::Int(i)) => in_range(i, *min, *max),
        (Type::String { non_empty, numeric }, KeyRef::Str(s)) => {
            string_fits(s, *non_empty, *numeric)
        }
        (
            Type::Literal {
                value: Value::Int(l),
            },
            KeyRef::Int(i),
        ) => *l == i,
        (
            Type::Literal {
                value: Value::Str(l),
            },
            KeyRef::Str(s),
        ) => l == s,
        (Type::Union { of }, key) => of.iter().any(|t| key_fits(t, key)),
        _ => false,
    }
}

fn object_fits<'a>(
    schema: &'a Schema,
    ty: &'a Type,
    classes: &'a [String],
    value: &'a Value,
    class: &'a str,
    args: &'a [Value],
) -> Result<(), Fail<'a>> {
    let known = classes.iter().any(|c| same_class(c, class));
    let Some((name, found)) = schema.class(class).filter(|_| known) else {
        return Err(Fail::new(ty, value));
    };
    check_arguments(schema, &found.parameters, args).map_err(|(i, fail)| {
        let parameter = parameter_at(&found.parameters, i).map_or("…", |p| p.name.as_str());
        fail.at(Segment::Argument {
            class: name,
            parameter,
        })
    })
}

/// Every required key present, no key the shape does not list, and each
/// item of its type.
fn shape_fits<'a>(
    schema: &'a Schema,
    ty: &'a Type,
    shape: &'a [ShapeItem],
    value: &'a Value,
    items: &'a [(Option<Key>, Value)],
) -> Result<(), Fail<'a>> {
    for (key, item) in keyed(items) {
        let Some(key) = key else {
            return Err(Fail::new(ty, value));
        };
        let Some(declared) = shape.iter().find(|s| s.key.effective() == key) else {
            return Err(Fail::new(ty, value));
        };
        value_fits(schema, &declared.ty, item).map_err(|fail| fail.at(Segment::Key(key)))?;
    }
    let present = |s: &ShapeItem| keyed(items).any(|(key, _)| key == Some(s.key.effective()));
    match shape.iter().all(|s| s.optional || present(s)) {
        true => Ok(()),
        false => Err(Fail::new(ty, value)),
    }
}

#[cfg(test)]
mod tests;

//! Smaller entries for `minimize-crash`: each candidate changes one
//! argument (or drops trailing optional ones), fits the schema, and is
//! strictly smaller by [`size`], so a greedy loop that keeps the first
//! candidate that still crashes always ends.
//!
//! The measure [`size`] sums over the arguments one plus the argument's
//! cost: `null` costs 1 and every other value at least 2, so a union value
//! that becomes `null` shrinks; a string costs 2 plus its length; an
//! integer 2 plus its sign, bit length and set bits, so it shrinks toward
//! 0 by halving and by clearing bits; a float is cheapest at 0.0, then as a
//! small integer, then with a fraction, and dearest as INF or NAN; a
//! container costs 2 plus its items (with their keys); a date 2 plus how
//! many of its parts (microseconds, offset, time of day, day) are not the
//! epoch's; `false` 2, `true` 3, an enum case 2.

use crate::conform::{check, fits, parameter_at};
use crate::date::Date;
use crate::mutate::{child_type, resolve};
use crate::schema::{Schema, Type, date_class, required_len};
use crate::value::{Key, Value, canonicalize_items};

/// The entry's size: the measure every shrink candidate is below.
pub fn size(values: &[Value]) -> usize {
    values
        .iter()
        .fold(0usize, |sum, value| sum.saturating_add(1 + cost(value)))
}

fn cost(value: &Value) -> usize {
    let sum = |values: &mut dyn Iterator<Item = usize>| values.fold(2usize, usize::saturating_add);
    match value {
        Value::Null => 1,
        Value::Bool(b) => 2 + usize::from(*b),
        Value::Int(i) => 2 + int_cost(*i),
        Value::Float(f) => 2 + float_cost(*f),
        Value::Str(s) | Value::Text(s) => 2usize.saturating_add(s.len()),
        Value::Enum { .. } => 2,
        Value::Date { text, .. } => 2 + date_cost(text),
        Value::Array(items) => sum(&mut items
            .iter()
            .map(|(k, v)| key_cost(k).saturating_add(cost(v)))),
        Value::Object { args: values, .. } | Value::Closure(values) => {
            sum(&mut values.iter().map(cost))
        }
    }
}

fn int_cost(i: i64) -> usize {
    let magnitude = i.unsigned_abs();
    usize::from(i < 0) + (64 - magnitude.leading_zeros() as usize) + magnitude.count_ones() as usize
}

fn float_cost(f: f64) -> usize {
    let negative = usize::from(f.is_sign_negative() && !f.is_nan());
    if f == 0.0 {
        negative
    } else if !f.is_finite() {
        80
    } else if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        1 + negative + (64 - (f.abs() as u64).leading_zeros() as usize)
    } else {
        70 + negative
    }
}

fn key_cost(key: &Option<Key>) -> usize {
    match key {
        None => 0,
        Some(Key::Int(i)) => int_cost(*i),
        Some(Key::Str(s)) => 1usize.saturating_add(s.len()),
    }
}

fn date_cost(text: &[u8]) -> usize {
    let Some(date) = Date::parse(text) else {
        return 4;
    };
    let epoch = Date::EPOCH;
    usize::from(date.micros != 0)
        + usize::from(date.offset != 0)
        + usize::from((date.hour, date.minute, date.second) != (0, 0, 0))
        + usize::from((date.year, date.month, date.day) != (epoch.year, epoch.month, epoch.day))
}

/// Simpler variants of the entry, the bigger cuts first; each fits the
/// schema and is smaller by [`size`].
pub fn shrink_candidates(schema: &Schema, values: &[Value]) -> Vec<Vec<Value>> {
    let base = size(values);
    let mut out: Vec<Vec<Value>> = Vec::new();
    let mut offer = |candidate: Vec<Value>| {
        if size(&candidate) < base && check(schema, &candidate).is_ok() && !out.contains(&candidate)
        {
            out.push(candidate);
        }
    };
    let required = required_len(&schema.parameters);
    if values.len() > required {
        offer(values[..required].to_vec());
        offer(values[..values.len() - 1].to_vec());
    }
    for (i, value) in values.iter().enumerate() {
        let Some(parameter) = parameter_at(&schema.parameters, i) else {
            continue;
        };
        for smaller in smaller_values(schema, &parameter.ty, value) {
            let mut candidate = values.to_vec();
            candidate[i] = smaller;
            offer(candidate);
        }
    }
    out
}

/// Simpler values of type `ty`: the value itself simplified, or one node
/// inside it.
fn smaller_values(schema: &Schema, ty: &Type, value: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    if *value != Value::Null {
        out.push(Value::Null);
    }
    out.extend(minimal(schema, ty, schema.depth(ty)));
    let resolved = resolve(schema, ty, value);
    match value {
        Value::Bool(true) => out.push(Value::Bool(false)),
        Value::Int(i) => out.extend(smaller_ints(*i, resolved).map(Value::Int)),
        Value::Float(f) => out.extend(smaller_floats(*f).map(Value::Float)),
        Value::Str(s) => out.extend(shorter(s).map(Value::Str)),
        Value::Text(s) => out.extend(shorter(s).map(Value::Text)),
        Value::Date { class, text } => out.extend(simpler_dates(text).map(|text| Value::Date {
            class: class.clone(),
            text,
        })),
        Value::Array(items) => smaller_arrays(schema, resolved, value, items, &mut out),
        Value::Object { class, args } => {
            let rebuild = |args: Vec<Value>| Value::Object {
                class: class.clone(),
                args,
            };
            smaller_lists(schema, resolved, value, args, rebuild, &mut out);
        }
        Value::Closure(values) => {
            smaller_lists(schema, resolved, value, values, Value::Closure, &mut out)
        }
        Value::Null | Value::Bool(false) | Value::Enum { .. } => {}
    }
    out.retain(|candidate| cost(candidate) < cost(value) && fits(schema, ty, candidate));
    out
}

/// The simplest value of `ty` within `budget` object levels: null, false,
/// 0, the shortest string, the fewest items, the first enum case, the
/// epoch, the cheapest class with the simplest arguments.
fn minimal(schema: &Schema, ty: &Type, budget: usize) -> Option<Value> {
    let value = match ty {
        Type::Null | Type::Mixed => Value::Null,
        Type::Bool => Value::Bool(false),
        Type::Float => Value::Float(0.0),
        Type::Int { min, max } => {
            Value::Int(0i64.clamp(min.unwrap_or(i64::MIN), max.unwrap_or(i64::MAX)))
        }
        Type::String { numeric: true, .. } => Value::Str(b"0".to_vec()),
        Type::String { non_empty, .. } => Value::Str(if *non_empty {
            b"a".to_vec()
        } else {
            Vec::new()
        }),
        Type::Literal { value } => value.clone(),
        Type::Union { of } => {
            return cheapest(of.iter().filter_map(|t| minimal(schema, t, budget)));
        }
        Type::List { of, non_empty } => {
            let items = if *non_empty {
                vec![(None, minimal(schema, of, budget)?)]
            } else {
                Vec::new()
            };
            Value::Array(items)
        }
        Type::Array {
            non_empty: false, ..
        } => Value::Array(Vec::new()),
        Type::Array { .. } => return None,
        Type::Shape { items } => {
            let required = items.iter().filter(|item| !item.optional);
            let items: Option<Vec<_>> = required
                .map(|item| Some((Some(item.key.clone()), minimal(schema, &item.ty, budget)?)))
                .collect();
            let mut items = items?;
            canonicalize_items(&mut items);
            Value::Array(items)
        }
        Type::Enum { class, cases } => Value::Enum {
            class: class.clone(),
            case: cases.first()?.clone(),
        },
        Type::Object { classes } => {
            let objects = classes
                .iter()
                .filter(|c| schema.class_depth(c) <= budget)
                .filter_map(|c| {
                    let (class, found) = schema.class(c)?;
                    let required = &found.parameters[..required_len(&found.parameters)];
                    let args: Option<Vec<Value>> = required
                        .iter()
                        .map(|p| minimal(schema, &p.ty, budget.checked_sub(1)?))
                        .collect();
                    Some(Value::Object {
                        class: class.to_string(),
                        args: args?,
                    })
                });
            return cheapest(objects);
        }
        Type::Date { class } => {
            let class = date_class(class)
                .filter(|c| *c != "DateTimeInterface")
                .unwrap_or("DateTimeImmutable");
            Value::Date {
                class: class.to_string(),
                text: Date::EPOCH.to_text(),
            }
        }
        Type::Stringable => Value::Text(Vec::new()),
        Type::Closure { .. } => Value::Closure(Vec::new()),
    };
    Some(value)
}

fn cheapest(values: impl Iterator<Item = Value>) -> Option<Value> {
    values.min_by_key(cost)
}

/// Toward zero: zero (or the range's value nearest it), halved, the
/// lowest or highest set bit cleared, the sign dropped.
fn smaller_ints(i: i64, ty: &Type) -> impl Iterator<Item = i64> {
    let nearest_zero = match ty {
        Type::Int { min, max } => 0i64.clamp(min.unwrap_or(i64::MIN), max.unwrap_or(i64::MAX)),
        _ => 0,
    };
    let magnitude = i.unsigned_abs();
    let signed = move |m: u64| {
        if i < 0 {
            (m as i64).wrapping_neg()
        } else {
            m as i64
        }
    };
    let highest = if magnitude == 0 {
        0
    } else {
        1u64 << (63 - magnitude.leading_zeros())
    };
    [
        Some(nearest_zero),
        Some(i / 2),
        Some(signed(magnitude & magnitude.wrapping_sub(1))),
        Some(signed(magnitude & !highest)),
        (i < 0).then(|| i.checked_neg()).flatten(),
    ]
    .into_iter()
    .flatten()
    .filter(move |&c| c != i && int_cost(c) < int_cost(i))
}

fn smaller_floats(f: f64) -> impl Iterator<Item = f64> {
    let halved = (f / 2.0).trunc();
    [0.0, f.trunc(), halved, -f]
        .into_iter()
        .filter(move |c| !c.is_nan() && float_cost(*c) < float_cost(f))
}

/// Shorter strings: empty, either half, a quarter cut out, one byte cut out.
fn shorter(s: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    let n = s.len();
    let quarter = (n / 4).max(1);
    let halves = [Vec::new(), s[..n / 2].to_vec(), s[n / 2..].to_vec()];
    let quarters = (0..n)
        .step_by(quarter)
        .filter(move |_| n >= 8)
        .map(move |at| cut(s, at, quarter));
    let step = n.div_ceil(16).max(1);
    let bytes = (0..n).step_by(step).map(move |at| cut(s, at, 1));
    halves
        .into_iter()
        .chain(quarters)
        .chain(bytes)
        .filter(move |c| c.len() < n)
}

fn cut(s: &[u8], at: usize, len: usize) -> Vec<u8> {
    let end = (at + len).min(s.len());
    [&s[..at], &s[end..]].concat()
}

/// The date with one part set to the epoch's.
fn simpler_dates(text: &[u8]) -> impl Iterator<Item = Vec<u8>> {
    let epoch = Date::EPOCH;
    let variants = Date::parse(text).map(|date| {
        [
            Date { micros: 0, ..date },
            Date { offset: 0, ..date },
            Date {
                hour: 0,
                minute: 0,
                second: 0,
                ..date
            },
            Date {
                year: epoch.year,
                month: epoch.month,
                day: epoch.day,
                ..date
            },
        ]
    });
    variants.into_iter().flatten().map(Date::to_text)
}

/// Arrays with items cut (half of them, or one) or one item simpler.
fn smaller_arrays(
    schema: &Schema,
    ty: &Type,
    value: &Value,
    items: &[(Option<Key>, Value)],
    out: &mut Vec<Value>,
) {
    let n = items.len();
    let mut offer = |mut items: Vec<(Option<Key>, Value)>| {
        canonicalize_items(&mut items);
        out.push(Value::Array(items));
    };
    if n >= 4 {
        offer(items[..n / 2].to_vec());
        offer(items[n / 2..].to_vec());
    }
    for i in 0..n {
        offer([&items[..i], &items[i + 1..]].concat());
    }
    for (i, (_, item)) in items.iter().enumerate() {
        let Some(item_ty) = child_type(schema, ty, value, i) else {
            continue;
        };
        for smaller in smaller_values(schema, item_ty, item) {
            let mut copy = items.to_vec();
            copy[i].1 = smaller;
            offer(copy);
        }
    }
}

/// Constructor arguments or returned values: the last one dropped, or one
/// simpler.
fn smaller_lists(
    schema: &Schema,
    ty: &Type,
    value: &Value,
    values: &[Value],
    rebuild: impl Fn(Vec<Value>) -> Value,
    out: &mut Vec<Value>,
) {
    if let Some((_, rest)) = values.split_last() {
        out.push(rebuild(rest.to_vec()));
    }
    if matches!(value, Value::Closure(_)) {
        for i in 0..values.len().saturating_sub(1) {
            out.push(rebuild([&values[..i], &values[i + 1..]].concat()));
        }
    }
    for (i, item) in values.iter().enumerate() {
        let Some(item_ty) = child_type(schema, ty, value, i) else {
            continue;
        };
        for smaller in smaller_values(schema, item_ty, item) {
            let mut copy = values.to_vec();
            copy[i] = smaller;
            out.push(rebuild(copy));
        }
    }
}

#[cfg(test)]
mod tests;

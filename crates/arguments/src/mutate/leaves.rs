//! Mutations of scalar nodes: integers, floats, booleans, strings, enum
//! cases, dates, and `mixed` values.

use php_fuzz_mutate::{Dictionary, Mutator, cmp};
use rand::RngExt;

use super::MutationKind::{self, *};
use super::{ATTEMPTS, Context, containers, nodes::MIXED};
use crate::conform::string_fits;
use crate::date::Date;
use crate::generate::{
    BOUNDARIES, OFFSETS, SPECIAL_FLOATS, float as random_float, numeric_string, random_date,
};
use crate::schema::Type;
use crate::value::{Key, Value, decimal_key};

/// A mutation of a leaf of type `ty` (resolved: not a union).
pub(super) fn mutate(
    context: &mut Context<'_>,
    ty: &Type,
    value: &mut Value,
) -> Option<MutationKind> {
    match (ty, value) {
        (Type::Int { min, max }, Value::Int(i)) => int(context, i, *min, *max),
        (Type::Float, value) => float(context, value),
        (Type::Bool, Value::Bool(b)) => {
            *b = !*b;
            Some(BoolFlip)
        }
        (Type::String { non_empty, numeric }, Value::Str(s)) => {
            string(context, s, *non_empty, *numeric)
        }
        (Type::Stringable, Value::Text(s)) => string(context, s, false, false),
        (Type::Enum { cases, .. }, Value::Enum { case, .. }) => enum_case(context, cases, case),
        (Type::Date { .. }, Value::Date { text, .. }) => date(context, text),
        _ => None,
    }
}

/// An integer in `[min, max]` other than the one it was.
pub(super) fn int(
    context: &mut Context<'_>,
    value: &mut i64,
    min: Option<i64>,
    max: Option<i64>,
) -> Option<MutationKind> {
    let (lo, hi) = (min.unwrap_or(i64::MIN), max.unwrap_or(i64::MAX));
    if lo == hi {
        return None;
    }
    let old = *value;
    for _ in 0..ATTEMPTS {
        let rng = context.rng();
        let (candidate, kind) = match rng.random_range(0..10) {
            0..=2 => {
                let delta = rng.random_range(1..=16);
                let shifted = if rng.random() {
                    old.saturating_add(delta)
                } else {
                    old.saturating_sub(delta)
                };
                (shifted, IntDelta)
            }
            3 => (old.wrapping_neg(), IntNegate),
            4 | 5 => (
                BOUNDARIES[rng.random_range(0..BOUNDARIES.len())],
                IntBoundary,
            ),
            6 if min.is_some() || max.is_some() => {
                let ends = [lo, hi, lo.saturating_add(1), hi.saturating_sub(1)];
                (ends[rng.random_range(0..4)], IntRangeEnd)
            }
            6..=8 => match torc_int(context) {
                Some(operand) => (operand, IntTorc),
                None => continue,
            },
            _ => (old ^ (1 << rng.random_range(0..64)), IntBitFlip),
        };
        let new = candidate.clamp(lo, hi);
        if new == old {
            // Clamped back to where it was.
            continue;
        }
        *value = new;
        return Some(kind);
    }
    let new = context.rng().random_range(lo..=hi);
    (new != old).then(|| {
        *value = new;
        IntRandom
    })
}

/// An integer operand of a recent comparison (or one off it).
fn torc_int(context: &mut Context<'_>) -> Option<i64> {
    fn as_int(operand: &cmp::Value) -> Option<i64> {
        match operand {
            cmp::Value::Int(i) => Some(*i),
            cmp::Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e18 => Some(*f as i64),
            cmp::Value::Bytes(b) if b.len() <= 20 => {
                std::str::from_utf8(b).ok()?.trim().parse().ok()
            }
            _ => None,
        }
    }
    let operand = pick_operand(context, as_int)?;
    Some(match context.rng().random_range(0..4) {
        0 => operand.saturating_add(1),
        1 => operand.saturating_sub(1),
        _ => operand,
    })
}

/// A random operand that `convert` accepts, converted.
fn pick_operand<T>(
    context: &mut Context<'_>,
    convert: impl Fn(&cmp::Value) -> Option<T>,
) -> Option<T> {
    nth_operand(context, |operand| convert(operand).is_some()).and_then(convert)
}

/// A random operand of the table of recent compares that `accept` takes.
fn nth_operand<'c>(
    context: &'c mut Context<'_>,
    accept: impl Fn(&cmp::Value) -> bool,
) -> Option<&'c cmp::Value> {
    let n = context
        .bytes
        .torc()
        .operands()
        .filter(|o| accept(o))
        .count();
    if n == 0 {
        return None;
    }
    let k = context.rng().random_range(0..n);
    context.bytes.torc().operands().filter(|o| accept(o)).nth(k)
}

/// An array key from a recent comparison's operand.
pub(super) fn torc_key(context: &mut Context<'_>) -> Option<Key> {
    let usable = |operand: &cmp::Value| !matches!(operand, cmp::Value::Float(_));
    match nth_operand(context, usable)? {
        cmp::Value::Int(i) => Some(Key::Int(*i)),
        cmp::Value::Bytes(b) => Some(match decimal_key(b) {
            Some(i) => Key::Int(i),
            None => Key::Str(b.clone()),
        }),
        cmp::Value::Float(_) => None,
    }
}

fn float(context: &mut Context<'_>, value: &mut Value) -> Option<MutationKind> {
    let old = match value {
        Value::Float(f) => *f,
        Value::Int(i) => *i as f64,
        _ => return None,
    };
    for _ in 0..ATTEMPTS {
        let rng = context.rng();
        let (new, kind) = match rng.random_range(0..8) {
            0 | 1 => (
                SPECIAL_FLOATS[rng.random_range(0..SPECIAL_FLOATS.len())],
                FloatSpecial,
            ),
            2 | 3 => {
                let new = match rng.random_range(0..4) {
                    0 => old + if rng.random() { 1.0 } else { -1.0 },
                    1 => old * 2.0,
                    2 => old / 2.0,
                    _ => old + rng.random_range(-10.0..10.0),
                };
                (new, FloatDelta)
            }
            4 => (-old, FloatNegate),
            5 | 6 => match pick_operand(context, as_float) {
                Some(operand) => (operand, FloatTorc),
                None => continue,
            },
            _ => (random_float(rng), FloatSpecial),
        };
        if !matches!(value, Value::Float(f) if crate::value::same_float(*f, new)) {
            *value = Value::Float(new);
            return Some(kind);
        }
    }
    None
}

fn as_float(operand: &cmp::Value) -> Option<f64> {
    match operand {
        cmp::Value::Float(f) => Some(*f),
        cmp::Value::Int(i) => Some(*i as f64),
        cmp::Value::Bytes(b) if b.len() <= 32 => std::str::from_utf8(b).ok()?.trim().parse().ok(),
        cmp::Value::Bytes(_) => None,
    }
}

/// A string's mutation: a comparison operand or a dictionary word in
/// place of it, or the byte mutators on it; always still fitting.
pub(super) fn string(
    context: &mut Context<'_>,
    data: &mut Vec<u8>,
    non_empty: bool,
    numeric: bool,
) -> Option<MutationKind> {
    let max_len = context.generator.limits.max_string.max(data.len());
    let fits = |s: &[u8]| s.len() <= max_len && string_fits(s, non_empty, numeric);
    let replaced = match context.rng().random_range(0..10) {
        0 => replace_with_operand(context, data, fits).then_some(StrTorc),
        1 => replace_with_word(context, data, fits).then_some(StrWord),
        2 | 3 if numeric => numeric_other(context, data),
        _ => None,
    };
    replaced
        .or_else(|| bytes(context, data, max_len, fits))
        .or_else(|| {
            if numeric {
                numeric_other(context, data)
            } else {
                None
            }
        })
}

fn replace_with_operand(
    context: &mut Context<'_>,
    data: &mut Vec<u8>,
    fits: impl Fn(&[u8]) -> bool,
) -> bool {
    let usable =
        |operand: &cmp::Value| matches!(operand, cmp::Value::Bytes(b) if b != data && fits(b));
    let Some(cmp::Value::Bytes(word)) = nth_operand(context, usable) else {
        return false;
    };
    data.clear();
    data.extend_from_slice(word);
    true
}

/// A word of the user's, the source's or the auto-dictionary.
fn replace_with_word(
    context: &mut Context<'_>,
    data: &mut Vec<u8>,
    fits: impl Fn(&[u8]) -> bool,
) -> bool {
    let which = context.rng().random_range(0..3);
    let len = dictionary(context.bytes, which).len();
    if len == 0 {
        return false;
    }
    let k = context.rng().random_range(0..len);
    let word = &dictionary(context.bytes, which).entries()[k];
    if word == data || !fits(word) {
        return false;
    }
    data.clear();
    data.extend_from_slice(word);
    true
}

fn dictionary(bytes: &Mutator, which: usize) -> &Dictionary {
    match which {
        0 => bytes.dictionary(),
        1 => bytes.source_dictionary(),
        _ => bytes.auto_dictionary(),
    }
}

/// The byte mutators, retried from the original until the string changes
/// and still fits.
fn bytes(
    context: &mut Context<'_>,
    data: &mut Vec<u8>,
    max_len: usize,
    fits: impl Fn(&[u8]) -> bool,
) -> Option<MutationKind> {
    context.scratch.clear();
    context.scratch.extend_from_slice(data);
    for _ in 0..ATTEMPTS {
        context.bytes.mutate(data, max_len, None);
        if data != context.scratch && fits(data) {
            context.sequence = Some(*context.bytes.last_sequence());
            return Some(Bytes);
        }
        data.clear();
        data.extend_from_slice(context.scratch);
    }
    None
}

fn numeric_other(context: &mut Context<'_>, data: &mut Vec<u8>) -> Option<MutationKind> {
    let fresh = numeric_string(context.rng());
    (fresh != *data).then(|| {
        *data = fresh;
        StrNumeric
    })
}

fn enum_case(
    context: &mut Context<'_>,
    cases: &[String],
    case: &mut String,
) -> Option<MutationKind> {
    let others = cases.iter().filter(|c| *c != case).count();
    if others == 0 {
        return None;
    }
    let k = context.rng().random_range(0..others);
    let other = cases.iter().filter(|c| *c != case).nth(k)?;
    case.clone_from(other);
    Some(EnumCase)
}

/// Steps a date moves by, in microseconds: a microsecond to a year.
const STEPS: &[i64] = &[
    1,
    1_000_000,
    60_000_000,
    3_600_000_000,
    86_400_000_000,
    2_592_000_000_000,
    31_536_000_000_000,
];

fn date(context: &mut Context<'_>, text: &mut Vec<u8>) -> Option<MutationKind> {
    let Some(date) = Date::parse(text) else {
        *text = random_date(context.rng());
        return Some(DateRegenerate);
    };
    for _ in 0..ATTEMPTS {
        let rng = context.rng();
        let (new, kind) = match rng.random_range(0..6) {
            0 => (Date::parse(&random_date(rng)), DateRegenerate),
            1 => (
                Date::from_timestamp(
                    date.timestamp(),
                    OFFSETS[rng.random_range(0..OFFSETS.len())],
                ),
                DateOffset,
            ),
            _ => {
                let step = STEPS[rng.random_range(0..STEPS.len())] * rng.random_range(1..=3);
                let step = if rng.random() { step } else { -step };
                (
                    Date::from_timestamp(date.timestamp() + step, date.offset),
                    DateShift,
                )
            }
        };
        if let Some(new) = new.filter(|new| *new != date) {
            text.clear();
            new.write(text);
            return Some(kind);
        }
    }
    None
}

/// A `mixed` node: mutated as what it is, or regenerated as anything.
pub(super) fn mixed(
    context: &mut Context<'_>,
    value: &mut Value,
    budget: usize,
) -> Option<MutationKind> {
    let regenerate = context.rng().random_ratio(1, 4);
    let kind = match value {
        _ if regenerate => None,
        Value::Int(i) => int(context, i, None, None),
        Value::Float(_) => float(context, value),
        Value::Bool(b) => {
            *b = !*b;
            Some(BoolFlip)
        }
        Value::Str(s) => string(context, s, false, false),
        Value::Array(_) => containers::array(context, &MIXED, value, budget),
        _ => None,
    };
    kind.or_else(|| {
        let generator = context.generator;
        let fresh = generator.mixed(1, context.rng());
        (fresh != *value).then(|| {
            *value = fresh;
            Regenerate
        })
    })
}

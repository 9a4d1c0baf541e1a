//! Fresh values for a type. The promise: a generated value always fits its
//! type ([`crate::conform`]), so a generated call never fails with a
//! TypeError. Within that, interesting values come first: small and
//! boundary integers, short strings and words that parsers treat
//! specially, special floats.
//!
//! Objects nest at most `Limits::max_depth` constructors deep: a class is
//! chosen only if it can be built within the depth left, and past it an
//! optional parameter is left out and a nullable one is null. A type whose
//! every value needs more depth is built the cheapest way anyway, since a
//! value must be passed.

use rand::RngExt;

use crate::conform::{is_numeric, key_fits};
use crate::date::Date;
use crate::schema::{
    MAX_OBJECT_DEPTH, Parameter, Schema, ShapeItem, Type, date_class, required_len,
};
use crate::value::{Key, Value, canonicalize_items};
use php_fuzz_mutate::FuzzRng;

/// Bounds on the size of generated values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest generated string (a mutated one never grows past it).
    pub max_string: usize,
    /// The most items in a generated array or closure, and the most a
    /// mutation grows one to.
    pub max_items: usize,
    /// How many constructors deep objects nest (3, `MAX_OBJECT_DEPTH`).
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_string: 64,
            max_items: 8,
            max_depth: MAX_OBJECT_DEPTH,
        }
    }
}

/// A fresh entry: every required argument, and trailing optional ones and
/// variadic values at random.
pub fn generate_entry(schema: &Schema, limits: &Limits, rng: &mut FuzzRng) -> Vec<Value> {
    let mut values = Vec::with_capacity(schema.parameters.len());
    Generator { schema, limits }.arguments(&schema.parameters, limits.max_depth, rng, &mut values);
    values
}

/// A fresh value of `ty` (which must be buildable: see
/// [`Schema::depth_needed`]; else the value is `null`).
pub fn generate(ty: &Type, schema: &Schema, limits: &Limits, rng: &mut FuzzRng) -> Value {
    Generator { schema, limits }.value(ty, limits.max_depth, rng)
}

/// Generation within one schema and its limits. `budget` is always the
/// object depth left where the value goes.
#[derive(Clone, Copy)]
pub(crate) struct Generator<'a> {
    pub schema: &'a Schema,
    pub limits: &'a Limits,
}

impl<'a> Generator<'a> {
    /// Arguments for `parameters`, appended to `out`.
    pub fn arguments(
        &self,
        parameters: &[Parameter],
        budget: usize,
        rng: &mut FuzzRng,
        out: &mut Vec<Value>,
    ) {
        let required = required_len(parameters);
        for (i, parameter) in parameters.iter().enumerate() {
            let fits = self.schema.depth(&parameter.ty) <= budget;
            if parameter.variadic {
                let n = if fits { rng.random_range(0..=2) } else { 0 };
                out.extend((0..n).map(|_| self.value(&parameter.ty, budget, rng)));
                return;
            }
            if i >= required && (!fits || rng.random_ratio(1, 4)) {
                return;
            }
            out.push(self.value(&parameter.ty, budget, rng));
        }
    }

    pub fn value(&self, ty: &Type, budget: usize, rng: &mut FuzzRng) -> Value {
        match ty {
            Type::Null => Value::Null,
            Type::Bool => Value::Bool(rng.random()),
            Type::Float => Value::Float(float(rng)),
            Type::Mixed => self.mixed(0, rng),
            Type::Int { min, max } => Value::Int(int_in(*min, *max, rng)),
            Type::String { non_empty, numeric } => {
                Value::Str(self.string(*non_empty, *numeric, rng))
            }
            Type::Literal { value } => value.clone(),
            Type::Union { of } => match self.within(of, |t| self.schema.depth(t), budget, rng) {
                Some(branch) => self.value(branch, budget, rng),
                None => Value::Null,
            },
            Type::List { of, non_empty } => {
                let n = self.count(*non_empty, self.schema.depth(of), budget, rng);
                Value::Array(
                    (0..n)
                        .map(|_| (None, self.value(of, budget, rng)))
                        .collect(),
                )
            }
            Type::Array {
                key,
                value,
                non_empty,
            } => {
                let n = self.count(*non_empty, self.schema.depth(value), budget, rng);
                Value::Array(self.keyed_items(n, key, rng, |rng| self.value(value, budget, rng)))
            }
            Type::Shape { items } => Value::Array(self.shape(items, budget, rng)),
            Type::Enum { class, cases } => {
                let case = cases[rng.random_range(0..cases.len())].clone();
                Value::Enum {
                    class: class.clone(),
                    case,
                }
            }
            Type::Object { classes } => self.object(classes, budget, rng),
            Type::Date { class } => Value::Date {
                class: concrete_date_class(class, rng).to_string(),
                text: random_date(rng),
            },
            Type::Stringable => Value::Text(self.bytes(rng)),
            Type::Closure { returns } => {
                let n = self
                    .count(false, self.schema.depth(returns), budget, rng)
                    .min(3);
                Value::Closure((0..n).map(|_| self.value(returns, budget, rng)).collect())
            }
        }
    }

    /// A random option that fits in `budget`; failing that, one of the
    /// cheapest that can be built at all.
    pub fn within<'t, T>(
        &self,
        options: &'t [T],
        depth: impl Fn(&T) -> usize,
        budget: usize,
        rng: &mut FuzzRng,
    ) -> Option<&'t T> {
        let fitting = options.iter().filter(|o| depth(o) <= budget).count();
        if fitting > 0 {
            let k = rng.random_range(0..fitting);
            return options.iter().filter(|o| depth(o) <= budget).nth(k);
        }
        let cheapest = options
            .iter()
            .map(&depth)
            .min()
            .filter(|&d| d != usize::MAX)?;
        options.iter().find(|o| depth(o) == cheapest)
    }

    /// How many items a list, an array or a closure gets.
    pub fn count(
        &self,
        non_empty: bool,
        item_depth: usize,
        budget: usize,
        rng: &mut FuzzRng,
    ) -> usize {
        if item_depth > budget {
            return usize::from(non_empty);
        }
        small_len(self.limits.max_items, rng).max(usize::from(non_empty))
    }

    /// An object of one of `classes` that fits in `budget`.
    pub fn object(&self, classes: &[String], budget: usize, rng: &mut FuzzRng) -> Value {
        let Some(name) = self.within(classes, |c| self.schema.class_depth(c), budget, rng) else {
            return Value::Null;
        };
        let (class, found) = self.schema.class(name).expect("a checked schema's class");
        let mut args = Vec::with_capacity(found.parameters.len());
        self.arguments(&found.parameters, budget.saturating_sub(1), rng, &mut args);
        Value::Object {
            class: class.to_string(),
            args,
        }
    }

    /// Up to `n` items with distinct keys of type `key` (fewer when the keys
    /// run out), at least one if `n` is.
    pub fn keyed_items(
        &self,
        n: usize,
        key: &Type,
        rng: &mut FuzzRng,
        mut value: impl FnMut(&mut FuzzRng) -> Value,
    ) -> Vec<(Option<Key>, Value)> {
        let mut items: Vec<(Option<Key>, Value)> = Vec::with_capacity(n);
        let attempts = if n > 0 { 4 * n + 16 } else { 0 };
        for _ in 0..attempts {
            if items.len() == n {
                break;
            }
            if let Some(k) = self
                .key(key, rng)
                .filter(|k| items.iter().all(|(other, _)| other.as_ref() != Some(k)))
            {
                items.push((Some(k), value(rng)));
            }
        }
        canonicalize_items(&mut items);
        items
    }

    /// A key of type `ty` as PHP stores it, if one turns up in a few tries.
    pub fn key(&self, ty: &Type, rng: &mut FuzzRng) -> Option<Key> {
        for _ in 0..8 {
            let value = match ty {
                Type::Mixed if rng.random() => Value::Int(int_in(None, None, rng)),
                Type::Mixed => Value::Str(self.bytes(rng)),
                ty => self.value(ty, 0, rng),
            };
            let key = match value {
                Value::Int(i) => Key::Int(i),
                Value::Str(s) => match crate::value::decimal_key(&s) {
                    Some(i) => Key::Int(i),
                    None => Key::Str(s),
                },
                _ => continue,
            };
            if key_fits(ty, key.effective()) {
                return Some(key);
            }
        }
        None
    }

    /// The required items of a shape and some optional ones, in order.
    fn shape(
        &self,
        shape: &[ShapeItem],
        budget: usize,
        rng: &mut FuzzRng,
    ) -> Vec<(Option<Key>, Value)> {
        let mut items = Vec::with_capacity(shape.len());
        for item in shape {
            let wanted = !item.optional || (self.schema.depth(&item.ty) <= budget && rng.random());
            if wanted {
                items.push((Some(item.key.clone()), self.value(&item.ty, budget, rng)));
            }
        }
        canonicalize_items(&mut items);
        items
    }

    /// A scalar, or now and then a small array of them.
    pub fn mixed(&self, nesting: usize, rng: &mut FuzzRng) -> Value {
        match rng.random_range(0..10) {
            0 => Value::Null,
            1 => Value::Bool(rng.random()),
            2 | 3 => Value::Int(int_in(None, None, rng)),
            4 => Value::Float(float(rng)),
            8 | 9 if nesting < 2 => {
                let n = small_len(self.limits.max_items, rng);
                let items = if rng.random() {
                    (0..n)
                        .map(|_| (None, self.mixed(nesting + 1, rng)))
                        .collect()
                } else {
                    let key = Type::String {
                        non_empty: false,
                        numeric: false,
                    };
                    self.keyed_items(n, &key, rng, |rng| self.mixed(nesting + 1, rng))
                };
                Value::Array(items)
            }
            _ => Value::Str(self.bytes(rng)),
        }
    }

    pub fn string(&self, non_empty: bool, numeric: bool, rng: &mut FuzzRng) -> Vec<u8> {
        if numeric {
            return numeric_string(rng);
        }
        let mut s = self.bytes(rng);
        if non_empty && s.is_empty() {
            s.push(rng.random_range(b'a'..=b'z'));
        }
        s
    }

    /// A short string: a word parsers treat specially, letters, printable
    /// ASCII, or any bytes.
    pub fn bytes(&self, rng: &mut FuzzRng) -> Vec<u8> {
        let max = self.limits.max_string;
        let mut s = match rng.random_range(0..8) {
            0 | 1 => WORDS[rng.random_range(0..WORDS.len())].to_vec(),
            2..=4 => {
                const ALNUM: &[u8] =
                    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
                let n = small_len(max, rng);
                (0..n)
                    .map(|_| ALNUM[rng.random_range(0..ALNUM.len())])
                    .collect()
            }
            5 | 6 => (0..small_len(max, rng))
                .map(|_| rng.random_range(b' '..=b'~'))
                .collect(),
            _ => (0..small_len(max, rng)).map(|_| rng.random()).collect(),
        };
        s.truncate(max);
        s
    }
}

/// Words that parsers and formatters treat specially.
const WORDS: &[&[u8]] = &[
    b"",
    b"0",
    b"1",
    b"-1",
    b"a",
    b"abc",
    b" ",
    b"null",
    b"true",
    b"false",
    b"%s",
    b"%d",
    b"{}",
    b"[]",
    b"<a>",
    b"</",
    b"../",
    b"\\",
    b"'",
    b"\"",
    b"\n",
    b"\r\n",
    b"\0",
    b"\x7f",
    b"\xff\xfe",
    "é".as_bytes(),
    "日本".as_bytes(),
    "😀".as_bytes(),
    b"a,b",
    b"a=b&c=d",
    b"key: value",
    b"http://a/b?c#d",
    b"1.5",
    b"1e3",
    b"0x1A",
    b"\xc3",
    b"${x}",
    b"*",
    b"?",
    b"..",
    b"/",
    b"#",
];

/// Boundaries that code compares against.
pub(crate) const BOUNDARIES: &[i64] = &[
    0,
    1,
    -1,
    2,
    7,
    8,
    10,
    16,
    100,
    127,
    128,
    255,
    256,
    -128,
    -129,
    1000,
    1024,
    4096,
    32767,
    32768,
    65535,
    65536,
    2147483647,
    2147483648,
    -2147483648,
    4294967295,
    4294967296,
    9007199254740992,
    i64::MAX,
    i64::MIN,
];

/// A length up to `max`, mostly a short one.
pub(crate) fn small_len(max: usize, rng: &mut FuzzRng) -> usize {
    let cap = match rng.random_range(0..10) {
        0..=5 => 4,
        6..=8 => 16,
        _ => max,
    };
    rng.random_range(0..=cap.min(max))
}

/// An integer in `[min, max]`: small, a boundary, near a bound, a power of
/// two or any.
pub(crate) fn int_in(min: Option<i64>, max: Option<i64>, rng: &mut FuzzRng) -> i64 {
    let (lo, hi) = (min.unwrap_or(i64::MIN), max.unwrap_or(i64::MAX));
    let candidate = match rng.random_range(0..10) {
        0..=3 => rng.random_range(-16..=16),
        4 | 5 => BOUNDARIES[rng.random_range(0..BOUNDARIES.len())],
        6 if min.is_some() => lo.saturating_add(rng.random_range(0..=1)),
        7 if max.is_some() => hi.saturating_sub(rng.random_range(0..=1)),
        8 => {
            let power = 1i64 << rng.random_range(0..63);
            [power, power - 1, -power, -power - 1][rng.random_range(0..4)]
        }
        _ => rng.random_range(lo..=hi),
    };
    candidate.clamp(lo, hi)
}

/// Floats code trips on.
pub(crate) const SPECIAL_FLOATS: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    0.1,
    1.5,
    100.0,
    1e15,
    9007199254740993.0,
    1e300,
    -1e-300,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    f64::MAX,
    f64::MIN,
    f64::MIN_POSITIVE,
    f64::EPSILON,
];

pub(crate) fn float(rng: &mut FuzzRng) -> f64 {
    match rng.random_range(0..6) {
        0 | 1 => SPECIAL_FLOATS[rng.random_range(0..SPECIAL_FLOATS.len())],
        2 | 3 => f64::from(rng.random_range(-100..=100)),
        4 => (rng.random_range(-1000.0..1000.0f64) * 100.0).round() / 100.0,
        _ => f64::from_bits(rng.random()),
    }
}

/// A string `is_numeric()` accepts.
pub(crate) fn numeric_string(rng: &mut FuzzRng) -> Vec<u8> {
    const FORMS: &[&str] = &[
        "0", "-0", "1.5", ".5", "5.", "1e3", "-1E-3", " 1", "1 ", "+1", "0.0", "007", "1e308",
        "1e309",
    ];
    let text = match rng.random_range(0..4) {
        0 | 1 => int_in(None, None, rng).to_string(),
        2 => format!(
            "{}",
            (rng.random_range(-1000.0..1000.0f64) * 1000.0).round() / 1000.0
        ),
        _ => FORMS[rng.random_range(0..FORMS.len())].to_string(),
    };
    debug_assert!(is_numeric(text.as_bytes()), "{text}");
    text.into_bytes()
}

/// The class of a generated date (either, for `DateTimeInterface`).
fn concrete_date_class(class: &str, rng: &mut FuzzRng) -> &'static str {
    match date_class(class) {
        Some("DateTimeInterface") | None if rng.random() => "DateTime",
        Some("DateTimeInterface") | None => "DateTimeImmutable",
        Some(class) => class,
    }
}

/// Instants code trips on: the epoch, 2000, leap days, the 32-bit limits.
const SPECIAL_TIMES: &[i64] = &[
    0,
    -1,
    86_399,
    946_684_800,
    951_782_400,
    1_709_164_800,
    2_147_483_647,
    2_147_483_648,
    -2_208_988_800,
    4_102_444_799,
    253_402_214_400,
];

/// Offsets in minutes east of UTC, whole and half hours, and the extremes.
pub(crate) const OFFSETS: &[i32] = &[0, 0, 60, 120, -300, -480, 330, 345, 585, 840, -720];

/// A date's text in `Y-m-d\TH:i:s.uP`: a random or special instant with
/// or without microseconds, at one of a few offsets.
pub(crate) fn random_date(rng: &mut FuzzRng) -> Vec<u8> {
    let seconds = match rng.random_range(0..4) {
        0 => SPECIAL_TIMES[rng.random_range(0..SPECIAL_TIMES.len())],
        _ => rng.random_range(-2_208_988_800..=4_102_444_800),
    };
    let micros = if rng.random() {
        0
    } else {
        rng.random_range(0..1_000_000)
    };
    let offset = OFFSETS[rng.random_range(0..OFFSETS.len())];
    Date::from_timestamp(seconds * 1_000_000 + micros, offset)
        .unwrap_or(Date::EPOCH)
        .to_text()
}

#[cfg(test)]
pub(crate) mod tests;

//! The values of a call's arguments, as the corpus format writes them and
//! the harness builds them.
//!
//! Arrays keep their items in order with the key each was written with
//! (`None`: the next integer key, as in PHP). [`Value::canonicalize`] turns
//! an array into the one PHP would build: decimal-integer string keys
//! become integers, a repeated key keeps the first position and the last
//! value, and the keys are dropped when they are 0, 1, 2… in order (else
//! every key is explicit). The parser and the generator only make
//! canonical values.

use std::collections::HashMap;
use std::fmt;

/// An array key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    Int(i64),
    Str(Vec<u8>),
}

/// A key as PHP stores it, borrowed from a [`Key`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRef<'a> {
    Int(i64),
    Str(&'a [u8]),
}

impl KeyRef<'_> {
    pub fn to_key(self) -> Key {
        match self {
            KeyRef::Int(i) => Key::Int(i),
            KeyRef::Str(s) => Key::Str(s.to_vec()),
        }
    }
}

impl Key {
    /// The key PHP stores: a string holding a decimal integer (no sign
    /// `+`, no leading zero, not `-0`, within 64 bits) becomes that integer.
    pub fn effective(&self) -> KeyRef<'_> {
        match self {
            Key::Int(i) => KeyRef::Int(*i),
            Key::Str(s) => match decimal_key(s) {
                Some(i) => KeyRef::Int(i),
                None => KeyRef::Str(s),
            },
        }
    }
}

/// The integer PHP reads a string array key as, if it does.
pub fn decimal_key(s: &[u8]) -> Option<i64> {
    let digits = s.strip_prefix(b"-").unwrap_or(s);
    let canonical = match digits {
        [b'0'] => digits.len() == s.len(),
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !canonical || digits.len() > 19 {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// One argument's value.
#[derive(Debug, Clone)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Vec<u8>),
    Array(Vec<(Option<Key>, Value)>),
    /// `Class::Case`.
    Enum {
        class: String,
        case: String,
    },
    /// `new Class(args…)`: the public constructor's arguments in order.
    /// `class` is never `DateTime`, `DateTimeImmutable` or
    /// `PhpFuzz\Arguments\Text`, which have variants of their own.
    Object {
        class: String,
        args: Vec<Value>,
    },
    /// `new DateTimeImmutable("…")` (`class` is `DateTimeImmutable` or `DateTime`).
    Date {
        class: String,
        text: Vec<u8>,
    },
    /// `new PhpFuzz\Arguments\Text("…")`: a `\Stringable`.
    Text(Vec<u8>),
    /// `fn(...) => [values…]`.
    Closure(Vec<Value>),
}

/// Floats are equal when their bits are (so `0.0 != -0.0`, which print
/// differently), and every NaN equals every NaN (they all print `NAN`).
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Float(a), Float(b)) => same_float(*a, *b),
            (Str(a), Str(b)) | (Text(a), Text(b)) => a == b,
            (Array(a), Array(b)) => a == b,
            (Enum { class, case }, Enum { class: c, case: k }) => class == c && case == k,
            (Object { class, args }, Object { class: c, args: a }) => class == c && args == a,
            (Date { class, text }, Date { class: c, text: t }) => class == c && text == t,
            (Closure(a), Closure(b)) => a == b,
            _ => false,
        }
    }
}

pub(crate) fn same_float(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// The keys PHP gives the items of an array literal, in order: an item
/// without a key takes the next integer key (one past the largest integer
/// key so far, 0 in an array without one; PHP 8.3's rule, which differs
/// from older releases only after a negative key). `None` where PHP has no
/// next key left (past `PHP_INT_MAX`).
pub fn keyed(items: &[(Option<Key>, Value)]) -> impl Iterator<Item = (Option<KeyRef<'_>>, &Value)> {
    let mut next = NextKey::default();
    items
        .iter()
        .map(move |(key, value)| (next.assign(key.as_ref()), value))
}

/// PHP's next free integer key, as items are added.
#[derive(Default)]
struct NextKey {
    /// `None` before the first integer key.
    next: Option<i64>,
    exhausted: bool,
}

impl NextKey {
    /// The key of an item written with `key` (`None`: the next integer).
    fn assign<'a>(&mut self, key: Option<&'a Key>) -> Option<KeyRef<'a>> {
        let key = match key {
            Some(key) => key.effective(),
            None if self.exhausted => return None,
            None => KeyRef::Int(self.next.unwrap_or(0)),
        };
        if let KeyRef::Int(i) = key
            && self.next.is_none_or(|n| i >= n)
        {
            self.next = Some(i.saturating_add(1));
            self.exhausted = i == i64::MAX;
        }
        Some(key)
    }
}

/// Whether the array's keys are 0, 1, 2… in order.
pub fn is_list(items: &[(Option<Key>, Value)]) -> bool {
    keyed(items)
        .enumerate()
        .all(|(i, (key, _))| key == Some(KeyRef::Int(i as i64)))
}

/// Makes every key explicit and as PHP stores it (an item PHP has no key
/// for is dropped).
pub fn materialize(items: &mut Vec<(Option<Key>, Value)>) {
    let mut next = NextKey::default();
    for (key, _) in items.iter_mut() {
        *key = match key.take() {
            Some(Key::Str(s)) => match decimal_key(&s) {
                Some(i) => Some(Key::Int(i)),
                None => Some(Key::Str(s)),
            },
            other => other,
        };
        match key {
            Some(key) => {
                next.assign(Some(key));
            }
            None => *key = next.assign(None).map(KeyRef::to_key),
        }
    }
    items.retain(|(key, _)| key.is_some());
}

/// The array PHP builds from these items (see the module comment).
pub fn canonicalize_items(items: &mut Vec<(Option<Key>, Value)>) {
    if items.iter().all(|(key, _)| key.is_none()) {
        return;
    }
    materialize(items);
    dedupe(items);
    if is_list(items) {
        for (key, _) in items.iter_mut() {
            *key = None;
        }
    }
}

/// Keeps the first position and the last value of a repeated key.
fn dedupe(items: &mut Vec<(Option<Key>, Value)>) {
    if items.len() <= 64 {
        let mut i = 0;
        while i < items.len() {
            let mut j = i + 1;
            while j < items.len() {
                if items[j].0 == items[i].0 {
                    items[i].1 = items.remove(j).1;
                } else {
                    j += 1;
                }
            }
            i += 1;
        }
        return;
    }
    let mut first: HashMap<Option<Key>, usize> = HashMap::new();
    let mut kept: Vec<(Option<Key>, Value)> = Vec::with_capacity(items.len());
    for (key, value) in items.drain(..) {
        match first.get(&key) {
            Some(&at) => kept[at].1 = value,
            None => {
                first.insert(key.clone(), kept.len());
                kept.push((key, value));
            }
        }
    }
    *items = kept;
}

impl Value {
    /// Canonicalizes every array in the value (see the module comment).
    pub fn canonicalize(&mut self) {
        match self {
            Value::Array(items) => {
                canonicalize_items(items);
                for (_, value) in items {
                    value.canonicalize();
                }
            }
            Value::Object { args: values, .. } | Value::Closure(values) => {
                values.iter_mut().for_each(Value::canonicalize);
            }
            _ => {}
        }
    }
}

/// The value in the corpus syntax, cut after 80 bytes.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MAX: usize = 80;
        let mut text = Vec::new();
        crate::text::write_value(self, &mut text);
        if text.len() > MAX {
            let mut cut = MAX;
            while cut > 0 && (text[cut] & 0xc0) == 0x80 {
                cut -= 1;
            }
            text.truncate(cut);
            text.extend_from_slice("…".as_bytes());
        }
        f.write_str(&String::from_utf8_lossy(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Option<Key> {
        Some(Key::Str(text.as_bytes().to_vec()))
    }

    #[test]
    fn decimal_string_keys_are_integers_as_in_php() {
        assert_eq!(decimal_key(b"0"), Some(0));
        assert_eq!(decimal_key(b"-12"), Some(-12));
        assert_eq!(decimal_key(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(decimal_key(b"-9223372036854775808"), Some(i64::MIN));
        for not in [
            &b"-0"[..],
            b"01",
            b"+1",
            b"1.0",
            b"",
            b"-",
            b" 1",
            b"9223372036854775808",
        ] {
            assert_eq!(decimal_key(not), None, "{not:?}");
        }
    }

    #[test]
    fn implicit_keys_follow_the_largest_integer_key() {
        let items = vec![
            (None, Value::Null),
            (Some(Key::Int(5)), Value::Null),
            (None, Value::Null),
            (s("x"), Value::Null),
            (Some(Key::Int(-3)), Value::Null),
            (None, Value::Null),
        ];
        let keys: Vec<_> = keyed(&items).map(|(k, _)| k).collect();
        assert_eq!(
            keys,
            [
                Some(KeyRef::Int(0)),
                Some(KeyRef::Int(5)),
                Some(KeyRef::Int(6)),
                Some(KeyRef::Str(b"x")),
                Some(KeyRef::Int(-3)),
                Some(KeyRef::Int(7)),
            ]
        );
        let after_max = vec![(Some(Key::Int(i64::MAX)), Value::Null), (None, Value::Null)];
        let keys: Vec<_> = keyed(&after_max).map(|(k, _)| k).collect();
        assert_eq!(keys, [Some(KeyRef::Int(i64::MAX)), None]);
    }

    #[test]
    fn canonical_arrays_are_the_ones_php_builds() {
        let mut items = vec![
            (s("1"), Value::Int(10)),
            (Some(Key::Int(0)), Value::Int(20)),
            (Some(Key::Int(1)), Value::Int(30)),
        ];
        canonicalize_items(&mut items);
        assert_eq!(
            items,
            [
                (Some(Key::Int(1)), Value::Int(30)),
                (Some(Key::Int(0)), Value::Int(20))
            ]
        );
        let mut list = vec![(s("0"), Value::Null), (None, Value::Bool(true))];
        canonicalize_items(&mut list);
        assert_eq!(list, [(None, Value::Null), (None, Value::Bool(true))]);
        let mut map = vec![(None, Value::Null), (s("k"), Value::Null)];
        canonicalize_items(&mut map);
        assert_eq!(
            map,
            [(Some(Key::Int(0)), Value::Null), (s("k"), Value::Null)]
        );
    }

    #[test]
    fn floats_compare_by_bits_and_nans_are_equal() {
        assert_ne!(Value::Float(0.0), Value::Float(-0.0));
        assert_eq!(Value::Float(f64::NAN), Value::Float(-f64::NAN));
        assert_ne!(Value::Int(1), Value::Float(1.0));
    }
}

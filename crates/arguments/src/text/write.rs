//! Writing entries and values in the canonical form (docs/autofuzz.md):
//! one line per argument, strings escaped so that a line pastes into PHP.

use std::io::Write;

use super::HEADER;
use super::parse::TEXT_CLASS;
use crate::value::{Key, KeyRef, Value, is_list, keyed};

/// Appends the entry: the header line, then one line per value.
pub fn write_entry(values: &[Value], out: &mut Vec<u8>) {
    out.extend_from_slice(HEADER);
    out.push(b'\n');
    for value in values {
        write_value(value, out);
        out.push(b'\n');
    }
}

/// Appends one value on one line.
pub fn write_value(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Int(i) => write!(out, "{i}").expect("writing to a Vec"),
        Value::Float(f) => write_float(*f, out),
        Value::Str(s) => write_string(s, out),
        Value::Array(items) => write_array(items, out),
        Value::Enum { class, case } => {
            out.extend_from_slice(class.as_bytes());
            out.extend_from_slice(b"::");
            out.extend_from_slice(case.as_bytes());
        }
        Value::Object { class, args } => {
            out.extend_from_slice(b"new ");
            out.extend_from_slice(class.as_bytes());
            out.push(b'(');
            write_list(args, out);
            out.push(b')');
        }
        Value::Date { class, text } => write_new(class, text, out),
        Value::Text(text) => write_new(TEXT_CLASS, text, out),
        Value::Closure(values) => {
            out.extend_from_slice(b"fn(...) => [");
            write_list(values, out);
            out.push(b']');
        }
    }
}

fn write_new(class: &str, text: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(b"new ");
    out.extend_from_slice(class.as_bytes());
    out.push(b'(');
    write_string(text, out);
    out.push(b')');
}

fn write_list(values: &[Value], out: &mut Vec<u8>) {
    for (i, value) in values.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        write_value(value, out);
    }
}

/// Without keys when they are 0, 1, 2… in order; else every key explicit
/// (an item PHP has no key for is left out, as PHP cannot build it).
fn write_array(items: &[(Option<Key>, Value)], out: &mut Vec<u8>) {
    let list = is_list(items);
    out.push(b'[');
    let mut first = true;
    for (key, value) in keyed(items) {
        let Some(key) = key else { continue };
        if !first {
            out.extend_from_slice(b", ");
        }
        first = false;
        if !list {
            match key {
                KeyRef::Int(i) => write!(out, "{i}").expect("writing to a Vec"),
                KeyRef::Str(s) => write_string(s, out),
            }
            out.extend_from_slice(b" => ");
        }
        write_value(value, out);
    }
    out.push(b']');
}

/// The shortest text that reads back to `f`, with a `.0` where it would
/// read as an integer; `INF`, `-INF`, `NAN`.
fn write_float(f: f64, out: &mut Vec<u8>) {
    if f.is_nan() {
        out.extend_from_slice(b"NAN");
    } else if f.is_infinite() {
        out.extend_from_slice(if f > 0.0 { b"INF" } else { b"-INF" });
    } else {
        let start = out.len();
        write!(out, "{f:?}").expect("writing to a Vec");
        let text = &out[start..];
        if !text.contains(&b'.') {
            match text.iter().position(|&b| b == b'e') {
                Some(e) => {
                    out.splice(start + e..start + e, *b".0");
                }
                None => out.extend_from_slice(b".0"),
            }
        }
    }
}

/// Printable ASCII and valid UTF-8 as they are, `\n`, `\r`, `\t` by name,
/// other bytes as `\xHH`; `"`, `\` and `$` escaped.
fn write_string(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for chunk in s.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' | '\\' | '$' => out.extend_from_slice(&[b'\\', c as u8]),
                '\n' => out.extend_from_slice(b"\\n"),
                '\r' => out.extend_from_slice(b"\\r"),
                '\t' => out.extend_from_slice(b"\\t"),
                ' '..='~' => out.push(c as u8),
                c if c.is_ascii() => hex(c as u8, out),
                c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
            }
        }
        for &b in chunk.invalid() {
            hex(b, out);
        }
    }
    out.push(b'"');
}

fn hex(b: u8, out: &mut Vec<u8>) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(&[
        b'\\',
        b'x',
        DIGITS[usize::from(b >> 4)],
        DIGITS[usize::from(b & 15)],
    ]);
}

//! Reading entries and single values.

use std::fmt;

use super::HEADER;
use crate::value::{Key, Value, canonicalize_items, keyed};

/// Where and why an entry does not parse; displays as `LINE:COLUMN: message`
/// (1-based; the column counts bytes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// The arguments of a typed corpus entry, in order. Arrays come back
/// canonical (see [`crate::value`]).
pub fn parse_entry(src: &[u8]) -> Result<Vec<Value>, ParseError> {
    let mut p = Parser {
        src,
        pos: 0,
        depth: 0,
    };
    if !super::is_entry(src) {
        return Err(p.error("expected the header `php-fuzz arguments v1`"));
    }
    p.pos = HEADER.len();
    p.end_of_line()?;
    let mut values = Vec::new();
    while p.skip_blank_lines() {
        values.push(p.value()?);
        p.end_of_line()?;
    }
    Ok(values)
}

/// One value on its own (a `literal` type's value), with blanks around it.
pub fn parse_value(src: &[u8]) -> Result<Value, ParseError> {
    let mut p = Parser {
        src,
        pos: 0,
        depth: 0,
    };
    p.space();
    let value = p.value()?;
    p.space();
    if p.pos < src.len() {
        return Err(p.error("expected the end of the value"));
    }
    Ok(value)
}

struct Parser<'a> {
    src: &'a [u8],
    pos: usize,
    /// Brackets open around the current value.
    depth: usize,
}

/// Brackets nest at most this deep (the stack stays small on any input).
const MAX_DEPTH: usize = 256;

type Parsed<T> = Result<T, ParseError>;

impl Parser<'_> {
    fn error_at(&self, pos: usize, message: impl Into<String>) -> ParseError {
        let before = &self.src[..pos.min(self.src.len())];
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        ParseError {
            line: 1 + before.iter().filter(|&&b| b == b'\n').count(),
            column: 1 + pos - line_start,
            message: message.into(),
        }
    }

    fn error(&self, message: impl Into<String>) -> ParseError {
        self.error_at(self.pos, message)
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn eat(&mut self, token: &[u8]) -> bool {
        let found = self.src[self.pos..].starts_with(token);
        if found {
            self.pos += token.len();
        }
        found
    }

    fn expect(&mut self, token: &str) -> Parsed<()> {
        if self.eat(token.as_bytes()) {
            Ok(())
        } else {
            Err(self.error(format!("expected `{token}`")))
        }
    }

    /// Spaces and tabs (and a `\r`, for `\r\n` line ends).
    fn inline_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Blanks inside open brackets: line ends too, and comment lines.
    fn space(&mut self) {
        loop {
            self.inline_space();
            if self.peek() != Some(b'\n') {
                return;
            }
            self.pos += 1;
            let line = self.pos;
            self.inline_space();
            if self.peek() == Some(b'#') {
                self.skip_line();
            } else {
                self.pos = line;
            }
        }
    }

    fn skip_line(&mut self) {
        while self.peek().is_some_and(|b| b != b'\n') {
            self.pos += 1;
        }
    }

    /// Skips blank and comment lines before a value; false at the end.
    fn skip_blank_lines(&mut self) -> bool {
        loop {
            self.inline_space();
            match self.peek() {
                None => return false,
                Some(b'\n') => self.pos += 1,
                Some(b'#') => self.skip_line(),
                Some(_) => return true,
            }
        }
    }

    fn end_of_line(&mut self) -> Parsed<()> {
        self.inline_space();
        match self.peek() {
            None => Ok(()),
            Some(b'\n') => {
                self.pos += 1;
                Ok(())
            }
            Some(_) => Err(self.error("expected the end of the line")),
        }
    }

    fn value(&mut self) -> Parsed<Value> {
        match self.peek() {
            Some(b'"') => self.string().map(Value::Str),
            Some(b'[') => self.array().map(Value::Array),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b) if is_name_start(b) || b == b'\\' => self.word(),
            _ => Err(self.error("expected a value")),
        }
    }

    fn string(&mut self) -> Parsed<Vec<u8>> {
        let start = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let rest = &self.src[self.pos..];
            let Some(special) = rest.iter().position(|&b| b == b'"' || b == b'\\') else {
                return Err(self.error_at(start, "unterminated string"));
            };
            out.extend_from_slice(&rest[..special]);
            self.pos += special;
            if self.eat(b"\"") {
                return Ok(out);
            }
            out.push(self.escape()?);
        }
    }

    /// The byte of the escape at `\`.
    fn escape(&mut self) -> Parsed<u8> {
        let at = self.pos;
        let byte = match self.src.get(at + 1) {
            Some(b'\\') => b'\\',
            Some(b'"') => b'"',
            Some(b'$') => b'$',
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'v') => 0x0b,
            Some(b'e') => 0x1b,
            Some(b'f') => 0x0c,
            Some(b'0')
                if self
                    .src
                    .get(at + 2)
                    .is_some_and(|b| (b'0'..=b'7').contains(b)) =>
            {
                return Err(self.error_at(
                    at,
                    "`\\0` before an octal digit (PHP would read an octal escape): write `\\x00`",
                ));
            }
            Some(b'0') => 0,
            Some(b'x') => {
                let hex = self.src.get(at + 2..at + 4).and_then(hex_byte);
                let byte =
                    hex.ok_or_else(|| self.error_at(at, "expected two hex digits after `\\x`"))?;
                self.pos = at + 4;
                return Ok(byte);
            }
            None => return Err(self.error_at(at, "unterminated string")),
            Some(&other) => {
                let shown = String::from_utf8_lossy(&[other]).into_owned();
                return Err(self.error_at(at, format!("unknown escape `\\{shown}`")));
            }
        };
        self.pos = at + 2;
        Ok(byte)
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Parsed<Value> {
        let start = self.pos;
        let negative = self.eat(b"-");
        if self.eat(b"INF") {
            return Ok(Value::Float(if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }));
        }
        let int_start = self.pos;
        if self.digits() == 0 {
            return Err(self.error("expected a digit"));
        }
        let int_end = self.pos;
        let fraction =
            self.peek() == Some(b'.') && self.src.get(self.pos + 1).is_some_and(u8::is_ascii_digit);
        if fraction {
            self.pos += 1;
            self.digits();
        }
        let exponent = self.exponent()?;
        let text = std::str::from_utf8(&self.src[start..self.pos]).expect("ASCII");
        if fraction || exponent {
            return Ok(Value::Float(text.parse().expect("a float literal")));
        }
        if self.src[int_start] == b'0' && int_end - int_start > 1 {
            return Err(self.error_at(int_start, "a leading zero (PHP would read octal)"));
        }
        text.parse()
            .map(Value::Int)
            .map_err(|_| self.error_at(start, "integer out of the 64-bit range"))
    }

    fn exponent(&mut self) -> Parsed<bool> {
        if !matches!(self.peek(), Some(b'e' | b'E')) {
            return Ok(false);
        }
        self.pos += 1;
        if matches!(self.peek(), Some(b'+' | b'-')) {
            self.pos += 1;
        }
        if self.digits() == 0 {
            return Err(self.error("expected the exponent's digits"));
        }
        Ok(true)
    }

    /// A keyword, an enum case, `new …` or `fn(...) => […]`.
    fn word(&mut self) -> Parsed<Value> {
        let start = self.pos;
        let name = self.name()?;
        if self.eat(b"::") {
            let case = self.name()?;
            if case.contains('\\') {
                return Err(self.error_at(start, "expected an enum case name after `::`"));
            }
            return Ok(Value::Enum {
                class: strip(name),
                case,
            });
        }
        let keyword = |word: &str| name.eq_ignore_ascii_case(word);
        match name.as_str() {
            "INF" => return Ok(Value::Float(f64::INFINITY)),
            "NAN" => return Ok(Value::Float(f64::NAN)),
            _ => {}
        }
        if keyword("null") {
            Ok(Value::Null)
        } else if keyword("true") || keyword("false") {
            Ok(Value::Bool(keyword("true")))
        } else if keyword("new") && matches!(self.peek(), Some(b' ' | b'\t')) {
            self.object()
        } else if keyword("fn") {
            self.closure()
        } else {
            Err(self.error_at(start, "expected a value"))
        }
    }

    /// A name: identifiers joined by `\`, with an optional leading `\`.
    fn name(&mut self) -> Parsed<String> {
        let start = self.pos;
        self.eat(b"\\");
        loop {
            if !self.peek().is_some_and(is_name_start) {
                return Err(self.error("expected a name"));
            }
            while self
                .peek()
                .is_some_and(|b| is_name_start(b) || b.is_ascii_digit())
            {
                self.pos += 1;
            }
            let more = self.peek() == Some(b'\\')
                && self
                    .src
                    .get(self.pos + 1)
                    .is_some_and(|&b| is_name_start(b));
            if !more {
                break;
            }
            self.pos += 1;
        }
        let name = &self.src[start..self.pos];
        String::from_utf8(name.to_vec())
            .map_err(|_| self.error_at(start, "a name that is not UTF-8"))
    }

    /// After `new`: the class, then its constructor's arguments.
    fn object(&mut self) -> Parsed<Value> {
        self.inline_space();
        let class_at = self.pos;
        let class = strip(self.name()?);
        self.space();
        self.expect("(")?;
        let args = self.list(b')')?;
        let special = special_class(&class);
        let Some(special) = special else {
            return Ok(Value::Object { class, args });
        };
        let text = match <[Value; 1]>::try_from(args) {
            Ok([Value::Str(text)]) => text,
            _ => return Err(self.error_at(class_at, format!("`new {special}` takes one string"))),
        };
        Ok(match special {
            TEXT_CLASS => Value::Text(text),
            date => Value::Date {
                class: date.to_string(),
                text,
            },
        })
    }

    /// After `fn`: `(...) => [values]`.
    fn closure(&mut self) -> Parsed<Value> {
        self.space();
        self.expect("(")?;
        self.space();
        self.expect("...")?;
        self.space();
        self.expect(")")?;
        self.space();
        self.expect("=>")?;
        self.space();
        self.expect("[")?;
        self.list(b']').map(Value::Closure)
    }

    /// Values separated by commas up to `close` (a trailing comma is fine).
    fn list(&mut self, close: u8) -> Parsed<Vec<Value>> {
        self.enter()?;
        let mut values = Vec::new();
        self.space();
        while !self.eat(&[close]) {
            values.push(self.value()?);
            self.space();
            if !self.eat(b",") && self.peek() != Some(close) {
                return Err(self.error(format!("expected `,` or `{}`", close as char)));
            }
            self.space();
        }
        self.depth -= 1;
        Ok(values)
    }

    /// One more bracket open, `self.pos` just past it.
    fn enter(&mut self) -> Parsed<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error_at(
                self.pos - 1,
                format!("more than {MAX_DEPTH} nested brackets"),
            ));
        }
        Ok(())
    }

    fn array(&mut self) -> Parsed<Vec<(Option<Key>, Value)>> {
        let open = self.pos;
        self.pos += 1;
        self.enter()?;
        let mut items = Vec::new();
        self.space();
        while !self.eat(b"]") {
            items.push(self.item()?);
            self.space();
            if !self.eat(b",") && self.peek() != Some(b']') {
                return Err(self.error("expected `,` or `]`"));
            }
            self.space();
        }
        if keyed(&items).any(|(key, _)| key.is_none()) {
            return Err(self.error_at(open, "an item past the key PHP_INT_MAX has no key"));
        }
        canonicalize_items(&mut items);
        self.depth -= 1;
        Ok(items)
    }

    fn item(&mut self) -> Parsed<(Option<Key>, Value)> {
        let start = self.pos;
        let first = self.value()?;
        self.space();
        if !self.eat(b"=>") {
            return Ok((None, first));
        }
        let key = match first {
            Value::Int(i) => Key::Int(i),
            Value::Str(s) => Key::Str(s),
            _ => return Err(self.error_at(start, "an array key is an integer or a string")),
        };
        self.space();
        Ok((Some(key), self.value()?))
    }
}

pub(super) const TEXT_CLASS: &str = "PhpFuzz\\Arguments\\Text";

/// The spelling of a class that has a value of its own, if `class` is one.
fn special_class(class: &str) -> Option<&'static str> {
    ["DateTimeImmutable", "DateTime", TEXT_CLASS]
        .into_iter()
        .find(|special| special.eq_ignore_ascii_case(class))
}

fn strip(name: String) -> String {
    match name.strip_prefix('\\') {
        Some(rest) => rest.to_string(),
        None => name,
    }
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn hex_byte(hex: &[u8]) -> Option<u8> {
    let text = std::str::from_utf8(hex).ok()?;
    if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u8::from_str_radix(text, 16).ok()
}

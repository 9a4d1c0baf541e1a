//! The corpus format `php-fuzz arguments v1` (docs/autofuzz.md): a header
//! line, then one argument per line, each a PHP literal.

mod parse;
mod write;

pub use parse::{ParseError, parse_entry, parse_value};
pub use write::{write_entry, write_value};

/// The first line of every typed corpus entry.
pub const HEADER: &[u8] = b"php-fuzz arguments v1";

/// Whether `bytes` starts with the header line (a typed entry, not bytes).
pub fn is_entry(bytes: &[u8]) -> bool {
    match bytes.strip_prefix(HEADER) {
        Some(rest) => rest.is_empty() || rest.starts_with(b"\n") || rest.starts_with(b"\r\n"),
        None => false,
    }
}

#[cfg(test)]
mod tests;

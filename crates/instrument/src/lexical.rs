//! Byte-level rules of PHP's lexer that the instrumenter relies on.

/// Whitespace as PHP's lexer has it (no form feed, no vertical tab).
pub(crate) fn is_php_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// A byte of a PHP name (or keyword): `[A-Za-z0-9_\x80-\xff]`.
pub(crate) fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// The first offset from `at` on that is not PHP whitespace.
pub(crate) fn skip_php_space(source: &[u8], at: usize) -> usize {
    let rest = source.get(at..).unwrap_or_default();
    at + rest.iter().take_while(|&&b| is_php_space(b)).count()
}

/// The end of the `?>` that follows `at`, after whitespace, if one does.
pub(crate) fn close_tag_after(source: &[u8], at: usize) -> Option<usize> {
    let tag = skip_php_space(source, at);
    source
        .get(tag..)
        .is_some_and(|rest| rest.starts_with(b"?>"))
        .then_some(tag + 2)
}

//! A PHP message without what the input put into it: the wording that tells
//! one kind of warning from another ("Undefined array key …" against
//! "Trying to access array offset on value of type …"), never the key, the
//! character or the number that differ from one input to the next.

/// The mask that stands for every part taken out.
const MASK: char = '…';

/// Stands for a quoted string while the line is cut into words.
const QUOTED: char = '\u{e000}';

/// After these words PHP names a type, a class or a function, which often
/// comes from the input (`of type null`, `class Foo`, `function foo()`).
const NAMING_WORDS: [&str; 6] = ["type", "class", "interface", "trait", "enum", "function"];

/// Messages of libxml2 (DOM, SimpleXML, XMLReader) that quote the input
/// bare, without quotes: each `%s` is the input's text, whatever it holds
/// (spaces, `<`, `&`, bytes outside ASCII). A `%s` at the end runs to the
/// end of the line: `unterminated entity reference %15s` quotes the next 15
/// bytes of the input, which tell nothing about the bug.
const BARE_INPUT_TEMPLATES: [&str; 8] = [
    "unterminated entity reference %s",
    "Tag %s invalid",
    "Unexpected end tag : %s",
    "Opening and ending tag mismatch: %s and %s",
    "Attribute %s redefined",
    "Element %s embeds close tag",
    "Namespace prefix %s on %s is not defined",
    "Namespace prefix %s for %s on %s is not defined",
];

/// Masks the parts of a message's first line that quote the input: the
/// input in libxml2's messages ([`BARE_INPUT_TEMPLATES`]), quoted
/// strings (to the last matching quote of the message, newlines included,
/// or to its end when none closes), numbers, single characters (`illegal hex digit x`, whatever
/// the character, a space or a quote included), class and function names
/// (qualified `A\B`, `A::b`, camel case `stdClass`, or after `class`,
/// `type`, `function`…), and words with bytes outside ASCII. Each masked
/// part becomes one `…`.
pub fn normalize_message(message: &str) -> String {
    let bare_masked = mask_bare_input(message);
    // Quotes next: a quoted key may hold a newline.
    let masked = mask_quotes(bare_masked.as_deref().unwrap_or(message));
    let quoted = masked.split('\n').next().unwrap_or("");
    let trimmed = quoted.trim_end();
    let mut out = String::with_capacity(trimmed.len());
    let mut after_naming_word = false;
    let mut chars = Vec::new();
    for (n, chunk) in trimmed.split(' ').enumerate() {
        if n > 0 {
            out.push(' ');
        }
        chars.clear();
        chars.extend(chunk.chars());
        after_naming_word = normalize_chunk(&chars, after_naming_word, &mut out);
    }
    if trimmed.len() < quoted.len() {
        // The line ended in a space or another blank: a character of the input.
        out.push(' ');
        push_mask(&mut out);
    }
    out
}

/// The message with each hole of the first [`BARE_INPUT_TEMPLATES`] entry
/// that its first line holds replaced by [`QUOTED`]; `None` when none does.
fn mask_bare_input(message: &str) -> Option<String> {
    let line_end = message.find('\n').unwrap_or(message.len());
    let (line, rest) = message.split_at(line_end);
    BARE_INPUT_TEMPLATES.iter().find_map(|template| {
        let masked = fill_template(line, template)?;
        Some(masked + rest)
    })
}

/// `line` with the text that fills each `%s` of `template` replaced by
/// [`QUOTED`], when the template's wording appears in it from the start of
/// a word: `Tag %s invalid` matches `DOMDocument::loadHTML(): Tag svgx
/// invalid in Entity`.
fn fill_template(line: &str, template: &str) -> Option<String> {
    let mut pieces = template.split("%s");
    let head = pieces.next()?;
    let start = line.match_indices(head).map(|(at, _)| at).find(|&at| {
        line[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric())
    })?;
    let mut out = String::with_capacity(line.len());
    out.push_str(&line[..start + head.len()]);
    let mut at = start + head.len();
    for piece in pieces {
        let hole_end = if piece.is_empty() {
            line.len()
        } else {
            at + line[at..].find(piece)?
        };
        if hole_end > at {
            out.push(QUOTED);
        }
        out.push_str(piece);
        at = hole_end + piece.len();
    }
    out.push_str(&line[at..]);
    Some(out)
}

/// Replaces each quoted string by [`QUOTED`]. A quote between two letters
/// (`don't`) quotes nothing.
fn mask_quotes(line: &str) -> String {
    if !line.contains(['"', '\'']) {
        return line.to_string();
    }
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let inside_word = i > 0
            && chars[i - 1].is_ascii_alphanumeric()
            && chars.get(i + 1).is_some_and(char::is_ascii_alphanumeric);
        if (c == '"' || c == '\'') && !inside_word {
            let close = chars[i + 1..].iter().rposition(|&d| d == c);
            out.push(QUOTED);
            i = close.map_or(chars.len(), |at| i + 1 + at + 1);
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Normalizes one space-separated part of the line, `chars`, into `out`;
/// returns whether it was a word after which PHP names a type, class or
/// function.
fn normalize_chunk(chars: &[char], after_naming_word: bool, out: &mut String) -> bool {
    let method = chars.windows(2).any(|w| w == [':', ':'] || w == ['-', '>']);
    if chars.len() <= 1 || method {
        // Two spaces in a row, a lone character, or a method or property.
        push_mask(out);
        return false;
    }
    let mut i = 0;
    let mut first_word = true;
    let mut last_word: &[char] = &[];
    while i < chars.len() {
        let c = chars[i];
        if c == QUOTED {
            push_mask(out);
            i += 1;
        } else if starts_number(chars, i) {
            i = skip_number(chars, i);
            push_mask(out);
        } else if is_word_char(c) {
            let end = word_end(chars, i);
            let word = &chars[i..end];
            if (first_word && after_naming_word) || comes_from_input(word) {
                push_mask(out);
            } else {
                out.extend(word);
            }
            first_word = false;
            last_word = word;
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    let ends_in_punctuation = chars.last().is_some_and(char::is_ascii_punctuation);
    !ends_in_punctuation
        && NAMING_WORDS
            .iter()
            .any(|naming| naming.chars().eq(last_word.iter().copied()))
}

/// Letters, digits, `_`, `\` and `$` make words; so do bytes outside ASCII
/// and control characters, which only the input puts into a message.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '\\' || c == '$' || !c.is_ascii() || c.is_control()
}

/// Past the word starting at `i`; an apostrophe between letters (`Can't`)
/// is part of it.
fn word_end(chars: &[char], i: usize) -> usize {
    let mut j = i;
    while j < chars.len() {
        let apostrophe =
            chars[j] == '\'' && j > i && chars.get(j + 1).is_some_and(char::is_ascii_alphanumeric);
        if !is_word_char(chars[j]) && !apostrophe {
            break;
        }
        j += 1;
    }
    j
}

/// A word PHP took from the input or from the code being run, not from its
/// own wording.
fn comes_from_input(word: &[char]) -> bool {
    let camel_case = word
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    word.len() == 1
        || camel_case
        || word.contains(&'\\')
        || word.iter().any(|c| !c.is_ascii() || c.is_control())
}

/// A number starts here: a digit, or a sign before one that no word precedes.
fn starts_number(chars: &[char], i: usize) -> bool {
    let c = chars[i];
    if c.is_ascii_digit() {
        return i == 0 || !is_word_char(chars[i - 1]);
    }
    (c == '-' || c == '+')
        && chars.get(i + 1).is_some_and(char::is_ascii_digit)
        && (i == 0 || !is_word_char(chars[i - 1]))
}

/// Past the number starting at `i`: its sign, digits, letters (`0x1f`,
/// `1e5`) and dots (`3.25`).
fn skip_number(chars: &[char], mut i: usize) -> usize {
    i += 1;
    while chars
        .get(i)
        .is_some_and(|d| d.is_ascii_alphanumeric() || *d == '.' || *d == '_')
    {
        i += 1;
    }
    i
}

/// One `…` for any run of masked parts.
fn push_mask(out: &mut String) {
    if !out.ends_with(MASK) {
        out.push(MASK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_of_the_input_is_masked_whatever_it_is() {
        let expected = "pack(): Type …: illegal hex digit …";
        for byte in 0..=255u8 {
            if byte.is_ascii_hexdigit() {
                continue;
            }
            let raw = [b"pack(): Type H: illegal hex digit ".as_slice(), &[byte]].concat();
            let message = String::from_utf8_lossy(&raw);
            assert_eq!(
                normalize_message(&message),
                expected,
                "byte {byte:#04x}: {message:?}"
            );
        }
    }

    #[test]
    fn a_key_named_by_the_input_is_masked_whatever_it_holds() {
        let expected = "Undefined array key …";
        for key in [
            r#""abc""#,
            r#""""#,
            r#""rd"ez""#,
            r#""it's""#,
            r#""a b  c""#,
            "\"a\nb\"",
            "\"\"edr\nx\"",
            "\"a\" bc\nd\"",
            r#""\""#,
            "\"\u{fffd}\u{fffd}\"",
            "7",
            "-12",
            "3.25",
        ] {
            let message = format!("Undefined array key {key}");
            assert_eq!(normalize_message(&message), expected, "{message:?}");
        }
    }

    #[test]
    fn numbers_types_and_names_from_the_input_are_masked() {
        assert_eq!(
            normalize_message("Uninitialized string offset 17"),
            normalize_message("Uninitialized string offset -3")
        );
        assert_eq!(
            normalize_message("Trying to access array offset on value of type null"),
            "Trying to access array offset on value of type …"
        );
        assert_eq!(
            normalize_message("Trying to access array offset on value of type bool"),
            normalize_message("Trying to access array offset on value of type int")
        );
        assert_eq!(
            normalize_message("Object of class stdClass could not be converted to string"),
            "Object of class … could not be converted to string"
        );
        assert_eq!(
            normalize_message("Call to undefined method Foo::bar()"),
            "Call to undefined method …"
        );
        assert_eq!(
            normalize_message("Call to undefined function foo()"),
            "Call to undefined function …()"
        );
        assert_eq!(
            normalize_message(r"Class App\Model\User not found"),
            "Class … not found"
        );
        assert_eq!(
            normalize_message("Undefined offset: 12 in 'x'"),
            "Undefined offset: … in …"
        );
    }

    #[test]
    fn phps_own_wording_stays() {
        for message in [
            "A non-numeric value encountered",
            "Array to string conversion",
            "Undefined variable $name",
            "Division by zero",
            "iconv(): Detected an illegal character in input string",
            "the harness died (killed by signal 11 (SIGSEGV))",
            "Can't do that",
        ] {
            let normalized = normalize_message(message);
            assert!(
                normalized
                    .split(['…', ' '])
                    .filter(|w| w.len() > 2)
                    .all(|w| message.contains(w)),
                "{message:?} -> {normalized:?}"
            );
        }
        assert_eq!(
            normalize_message("Undefined variable $name"),
            "Undefined variable $name"
        );
        assert_eq!(normalize_message("Can't do that"), "Can't do that");
        assert_ne!(
            normalize_message("Undefined array key 1"),
            normalize_message("Trying to access array offset on value of type null")
        );
        assert_ne!(
            normalize_message("the harness died (killed by signal 11 (SIGSEGV))"),
            normalize_message("the harness died (killed by signal 9 (SIGKILL))")
        );
    }

    #[test]
    fn libxml_quotes_the_input_bare_and_all_of_it_is_masked() {
        let expected = "… unterminated entity reference …";
        for fifteen_bytes in [
            "               p",
            "           &&&<C",
            "&&svg&&&tarrws=l</",
            "!mlns:tt2h9pnLeftarsonLeftws=\u{fffd}\u{fffd}l</p",
            "ggl/9pwrabggl/9pwrab",
            "t'x\"<head",
            "",
        ] {
            let message =
                format!("DOMXPath::query(): unterminated entity reference {fifteen_bytes}");
            assert_eq!(normalize_message(&message), expected, "{message:?}");
        }
        assert_eq!(
            normalize_message("DOMDocument::loadHTML(): Tag svgx invalid in Entity, line: 3"),
            normalize_message("DOMDocument::loadHTML(): Tag my<tag invalid in Entity, line: 9"),
        );
        assert_eq!(
            normalize_message(
                "DOMDocument::loadXML(): Opening and ending tag mismatch: a line 1 and b"
            ),
            "… Opening and ending tag mismatch: … and …"
        );
        assert_eq!(
            normalize_message("DOMDocument::loadHTML(): Unexpected end tag : p in Entity, line: 1"),
            "… Unexpected end tag … …"
        );
    }

    #[test]
    fn libxml_wording_inside_a_word_or_without_its_tail_is_not_a_template() {
        assert_eq!(
            normalize_message("Preunterminated entity reference abc"),
            "Preunterminated entity reference abc"
        );
        assert_eq!(normalize_message("Tag list is empty"), "Tag list is empty");
    }

    #[test]
    fn only_the_first_line_counts() {
        assert_eq!(normalize_message("line one\nline 2"), "line one");
        assert_eq!(normalize_message("unterminated \"abc"), "unterminated …");
    }
}

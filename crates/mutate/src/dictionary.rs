use std::path::{Path, PathBuf};

/// Tokens to insert into inputs: keywords, delimiters, magic values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dictionary {
    entries: Vec<Vec<u8>>,
}

#[derive(Debug, thiserror::Error)]
pub enum DictionaryError {
    #[error("cannot read dictionary {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: {message}", path.display())]
    Syntax {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

impl From<Vec<Vec<u8>>> for Dictionary {
    /// The words in order, the empty ones and repeats dropped.
    fn from(words: Vec<Vec<u8>>) -> Dictionary {
        let mut seen = std::collections::HashSet::with_capacity(words.len());
        let entries = words
            .into_iter()
            .filter(|w| !w.is_empty() && seen.insert(w.clone()))
            .collect();
        Dictionary { entries }
    }
}

impl Dictionary {
    pub fn new() -> Dictionary {
        Dictionary::default()
    }

    /// Reads a dictionary file in AFL/libFuzzer format.
    pub fn load(path: &Path) -> Result<Dictionary, DictionaryError> {
        let text = std::fs::read(path).map_err(|source| DictionaryError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Dictionary::parse(&text, path)
    }

    /// Parses `text`; `origin` names the file in errors. Each line is blank,
    /// a `#` comment, `"value"` or `name="value"` (`name@level="value"` too),
    /// with `\\`, `\"` and `\xHH` escapes in the value.
    pub fn parse(text: &[u8], origin: &Path) -> Result<Dictionary, DictionaryError> {
        let mut dictionary = Dictionary::new();
        for (index, line) in text.split(|&b| b == b'\n').enumerate() {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let line = line.trim_ascii();
            if line.is_empty() || line[0] == b'#' {
                continue;
            }
            let entry = parse_line(line).map_err(|message| DictionaryError::Syntax {
                path: origin.to_path_buf(),
                line: index + 1,
                message,
            })?;
            dictionary.push(entry);
        }
        Ok(dictionary)
    }

    /// Adds an entry unless it is empty or already there.
    pub fn push(&mut self, entry: Vec<u8>) {
        if !entry.is_empty() && !self.entries.contains(&entry) {
            self.entries.push(entry);
        }
    }

    pub fn extend(&mut self, other: Dictionary) {
        for entry in other.entries {
            self.push(entry);
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entries(&self) -> &[Vec<u8>] {
        &self.entries
    }

    /// The dictionary in AFL/libFuzzer format, one `"value"` a line, bytes
    /// outside printable ASCII (and `"`, `\\`) as `\xHH`: what
    /// [`Dictionary::parse`] reads back.
    pub fn to_text(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for entry in &self.entries {
            out.push(b'"');
            for &b in entry {
                if b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' ' {
                    out.push(b);
                } else {
                    out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
                }
            }
            out.extend_from_slice(b"\"\n");
        }
        out
    }
}

fn parse_line(line: &[u8]) -> Result<Vec<u8>, String> {
    let quote = line
        .iter()
        .position(|&b| b == b'"')
        .ok_or("expected a quoted value, like \"abc\" or name=\"abc\"")?;
    if quote > 0 {
        let name = line[..quote].trim_ascii_end();
        let Some(name) = name.strip_suffix(b"=") else {
            return Err("expected `=` between the name and the quoted value".into());
        };
        let name = name.trim_ascii_end();
        let valid = |b: &u8| b.is_ascii_alphanumeric() || b"_-.@".contains(b);
        if name.is_empty() || !name.iter().all(valid) {
            return Err(format!(
                "invalid entry name `{}`",
                String::from_utf8_lossy(name)
            ));
        }
    }
    let mut value = Vec::new();
    let mut i = quote + 1;
    loop {
        match line.get(i) {
            None => return Err("unterminated quoted value (missing closing \")".into()),
            Some(b'"') => break,
            Some(b'\\') => {
                match line.get(i + 1) {
                    Some(b'\\') => value.push(b'\\'),
                    Some(b'"') => value.push(b'"'),
                    Some(b'x') => {
                        let hex = line
                            .get(i + 2..i + 4)
                            .ok_or("\\x must be followed by two hex digits")?;
                        let text = std::str::from_utf8(hex)
                            .map_err(|_| "\\x must be followed by two hex digits")?;
                        let byte = u8::from_str_radix(text, 16)
                            .map_err(|_| format!("\\x{text} is not a hex byte"))?;
                        value.push(byte);
                        i += 2;
                    }
                    Some(&other) => {
                        return Err(format!(
                            "unknown escape \\{}: use \\\\, \\\" or \\xHH",
                            other as char
                        ));
                    }
                    None => {
                        return Err("unterminated quoted value (line ends in a backslash)".into());
                    }
                }
                i += 2;
            }
            Some(&b) => {
                value.push(b);
                i += 1;
            }
        }
    }
    let rest = &line[i + 1..];
    if !rest.trim_ascii().is_empty() {
        return Err(format!(
            "unexpected text after the closing quote: `{}`",
            String::from_utf8_lossy(rest.trim_ascii())
        ));
    }
    if value.is_empty() {
        return Err("empty value".into());
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Dictionary, DictionaryError> {
        Dictionary::parse(text.as_bytes(), Path::new("test.dict"))
    }

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn reads_both_forms_comments_and_escapes() {
        let dict = parse(
            "# a comment\n\n\"plain\"\nkw_true=\"true\"\nname@2 = \"lvl\"\n  \"\\\\back\\\"quote\"  \nhex=\"\\x00\\xFf\\x41\"\r\n\"plain\"\n",
        )
        .unwrap();
        let entries: Vec<&[u8]> = dict.entries().iter().map(Vec::as_slice).collect();
        assert_eq!(
            entries,
            vec![
                &b"plain"[..],
                b"true",
                b"lvl",
                b"\\back\"quote",
                b"\x00\xffA"
            ]
        );
    }

    #[test]
    fn errors_name_the_file_and_line_and_say_what_is_wrong() {
        assert_eq!(
            error("\"ok\"\n\"unterminated\n"),
            "test.dict:2: unterminated quoted value (missing closing \")"
        );
        assert!(error("# c\nkw=\"a\\q\"").starts_with("test.dict:2: unknown escape \\q"));
        assert_eq!(
            error("\"\\x4"),
            "test.dict:1: \\x must be followed by two hex digits"
        );
        assert!(error("\"\\xZZ\"").contains("\\xZZ is not a hex byte"));
        assert!(error("\n\nkw \"x\"").starts_with("test.dict:3: expected `=`"));
        assert!(
            error("\"a\" trailing")
                .starts_with("test.dict:1: unexpected text after the closing quote")
        );
        assert!(error("bare word").starts_with("test.dict:1: expected a quoted value"));
        assert!(error("b@d!=\"x\"").contains("invalid entry name"));
        assert!(error("\"\"").contains("empty value"));
        assert!(error("\"ends\\").contains("backslash"));
    }

    #[test]
    fn to_text_reads_back_as_the_same_entries() {
        let mut dict = Dictionary::new();
        for entry in [&b"plain word"[..], b"q\"uote\\", b"\x00\xff\n\x89PNG"] {
            dict.push(entry.to_vec());
        }
        let text = dict.to_text();
        assert_eq!(
            String::from_utf8(text.clone()).unwrap(),
            "\"plain word\"\n\"q\\x22uote\\x5c\"\n\"\\x00\\xff\\x0a\\x89PNG\"\n"
        );
        assert_eq!(Dictionary::parse(&text, Path::new("t")).unwrap(), dict);
    }

    #[test]
    fn from_a_word_list_drops_repeats_and_empty_words() {
        let dict = Dictionary::from(vec![
            b"b".to_vec(),
            Vec::new(),
            b"a".to_vec(),
            b"b".to_vec(),
        ]);
        assert_eq!(dict.entries(), [b"b".to_vec(), b"a".to_vec()]);
    }

    #[test]
    fn extend_deduplicates() {
        let mut a = parse("\"x\"\n\"y\"").unwrap();
        a.extend(parse("\"y\"\n\"z\"").unwrap());
        assert_eq!(a.len(), 3);
    }

    #[test]
    fn load_names_an_unreadable_path() {
        let err = Dictionary::load(Path::new("/nonexistent/words.dict"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("/nonexistent/words.dict"), "{err}");
    }
}

//! Helpers shared by the instrumenter's integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use php_fuzz_instrument::{
    Block, BlockIdAllocator, Coverage, Hooks, Instrumented, Outcome, StubStyle, instrument,
};

/// The workspace root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// Instruments `source` with a fresh allocator (ids from 1).
pub fn instrument_fresh(source: &[u8], style: StubStyle) -> Outcome {
    instrument(
        source,
        &mut BlockIdAllocator::new(),
        style,
        Coverage::Full,
        Hooks::Rewrite,
    )
    .expect("ids never run out in a test")
}

pub fn expect_instrumented(source: &[u8], style: StubStyle) -> Instrumented {
    match instrument_fresh(source, style) {
        Outcome::Instrumented(result) => result,
        Outcome::Skipped(reason) => {
            panic!("skipped: {reason}\n{}", String::from_utf8_lossy(source))
        }
    }
}

/// Pruned coverage's blocks are full coverage's, minus some join points and
/// body entries: the same kind, anchor, line and function for each, in
/// the same order. Ids differ (a pruned file takes fewer).
pub fn assert_pruned_subset(full: &[Block], pruned: &[Block], what: &dyn std::fmt::Debug) {
    let key = |b: &Block| (b.kind, b.byte_offset, b.line, b.column, b.function.clone());
    let mut rest = full.iter().map(key);
    for block in pruned {
        let wanted = key(block);
        assert!(
            rest.any(|k| k == wanted),
            "{what:?}: pruned block {block:?} is not a block of full coverage (or out of order)"
        );
    }
    for block in full {
        let kept = pruned.iter().any(|b| b.byte_offset == block.byte_offset);
        assert!(
            kept || Coverage::JOIN_POINTS.contains(&block.kind)
                || Coverage::IMPLIED_ENTRIES.contains(&block.kind),
            "{what:?}: pruned coverage left out {block:?}, which is neither a join point nor a body entry"
        );
    }
}

/// Whether tree-sitter-php parses `source` without ERROR or MISSING nodes.
pub fn parses_cleanly(source: &[u8]) -> bool {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_php::LANGUAGE_PHP.into())
        .expect("grammar loads");
    parser
        .parse(source, None)
        .is_some_and(|tree| !tree.root_node().has_error())
}

/// What instrumentation must never change, whatever the input: line
/// structure, and every original byte, in order. The one rewrite that
/// replaces bytes, of backticks into a double-quoted string for the
/// `shell_exec` hook (docs/detectors.md), is allowed: a backtick may stand
/// as `"`, and the backslash of an escaped backtick may go.
pub fn assert_only_inserted(original: &[u8], output: &[u8]) {
    let count = |bytes: &[u8], b: u8| bytes.iter().filter(|&&x| x == b).count();
    let crlf = |bytes: &[u8]| bytes.windows(2).filter(|w| w == b"\r\n").count();
    assert_eq!(
        count(original, b'\n'),
        count(output, b'\n'),
        "\\n count changed"
    );
    assert_eq!(
        count(original, b'\r'),
        count(output, b'\r'),
        "\\r count changed"
    );
    assert_eq!(crlf(original), crlf(output), "\\r\\n pairs changed");
    let mut rest = output.iter();
    for (at, byte) in original.iter().enumerate() {
        if *byte == b'\\' && original.get(at + 1) == Some(&b'`') {
            continue;
        }
        assert!(
            rest.any(|b| b == byte || (*byte == b'`' && *b == b'"')),
            "original byte {at} ({:?}) is missing from the output",
            *byte as char
        );
    }
}

/// The instrumented text with trace-style stubs abbreviated for review:
/// a counter statement becomes `«N»` (`«N»↺` with the length check of a
/// counter that bounds the trace), a wrapper's opening
/// `traceBlock(«N», ` or `traceTruthy(«N», `, and the call-free record of a
/// short-circuit operand, `) ? (…$trace .= "ID") !== '' : (…$trace .= "ID") === '')`,
/// becomes `) ?«N»)`. Ids are the 4-byte literals the stubs append.
/// Panics on any stub text it does not recognise, so the abbreviation
/// cannot hide one.
pub fn abbreviate(output: &[u8]) -> String {
    const TRACE: &[u8] = br"\PhpFuzz\FuzzingContext::$trace .= ";
    const BOUND: &[u8] =
        br" isset(\PhpFuzz\FuzzingContext::$trace[1048576]) && \PhpFuzz\FuzzingContext::drain();";
    const STUBS: [(&[u8], &[u8], &str, &str); 3] = [
        (TRACE, b";", "«", "»"),
        (br"\PhpFuzz\traceBlock(", b", ", "traceBlock(«", "», "),
        (br"\PhpFuzz\traceTruthy(", b", ", "traceTruthy(«", "», "),
    ];
    let mut text = Vec::new();
    let mut at = 0;
    'bytes: while at < output.len() {
        if let Some(rest) = output[at..].strip_prefix(br") ? (".as_slice())
            && let Some(rest) = rest.strip_prefix(TRACE)
        {
            let (id, literal) = packed_id(rest)
                .unwrap_or_else(|| panic!("malformed condition record at byte {at}"));
            let mut expected = rest[..literal].to_vec();
            expected.extend_from_slice(b") !== '' : (");
            expected.extend_from_slice(TRACE);
            expected.extend_from_slice(&rest[..literal]);
            expected.extend_from_slice(b") === '')");
            assert!(
                rest.starts_with(&expected),
                "malformed condition record at byte {at}"
            );
            text.extend_from_slice(format!(") ?«{id}»)").as_bytes());
            at = output.len() - rest.len() + expected.len();
            continue 'bytes;
        }
        // The check alone, of a bounding counter left out as implied.
        if let Some(after) = output[at..].strip_prefix(&BOUND[1..]) {
            text.extend_from_slice("↺".as_bytes());
            at = output.len() - after.len();
            continue 'bytes;
        }
        for (prefix, suffix, open, close) in STUBS {
            let Some(rest) = output[at..].strip_prefix(prefix) else {
                continue;
            };
            let (id, literal) =
                packed_id(rest).unwrap_or_else(|| panic!("malformed stub at byte {at}"));
            assert!(
                rest[literal..].starts_with(suffix),
                "malformed stub at byte {at}"
            );
            text.extend_from_slice(format!("{open}{id}{close}").as_bytes());
            at = output.len() - rest.len() + literal + suffix.len();
            // A bounding counter's length check (loop bodies, labels, entries).
            if prefix == TRACE
                && let Some(after) = output[at..].strip_prefix(BOUND)
            {
                text.extend_from_slice("↺".as_bytes());
                at = output.len() - after.len();
            }
            continue 'bytes;
        }
        text.push(output[at]);
        at += 1;
    }
    // The detectors' hooks (`\PhpFuzz\Sink\exec(…)`) read `Sink\exec(…)`.
    let text = String::from_utf8_lossy(&text).replace(r"\PhpFuzz\Sink\", r"Sink\");
    assert!(
        !text.contains("PhpFuzz"),
        "unrecognised stub text in:\n{text}"
    );
    text
}

/// A block id written as the stubs write it, `"\xHH\xHH\xHH\xHH"` (4
/// little-endian bytes), at the start of `text`: the id, and the literal's length.
fn packed_id(text: &[u8]) -> Option<(u32, usize)> {
    const LEN: usize = 2 + 4 * 4;
    let literal = text.get(..LEN)?;
    if literal[0] != b'"' || literal[LEN - 1] != b'"' {
        return None;
    }
    let mut bytes = [0u8; 4];
    for (i, byte) in bytes.iter_mut().enumerate() {
        let escape = &literal[1 + 4 * i..5 + 4 * i];
        if &escape[..2] != br"\x" {
            return None;
        }
        *byte = u8::from_str_radix(std::str::from_utf8(&escape[2..]).ok()?, 16).ok()?;
    }
    Some((u32::from_le_bytes(bytes), LEN))
}

/// The `php` binary, or `None` (after saying so loudly) when it is missing.
pub fn php() -> Option<PathBuf> {
    let php = std::env::var_os("PHP_BINARY")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("php"));
    match Command::new(&php).arg("-v").output() {
        Ok(out) if out.status.success() => Some(php),
        _ => {
            eprintln!();
            eprintln!("########################################################################");
            eprintln!(
                "## SKIPPED: no working `{}` found; this test needs the PHP CLI.",
                php.display()
            );
            eprintln!("## Install it (scripts/setup) or set PHP_BINARY. CI always has php.");
            eprintln!("########################################################################");
            None
        }
    }
}

/// Path of the runtime that defines `\PhpFuzz\FuzzingContext` and friends.
pub fn fuzzing_context() -> PathBuf {
    repo_root().join("php-runtime/internal/FuzzingContext.php")
}

/// Path of the runtime that defines `\PhpFuzz\CmpLog`.
pub fn cmplog_runtime() -> PathBuf {
    repo_root().join("php-runtime/internal/CmpLog.php")
}

/// The AST oracle (fixtures/instrument/ast_equivalence.php), or `None`
/// (after saying so loudly) when nikic/PHP-Parser is not installed.
pub fn ast_oracle() -> Option<PathBuf> {
    const AUTOLOAD: &str = "/usr/share/php/PhpParser/autoload.php";
    if Path::new(AUTOLOAD).is_file() {
        return Some(repo_root().join("fixtures/instrument/ast_equivalence.php"));
    }
    eprintln!();
    eprintln!("########################################################################");
    eprintln!("## SKIPPED AST checks: {AUTOLOAD} is missing.");
    eprintln!("## Install the test libraries: scripts/setup --test-libs (CI does).");
    eprintln!("########################################################################");
    None
}

/// Runs the AST oracle on `(original, instrumented)` pairs, spread over
/// all cores; returns its verdict lines ("OK …", "SKIP …", "FAIL …").
pub fn ast_verdicts(
    php: &Path,
    oracle: &Path,
    pairs: &[(PathBuf, PathBuf)],
    work: &Path,
) -> Vec<String> {
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(pairs.len().max(1));
    let chunk = pairs.len().div_ceil(workers).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = pairs
            .chunks(chunk)
            .enumerate()
            .map(|(i, chunk)| {
                let list = work.join(format!("ast-pairs-{i}.txt"));
                let text: String = chunk
                    .iter()
                    .map(|(o, n)| format!("{}\t{}\n", o.display(), n.display()))
                    .collect();
                std::fs::write(&list, text).expect("write pair list");
                scope.spawn(move || {
                    let out = Command::new(php)
                        .arg(oracle)
                        .arg(&list)
                        .output()
                        .expect("run the AST oracle");
                    assert!(
                        out.status.success(),
                        "AST oracle failed: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    String::from_utf8_lossy(&out.stdout)
                        .lines()
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("oracle worker"))
            .collect()
    })
}

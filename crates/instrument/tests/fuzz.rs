//! Fuzzes parse and rewrite: arbitrary bytes, PHP-like token soup, and
//! mutations of valid PHP. Whatever the input, the instrumenter must not
//! panic, must keep every original byte and every line break, and must
//! never turn PHP that tree-sitter accepts into PHP it rejects.
//!
//! Seeded, so a failure reproduces; `PROPTEST_CASES` raises the case count.

mod common;

use common::{assert_only_inserted, parses_cleanly};
use php_fuzz_instrument::{BlockId, Coverage, Outcome, Plan, SkipReason, StubStyle};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestRng, TestRunner};

fn config(default_cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default_cases);
    Config {
        cases,
        rng_seed: RngSeed::Fixed(0x5eed_1a57),
        failure_persistence: None,
        ..Config::default()
    }
}

/// Whether `php -l` accepts `source`; true when there is no php to ask.
fn php_accepts(source: &[u8]) -> bool {
    let Some(php) = common::php() else {
        return true;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("input.php");
    std::fs::write(&file, source).expect("write temp file");
    let status = std::process::Command::new(php)
        .arg("-l")
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run php -l");
    status.success()
}

/// Checks one input against every property; returns whether it was instrumented.
fn check(source: &[u8]) -> bool {
    let plan = match Plan::new(source, Coverage::Full) {
        Ok(plan) => plan,
        Err(SkipReason::ParseError { line }) => {
            assert!(
                !parses_cleanly(source),
                "skipped (line {line}) although tree-sitter parses it"
            );
            let lines = source.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
            assert!(
                (1..=lines).contains(&line),
                "error line {line} outside 1..={lines}"
            );
            return false;
        }
    };
    let first = BlockId(41);
    let trace = plan.render(first, StubStyle::Trace);
    let edges = plan.render(first, StubStyle::EdgeMap);
    assert_eq!(
        trace.blocks, edges.blocks,
        "the block map depends on the stub style"
    );
    for (i, block) in trace.blocks.iter().enumerate() {
        assert_eq!(
            block.id,
            BlockId(first.0 + i as u32),
            "ids are not contiguous in source order"
        );
        assert!(
            block.byte_offset < source.len(),
            "anchor outside the source"
        );
    }
    for pair in trace.blocks.windows(2) {
        assert!(
            pair[0].byte_offset < pair[1].byte_offset,
            "two blocks share or disorder offsets: {pair:?}"
        );
    }
    let pruned = Plan::new(source, Coverage::Pruned)
        .expect("parsed in full coverage")
        .render(first, StubStyle::Trace);
    common::assert_pruned_subset(&trace.blocks, &pruned.blocks, &"mutant");
    for output in [&trace.source, &edges.source, &pruned.source] {
        assert_only_inserted(source, output);
        if parses_cleanly(source) && !parses_cleanly(output) {
            // tree-sitter accepts some code PHP rejects (`yield as`), and
            // then may reject the same code rearranged. Only PHP can say
            // whether the input was PHP.
            assert!(
                !php_accepts(source),
                "instrumenting made tree-sitter reject a valid PHP file:\n--- input\n{}\n--- output\n{}",
                String::from_utf8_lossy(source),
                String::from_utf8_lossy(output)
            );
        }
    }
    // The one-call API agrees with the two halves.
    match common::instrument_fresh(source, StubStyle::Trace) {
        Outcome::Instrumented(one_call) => assert_eq!(one_call.blocks.len(), trace.blocks.len()),
        Outcome::Skipped(reason) => {
            panic!("instrument() skipped what Plan::new accepted: {reason}")
        }
    }
    true
}

/// Valid PHP that exercises every construct the instrumenter touches.
const SNIPPETS: &[&str] = &[
    "<?php\nif ($a) x(); elseif ($b) { y(); } else if ($c) z(); else w();\n",
    "<?php\nwhile ($i--) if ($i % 2) continue; else echo $i;\nfor (;;) break;\ndo $j++; while ($j < 3);\n",
    "<?php\nforeach ($a as $k => &$v): ?>\n<li><?= $v ?: 'none' ?></li>\n<?php endforeach ?>\n",
    "<?php declare(strict_types=1);\nnamespace A\\B;\nuse C\\D;\nfunction f(int $x = 1 ?? 2): ?int { static $s = 3 ?: 4; return $x ?? $s; }\n",
    "<?php\nswitch ($x) { case 1: case 2; a(); break; default: b(); }\nswitch ($y): case 'a': endswitch;\n",
    "<?php\ntry { a(); } catch (A|B $e) { b(); } catch (C) {} finally { c(); }\nL: goto L;\n",
    "<?php\n$f = fn($x) => fn($y) => $x && $y || $x and $y or !$x;\n$g = fn&(array &$a) => $a[0];\n",
    "<?php\nfunction g() { $x = yield; yield $k => $v; $r = yield from h(); return $x ?? $r; }\n",
    "<?php\n$m = match(true) { $a ?: $b => 1, $c, $d => throw new E(), default => $e ? $f : $g };\n",
    "<?php\nclass K { const C = 1 ?? 2; #[A(B ?? C)] public $p = [1] ?: []; function m() { return $this->p ??= 3; } }\n",
    "<html><?php if ($a): ?><b>x</b><?php elseif ($b): ?>y<?php else: ?>z<?php endif; ?></html>\n",
    "<?php function f() { ?>inline<?php } $x or die(\"bye\"); $y || exit(2); ?>\ntrailing html\n",
    "<?php\n$s = \"{$a[$b ?? 0]}\" . <<<EOT\n  {$c[$d ?: 1]}\n  EOT . 'x';\n",
    "<?php\r\nif ($a) {\r\n  b();\r\n}\r\n",
    "<?php\nnamespace X { function f() {} }\nnamespace { if (f()) {} }\n",
    "<?php\necho 1;\n__halt_compiler();\x00\x01 binary ?> <?php { junk",
    "<? short(); ?><?php long(); ?>",
    "<?php\n$o = new class { public function __invoke() { return $this ?? null; } };\n",
];

/// Bits of PHP to splice into snippets or glue into token soup.
const FRAGMENTS: &[&str] = &[
    "<?php ",
    "?>",
    "<?=",
    "<?",
    "\n",
    "\r\n",
    " ",
    "{",
    "}",
    "(",
    ")",
    ";",
    ":",
    ",",
    "if",
    "else",
    "elseif",
    "endif;",
    "while",
    "endwhile;",
    "for",
    "foreach",
    "as",
    "do",
    "switch",
    "case 1:",
    "default:",
    "try",
    "catch (E $e)",
    "finally",
    "function f()",
    "fn() =>",
    "fn&() =>",
    "static",
    "yield",
    "yield from",
    "return",
    "goto L;",
    "L:",
    "$a",
    "$b",
    "1",
    "'s'",
    "\"d{$a}\"",
    "&&",
    "||",
    "and",
    "or",
    "??",
    "??=",
    "?",
    "?:",
    "=>",
    "match($a) {",
    "throw",
    "new E()",
    "exit",
    "die(1)",
    "declare(strict_types=1);",
    "namespace N;",
    "__halt_compiler();",
    "<<<EOT\nx\nEOT",
    "/* c */",
    "// c\n",
    "# c\n",
    "#[A]",
    "class C {",
    "const X = ",
    "\"",
    "'",
    "\\",
    "\x00",
    "\u{e9}",
];

/// Whole statements, valid wherever a statement may start.
const STATEMENTS: &[&str] = &[
    "if ($a) b();\n",
    "if ($a) if ($b) c(); else d();\n",
    "if ($a): ?>html<?php elseif ($b): c(); else: ?><?= $d ?: 'e' ?><?php endif ?>\n",
    "while ($i--) if ($j) continue; else break;\n",
    "for (;;) break;\n",
    "do $k++; while ($k < 3);\n",
    "foreach ($a as $k => $v) foreach ($v as $w) echo $w ?? '';\n",
    "foreach ($a as $v): ?>\n<li><?= $v ?></li>\n<?php endforeach ?>\n",
    "switch ($x) { case 1: case 2; y(); default: }\n",
    "try { a(); } catch (E $e) { b(); } finally { c(); }\n",
    "$x = $a ?: $b ?: $c ?? $d and $e or $f;\n",
    "$f = fn($x) => $x ? yield $x : throw new E();\n",
    "$m = match ($a) { 1, 2 => $b && $c, default => $d ?? exit(1) };\n",
    "return$a ?: $b;\n",
    "echo$a and$b;\n",
    "L: if ($a) goto L;\n",
    "$g = function () use (&$a) { static $s = 1 ?? 2; return $a ??= $s; };\n",
    "class Q { const C = 1 ?: 2; function m($p = [] ?: 1) { return $p ?: $this; } }\n",
    "?>\n<p><?php if ($a) echo 1 ?></p>\n<?php\n",
    "declare(ticks=1) { $t = $a || $b; }\n",
    "assert($a ?? $b ?: fn() => 1);\n",
    "$s = \"{$a[$b ?? 0]}\" . <<<EOT\n{$c[$d ?: 1]}\nEOT;\n",
    "if ($a) while ($b) if ($c) d(); elseif ($e) f(); else g();\n",
];

#[derive(Debug, Clone)]
enum Mutation {
    InsertStatement { line: usize, statement: usize },
    Delete { at: usize, len: usize },
    Insert { at: usize, fragment: usize },
    Duplicate { at: usize, len: usize },
    Flip { at: usize, byte: u8 },
}

fn apply(source: &mut Vec<u8>, mutation: &Mutation) {
    let clamp = |at: usize, len: usize| at % (len + 1);
    match *mutation {
        Mutation::InsertStatement { line, statement } => {
            let starts: Vec<usize> = source
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1)
                .collect();
            if let Some(&at) = starts.get(line % starts.len().max(1)) {
                let text = STATEMENTS[statement % STATEMENTS.len()].as_bytes();
                source.splice(at..at, text.iter().copied());
            }
        }
        Mutation::Delete { at, len } => {
            let at = clamp(at, source.len());
            let end = (at + len).min(source.len());
            source.drain(at..end);
        }
        Mutation::Insert { at, fragment } => {
            let at = clamp(at, source.len());
            let text = FRAGMENTS[fragment % FRAGMENTS.len()].as_bytes();
            source.splice(at..at, text.iter().copied());
        }
        Mutation::Duplicate { at, len } => {
            let at = clamp(at, source.len());
            let end = (at + len).min(source.len());
            let copy = source[at..end].to_vec();
            source.splice(end..end, copy);
        }
        Mutation::Flip { at, byte } => {
            if !source.is_empty() {
                let at = at % source.len();
                source[at] = byte;
            }
        }
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<usize>(), any::<usize>()).prop_map(|(line, statement)| Mutation::InsertStatement { line, statement }),
        1 => (any::<usize>(), 1usize..12).prop_map(|(at, len)| Mutation::Delete { at, len }),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(at, fragment)| Mutation::Insert { at, fragment }),
        1 => (any::<usize>(), 1usize..40).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Flip { at, byte }),
    ]
}

#[test]
fn every_snippet_is_valid_php_to_tree_sitter_and_gets_instrumented() {
    for snippet in SNIPPETS {
        assert!(check(snippet.as_bytes()), "snippet skipped:\n{snippet}");
    }
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        check(&bytes);
    }

    #[test]
    fn arbitrary_bytes_after_an_open_tag(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let mut source = b"<?php\n".to_vec();
        source.extend_from_slice(&bytes);
        check(&source);
    }

    #[test]
    fn php_token_soup(fragments in proptest::collection::vec(0..FRAGMENTS.len(), 0..60)) {
        let mut source = b"<?php ".to_vec();
        for i in fragments {
            source.extend_from_slice(FRAGMENTS[i].as_bytes());
            source.push(b' ');
        }
        check(&source);
    }
}

proptest! {
    #![proptest_config(config(1500))]

    #[test]
    fn mutated_php(snippet in 0..SNIPPETS.len(), mutations in proptest::collection::vec(mutation(), 1..5)) {
        let mut source = SNIPPETS[snippet].as_bytes().to_vec();
        for m in &mutations {
            apply(&mut source, m);
        }
        check(&source);
    }
}

/// Mutants the AST check instruments and compares; `PROPTEST_CASES` scales it.
const AST_MUTANTS: usize = 3000;

/// The strongest check: mutants that PHP-Parser (and so PHP) can parse must
/// keep their AST through instrumentation, stubs stripped. Catches changes
/// of meaning that stay valid PHP, like an `else` moving to another `if`.
#[test]
fn mutated_php_keeps_its_meaning() {
    let (Some(php), Some(oracle)) = (common::php(), common::ast_oracle()) else {
        return;
    };
    let count = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse::<usize>().ok())
        .map_or(AST_MUTANTS, |c| c * 2);
    let mut runner =
        TestRunner::new_with_rng(config(1), TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let strategy = (
        0..SNIPPETS.len(),
        proptest::collection::vec(mutation(), 1..4),
    );
    let work = tempfile::tempdir().expect("temp dir");
    let mut pairs = Vec::new();
    for i in 0..count {
        let (snippet, mutations) = strategy
            .new_tree(&mut runner)
            .expect("generate a mutant")
            .current();
        let mut source = SNIPPETS[snippet].as_bytes().to_vec();
        for m in &mutations {
            apply(&mut source, m);
        }
        let Ok(plan) = Plan::new(&source, Coverage::Full) else {
            continue;
        };
        let original = work.path().join(format!("{i}.php"));
        std::fs::write(&original, &source).expect("write mutant");
        let pruned = Plan::new(&source, Coverage::Pruned).expect("parsed in full coverage");
        for (plan, style, name) in [
            (&plan, StubStyle::Trace, "trace"),
            (&plan, StubStyle::EdgeMap, "edge"),
            (&pruned, StubStyle::Trace, "pruned"),
        ] {
            let copy = work.path().join(format!("{i}.{name}.php"));
            std::fs::write(&copy, plan.render(BlockId(1), style).source)
                .expect("write instrumented mutant");
            pairs.push((original.clone(), copy));
        }
    }
    let verdicts = common::ast_verdicts(&php, &oracle, &pairs, work.path());
    assert_eq!(verdicts.len(), pairs.len(), "the AST oracle dropped pairs");
    let compared = verdicts.iter().filter(|v| !v.starts_with("SKIP ")).count();
    let failed: Vec<String> = verdicts
        .iter()
        .filter(|v| v.starts_with("FAIL "))
        .map(|v| {
            let path = v[5..].split(": ").next().unwrap_or_default();
            format!(
                "{v}\n--- mutant\n{}",
                String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default())
            )
        })
        .collect();
    eprintln!(
        "AST check: {compared} of {} instrumented mutants parse as PHP; {} changed",
        pairs.len(),
        failed.len()
    );
    assert!(
        compared * 4 >= pairs.len(),
        "too few mutants are valid PHP ({compared}) for the check to mean much"
    );
    assert!(
        failed.is_empty(),
        "instrumentation changed the meaning of:\n{}",
        failed.join("\n\n")
    );
}

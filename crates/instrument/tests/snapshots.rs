//! Golden tests: what the instrumenter makes of every construct and every
//! pitfall. Each snapshot holds the input (as its description), the output
//! with trace-style stubs abbreviated (`«7»` is the counter statement of
//! block 7, `traceBlock(«7», …)` its wrapper), and the block map with the
//! source text at each block's anchor.
//!
//! Every case is also checked for what must hold of any output: every
//! original byte kept, in order, with the same line breaks, and valid to
//! tree-sitter if the input was.

mod common;

use std::fmt::Write as _;

use common::{abbreviate, assert_only_inserted, expect_instrumented, parses_cleanly};
use php_fuzz_instrument::{BlockIdAllocator, Coverage, Hooks, Outcome, StubStyle, instrument};

fn report(source: &str) -> String {
    let result = expect_instrumented(source.as_bytes(), StubStyle::Trace);
    describe(source, &result)
}

/// The pruned rendering, its blocks, and the blocks of full coverage that
/// it leaves out.
fn report_pruned(source: &str) -> String {
    let full = expect_instrumented(source.as_bytes(), StubStyle::Trace);
    let pruned = match instrument(
        source.as_bytes(),
        &mut BlockIdAllocator::new(),
        StubStyle::Trace,
        Coverage::Pruned,
        Hooks::Rewrite,
    )
    .expect("ids suffice")
    {
        Outcome::Instrumented(result) => result,
        Outcome::Skipped(reason) => panic!("skipped: {reason}"),
    };
    common::assert_pruned_subset(&full.blocks, &pruned.blocks, &source);
    let mut text = describe(source, &pruned);
    text.push_str("---- left out (full coverage's blocks)\n");
    for block in &full.blocks {
        if !pruned
            .blocks
            .iter()
            .any(|b| b.byte_offset == block.byte_offset)
        {
            describe_block(&mut text, source, block);
        }
    }
    text
}

fn describe(source: &str, result: &php_fuzz_instrument::Instrumented) -> String {
    assert_only_inserted(source.as_bytes(), &result.source);
    if parses_cleanly(source.as_bytes()) {
        assert!(
            parses_cleanly(&result.source),
            "output does not parse:\n{}",
            String::from_utf8_lossy(&result.source)
        );
    }
    let mut text = abbreviate(&result.source);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("---- blocks\n");
    for block in &result.blocks {
        describe_block(&mut text, source, block);
    }
    text
}

fn describe_block(text: &mut String, source: &str, block: &php_fuzz_instrument::Block) {
    let rest = &source.as_bytes()[block.byte_offset..];
    let end = rest
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(rest.len())
        .min(12);
    let _ = writeln!(
        text,
        "{:>3} {:<20} {:>2}:{:<3} {:<14} {}",
        block.id.0,
        format!("{:?}", block.kind),
        block.line,
        block.column,
        format!("{:?}", String::from_utf8_lossy(&rest[..end])),
        block.function.as_deref().unwrap_or("-"),
    );
}

macro_rules! golden {
    ($($name:ident: $source:expr;)*) => {
        $(
            #[test]
            fn $name() {
                let source: &str = $source;
                insta::with_settings!({ description => source, omit_expression => true }, {
                    insta::assert_snapshot!(stringify!($name), report(source));
                });
            }
        )*
    };
}

golden! {
    // ----- file entry -----
    file_entry_after_the_open_tag: "<?php\necho 'hello';\n";
    file_entry_after_strict_types_and_namespace:
        "<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\Http;\n\nuse Foo\\Bar;\n\nfunction handle() {}\n";
    file_entry_in_the_first_braced_namespace:
        "<?php\nnamespace A {\n    function f() {}\n}\nnamespace {\n    A\\f();\n}\n";
    file_entry_after_every_leading_declare:
        "<?php\ndeclare(ticks=1) { tick(); }\n;\nnamespace N;\nrun();\n";
    file_entry_after_leading_html_and_shebang: "#!/usr/bin/env php\n<html>\n<?php\nmain();\n";
    no_file_entry_for_a_template_opening_with_an_echo_tag: "<p><?= $title ?: 'none' ?></p>\n<?php if ($x): ?>x<?php endif ?>\n";
    no_blocks_without_php: "<html>\n  <body>no code</body>\n</html>\n";
    no_blocks_in_an_empty_file: "";
    crlf_line_endings_stay_intact: "<?php\r\nif ($a) {\r\n    b();\r\n}\r\n";

    // ----- functions -----
    function_method_closure_entries: r#"<?php
namespace App;
function top() { return 1; }
abstract class Base {
    abstract public function todo(): void;
    public function run() {
        $f = function () use (&$x) { return $x; };
        $g = static fn($y) => $y * 2;
        return new class { public function inner() {} };
    }
}
interface I { public function m(); }
enum E { case A; public function label(): string { return 'a'; } }
trait T { public static function make() {} }
"#;
    conditional_function_declaration: "<?php\nif (!function_exists('f')) {\n    function f() {}\n}\n";
    property_hooks_php84: r#"<?php
class User {
    public string $name {
        get => strtoupper($this->name);
        set { $this->name = trim($value); }
    }
    public function __construct(public int $age { set => max(0, $value); }) {}
}
"#;

    // ----- branches -----
    if_elseif_else_with_braces: "<?php\nif ($a) {\n    a();\n} elseif ($b) {\n    b();\n} else {\n    c();\n}\nafter();\n";
    if_alternative_syntax: "<?php\nif ($a):\n    a();\nelseif ($b):\n    b();\nelse:\n    c();\nendif;\nafter();\n";
    brace_less_if_counts_after_the_whole_statement: "<?php\nif ($a) x();\nafter();\n";
    brace_less_if_else_on_separate_lines: "<?php\nif ($a)\n    x();\nelse\n    y();\n";
    else_if_chain_is_handled_like_elseif: "<?php\nif ($a) a(); else if ($b) b(); else if ($c) { c(); } else d();\n";
    dangling_else_belongs_to_the_inner_if: "<?php\nif ($a)\n    if ($b) x();\n    else y();\nif ($a) while ($b) if ($c) z(); elseif ($d) w();\n";
    nested_brace_less_bodies: "<?php\nwhile ($a) if ($b) x();\nfor (;;) foreach ($l as $i) if ($i) break 2;\n";
    empty_bodies: "<?php\nif ($a) ; else ;\nwhile ($i--);\nfor (;;) {}\n";
    label_as_a_brace_less_body: "<?php\nif ($a) L: echo 1;\ngoto L;\n";

    // ----- loops -----
    while_loop_body_and_exit: "<?php\nwhile ($a) {\n    $a--;\n}\nwhile ($b) $b--;\nwhile ($c):\n    $c--;\nendwhile;\n";
    do_while_loops: "<?php\ndo {\n    $a--;\n} while ($a);\ndo $b--; while ($b);\n";
    for_loops: "<?php\nfor ($i = 0; $i < 3; $i++) {\n    echo $i;\n}\nfor (;;) break;\nfor ($j = 0; $j < 2; $j++):\n    echo $j;\nendfor;\nfor (;;):\nendfor;\n";
    foreach_loops: "<?php\nforeach ($a as $k => &$v) {\n    $v++;\n}\nforeach ($a as $v) echo $v;\nforeach ($a as [$x, $y]):\n    echo $x;\nendforeach;\n";

    // ----- switch, try, goto -----
    switch_cases_including_empty_fall_through: "<?php\nswitch ($x) {\n    case 1:\n    case 2;\n        a();\n        break;\n    default:\n        b();\n    case 3:\n}\nafter();\n";
    switch_alternative_syntax: "<?php\nswitch ($x):\n    case 'a':\n        a();\nendswitch;\n";
    try_catch_finally: "<?php\ntry {\n    a();\n} catch (A | B $e) {\n    b();\n} catch (C) {\n} finally {\n    c();\n}\nafter();\n";
    goto_labels: "<?php\nstart:\n$i++;\nif ($i < 3) goto start;\nfunction f() { goto end; end: return; }\n";

    // ----- expression-level blocks -----
    short_circuit_operators: "<?php\n$r = $a && $b || $c and $d or $e;\n$s = $a and$b;\n$t = $x || $y = 5;\n";
    coalesce_and_coalesce_assign: "<?php\n$a = $b ?? $c ?? $d;\n$e['k'] ??= make();\n$f = ($g ?? $h) ?? $i;\n";
    ternaries_full_and_short: "<?php\n$a = $b ? $c : $d;\n$e = $f ?: $g;\n$h = $i ?: $j ?: $k;\n$l = $m ? ($n ?: $o) : $p;\nreturn$q ?: $r;\n";
    match_arms: "<?php\n$r = match ($x) {\n    1, 2 => 'low',\n    3 => throw new Exception('three'),\n    default => $y ?? 'other',\n};\n";
    arrow_functions: "<?php\n$f = fn($x) => $x + 1;\n$g = fn($x) => fn($y) => $x + $y;\n$h = static fn(): never => throw new E();\n$r = fn&(array &$a) => $a[0];\n";
    yield_forms: "<?php\nfunction g() {\n    yield;\n    $x = yield $y;\n    yield $k => $v;\n    $r = yield from h();\n    f(yield 1);\n    return (yield) ?? $x;\n}\n$a = fn() => yield 1;\n";
    yield_in_a_by_reference_arrow_function_is_left_alone: "<?php\n$f = fn&() => yield $x;\n";
    exit_and_die_get_their_status_wrapped: "<?php\n$a or die(\"message\");\n$b || exit(2);\n$c ?? exit;\n$d && die();\n";
    throw_expressions_get_their_exception_wrapped: "<?php\n$a = $b ?? throw new E();\n$c = $d ?: throw $e;\n";
    wrappers_inside_string_interpolation: "<?php\n$s = \"{$a[$b ?? 0]}\";\n$t = <<<EOT\n  {$c[$d ?: 1]}\n  EOT;\n$u = $v ?? <<<EOT\n  x\n  EOT;\n";

    // ----- left alone -----
    constant_expressions_are_not_wrapped: r#"<?php
const TOP = A ?? B;
#[Attr(A ?: B)]
class C {
    const K = A ? B : C;
    public $p = A ?? B;
    public function m($x = A ?? B, ...$rest) {
        static $s = A ?: B;
        return $x ?? $s;
    }
}
enum E: int { case A = 1 ?: 2; }
declare(ticks=1);
"#;
    assert_arguments_are_left_alone: "<?php\nassert($a ?? $b);\n\\assert($c ?: fn() => $d && $e);\nnamespace\\assert(function () { if ($x) return 1; });\nsomething_else($a ?? $b);\n";

    // ----- inline HTML -----
    inline_html_with_alternative_syntax: "<ul>\n<?php foreach ($items as $item): ?>\n  <li><?= $item ?: 'none' ?></li>\n<?php endforeach; ?>\n</ul>\n<?php if ($a): ?>\n  <b>x</b>\n<?php elseif ($b): ?>y<?php else: ?>z<?php endif ?>\n";
    close_tag_inside_braces: "<?php function row($r) { ?>\n<tr><?= $r ?></tr>\n<?php } if ($x) { ?>shown<?php } ?>\n";
    close_tag_ends_a_statement: "<?php if ($a) echo 1 ?>\n<?php else echo 2 ?>\n<?php while ($b) $b-- ?>\n";
    short_open_tags_are_not_touched: "<?php $a = 1; ?>\n<? if ($a) { echo $a ?: 'x'; } ?>\n<?php if ($b) { c(); } ?>\n";
    open_tag_without_whitespace_is_html: "<?phpif ($a) { b(); }\n";

    // ----- __halt_compiler -----
    halt_compiler_data_is_untouched: "<?php\nif ($a) { b(); }\n__halt_compiler();<?php if ($c) { d(); } junk {{{";
    halt_compiler_with_a_close_tag: "<?php\n$a ?? $b;\n__halt_compiler() ?>\n<?php $c ?? $d;";
}

/// Pruned coverage (`Coverage::Pruned`): the same constructs without their
/// join points. Everything else is full coverage's, byte for byte.
macro_rules! pruned_golden {
    ($($name:ident: $source:expr;)*) => {
        $(
            #[test]
            fn $name() {
                let source: &str = $source;
                insta::with_settings!({ description => source, omit_expression => true }, {
                    insta::assert_snapshot!(stringify!($name), report_pruned(source));
                });
            }
        )*
    };
}

pruned_golden! {
    pruned_if_elseif_else: "<?php\nif ($a) {\n    a();\n} elseif ($b) {\n    b();\n} else {\n    c();\n}\nafter();\n";
    pruned_brace_less_bodies_keep_their_braces: "<?php\nif ($a) x();\nwhile ($b) $b--;\nif ($a) a(); else if ($b) b(); else c();\nafter();\n";
    pruned_loops: "<?php\nwhile ($a) {\n    $a--;\n}\ndo $b--; while ($b);\nfor ($i = 0; $i < 3; $i++):\n    echo $i;\nendfor;\nforeach ($l as $v) { echo $v; }\n";
    pruned_switch_and_try: "<?php\nswitch ($x) {\n    case 1:\n        a();\n        break;\n    default:\n        b();\n}\ntry {\n    a();\n} catch (E $e) {\n    b();\n} finally {\n    c();\n}\nafter();\n";
    pruned_close_tag_after_a_statement_needs_no_semicolon: "<?php if ($a): ?>x<?php endif ?>\n<?php while ($b) $b-- ?>\n";
    pruned_body_entries_implied_by_an_if_else_try_or_do: r#"<?php
function f($c) {
    $c = trim($c) ?: 'x';
    if ($c === 'a') {
        return 1;
    } elseif ($c === 'b') {
        return 2;
    } else if ($c === 'c') {
        return 3;
    } else {
        return 4;
    }
}
while ($i < $n):
    $c = $s[$i];
    if ($c === ' ' || $c === "	"):
        $i++;
    else:
        break;
    endif;
endwhile;
$g = function () {
    try { a(); } catch (E $e) { do { $e = $e->getPrevious(); } while ($e); }
};
function braceLess($c) {
    if ($c) a(); else b();
}
"#;
    pruned_joins_kept_where_a_condition_skips_every_recorded_block: r#"<?php
function guards(string $input) {
    if (strlen($input) < 12) {
        return;
    }
    $type = substr($input, 4, 4);
    if (crc32($input) !== 7) return;
    switch ($type) {
        case 'IHDR': a(); break;
    }
    foreach ($rows as $row) { b($row); }
    done();
}
"#;
    pruned_body_entries_kept_where_a_run_may_record_nothing_else: r#"<?php
function noElse($c) {
    if ($c) { a(); }
}
function exits($c) {
    $c or exit(1);
    if ($c) { a(); } else { b(); }
}
function generator() {
    yield 1;
    if ($c) { a(); } else { b(); }
}
function label() {
    start:
    if ($c) { a(); } else { b(); }
}
function returns($c) {
    return 1;
    if ($c) { a(); } else { b(); }
}
function html($c) { ?>
    <p><?php if ($c): ?>x<?php else: ?>y<?php endif;
}
"#;
    pruned_nested_functions_and_expressions: "<?php\nfunction f($x) {\n    foreach ($x as $k => $v) {\n        if ($v && $k) {\n            return $v ?? $k;\n        }\n    }\n    return null;\n}\n";
}

#[test]
fn edge_map_style_full_text() {
    let source = "<?php\nif ($a) x();\n$y = $b ?: $c;\n";
    let result = expect_instrumented(source.as_bytes(), StubStyle::EdgeMap);
    insta::with_settings!({ description => source, omit_expression => true }, {
        insta::assert_snapshot!("edge_map_style_full_text", String::from_utf8(result.source).unwrap());
    });
}

#[test]
fn trace_style_full_text() {
    let source = "<?php\nif ($a) x();\n$y = $b ?: $c;\n";
    let result = expect_instrumented(source.as_bytes(), StubStyle::Trace);
    insta::with_settings!({ description => source, omit_expression => true }, {
        insta::assert_snapshot!("trace_style_full_text", String::from_utf8(result.source).unwrap());
    });
}

#[test]
fn files_tree_sitter_cannot_parse_are_skipped_with_the_first_error_line() {
    for (source, line) in [
        ("<?php\n\nfunction f( {\n", 3),
        ("<?php\necho 1;\nif ($a) {\n", 3),
        ("<?php\n$x = ;\n", 2),
    ] {
        match instrument(
            source.as_bytes(),
            &mut BlockIdAllocator::new(),
            StubStyle::Trace,
            Coverage::Full,
            Hooks::Rewrite,
        )
        .unwrap()
        {
            Outcome::Skipped(reason) => {
                assert_eq!(
                    reason,
                    php_fuzz_instrument::SkipReason::ParseError { line },
                    "{source:?}"
                );
                assert!(reason.to_string().contains(&format!("line {line}")));
            }
            Outcome::Instrumented(_) => {
                panic!("instrumented a file with a parse error: {source:?}")
            }
        }
    }
}

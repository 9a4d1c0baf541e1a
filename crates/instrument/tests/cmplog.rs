//! Golden tests of the `cmplog` rendering: which comparisons get logged,
//! how, and the dictionary taken from the source. Coverage stubs are
//! abbreviated as in `snapshots.rs`; `CmpLog::NAME(SITE, …)` stands for
//! `\PhpFuzz\CmpLog::NAME(SITE, …)`. The dictionary lists each entry as
//! escaped bytes.
//!
//! Every case must keep every original byte and line break, and parse.

mod common;

use std::fmt::Write as _;

use common::{abbreviate, assert_only_inserted, parses_cleanly};
use php_fuzz_instrument::{BlockId, Coverage, Plan, StubStyle};

fn report(source: &str) -> String {
    let plan = Plan::new(source.as_bytes(), Coverage::Full).expect("parses");
    let result = plan.render_cmplog(BlockId(1), 1, StubStyle::Trace);
    assert_only_inserted(source.as_bytes(), &result.source);
    assert!(
        parses_cleanly(&result.source),
        "output does not parse:\n{}",
        String::from_utf8_lossy(&result.source)
    );
    assert_eq!(
        result.blocks,
        plan.render(BlockId(1), StubStyle::Trace).blocks,
        "the cmplog rendering has the coverage rendering's blocks"
    );
    let shortened =
        String::from_utf8_lossy(&result.source).replace(r"\PhpFuzz\CmpLog::", "CmpLog::");
    let mut text = abbreviate(shortened.as_bytes());
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let _ = writeln!(text, "---- {} sites; dictionary", result.comparison_sites);
    for literal in &result.comparison_literals {
        let _ = writeln!(text, "{}", literal.escape_ascii());
    }
    text
}

macro_rules! golden {
    ($($name:ident: $source:expr;)*) => {
        $(
            #[test]
            fn $name() {
                let source: &str = $source;
                insta::with_settings!({ description => source, omit_expression => true }, {
                    insta::assert_snapshot!(report(source));
                });
            }
        )*
    };
}

golden! {
    operators_with_a_literal_repeat_it_and_others_hold_the_left_operand: r#"<?php
if ($tag === 'IHDR' || 'PLTE' == $tag) { ok(); }
if ($n < 0x10 && $a <=> $b) {}
$same = f($x) !== g($y);
$const = 1 === 2;
$nothing = $x === null || $y != true;
"#;
    switch_subject_against_literal_cases_other_cases_wrapped: r#"<?php
switch (strtolower($t)) {
    case 'gif':
    case 'png';
        image();
    case self::JPEG:
        break;
    case -1:
    default:
}
switch (true) { case $a > 1: break; }
"#;
    match_subject_against_conditions: r#"<?php
$r = match ($cmd) {
    'get', "put\n" => 1,
    Verb::DELETE => 2,
    default => 3,
};
"#;
    string_functions_and_lookups: r#"<?php
namespace App;
if (strcmp($a, "MAGIC\x00") === 0) {}
if (\strncasecmp('GIF', $h, 3) == 0 && str_starts_with($h, 'GIF8')) {}
if (str_contains($body, '<?xml') || stripos($body, 'DOCTYPE') !== false) {}
if (in_array($ext, ['jpg', 'jpeg'], true) || array_key_exists($k, self::MAP)) {}
if (hash_equals($known, $given) || Other\strcmp($a, 'x')) {}
strcmp(string1: $a, string2: 'b'); strcmp(...$both); $f = strcmp(...);
preg_match('/^(?:BEGIN|END) [A-Z]{2,}\.txt$/i', $line);
$map = ['alpha' => 1, 'bravo' => 2, 3 => 'c'];
const MAGIC = 0x89504E47;
"#;
    nothing_is_logged_in_constant_expressions_or_assert: r#"<?php
class A {
    const B = PHP_INT_SIZE > 4;
    public function f($x = PHP_EOL === "\n") { assert($x === 'y'); }
}
"#;
    literals_with_line_breaks_are_not_repeated: r#"<?php
if ($a === 'one
two') {}
switch ($b) { case "x
y": case 'z': }
"#;
    lookups_in_class_constants_log_the_key: r#"<?php
class Router {
    private const ROUTES = ['list' => 1, 'show' => 2];
    function route($path, $map) {
        $a = self::ROUTES[$path] ?? null;
        $b = isset(static::ROUTES[strtolower($path)]);
        $c = $map[$path] ?? self::ROUTES['list'];
        $d = $obj::ROUTES[$path];
    }
}
"#;
    wrappers_nest_inside_coverage_wrappers: r#"<?php
$r = $a ?? $b === 'c';
$s = $x ? $y : $z == 1;
$f = fn($v) => $v > 10;
function g() { $got = yield; return (yield $got) !== 'stop'; }
"#;
}

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::roles::is_global_name;
use super::*;
use crate::{FragmentPool, GrammarMutation, GrammarMutator, InputParser, Sources};

/// Fusions of random pairs of real files in the big test.
const FUSIONS: usize = 200;

fn php() -> Grammar {
    Grammar::load("php").unwrap()
}

/// The real programs: PHP-Parser's own files of at most [`MAX_INPUT`]
/// bytes (Debian's php-parser, /usr/share/php/PhpParser) and the seeds of
/// its fixture target. None, loudly, when the library is not installed
/// (outside CI; in CI that is a failure).
fn real_programs(parser: &mut InputParser) -> Option<Vec<ParsedInput>> {
    let library = Path::new("/usr/share/php/PhpParser");
    if !library.is_dir() {
        let message = format!(
            "{} is missing: run `scripts/setup --test-libs`",
            library.display()
        );
        if std::env::var_os("CI").is_some() {
            panic!("{message}");
        }
        eprintln!("SKIPPED (not in CI): {message}");
        return None;
    }
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/real/php-parser/seeds");
    let mut files = Vec::new();
    collect_php_files(library, &mut files);
    collect_php_files(&seeds, &mut files);
    files.sort();
    let programs: Vec<_> = files
        .iter()
        .filter(|f| std::fs::metadata(f).is_ok_and(|m| m.len() as usize <= MAX_INPUT))
        .map(|f| parser.parse(&std::fs::read(f).unwrap()))
        .filter(|p| !p.has_error())
        .collect();
    assert!(programs.len() >= 100, "only {} programs", programs.len());
    Some(programs)
}

fn collect_php_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_php_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "php") {
            files.push(path);
        }
    }
}

/// The fused program, parsed, with helpers to look at it.
struct Checked<'a> {
    grammar: &'a Grammar,
    tree: ParsedInput,
}

impl Checked<'_> {
    fn kind(&self, index: u32) -> &'static str {
        self.grammar.kind_name(self.tree.node(index).kind)
    }

    fn parent_kind(&self, index: u32) -> &'static str {
        match self.tree.node(index).parent {
            NONE => "",
            parent => self.kind(parent),
        }
    }

    /// The named node of `kind` exactly at `range`.
    fn node_at(&self, kind: &str, range: &Range<usize>) -> Option<u32> {
        (0..self.tree.nodes().len() as u32).find(|&i| {
            let node = self.tree.node(i);
            self.kind(i) == kind
                && node.start as usize == range.start
                && node.end as usize == range.end
        })
    }

    /// The nearest function, method or closure around `index` that starts
    /// before `before` (the scope a splice landed in), or the root.
    fn scope_before(&self, index: u32, before: usize) -> u32 {
        let mut at = self.tree.node(index).parent;
        while at != NONE {
            let node = self.tree.node(at);
            let function = matches!(
                self.kind(at),
                "function_definition"
                    | "method_declaration"
                    | "anonymous_function"
                    | "arrow_function"
            );
            if function && (node.start as usize) < before {
                return at;
            }
            at = node.parent;
        }
        0
    }

    fn variables_in(&self, range: &Range<usize>) -> Vec<u32> {
        (0..self.tree.nodes().len() as u32)
            .filter(|&i| {
                let node = self.tree.node(i);
                self.kind(i) == "variable_name"
                    && range.start <= node.start as usize
                    && node.end as usize <= range.end
            })
            .collect()
    }
}

/// Everything a fusion promises, checked on the re-parsed fused program.
fn check_fused(grammar: &Grammar, a: &ParsedInput, b: &ParsedInput, out: &[u8], fused: &Fused) {
    let show = || String::from_utf8_lossy(out).into_owned();
    let checked = Checked {
        grammar,
        tree: InputParser::new(grammar).parse(out),
    };
    assert!(
        !checked.tree.has_error(),
        "the fused program does not parse:\n{}",
        show()
    );
    // The dataflow link: the first program's variable, at its definition,
    // is read where the partner's use was, after the definition.
    let variable = &out[fused.variable.clone()];
    let defined = checked.node_at("variable_name", &fused.variable);
    assert!(
        defined.is_some(),
        "no variable at {:?}:\n{}",
        fused.variable,
        show()
    );
    assert_eq!(&out[fused.link.clone()], variable, "{}", show());
    let link = checked.node_at("variable_name", &fused.link);
    let link = link.unwrap_or_else(|| panic!("the link is no variable:\n{}", show()));
    assert!(fused.variable.end <= fused.link.start, "{}", show());
    let statements = &fused.statements;
    assert!(statements.start <= fused.link.start && fused.link.end <= statements.end);
    assert!(fused.variable.end <= statements.start, "{}", show());
    let defined = defined.unwrap();
    assert_eq!(
        checked.scope_before(link, statements.start),
        checked.scope_before(defined, statements.start),
        "the splice is not in the definition's scope:\n{}",
        show()
    );
    check_renamed_apart(&checked, a, b, out, fused);
    check_placement(&checked, out, fused, defined);
}

/// Every variable the partner brought is renamed apart (it ends with the
/// suffix, which the first program holds nowhere) or is one that is never
/// renamed: the link, `$this` and superglobals, a property's name (a
/// promoted constructor parameter's too).
fn check_renamed_apart(
    checked: &Checked<'_>,
    a: &ParsedInput,
    b: &ParsedInput,
    out: &[u8],
    fused: &Fused,
) {
    let promoted: Vec<&[u8]> = b
        .identifiers()
        .iter()
        .filter(|&&v| {
            let parent = b.node(v).parent;
            checked.grammar.kind_name(b.node(parent).kind) == "property_promotion_parameter"
        })
        .map(|&v| b.text(v))
        .collect();
    let contains = |data: &[u8], what: &[u8]| data.windows(what.len()).any(|w| w == what);
    assert!(!contains(a.data(), &fused.suffix));
    let inserted = [
        Some(&fused.statements),
        fused.hoisted.as_ref(),
        fused.method.as_ref(),
    ];
    for range in inserted.into_iter().flatten() {
        for variable in checked.variables_in(range) {
            let name = checked.tree.text(variable);
            let node = checked.tree.node(variable);
            let kept = node.start as usize == fused.link.start
                || is_global_name(name)
                || promoted.contains(&name)
                || matches!(
                    checked.parent_kind(variable),
                    "scoped_property_access_expression"
                        | "property_element"
                        | "property_promotion_parameter"
                );
            assert!(
                kept || name.ends_with(&fused.suffix),
                "{} is not renamed apart:\n{}",
                String::from_utf8_lossy(name),
                String::from_utf8_lossy(out)
            );
        }
    }
}

/// Declarations that moved are top-level; a method is in a class (the one
/// whose method defines the variable), and the call names it.
fn check_placement(checked: &Checked<'_>, out: &[u8], fused: &Fused, defined: u32) {
    let tree = &checked.tree;
    for index in 0..tree.nodes().len() as u32 {
        if checked.kind(index) == "method_declaration" {
            let list = checked.parent_kind(index);
            let in_class = matches!(list, "declaration_list" | "enum_declaration_list");
            assert!(
                in_class,
                "a method in a {list}:\n{}",
                String::from_utf8_lossy(out)
            );
        }
    }
    if let Some(hoisted) = &fused.hoisted {
        for index in 0..tree.nodes().len() as u32 {
            let node = tree.node(index);
            let declaration = matches!(
                checked.kind(index),
                "function_definition" | "class_declaration"
            );
            if declaration
                && hoisted.start < node.start as usize
                && node.end as usize <= hoisted.end
            {
                let parent = node.parent;
                let top = checked.kind(parent) == "program"
                    || checked.parent_kind(parent) == "namespace_definition";
                assert!(
                    top,
                    "a moved declaration is not top-level:\n{}",
                    String::from_utf8_lossy(out)
                );
            }
        }
    }
    let Some(method) = &fused.method else {
        return;
    };
    let text = &out[method.start + 1..method.end];
    let declared = checked
        .node_at("method_declaration", &(method.start + 1..method.end))
        .unwrap_or_else(|| panic!("no method at {method:?}:\n{}", String::from_utf8_lossy(out)));
    let name = child_in_field(tree, declared, Roles::new(checked.grammar.language()).name).unwrap();
    let mut method_of_definition = defined;
    while checked.kind(method_of_definition) != "method_declaration" {
        method_of_definition = tree.node(method_of_definition).parent;
    }
    assert_eq!(
        tree.node(declared).parent,
        tree.node(method_of_definition).parent,
        "the method is not in the definition's class:\n{}",
        String::from_utf8_lossy(out)
    );
    let call = String::from_utf8_lossy(&out[fused.statements.clone()]).into_owned();
    let called = format!("{}(", String::from_utf8_lossy(tree.text(name)));
    assert!(
        call.contains(&called),
        "{call} does not call {}",
        String::from_utf8_lossy(text)
    );
}

#[test]
fn fusions_of_real_php_files_parse_and_link_the_dataflow() {
    let grammar = php();
    let mut parser = InputParser::new(&grammar);
    let Some(programs) = real_programs(&mut parser) else {
        return;
    };
    let mut fuser = Fuser::new(&grammar).unwrap();
    // Fusion needs a variable defined in the first program (an interface
    // has none): those are the first programs; any program is a partner.
    let defining: Vec<_> = programs
        .iter()
        .filter(|p| {
            p.identifiers()
                .iter()
                .any(|&v| fuser.insertion_after(p, v).is_some())
        })
        .collect();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(33);
    let mut out = Vec::new();
    let (mut made, mut members, mut hoisted) = (0, 0, 0);
    let started = Instant::now();
    let mut spent = std::time::Duration::ZERO;
    for _ in 0..FUSIONS {
        let a = &defining[rng.random_range(0..defining.len())];
        let b = &programs[rng.random_range(0..programs.len())];
        let call = Instant::now();
        let fused = fuser.fuse(&mut rng, a, b, 1 << 20, &mut out);
        spent += call.elapsed();
        if !fused {
            continue;
        }
        made += 1;
        members += usize::from(fuser.last().method.is_some());
        hoisted += usize::from(fuser.last().hoisted.is_some());
        check_fused(&grammar, a, b, &out, fuser.last());
    }
    println!(
        "{made} of {FUSIONS} fusions made ({members} member, {hoisted} with declarations moved) \
         into {} programs that define a variable, of {}; {:.0} µs a call; {:.1} s in all",
        defining.len(),
        programs.len(),
        spent.as_secs_f64() * 1e6 / FUSIONS as f64,
        started.elapsed().as_secs_f64()
    );
    assert!(made * 100 >= FUSIONS * 60, "{made} of {FUSIONS}");
    // Declarations moved are rare among real files (1 in 200 with this
    // seed): the small programs below show them.
    assert!(members >= 5, "{members} member fusions");
}

/// Outputs of fusing `b` into `a` under seeds 0..n.
fn fusions(a: &str, b: &str, n: u64) -> BTreeSet<String> {
    let grammar = php();
    let mut parser = InputParser::new(&grammar);
    let (a, b) = (parser.parse(a.as_bytes()), parser.parse(b.as_bytes()));
    let mut fuser = Fuser::new(&grammar).unwrap();
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for seed in 0..n {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        if fuser.fuse(&mut rng, &a, &b, 1 << 20, &mut out) {
            check_fused(&grammar, &a, &b, &out, fuser.last());
            seen.insert(String::from_utf8(out.clone()).unwrap());
        }
    }
    seen
}

#[test]
fn the_partners_use_reads_the_first_programs_variable() {
    let seen = fusions(
        "<?php\n$x = 1;\necho $x;\n",
        "<?php\n$y = 2;\nfoo($y, \"y=$y\");\n",
        60,
    );
    let expected: BTreeSet<String> = [
        "<?php\n$x = 1;\nfoo($x, \"y=$y_f1\");\necho $x;\n",
        "<?php\n$x = 1;\n$y_f1 = 2;\nfoo($x, \"y=$y_f1\");\necho $x;\n",
        "<?php\n$x = 1;\nfoo($y_f1, \"y=$x\");\necho $x;\n",
        "<?php\n$x = 1;\n$y_f1 = 2;\nfoo($y_f1, \"y=$x\");\necho $x;\n",
        "<?php\n$x = 1;\nfoo($y_f1, $x);\necho $x;\n",
        "<?php\n$x = 1;\n$y_f1 = 2;\nfoo($y_f1, $x);\necho $x;\n",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(seen, expected);
}

#[test]
fn a_method_joins_a_class_and_is_called_with_the_variable() {
    let a = "<?php\nclass A {\n    public function run($input) {\n        $n = strlen($input);\n        return $n;\n    }\n}\n";
    let b = "<?php\nclass B {\n    public function run($s) {\n        $t = trim($s);\n        return $t . $this->x;\n    }\n}\n";
    let method = "public function run_f1($s_f1) {\n        $t_f1 = trim($s_f1);\n        return $t_f1 . $this->x;\n    }";
    let after_n = format!(
        "<?php\nclass A {{\n    public function run($input) {{\n        $n = strlen($input);\n$this->run_f1($n);\n        return $n;\n    }}\n{method}\n}}\n"
    );
    let after_input = format!(
        "<?php\nclass A {{\n    public function run($input) {{\n$this->run_f1($input);\n        $n = strlen($input);\n        return $n;\n    }}\n{method}\n}}\n"
    );
    let seen = fusions(a, b, 80);
    let members: Vec<_> = seen
        .iter()
        .filter(|s| s.contains("function run_f1"))
        .collect();
    assert_eq!(members.len(), 2, "{seen:#?}");
    assert!(
        members.contains(&&after_n) && members.contains(&&after_input),
        "{seen:#?}"
    );
    // The others spliced the method's statements into A's method body.
    assert!(
        seen.iter().any(|s| s.contains("$t_f1 = trim($n);")),
        "{seen:#?}"
    );
}

#[test]
fn declarations_move_to_the_top_level_and_superglobals_keep_their_names() {
    let a = "<?php\nnamespace N {\nfunction f() {\n    $a = 1;\n    return $a;\n}\n}\n";
    let b = "<?php\nfunction g($p) { return $p; }\n$v = $_GET['x'];\ng($v);\n";
    let seen = fusions(a, b, 80);
    let moved: Vec<_> = seen.iter().filter(|s| s.contains("function g(")).collect();
    assert!(!moved.is_empty(), "{seen:#?}");
    for fused in moved {
        assert!(
            fused.contains("}\nfunction g($p_f1) { return $p_f1; }\n}\n"),
            "{fused}"
        );
    }
    assert!(
        seen.iter()
            .any(|s| s.contains("$v_f1 = $_GET['x'];\ng($a);")),
        "{seen:#?}"
    );
}

#[test]
fn inputs_that_are_long_or_broken_are_left_alone() {
    let grammar = php();
    let mut parser = InputParser::new(&grammar);
    let b = parser.parse(b"<?php $y = 2; foo($y);");
    let mut fuser = Fuser::new(&grammar).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(33);
    let mut out = b"untouched".to_vec();
    let long = format!("<?php $x = 1; {}", "echo $x;\n".repeat(MAX_INPUT / 9));
    for a in ["<?php $x = 1; if (", long.as_str()] {
        let a = parser.parse(a.as_bytes());
        assert!((0..20).all(|_| !fuser.fuse(&mut rng, &a, &b, 1 << 20, &mut out)));
    }
    let a = parser.parse(b"<?php $x = 1; echo $x;");
    assert!(!fuser.fuse(&mut rng, &a, &b, a.data().len() + 3, &mut out));
    assert_eq!(out, b"untouched");
    assert!(Fuser::new(&Grammar::load("json").unwrap()).is_none());
}

#[test]
fn the_mutator_draws_fusion_only_when_enabled() {
    let grammar = php();
    let mut parser = InputParser::new(&grammar);
    let a = parser.parse(b"<?php\n$x = 1;\necho $x;\n");
    let b = parser.parse(b"<?php\n$y = 2;\nfoo($y);\n");
    let pool = FragmentPool::default();
    let sources = Sources {
        input: &a,
        partner: Some(&b),
        pool: &pool,
    };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let mut out = Vec::new();
    let mut count = |mutator: &mut GrammarMutator| {
        (0..400)
            .filter(|_| {
                mutator.mutate(&mut rng, sources, 4096, &mut out) == Some(GrammarMutation::Fusion)
            })
            .count()
    };
    let mut off = GrammarMutator::new(true);
    assert_eq!(count(&mut off), 0);
    assert_eq!(off.take_fusion_counts(), (0, 0));
    let mut on = GrammarMutator::new(true);
    assert!(on.enable_fusion(&grammar));
    let made = count(&mut on);
    assert!(made > 10, "{made}");
    let (tried, counted) = on.take_fusion_counts();
    assert!(
        counted == made as u64 && tried >= counted,
        "{tried} {counted} {made}"
    );
    assert!(!GrammarMutator::new(false).enable_fusion(&Grammar::load("json").unwrap()));
}

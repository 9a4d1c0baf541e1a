//! Instruments every `.php` file under /usr/share/php (Debian's PHP
//! libraries, installed by `scripts/setup --test-libs`) in both stub styles,
//! in the `cmplog` rendering (comparisons logged), and in pruned coverage,
//! whose blocks must be a subset of full coverage's.
//! Each instrumented file must have the original's line count, must
//! compile (what `php -l` checks; see [`Linter`]) exactly when the original
//! does, and (stubs stripped) must have the original's AST as
//! nikic/PHP-Parser reads it.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::assert_only_inserted;
use php_fuzz_instrument::{
    BlockIdAllocator, Coverage, Hooks, Outcome, Plan, SkipReason, StubStyle, instrument,
};

const LIBRARY_ROOT: &str = "/usr/share/php";
/// Fewer files than this means the test libraries are not installed.
const MIN_FILES: usize = 500;

fn php_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => dirs.push(path),
                Ok(_) if path.extension().is_some_and(|e| e == "php") && path.is_file() => {
                    files.push(path)
                }
                _ => {}
            }
        }
    }
    files.sort();
    files
}

/// Compiles files as `php -l` does, without running them, in one `php`
/// process instead of one per file (13,000 files: minutes of process
/// start-ups). `opcache_compile_file()` runs PHP's compiler on a file and
/// returns false on a parse or compile error, as `php -l` fails. One
/// difference: opcache binds classes to their parents when they are
/// declared, not while compiling, so a class extending a final class of the
/// same file compiles here; instrumentation adds statements only, never
/// moves a declaration, so it cannot change that verdict. Debian's `php`
/// (php8.2-cli) depends on php8.2-opcache.
struct Linter {
    php: PathBuf,
    process: Option<LintProcess>,
}

struct LintProcess {
    child: Child,
    paths: ChildStdin,
    verdicts: BufReader<ChildStdout>,
}

const LINT_LOOP: &str = r#"while (($path = fgets(STDIN)) !== false) {
    try { $ok = opcache_compile_file(rtrim($path, "\n")); } catch (\Throwable $e) { $ok = false; }
    echo $ok ? "1\n" : "0\n";
}"#;

impl Linter {
    fn new(php: &Path) -> Self {
        Linter {
            php: php.to_path_buf(),
            process: None,
        }
    }

    /// Whether `file` compiles. Only a fresh process says no: the files
    /// compiled before declared their top-level functions, so a second
    /// rendering of a file declaring `f()` fails (`Cannot redeclare`) where
    /// `php -l` alone passes it. A process that said no is not reused
    /// either: a compile error unwinds PHP's compiler, whatever state it
    /// leaves.
    fn lints(&mut self, file: &Path) -> bool {
        let fresh = self.process.is_none();
        let process = self
            .process
            .get_or_insert_with(|| LintProcess::start(&self.php));
        writeln!(process.paths, "{}", file.display()).expect("send a path to the linter");
        let mut verdict = String::new();
        process
            .verdicts
            .read_line(&mut verdict)
            .expect("read the linter's verdict");
        let ok = match verdict.as_str() {
            "1\n" => true,
            "0\n" => false,
            other => panic!("the linter said {other:?} about {}", file.display()),
        };
        if !ok {
            self.process.take().expect("started").stop();
            if !fresh {
                return self.lints(file);
            }
        }
        ok
    }
}

impl LintProcess {
    /// `php` with Debian's defaults that matter to parsing and opcache
    /// only: no other extension (linting needs none) and no output but the
    /// verdicts.
    fn start(php: &Path) -> Self {
        let mut child = Command::new(php)
            .args([
                "-n",
                "-d",
                "zend_extension=opcache",
                "-d",
                "opcache.enable_cli=1",
            ])
            .args([
                "-d",
                "short_open_tag=0",
                "-d",
                "display_errors=0",
                "-r",
                LINT_LOOP,
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start php for linting");
        let paths = child.stdin.take().expect("piped stdin");
        let verdicts = BufReader::new(child.stdout.take().expect("piped stdout"));
        LintProcess {
            child,
            paths,
            verdicts,
        }
    }

    /// Ends the process; its status says nothing (PHP exits with 255 once
    /// a compile error unwound it, even a caught one).
    fn stop(mut self) {
        drop(self.paths);
        self.child.wait().expect("wait for the linter");
    }
}

#[test]
fn the_linter_says_what_php_l_says() {
    let Some(php) = common::php() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut linter = Linter::new(&php);
    let cases: [(&str, &str); 6] = [
        ("<?php\necho 1;\n", "compiles"),
        ("<?php\nfunction f() { return 1 }\n", "parse error"),
        ("<?php\necho 1;\nnamespace A;\n", "namespace not first"),
        (
            "<?php\nclass B { function f() {} function f() {} }\n",
            "method declared twice",
        ),
        (
            "<?php\n$a = 1;\ndeclare(strict_types=1);\n",
            "declare not first",
        ),
        ("<?php\n[] = $x;\n", "empty list assignment"),
    ];
    // Two renderings of one file declare the same function.
    for n in 0..2 {
        let path = dir.path().join(format!("function-{n}.php"));
        std::fs::write(&path, "<?php\nfunction f() {}\n").expect("write case");
        assert!(linter.lints(&path), "rendering {n} of a file declaring f()");
    }
    for (n, (code, what)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("case-{n}.php"));
        std::fs::write(&path, code).expect("write case");
        let php_l = Command::new(&php)
            .args(["-n", "-l"])
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run php -l")
            .success();
        assert_eq!(linter.lints(&path), php_l, "{what}: {code:?}");
        assert_eq!(php_l, n == 0, "{what}: php -l");
    }
}

struct Checked {
    relative: PathBuf,
    original: bool,
    trace: bool,
    edge_map: bool,
    cmplog: bool,
    pruned: bool,
}

const RENDERINGS: [&str; 4] = ["trace", "edge-map", "cmplog", "pruned"];

#[test]
fn every_debian_php_library_file_stays_valid_php_with_the_same_lines() {
    let Some(php) = common::php() else { return };
    let root = Path::new(LIBRARY_ROOT);
    let files = php_files(root);
    assert!(
        files.len() >= MIN_FILES,
        "found {} .php files under {LIBRARY_ROOT}, expected at least {MIN_FILES}: run `scripts/setup --test-libs`",
        files.len()
    );

    let out = tempfile::tempdir().expect("temp dir");
    let mut ids = BlockIdAllocator::new();
    let mut jobs = Vec::new();
    let mut skipped = Vec::new();
    let mut blocks = 0usize;
    let mut pruned_blocks = 0usize;
    let mut sites = 0usize;
    let mut literals = 0usize;
    let mut bytes = 0usize;
    for file in &files {
        let source = std::fs::read(file).expect("read library file");
        bytes += source.len();
        let relative = file.strip_prefix(root).expect("under root").to_path_buf();
        let trace = match instrument(
            &source,
            &mut ids,
            StubStyle::Trace,
            Coverage::Full,
            Hooks::Rewrite,
        )
        .expect("ids suffice")
        {
            Outcome::Instrumented(result) => result,
            Outcome::Skipped(SkipReason::ParseError { line }) => {
                skipped.push(format!("{}:{line}", file.display()));
                continue;
            }
        };
        let first = trace
            .blocks
            .first()
            .map(|b| b.id)
            .unwrap_or(php_fuzz_instrument::BlockId(1));
        let plan = Plan::new(&source, Coverage::Full).expect("parsed before");
        let edge_map = plan.render(first, StubStyle::EdgeMap);
        let cmplog = plan.render_cmplog(first, 1, StubStyle::Trace);
        assert_eq!(edge_map.blocks, trace.blocks);
        assert_eq!(cmplog.blocks, trace.blocks);
        let pruned = Plan::new(&source, Coverage::Pruned)
            .expect("parsed before")
            .render(first, StubStyle::Trace);
        common::assert_pruned_subset(&trace.blocks, &pruned.blocks, &relative);
        for output in [
            &trace.source,
            &edge_map.source,
            &cmplog.source,
            &pruned.source,
        ] {
            assert_only_inserted(&source, output);
        }
        blocks += trace.blocks.len();
        pruned_blocks += pruned.blocks.len();
        sites += cmplog.comparison_sites as usize;
        literals += cmplog.comparison_literals.len();
        for (style, output) in RENDERINGS.into_iter().zip([
            &trace.source,
            &edge_map.source,
            &cmplog.source,
            &pruned.source,
        ]) {
            let path = out.path().join(style).join(&relative);
            std::fs::create_dir_all(path.parent().expect("has parent")).expect("create dirs");
            std::fs::write(&path, output).expect("write instrumented file");
        }
        jobs.push((file.clone(), relative));
    }
    let ast_pairs: Vec<(PathBuf, PathBuf)> = jobs
        .iter()
        .flat_map(|(original, relative)| {
            RENDERINGS.map(|style| (original.clone(), out.path().join(style).join(relative)))
        })
        .collect();

    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let checked: Vec<Checked> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut linter = Linter::new(&php);
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((original, relative)) = jobs.get(i) else {
                            break;
                        };
                        done.push(Checked {
                            relative: relative.clone(),
                            original: linter.lints(original),
                            trace: linter.lints(&out.path().join("trace").join(relative)),
                            edge_map: linter.lints(&out.path().join("edge-map").join(relative)),
                            cmplog: linter.lints(&out.path().join("cmplog").join(relative)),
                            pruned: linter.lints(&out.path().join("pruned").join(relative)),
                        });
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("lint worker"))
            .collect()
    });

    let broken: Vec<String> = checked
        .iter()
        .filter(|c| {
            c.trace != c.original
                || c.edge_map != c.original
                || c.cmplog != c.original
                || c.pruned != c.original
        })
        .map(|c| {
            format!(
                "{}: compiles: original {}, trace {}, edge-map {}, cmplog {}, pruned {}",
                c.relative.display(),
                verdict(c.original),
                verdict(c.trace),
                verdict(c.edge_map),
                verdict(c.cmplog),
                verdict(c.pruned)
            )
        })
        .collect();
    // Before the AST oracle, which takes minutes.
    assert!(
        broken.is_empty(),
        "instrumentation changed whether the file compiles:\n{}",
        broken.join("\n")
    );
    let invalid_originals = checked.iter().filter(|c| !c.original).count();
    let verdicts = match common::ast_oracle() {
        Some(oracle) => common::ast_verdicts(&php, &oracle, &ast_pairs, out.path()),
        None => Vec::new(),
    };
    assert!(
        verdicts.is_empty() || verdicts.len() == ast_pairs.len(),
        "the AST oracle skipped pairs"
    );
    let ast_failures: Vec<&String> = verdicts.iter().filter(|v| !v.starts_with("OK ")).collect();
    eprintln!(
        "real-world: {} files ({:.2} MB), {} instrumented ({blocks} blocks, {pruned_blocks} pruned, {sites} comparison sites, \
         {literals} dictionary entries), {} skipped, \
         {invalid_originals} originals do not compile, {} of {} instrumented copies AST-identical",
        files.len(),
        bytes as f64 / 1e6,
        jobs.len(),
        skipped.len(),
        verdicts.len() - ast_failures.len(),
        ast_pairs.len(),
    );
    for file in &skipped {
        eprintln!("real-world: skipped (tree-sitter-php parse error): {file}");
    }
    assert!(
        ast_failures.is_empty(),
        "instrumentation changed the AST (as PHP-Parser reads it):\n{}",
        ast_failures
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        jobs.len() * 100 >= files.len() * 99,
        "more than 1% of the files were skipped"
    );
}

fn verdict(ok: bool) -> &'static str {
    if ok { "passes" } else { "FAILS" }
}

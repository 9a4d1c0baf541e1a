//! Real PHP 8.1, 8.3, 8.4 and 8.5 check what the instrumenter makes, and
//! the project's own PHP. They are PHP compiled to WebAssembly
//! (`@php-wasm/cli`, pinned in tests/php-versions/package.json and installed
//! by `scripts/setup --test-libs`), run on node.
//!
//! - The project's PHP (php-runtime/, bin/php-fuzz, the syntax corpus in
//!   fixtures/syntax/<version>/ and these checks' own helpers) lints with no
//!   message at all: no error, no deprecation.
//! - Every fixture and every file of Debian's PHP libraries under
//!   /usr/share/php (what real_world.rs instruments), instrumented, lints
//!   with exactly the messages of its original: the instrumenter adds no
//!   error and no deprecation. (The libraries, written for PHP 8.2, have
//!   deprecations of their own under 8.4: implicitly nullable parameters.)
//! - The syntax corpus, instrumented in each stub style and in the `cmplog`
//!   rendering, prints what the original prints, and records a block for
//!   every function, method, closure, property hook and arrow body it runs.
//!
//! `php -l` is the lint on 8.3 and later; PHP 8.1's `-l` takes one file per
//! process, so there tests/php-versions/lint.php compiles each file with
//! `opcache_compile_file()` and prints what `-l` prints.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use php_fuzz_instrument::{BlockKind, Coverage, Hooks, Instrumented, Plan, StubStyle};

const VERSIONS: [Version; 4] = [Version(8, 1), Version(8, 3), Version(8, 4), Version(8, 5)];
/// Files per php-wasm process.
const CHUNK: usize = 400;
const LIBRARY_ROOT: &str = "/usr/share/php";
/// Fewer files than this means the test libraries are not installed.
const MIN_LIBRARY_FILES: usize = 500;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Version(u8, u8);

fn versions() -> String {
    VERSIONS.map(|v| v.to_string()).join(", ")
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.0, self.1)
    }
}

/// The oldest PHP a file of the syntax corpus needs (its folder's name),
/// or 8.1 for any other file.
fn needs(file: &Path) -> Version {
    let folder = file
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str());
    let in_corpus = file
        .parent()
        .and_then(Path::parent)
        .is_some_and(|p| p.ends_with("fixtures/syntax"));
    match folder.and_then(|f| f.split_once('.')) {
        Some((major, minor)) if in_corpus => Version(
            major.parse().expect("corpus folder is a version"),
            minor.parse().expect("corpus folder is a version"),
        ),
        _ => Version(8, 1),
    }
}

/// php-wasm's CLI from tests/php-versions/node_modules.
struct PhpWasm {
    cli: PathBuf,
    helpers: PathBuf,
}

impl PhpWasm {
    fn installed() -> PhpWasm {
        let helpers = common::repo_root().join("tests/php-versions");
        let cli = helpers.join("node_modules/.bin/php-wasm-cli");
        assert!(
            cli.exists(),
            "{} is missing: run `scripts/setup --test-libs` (it runs `npm ci` in tests/php-versions)",
            cli.display()
        );
        PhpWasm { cli, helpers }
    }

    /// Runs php-wasm's PHP `version` with `args`; what it printed on stdout
    /// and stderr, in order.
    fn run(&self, version: Version, args: &[OsString]) -> String {
        let out = tempfile::tempfile().expect("temp file");
        let status = Command::new(&self.cli)
            .env("PHP", version.to_string())
            .args(args)
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("dup"))
            .stderr(out.try_clone().expect("dup"))
            .status()
            .expect("run php-wasm-cli (node)");
        let printed = read_all(out);
        assert!(
            status.success(),
            "php-wasm PHP {version} failed ({status}):\n{printed}"
        );
        printed
    }

    /// The messages linting each of `files` gave, by file, with the file's
    /// own path written as FILE.
    fn lint(&self, version: Version, files: &[PathBuf]) -> BTreeMap<PathBuf, Lint> {
        let mut lints = BTreeMap::new();
        let mut queue: Vec<PathBuf> = files.to_vec();
        while !queue.is_empty() {
            let chunk: Vec<PathBuf> = queue.drain(..queue.len().min(CHUNK)).collect();
            let mut args: Vec<OsString> = if version < Version(8, 3) {
                vec![
                    "-d".into(),
                    "opcache.enable_cli=1".into(),
                    "-d".into(),
                    "display_errors=1".into(),
                    self.helpers.join("lint.php").into(),
                ]
            } else {
                vec!["-d".into(), "display_errors=1".into(), "-l".into()]
            };
            args.extend(chunk.iter().map(|f| f.clone().into_os_string()));
            let printed = self.run(version, &args);
            let (linted, again) = parse_lint(&printed);
            assert!(
                again.len() < chunk.len(),
                "PHP {version} linted none of {chunk:?}"
            );
            lints.extend(linted);
            queue.extend(again);
            for file in chunk.iter().filter(|f| !queue.contains(f)) {
                assert!(
                    lints.contains_key(file),
                    "PHP {version} did not lint {}:\n{printed}",
                    file.display()
                );
            }
        }
        lints
    }
}

fn read_all(mut file: std::fs::File) -> String {
    use std::io::{Read, Seek};
    file.rewind().expect("rewind");
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).expect("read output");
    String::from_utf8_lossy(&bytes).into_owned()
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Lint {
    compiled: bool,
    messages: Vec<String>,
}

/// `php -l`'s output: each file's messages, then "No syntax errors
/// detected in FILE" or "Errors parsing FILE"; and the files lint.php says
/// to lint again in a new process.
fn parse_lint(printed: &str) -> (BTreeMap<PathBuf, Lint>, Vec<PathBuf>) {
    let mut lints = BTreeMap::new();
    let mut again = Vec::new();
    let mut pending = Vec::new();
    for line in printed.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(file) = line.strip_prefix("Lint again in a new process: ") {
            pending.clear();
            again.push(PathBuf::from(file));
            continue;
        }
        let ended = [
            ("No syntax errors detected in ", true),
            ("Errors parsing ", false),
        ]
        .into_iter()
        .find_map(|(prefix, compiled)| line.strip_prefix(prefix).map(|f| (f, compiled)));
        match ended {
            Some((file, compiled)) => {
                let messages = std::mem::take(&mut pending)
                    .into_iter()
                    .map(|m: String| m.replace(file, "FILE"))
                    .collect();
                lints.insert(PathBuf::from(file), Lint { compiled, messages });
            }
            None => pending.push(line.to_string()),
        }
    }
    (lints, again)
}

fn files_under(root: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() && !path.ends_with("node_modules") => dirs.push(path),
                Ok(t) if t.is_file() && keep(&path) => files.push(path),
                _ => {}
            }
        }
    }
    files.sort();
    files
}

fn is_php(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "php")
}

fn corpus() -> Vec<PathBuf> {
    let files = files_under(&common::repo_root().join("fixtures/syntax"), &is_php);
    assert!(
        files.len() >= 12,
        "the syntax corpus has {} files",
        files.len()
    );
    files
}

/// Lints `files` under every version that they are for (by `needs`), on
/// two threads.
fn lint_everywhere(
    php: &PhpWasm,
    files: &[PathBuf],
    needs: &(dyn Fn(&PathBuf) -> Version + Sync),
) -> BTreeMap<Version, BTreeMap<PathBuf, Lint>> {
    std::thread::scope(|scope| {
        let workers: Vec<_> = [&VERSIONS[..2], &VERSIONS[2..]]
            .into_iter()
            .map(|versions| {
                scope.spawn(move || {
                    versions
                        .iter()
                        .map(|&v| {
                            let for_v: Vec<PathBuf> =
                                files.iter().filter(|f| needs(f) <= v).cloned().collect();
                            (v, php.lint(v, &for_v))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("lint thread"))
            .collect()
    })
}

#[test]
fn the_projects_own_php_lints_without_a_message_under_every_version() {
    let php = PhpWasm::installed();
    let root = common::repo_root();
    let mut files = files_under(&root.join("php-runtime"), &is_php);
    files.push(root.join("bin/php-fuzz"));
    files.extend(files_under(&root.join("tests/php-versions"), &is_php));
    files.extend(corpus());
    let mut complaints = Vec::new();
    for (version, lints) in lint_everywhere(&php, &files, &|f| needs(f)) {
        for (file, lint) in lints {
            if !lint.compiled || !lint.messages.is_empty() {
                complaints.push(format!(
                    "PHP {version}: {}: {:?}",
                    file.display(),
                    lint.messages
                ));
            }
        }
    }
    assert!(complaints.is_empty(), "{}", complaints.join("\n"));
    eprintln!("{} files lint clean under PHP {}", files.len(), versions());
}

/// The renderings the fuzzer runs: the `cmplog` rendering (counters,
/// comparisons logged, sinks hooked) and the edge-map stub.
const RENDERINGS: [&str; 2] = ["cmplog", "edge-map"];

fn render(source: &[u8], rendering: &str, hooks: Hooks) -> Option<Instrumented> {
    let plan = Plan::new(source, Coverage::Full).ok()?.with_hooks(hooks);
    let first = php_fuzz_instrument::BlockId(1);
    Some(match rendering {
        "cmplog" => plan.render_cmplog(first, 1, StubStyle::Trace),
        "trace" => plan.render(first, StubStyle::Trace),
        "edge-map" => plan.render(first, StubStyle::EdgeMap),
        other => panic!("no rendering {other}"),
    })
}

/// Writes `files` (under `root`) instrumented into `out/<rendering>/`;
/// returns (original, instrumented) pairs and the files left as they are.
fn instrument_all(
    files: &[PathBuf],
    root: &Path,
    out: &Path,
) -> (Vec<(PathBuf, PathBuf)>, Vec<PathBuf>) {
    let mut pairs = Vec::new();
    let mut skipped = Vec::new();
    for file in files {
        let source = std::fs::read(file).expect("read");
        let relative = file.strip_prefix(root).expect("under root");
        for rendering in RENDERINGS {
            let Some(instrumented) = render(&source, rendering, Hooks::Rewrite) else {
                skipped.push(file.clone());
                break;
            };
            let path = out.join(rendering).join(relative);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, &instrumented.source).expect("write");
            pairs.push((file.clone(), path));
        }
    }
    (pairs, skipped)
}

#[test]
fn instrumented_fixtures_and_libraries_lint_as_their_originals_under_every_version() {
    let php = PhpWasm::installed();
    let out = tempfile::tempdir().expect("temp dir");
    let root = common::repo_root();
    let fixtures = files_under(&root.join("fixtures"), &is_php);
    let libraries = files_under(Path::new(LIBRARY_ROOT), &is_php);
    assert!(
        libraries.len() >= MIN_LIBRARY_FILES,
        "found {} .php files under {LIBRARY_ROOT}: run `scripts/setup --test-libs`",
        libraries.len()
    );
    let (mut pairs, skipped_fixtures) =
        instrument_all(&fixtures, &root, &out.path().join("fixtures"));
    let (library_pairs, _) = instrument_all(
        &libraries,
        Path::new(LIBRARY_ROOT),
        &out.path().join("libraries"),
    );
    pairs.extend(library_pairs);
    let corpus_skipped: Vec<_> = skipped_fixtures
        .iter()
        .filter(|f| needs(f) > Version(8, 1))
        .collect();
    assert!(
        corpus_skipped.is_empty(),
        "not instrumented: {corpus_skipped:?}"
    );

    let originals: BTreeSet<&PathBuf> = pairs.iter().map(|(o, _)| o).collect();
    let mut all: Vec<PathBuf> = originals.iter().map(|o| (*o).clone()).collect();
    all.extend(pairs.iter().map(|(_, i)| i.clone()));
    // An instrumented file is for the versions its original is for.
    let needed: BTreeMap<PathBuf, Version> = pairs
        .iter()
        .flat_map(|(o, i)| [(o.clone(), needs(o)), (i.clone(), needs(o))])
        .collect();
    let lints = lint_everywhere(&php, &all, &|f| needed[f]);
    let mut differences = Vec::new();
    let mut original_messages = 0;
    for (version, lints) in &lints {
        for (original, instrumented) in pairs.iter().filter(|(o, _)| needed[o] <= *version) {
            let (want, got) = (&lints[original], &lints[instrumented]);
            // Fewer messages is fine: backticks become shell_exec() calls,
            // and PHP 8.5 deprecates backticks.
            let added = got.messages.iter().any(|m| !want.messages.contains(m));
            if want.compiled != got.compiled || added {
                differences.push(format!(
                    "PHP {version}: {}\n  original:     {want:?}\n  instrumented: {got:?} ({})",
                    original.display(),
                    instrumented.display()
                ));
            }
        }
        original_messages += originals
            .iter()
            .filter(|o| needed[**o] <= *version)
            .map(|o| lints[*o].messages.len())
            .sum::<usize>();
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    eprintln!(
        "{} files ({} fixtures), {} renderings each, lint as their originals under PHP {}; \
         the originals' own messages: {original_messages}",
        originals.len(),
        fixtures.len() - skipped_fixtures.len(),
        RENDERINGS.len(),
        versions()
    );
}

/// The kinds of block that every function, hook and arrow body that runs
/// records.
const ENTRIES: [BlockKind; 6] = [
    BlockKind::FileEntry,
    BlockKind::FunctionEntry,
    BlockKind::MethodEntry,
    BlockKind::ClosureEntry,
    BlockKind::PropertyHook,
    BlockKind::ArrowFunctionBody,
];

/// Lines of `source` with a hook that has a body: `get` or `set` followed by
/// `(`, `{` or `=>`, but not a by-reference `&get` (whose expression must
/// stay a reference, so it gets no block).
fn hook_lines(source: &str) -> Vec<u32> {
    let mut lines = Vec::new();
    for (number, line) in (1..).zip(source.lines()) {
        let has_hook = ["get", "set"].iter().any(|hook| {
            line.match_indices(hook).any(|(at, _)| {
                let before = line[..at].chars().next_back();
                let rest = line[at + 3..].trim_start();
                !before.is_some_and(|c| c.is_alphanumeric() || "_&$:>".contains(c))
                    && ["(", "{", "=>"].iter().any(|p| rest.starts_with(p))
            })
        });
        if has_hook {
            lines.push(number);
        }
    }
    lines
}

fn assert_every_hook_has_a_block(file: &Path, source: &[u8], instrumented: &Instrumented) {
    for line in hook_lines(&String::from_utf8_lossy(source)) {
        let hooked = instrumented.blocks.iter().any(|b| {
            b.line == line
                && b.function
                    .as_deref()
                    .is_some_and(|f| f.ends_with("::get") || f.ends_with("::set"))
        });
        assert!(
            hooked,
            "{}:{line}: a hook body with no block",
            file.display()
        );
    }
}

/// One file's run under tests/php-versions/run.php.
#[derive(Debug, Default)]
struct Ran {
    output: String,
    blocks: BTreeSet<u32>,
}

fn parse_runs(printed: &str) -> BTreeMap<PathBuf, Ran> {
    let mut runs = BTreeMap::new();
    for section in printed.split("@@file ").skip(1) {
        let (file, rest) = section.split_once('\n').expect("file line");
        let (output, tail) = rest.rsplit_once("\n@@blocks ").expect("blocks line");
        let blocks = tail.lines().next().unwrap_or("");
        let ran = Ran {
            output: output.to_string(),
            blocks: blocks
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|s| s.parse().expect("id"))
                .collect(),
        };
        runs.insert(PathBuf::from(file), ran);
    }
    runs
}

#[test]
fn the_syntax_corpus_runs_the_same_instrumented_and_records_every_body() {
    let php = PhpWasm::installed();
    let out = tempfile::tempdir().expect("temp dir");
    let runtime = common::repo_root().join("php-runtime/internal");
    let corpus = corpus();
    let mut maps = BTreeMap::new();
    let mut copies: BTreeMap<&str, Vec<PathBuf>> = BTreeMap::new();
    for file in &corpus {
        let source = std::fs::read(file).expect("read");
        for rendering in ["trace", "edge-map", "cmplog"] {
            let instrumented = render(&source, rendering, Hooks::LeaveOut)
                .unwrap_or_else(|| panic!("{} is not instrumented", file.display()));
            let path = out
                .path()
                .join(rendering)
                .join(file.file_name().expect("name"));
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, &instrumented.source).expect("write");
            copies.entry(rendering).or_default().push(path);
            assert_every_hook_has_a_block(file, &source, &instrumented);
            maps.insert(file.clone(), instrumented.blocks);
        }
    }
    let mut failures = Vec::new();
    for version in VERSIONS.into_iter().filter(|v| *v >= Version(8, 3)) {
        let for_version = |files: &[PathBuf]| -> Vec<OsString> {
            let mut args: Vec<OsString> = vec![
                common::repo_root()
                    .join("tests/php-versions/run.php")
                    .into(),
                runtime.clone().into(),
            ];
            args.extend(
                files
                    .iter()
                    .zip(&corpus)
                    .filter(|(_, o)| needs(o) <= version)
                    .map(|(f, _)| f.clone().into()),
            );
            args
        };
        let originals = parse_runs(&php.run(version, &for_version(&corpus)));
        for (rendering, files) in &copies {
            let runs = parse_runs(&php.run(version, &for_version(files)));
            for (original, copy) in corpus
                .iter()
                .zip(files)
                .filter(|(o, _)| needs(o) <= version)
            {
                let (want, got) = (&originals[original], &runs[copy]);
                let name = original
                    .strip_prefix(common::repo_root())
                    .unwrap_or(original)
                    .display();
                if want.output != got.output {
                    failures.push(format!(
                        "PHP {version}, {rendering}: {name} printed\n{}\ninstead of\n{}",
                        got.output, want.output
                    ));
                }
                for message in [
                    "Deprecated:",
                    "Warning:",
                    "Notice:",
                    "Fatal error:",
                    "Uncaught ",
                ] {
                    if want.output.contains(message) {
                        failures.push(format!(
                            "PHP {version}: {name} says {message}\n{}",
                            want.output
                        ));
                    }
                }
                let missing: Vec<String> = maps[original]
                    .iter()
                    .filter(|b| ENTRIES.contains(&b.kind) && !got.blocks.contains(&b.id.0))
                    .map(|b| format!("{:?} at line {}", b.kind, b.line))
                    .collect();
                if !missing.is_empty() {
                    failures.push(format!(
                        "PHP {version}, {rendering}: {name} recorded no {missing:?}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// php-fuzz's harness cannot run under php-wasm (docs/php-versions.md): so
/// the demo's target (fixtures/json-parser) runs instrumented through
/// tests/php-versions/replay.php on its seeds and on both planted bugs, and
/// must judge each input as under the original.
#[test]
fn the_demo_target_finds_its_planted_bugs_instrumented_under_php_8_4_and_8_5() {
    let php = PhpWasm::installed();
    let root = common::repo_root();
    let demo = root.join("fixtures/json-parser");
    let out = tempfile::tempdir().expect("temp dir");
    for name in ["target.php", "JsonParser.php"] {
        let source = std::fs::read(demo.join(name)).expect("read");
        // Sinks left as they are: the detectors' runtime needs the harness.
        let instrumented = render(&source, "trace", Hooks::LeaveOut).expect("instrumented");
        std::fs::write(out.path().join(name), instrumented.source).expect("write");
    }
    std::fs::copy(demo.join("json.dict"), out.path().join("json.dict")).expect("copy");
    let inputs = out.path().join("inputs");
    std::fs::create_dir(&inputs).expect("mkdir");
    let mut files = files_under(&demo.join("seeds"), &|_| true);
    for (name, bytes) in [
        ("exponent-at-end", "1e"),
        ("lone-low-surrogate", "\"\\udc00\""),
    ] {
        std::fs::write(inputs.join(name), bytes).expect("write input");
        files.push(inputs.join(name));
    }
    for version in [Version(8, 4), Version(8, 5)] {
        let replay = |target: &Path| {
            let mut args: Vec<OsString> = vec![
                root.join("tests/php-versions/replay.php").into(),
                root.join("php-runtime").into(),
                target.into(),
            ];
            args.extend(files.iter().map(|f| f.clone().into_os_string()));
            php.run(version, &args)
        };
        let original = replay(&demo.join("target.php"));
        let instrumented = replay(&out.path().join("target.php"));
        let folders = [demo.display().to_string(), out.path().display().to_string()];
        let verdicts = |printed: &str| -> Vec<String> {
            printed
                .lines()
                .filter(|l| !l.starts_with("@@"))
                .map(|l| {
                    folders
                        .iter()
                        .fold(l.to_string(), |l, f| l.replace(f, "DIR"))
                })
                .collect()
        };
        assert_eq!(
            verdicts(&instrumented),
            verdicts(&original),
            "PHP {version}"
        );
        assert!(
            instrumented
                .contains("exponent-at-end: finding ErrorException: Uninitialized string offset")
                && instrumented.contains("lone-low-surrogate: finding TypeError"),
            "PHP {version}:\n{instrumented}"
        );
        let blocks: usize = instrumented
            .lines()
            .find_map(|l| l.strip_prefix("@@blocks "))
            .and_then(|n| n.parse().ok())
            .expect("blocks line");
        assert!(
            blocks > 20,
            "PHP {version}: {blocks} blocks recorded\n{instrumented}"
        );
        eprintln!("PHP {version}: {}", verdicts(&instrumented).join("; "));
    }
}

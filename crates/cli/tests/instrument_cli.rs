//! End-to-end tests of `php-fuzz instrument`, running the real binary.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repo root")
}

fn php_fuzz(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_php-fuzz"))
        .arg("instrument")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run php-fuzz")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn lines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

/// A small project: a PHP tree with a nested directory, a template, a file
/// tree-sitter cannot parse, and files that are not PHP.
fn project(root: &Path) -> PathBuf {
    let dir = root.join("project");
    std::fs::create_dir_all(dir.join("src/Util")).unwrap();
    std::fs::write(
        dir.join("main.php"),
        "<?php\nrequire __DIR__ . '/src/Util/math.php';\n$total = 0;\nforeach ([1, 2, 3] as $n) {\n    $total += twice($n) ?: 0;\n}\necho $total > 10 ? \"big $total\\n\" : \"small $total\\n\";\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/Util/math.php"),
        "<?php\nfunction twice(int $n): int\n{\n    return $n > 0 ? $n * 2 : 0;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/view.phtml"),
        "<p><?php if ($a ?? false): ?>yes<?php endif ?></p>\n",
    )
    .unwrap();
    std::fs::write(dir.join("src/broken.php"), "<?php\n\nfunction broken( {\n").unwrap();
    std::fs::write(dir.join("README.md"), "# not PHP\n").unwrap();
    std::fs::write(dir.join("src/data.bin"), [0u8, 159, 146, 150, 255]).unwrap();
    dir
}

#[test]
fn prints_one_file_instrumented_with_its_lines_intact() {
    let file = repo().join("fixtures/instrument/behaviour/loops.php");
    let original = std::fs::read(&file).unwrap();
    let cwd = repo();
    for (style, marker) in [
        ("trace", r#"FuzzingContext::$trace .= "\x01\x00\x00\x00";"#),
        ("edge-map", "FuzzingContext::$edges["),
    ] {
        let out = php_fuzz(&[file.to_str().unwrap(), "--stub", style], &cwd);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(
            out.stderr.is_empty(),
            "unexpected stderr: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stdout).contains(marker),
            "{style}: no counter in output"
        );
        assert_eq!(
            lines(&out.stdout),
            lines(&original),
            "{style}: line count changed"
        );
    }
    let alias = php_fuzz(&[file.to_str().unwrap(), "--style", "edge-map"], &cwd);
    assert!(
        text(&alias.stdout).contains("$edges["),
        "--style is an alias of --stub"
    );
}

#[test]
fn a_file_tree_sitter_cannot_parse_is_printed_unchanged_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes, line) in [
        (
            "broken.php",
            b"<?php\necho 1;\n\nfunction f( {\n".as_slice(),
            4,
        ),
        (
            "binary.php",
            b"\x00\xff<?php \x80\x81 {{{ \xfe".as_slice(),
            1,
        ),
    ] {
        std::fs::write(dir.path().join(name), bytes).unwrap();
        let out = php_fuzz(&[name], dir.path());
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(out.stdout, bytes, "{name}: not printed byte for byte");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(&format!("{name}:{line}: not instrumented")),
            "{name}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "one warning line: {stderr}");
    }
}

#[test]
fn files_without_php_code_are_printed_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        ("empty.php", b"".as_slice()),
        ("html.php", b"<html>\n<b>no code</b>\n".as_slice()),
    ] {
        std::fs::write(dir.path().join(name), bytes).unwrap();
        let out = php_fuzz(&[name], dir.path());
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{name}: {}",
            text(&out.stderr)
        );
        assert_eq!(out.stdout, bytes);
    }
}

#[test]
fn out_mirrors_trees_instrumenting_php_and_copying_the_rest() {
    let root = tempfile::tempdir().unwrap();
    project(root.path());
    let extra = root.path().join("extra.php");
    std::fs::write(&extra, "<?php\necho 'extra';\n").unwrap();
    let out = root.path().join("out");
    let run = php_fuzz(
        &["project", "extra.php", "--out", "out", "-j", "2"],
        root.path(),
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let summary = text(&run.stdout);
    assert!(summary.contains("instrumented 4 PHP files"), "{summary}");
    assert!(summary.contains("skipped 1,"), "{summary}");
    assert!(summary.contains("copied 2 other files"), "{summary}");
    assert!(
        summary.contains("broken.php:3: tree-sitter-php cannot parse"),
        "{summary}"
    );
    assert!(summary.contains("MB/s on 2 threads"), "{summary}");
    assert!(summary.contains("php-fuzz-blocks.json"), "{summary}");

    // Layout: each PATH under its own name.
    for (relative, instrumented) in [
        ("project/main.php", true),
        ("project/src/Util/math.php", true),
        ("project/src/view.phtml", true),
        ("project/src/broken.php", false),
        ("project/README.md", false),
        ("project/src/data.bin", false),
        ("extra.php", true),
    ] {
        let original = std::fs::read(root.path().join(relative)).unwrap();
        let copy =
            std::fs::read(out.join(relative)).unwrap_or_else(|_| panic!("{relative} not mirrored"));
        if instrumented {
            assert_ne!(copy, original, "{relative} not instrumented");
            assert!(text(&copy).contains("\\PhpFuzz\\"), "{relative}");
            assert_eq!(
                lines(&copy),
                lines(&original),
                "{relative}: line count changed"
            );
        } else {
            assert_eq!(copy, original, "{relative} not copied byte for byte");
        }
    }

    // The block map: every instrumented file, ids unique and contiguous.
    let map: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("php-fuzz-blocks.json")).unwrap()).unwrap();
    assert_eq!(map["format"], "php-fuzz-blocks");
    assert_eq!(map["version"], 1);
    assert_eq!(map["stub"], "trace");
    let files = map["files"].as_array().unwrap();
    let paths: Vec<&str> = files.iter().map(|f| f["path"].as_str().unwrap()).collect();
    // In the order of the command line, each tree in file-name order.
    assert_eq!(
        paths,
        [
            "project/main.php",
            "project/src/Util/math.php",
            "project/src/view.phtml",
            "extra.php"
        ]
    );
    let mut next_id = 1;
    for file in files {
        assert!(Path::new(file["source"].as_str().unwrap()).is_absolute());
        for block in file["blocks"].as_array().unwrap() {
            assert_eq!(
                block["id"], next_id,
                "ids not contiguous across files in map order"
            );
            next_id += 1;
            for key in ["kind", "byte_offset", "line", "column", "function"] {
                assert!(block.get(key).is_some(), "block without {key}: {block}");
            }
        }
    }
    let skipped = map["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0]["path"], "project/src/broken.php");
    assert_eq!(skipped[0]["reason"], "parse_error");
    assert_eq!(skipped[0]["line"], 3);
}

#[test]
fn the_mirrored_tree_runs_like_the_original() {
    let Ok(php) = Command::new("php").arg("-v").output() else {
        eprintln!("SKIPPED: no php to run the mirrored tree with");
        return;
    };
    assert!(php.status.success());
    let root = tempfile::tempdir().unwrap();
    let project = project(root.path());
    // Without the detectors' hooks, the tree runs with FuzzingContext.php alone.
    let run = php_fuzz(&["project", "--out", "out", "--no-hooks"], root.path());
    assert!(run.status.success(), "{}", text(&run.stderr));
    // The same prepended runtime for both runs; it reports how many blocks ran.
    let prepend = root.path().join("prepend.php");
    std::fs::write(
        &prepend,
        format!(
            "<?php\nrequire {:?};\nregister_shutdown_function(function () {{ fwrite(STDERR, strlen(\\PhpFuzz\\FuzzingContext::$trace) / 4 . ' blocks'); }});\n",
            repo().join("php-runtime/internal/FuzzingContext.php")
        ),
    )
    .unwrap();
    let run_php = |main: &Path| {
        Command::new("php")
            .arg("-d")
            .arg(format!("auto_prepend_file={}", prepend.display()))
            .arg(main)
            .output()
            .expect("run php")
    };
    let original = run_php(&project.join("main.php"));
    let instrumented = run_php(&root.path().join("out/project/main.php"));
    assert!(original.status.success(), "{}", text(&original.stderr));
    assert_eq!(text(&original.stdout), "big 12\n");
    assert_eq!(text(&original.stderr), "0 blocks");
    assert_eq!(original.stdout, instrumented.stdout);
    assert!(
        instrumented.status.success(),
        "{}",
        text(&instrumented.stderr)
    );
    let blocks: usize = text(&instrumented.stderr)
        .trim_end_matches(" blocks")
        .parse()
        .expect("block count");
    // main's entry, 3 loop bodies, their ternaries, the loop exit, twice()
    // entered 3 times…: the included file was instrumented too.
    assert!(blocks >= 15, "only {blocks} blocks ran");
}

#[test]
fn mirroring_is_deterministic_whatever_the_thread_count() {
    let root = tempfile::tempdir().unwrap();
    project(root.path());
    let a = php_fuzz(&["project", "--out", "a", "-j", "1"], root.path());
    let b = php_fuzz(&["project", "--out", "b", "-j", "3"], root.path());
    assert!(a.status.success() && b.status.success());
    let map = |dir: &str| {
        std::fs::read_to_string(root.path().join(dir).join("php-fuzz-blocks.json")).unwrap()
    };
    assert_eq!(
        map("a").replace("\"a/", "\""),
        map("b").replace("\"b/", "\"")
    );
    for file in ["project/main.php", "project/src/Util/math.php"] {
        assert_eq!(
            std::fs::read(root.path().join("a").join(file)).unwrap(),
            std::fs::read(root.path().join("b").join(file)).unwrap()
        );
    }
}

/// Runs a command expected to fail with a one-line error naming `needle`.
fn assert_one_line_error(out: &Output, needle: &str) {
    assert_eq!(
        out.status.code(),
        Some(1),
        "exit code; stderr: {}",
        text(&out.stderr)
    );
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr}");
    assert!(stderr.starts_with("php-fuzz: error: "), "{stderr}");
    assert!(
        stderr.contains(needle),
        "error does not name {needle}: {stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "printed on stdout: {}",
        text(&out.stdout)
    );
}

#[test]
fn bad_paths_get_a_one_line_error_naming_them() {
    let root = tempfile::tempdir().unwrap();
    project(root.path());
    let cwd = root.path();
    assert_one_line_error(
        &php_fuzz(&["missing.php"], cwd),
        "missing.php: no such file or directory",
    );
    assert_one_line_error(
        &php_fuzz(&["project", "gone", "--out", "out"], cwd),
        "gone: no such file or directory",
    );
    assert_one_line_error(&php_fuzz(&["project"], cwd), "project: is a directory");
    assert_one_line_error(
        &php_fuzz(&["project/main.php", "project/src/Util/math.php"], cwd),
        "--out",
    );
    assert_one_line_error(
        &php_fuzz(&["project", "--out", "project/build/instrumented"], cwd),
        "project/build/instrumented is inside this input tree",
    );
    std::fs::create_dir_all(cwd.join("out/inner")).unwrap();
    std::fs::write(cwd.join("out/inner/x.php"), "<?php\n").unwrap();
    assert_one_line_error(
        &php_fuzz(&["out/inner", "--out", "out"], cwd),
        "out/inner: is inside the output directory",
    );
    std::fs::create_dir_all(cwd.join("other/project")).unwrap();
    assert_one_line_error(
        &php_fuzz(&["project", "other/project", "--out", "o"], cwd),
        "both would be mirrored",
    );
    assert!(
        !cwd.join("o").exists(),
        "a failed run created the output directory"
    );
}

#[test]
fn an_unreadable_file_gets_a_one_line_error() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("tree");
    std::fs::create_dir_all(&dir).unwrap();
    let secret = dir.join("secret.php");
    std::fs::write(&secret, "<?php\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&secret).is_ok() {
        eprintln!("SKIPPED: running as root, file permissions do not stop reads");
        return;
    }
    assert_one_line_error(
        &php_fuzz(&["tree/secret.php"], root.path()),
        "secret.php: cannot read: permission denied",
    );
    assert_one_line_error(
        &php_fuzz(&["tree", "--out", "out"], root.path()),
        "secret.php: cannot read: permission denied",
    );
}

#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let big: String = std::iter::once("<?php\n".to_string())
        .chain((0..40_000).map(|i| format!("if ($a{i}) {{ echo {i} ?? 'x'; }}\n")))
        .collect();
    std::fs::write(dir.path().join("big.php"), big).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_php-fuzz"))
        .args(["instrument", "big.php"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "exit {status}: {stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(&head, b"<?php\n\\PhpFuzz\\F");
}

#[test]
fn out_into_a_closed_pipe_mirrors_the_tree_and_does_not_panic() {
    let root = tempfile::tempdir().unwrap();
    project(root.path());
    // As `php-fuzz instrument … | head -1` leaves stdout once head has its line.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let output = Command::new(env!("CARGO_BIN_EXE_php-fuzz"))
        .args(["instrument", "project", "--out", "out"])
        .current_dir(root.path())
        .stdout(writer)
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "exit {}: {stderr}", output.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(root.path().join("out/php-fuzz-blocks.json").exists());
}

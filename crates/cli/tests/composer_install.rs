//! vendor/bin/php-fuzz as a PHP developer gets it: `composer require --dev
//! php-fuzz/php-fuzz` from a `path` repository with Packagist off, the
//! package taken from `composer archive` (what users receive), the release
//! archives of `scripts/release` served over HTTP on 127.0.0.1, and neither
//! cargo nor php-fuzz on PATH.
//!
//! The release is built once per test run into target/composer-test/ (cargo
//! keeps it up to date between runs).

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::composer::{
    Project, Server, USER_PATH, VERSION, archive_name, describe, release, sha256, text, triple,
};
use common::{artifacts, repo};

#[test]
fn finds_the_planted_bug_then_runs_offline_from_the_cache_exactly_as_the_binary() {
    let project = Project::new();
    let server = Server::start(&release().dist, &[]);
    let fuzz = project.run(
        &server.url(),
        &[
            "fuzz",
            "fuzz/target.php",
            "fuzz/corpus",
            "--artifact-dir",
            "findings",
            "--max-crashes",
            "1",
            "--max-time",
            "120",
            "--seed",
            "1",
        ],
    );
    let stderr = text(&fuzz.stderr);
    assert_eq!(fuzz.status.code(), Some(77), "{}", describe(&fuzz));
    let announced = format!(
        "php-fuzz: downloading php-fuzz {VERSION} for {} (",
        triple()
    );
    assert!(stderr.contains(&announced), "{stderr}");
    assert!(
        stderr.contains(&format!("{}/{}", server.url(), archive_name())),
        "{stderr}"
    );
    assert!(project.cached_binary().is_file());
    let crash = artifacts(&project.path().join("findings"), "crash-")
        .into_iter()
        .next()
        .expect("a crash file");
    assert!(fs::read(&crash).unwrap().contains(&b'\\'));

    drop(server);
    let crash_arg = crash.to_str().unwrap();
    let replay = project.run(
        "http://127.0.0.1:1",
        &["run-single", "fuzz/target.php", crash_arg],
    );
    assert_eq!(replay.status.code(), Some(77), "{}", describe(&replay));
    assert!(!text(&replay.stderr).contains("downloading"));
    let native = Command::new(project.cached_binary())
        .args(["run-single", "fuzz/target.php", crash_arg])
        .current_dir(project.path())
        .env_clear()
        .env("PATH", USER_PATH)
        .output()
        .unwrap();
    assert_eq!(replay.status.code(), native.status.code());
    assert_eq!(text(&replay.stdout), text(&native.stdout));
    assert_eq!(text(&replay.stderr), text(&native.stderr));
}

#[test]
fn a_flipped_byte_is_refused_with_both_digests_and_nothing_is_cached() {
    let project = Project::new();
    let tampered = tempfile::tempdir().unwrap();
    let archive = tampered.path().join(archive_name());
    let mut bytes = fs::read(release().dist.join(archive_name())).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    fs::write(&archive, &bytes).unwrap();
    let server = Server::start(tampered.path(), &[]);

    let run = project.run(&server.url(), &["--version"]);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(65), "{}", describe(&run));
    let expected = sha256(&release().dist.join(archive_name()));
    let actual = sha256(&archive);
    assert!(
        stderr.contains(&format!("expected SHA-256 {expected}")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("actual   SHA-256 {actual}")),
        "{stderr}"
    );
    assert!(run.stdout.is_empty());
    project.assert_nothing_cached();
}

#[test]
fn a_connection_cut_halfway_leaves_nothing_and_the_next_run_downloads_again() {
    let project = Project::new();
    let cut = Server::start(&release().dist, &["--truncate"]);
    let run = project.run(&cut.url(), &["--version"]);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(69), "{}", describe(&run));
    assert!(stderr.contains("stopped after"), "{stderr}");
    assert!(stderr.contains("the connection was closed"), "{stderr}");
    project.assert_nothing_cached();
    drop(cut);

    let server = Server::start(&release().dist, &[]);
    let run = project.run(&server.url(), &["--version"]);
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
    assert_eq!(text(&run.stdout), format!("php-fuzz {VERSION}\n"));
    assert!(server.log().contains(&archive_name()));
}

#[test]
fn ctrl_c_during_the_download_stops_and_leaves_nothing() {
    let project = Project::new();
    let slow = Server::start(&release().dist, &["--slow"]);
    let child = project
        .launcher(&slow.url())
        .arg("--version")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !slow.log().contains(&archive_name()) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no request reached the server"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", describe(&output));
    assert!(
        text(&output.stderr).contains("was interrupted"),
        "{}",
        describe(&output)
    );
    assert!(output.stdout.is_empty());
    project.assert_nothing_cached();
}

#[test]
fn two_launchers_on_a_cold_cache_both_run_a_verified_binary() {
    let project = Project::new();
    let server = Server::start(&release().dist, &[]);
    let spawn = || {
        project
            .launcher(&server.url())
            .arg("--version")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (first, second) = (spawn(), spawn());
    for child in [first, second] {
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
        assert_eq!(text(&output.stdout), format!("php-fuzz {VERSION}\n"));
    }
    let leftovers: Vec<_> = project
        .cached_files()
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("/.tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn sigint_stops_the_campaign_as_it_stops_the_native_binary() {
    let project = Project::new();
    let server = Server::start(&release().dist, &[]);
    let warm = project.run(&server.url(), &["--version"]);
    assert!(warm.status.success(), "{}", describe(&warm));
    let child = project
        .launcher(&server.url())
        .args(["fuzz", "fuzz/safe.php", "corpus", "--seed", "2"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    let stderr = text(&output.stderr);
    assert!(stderr.contains("==== Done (interrupted)"), "{stderr}");
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let entries = fs::read_dir(project.path().join("corpus")).unwrap().count();
    assert!(entries > 1, "the corpus is on disk: {entries} entries");
}

#[test]
fn no_network_and_no_cargo_says_how_to_get_the_binary() {
    let project = Project::new();
    let run = project.run("http://127.0.0.1:1", &["fuzz", "fuzz/target.php"]);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(69), "{}", describe(&run));
    assert!(stderr.contains("cannot download"), "{stderr}");
    for remedy in ["PHP_FUZZ_BINARY", "PHP_FUZZ_DOWNLOAD_URL", "install Rust"] {
        assert!(stderr.contains(remedy), "{remedy} missing from: {stderr}");
    }
    project.assert_nothing_cached();
}

#[test]
fn a_binary_of_another_version_is_refused_with_the_fix() {
    let project = Project::new();
    let impostor = project.path().join("old-php-fuzz");
    fs::write(&impostor, "#!/bin/sh\necho 'php-fuzz 0.0.1'\n").unwrap();
    let chmod = Command::new("chmod")
        .arg("+x")
        .arg(&impostor)
        .status()
        .unwrap();
    assert!(chmod.success());
    let run = project
        .launcher("http://127.0.0.1:1")
        .env("PHP_FUZZ_BINARY", &impostor)
        .arg("--version")
        .output()
        .unwrap();
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(69), "{}", describe(&run));
    assert!(
        stderr.contains(&format!(
            "is php-fuzz 0.0.1, but this package is php-fuzz {VERSION}"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("PHP_FUZZ_BINARY"), "{stderr}");

    let missing = project
        .launcher("http://127.0.0.1:1")
        .env("PHP_FUZZ_BINARY", "/nowhere/php-fuzz")
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(69));
    assert!(
        text(&missing.stderr)
            .contains("PHP_FUZZ_BINARY is set to /nowhere/php-fuzz, but no such file exists")
    );
}

#[test]
fn downloads_go_through_the_proxy_named_in_http_proxy() {
    let project = Project::new();
    let proxy = Server::start(&release().dist, &[]);
    let run = project
        .launcher(&format!("http://releases.invalid/v{VERSION}"))
        .env("http_proxy", proxy.url())
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
    let expected = format!(
        "PROXIED http://releases.invalid/v{VERSION}/{}",
        archive_name()
    );
    assert!(proxy.log().contains(&expected), "{}", proxy.log());
}

#[test]
fn the_package_autoloads_the_public_api_and_keeps_the_harness_internal() {
    let project = Project::new();
    let script = r#"
        require 'vendor/autoload.php';
        $data = new PhpFuzz\FuzzedDataProvider("ab\x01");
        echo $data->consumeBool() ? "bool " : "no ";
        echo class_exists(PhpFuzzer\Config::class) ? "config " : "";
        echo class_exists(PhpFuzz\CustomMutation::class) ? "mutation " : "";
        echo class_exists('PhpFuzz\Harness') || class_exists('PhpFuzz\Launcher\Launcher') ? "LEAK" : "internal";
    "#;
    let output = Command::new("php")
        .args(["-r", script])
        .current_dir(project.path())
        .output()
        .unwrap();
    assert_eq!(
        text(&output.stdout),
        "bool config mutation internal",
        "{}",
        describe(&output)
    );
}

#[test]
fn what_users_receive_is_small_and_holds_no_build_tests_or_fixtures() {
    let release = release();
    let mut files = Vec::new();
    let mut stack = vec![release.package.clone()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(&release.package).unwrap().to_owned();
            if path.is_dir() {
                stack.push(path);
            }
            files.push(relative);
        }
    }
    for forbidden in ["target", "fixtures", "tests", "scripts", "docs", ".github"] {
        let found: Vec<_> = files
            .iter()
            .filter(|p| p.components().any(|c| c.as_os_str() == forbidden))
            .collect();
        assert!(found.is_empty(), "the package holds {forbidden}: {found:?}");
    }
    for needed in [
        "bin/php-fuzz",
        "composer.json",
        "Cargo.lock",
        "php-runtime/src/FuzzedDataProvider.php",
    ] {
        assert!(files.contains(&PathBuf::from(needed)), "{needed} missing");
    }
    eprintln!(
        "composer archive: {} files, {} bytes as tar",
        files.len(),
        release.package_tar_bytes
    );
    assert!(
        release.package_tar_bytes < 3_000_000,
        "{} bytes",
        release.package_tar_bytes
    );
}

/// Platform detection and proxy selection, run by PHP on the launcher's own classes.
#[test]
fn unsupported_platforms_and_proxy_bypass_are_decided_as_documented() {
    let launcher = repo().join("php-runtime/launcher");
    let script = r#"
        foreach (glob($argv[1] . '/*.php') as $file) { require $file; }
        use PhpFuzz\Launcher\{Platform, Proxy, LauncherError};
        foreach ([['Linux', 'x86_64', 'gnu'], ['Linux', 'aarch64', 'gnu'], ['Linux', 'amd64', 'musl'],
                  ['Linux', 'aarch64', 'musl'], ['Darwin', 'arm64', null], ['Darwin', 'x86_64', null],
                  ['Linux', 'x86_64', 'uclibc'], ['FreeBSD', 'amd64', null],
                  ['Linux', 'riscv64', 'gnu'], ['Windows', 'AMD64', null]] as [$os, $machine, $libc]) {
            try {
                echo Platform::triple($os, $machine, $libc), "\n";
            } catch (LauncherError $e) {
                echo $e->exitCode(), ' ', $e->getMessage(), "\n";
            }
        }
        $env = ['https_proxy' => 'http://user:p%40ss@proxy.example:3128', 'no_proxy' => 'localhost,.internal.example'];
        echo json_encode(Proxy::forUrl('https://github.com/x', $env)), "\n";
        echo json_encode(Proxy::forUrl('https://mirror.internal.example/x', $env)), "\n";
        echo json_encode(Proxy::forUrl('http://github.com/x', $env)), "\n";
    "#;
    let output = Command::new("php")
        .args(["-r", script])
        .arg(&launcher)
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 13, "{}", describe(&output));
    assert_eq!(
        &lines[..6],
        [
            "x86_64-unknown-linux-gnu",
            "aarch64-unknown-linux-gnu",
            "x86_64-unknown-linux-musl",
            "aarch64-unknown-linux-musl",
            "aarch64-apple-darwin",
            "x86_64-apple-darwin"
        ]
    );
    for (line, what) in lines[6..10].iter().zip([
        "Linux on x86_64 with uclibc libc",
        "FreeBSD on amd64",
        "Linux on riscv64",
        "Windows on AMD64",
    ]) {
        assert!(line.starts_with("69 "), "{line}");
        assert!(
            line.contains(&format!("no prebuilt binary for this platform ({what}")),
            "{line}"
        );
        assert!(
            line.contains(
                "x86_64-unknown-linux-gnu, aarch64-unknown-linux-gnu, \
                 x86_64-unknown-linux-musl, aarch64-unknown-linux-musl"
            ),
            "{line}"
        );
    }
    assert_eq!(
        lines[10],
        r#"{"proxy":"tcp:\/\/proxy.example:3128","authorization":"dXNlcjpwQHNz"}"#
    );
    assert_eq!(
        lines[11], "null",
        "no_proxy's .internal.example covers the mirror"
    );
    assert_eq!(lines[12], "null", "https_proxy does not apply to http URLs");
}

/// The C library the launcher detects, on systems laid out in a folder that
/// stands for / (what PHP's process maps, then the loaders installed), and
/// on this machine.
#[test]
fn the_launcher_tells_musl_from_glibc_as_php_sees_it() {
    const MUSL_MAPS: &str = "7f0a00000000-7f0a00014000 r--p 00000000 fd:01 1234 /lib/ld-musl-x86_64.so.1\n\
                             7f0a00014000-7f0a0005b000 r-xp 00014000 fd:01 1234 /lib/ld-musl-x86_64.so.1\n";
    const GLIBC_MAPS: &str = "7f0a00000000-7f0a00028000 r--p 00000000 fd:01 5678 /usr/lib/x86_64-linux-gnu/libc.so.6\n\
                              7f0a00100000-7f0a00102000 r--p 00000000 fd:01 5679 /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n";
    let systems: [(&str, Option<&str>, &[&str], &str); 8] = [
        (
            "Alpine",
            Some(MUSL_MAPS),
            &["lib/ld-musl-x86_64.so.1"],
            "musl",
        ),
        (
            "Alpine with gcompat",
            Some(MUSL_MAPS),
            &[
                "lib/ld-musl-x86_64.so.1",
                "lib/ld-linux-x86-64.so.2",
                "lib64/ld-linux-x86-64.so.2",
            ],
            "musl",
        ),
        (
            "Debian with the musl package",
            Some(GLIBC_MAPS),
            &["lib/ld-musl-x86_64.so.1", "lib64/ld-linux-x86-64.so.2"],
            "gnu",
        ),
        (
            "Alpine without /proc",
            None,
            &["lib/ld-musl-aarch64.so.1"],
            "musl",
        ),
        (
            "merged /usr Alpine without /proc",
            None,
            &["usr/lib/ld-musl-x86_64.so.1"],
            "musl",
        ),
        (
            "Debian without /proc",
            None,
            &["lib64/ld-linux-x86-64.so.2", "lib/ld-musl-x86_64.so.1"],
            "gnu",
        ),
        (
            "static PHP on Alpine",
            Some("00400000-00b00000 r-xp 00000000 fd:01 42 /usr/local/bin/php\n"),
            &["lib/ld-musl-x86_64.so.1"],
            "musl",
        ),
        ("nothing to tell by", None, &[], "gnu"),
    ];
    let roots = tempfile::tempdir().unwrap();
    let mut args = Vec::new();
    for (index, (_, maps, files, _)) in systems.iter().enumerate() {
        let root = roots.path().join(index.to_string());
        fs::create_dir_all(&root).unwrap();
        if let Some(maps) = maps {
            fs::create_dir_all(root.join("proc/self")).unwrap();
            fs::write(root.join("proc/self/maps"), maps).unwrap();
        }
        for file in files.iter() {
            let path = root.join(file);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, "").unwrap();
        }
        args.push(root);
    }
    let script = r#"
        foreach (glob($argv[1] . '/*.php') as $file) { require $file; }
        foreach (array_slice($argv, 2) as $root) { echo PhpFuzz\Launcher\Platform::linuxLibc($root), "\n"; }
        echo PhpFuzz\Launcher\Platform::linuxLibc(), ' ', PhpFuzz\Launcher\Platform::current(), "\n";
    "#;
    let output = Command::new("php")
        .args(["-r", script])
        .arg(repo().join("php-runtime/launcher"))
        .args(&args)
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), systems.len() + 1, "{}", describe(&output));
    for ((system, _, _, expected), found) in systems.iter().zip(&lines) {
        assert_eq!(found, expected, "{system}");
    }
    // This machine is Debian: its PHP maps glibc's libc.so.6.
    assert_eq!(
        lines[systems.len()],
        format!("gnu {}-unknown-linux-gnu", std::env::consts::ARCH)
    );
}

/// actionlint, installed by `scripts/setup --test-libs` beside the test
/// Python, passes the release workflow and the workflow `init` writes.
#[test]
fn the_workflows_pass_actionlint() {
    let python = std::env::var_os("PHP_FUZZ_TEST_PYTHON").map(PathBuf::from);
    let actionlint = python
        .as_deref()
        .and_then(Path::parent)
        .map(|bin| bin.join("actionlint"))
        .filter(|path| path.is_file());
    let Some(actionlint) = actionlint else {
        let message = "actionlint is missing: run `scripts/setup --test-libs` and set \
                       PHP_FUZZ_TEST_PYTHON=target/test-venv/bin/python (scripts/test does both)";
        assert!(std::env::var_os("CI").is_none(), "{message}");
        eprintln!("SKIPPED (not in CI): {message}");
        return;
    };
    let output = Command::new(actionlint)
        .args([
            ".github/workflows/release.yml",
            "docs/ci/github/php-fuzz.yml",
        ])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
}

/// With no download possible and cargo on PATH, the launcher builds the
/// package's own sources (as `composer archive` ships them) into the cache.
#[test]
fn without_a_download_cargo_builds_the_package_sources_into_the_cache() {
    let project = Project::new();
    let cargo = Command::new("rustup")
        .args(["which", "cargo"])
        .output()
        .expect("rustup");
    let cargo = PathBuf::from(text(&cargo.stdout).trim());
    let path = format!("{USER_PATH}:{}", cargo.parent().unwrap().display());
    let mut command = project.launcher("http://127.0.0.1:1");
    command.env("PATH", path).arg("--version");
    for passed in ["RUSTUP_HOME", "CARGO_HOME", "RUSTUP_TOOLCHAIN"] {
        if let Some(value) = std::env::var_os(passed) {
            command.env(passed, value);
        }
    }
    if std::env::var_os("RUSTUP_HOME").is_none() {
        command.env("RUSTUP_HOME", home_dir().join(".rustup"));
    }
    if std::env::var_os("CARGO_HOME").is_none() {
        command.env("CARGO_HOME", home_dir().join(".cargo"));
    }
    // What is tested is the launcher's way to a binary (cargo found, its
    // progress shown, the binary cached, the build folder removed), not
    // the optimizer: unoptimized and without debug info, the build takes
    // about a third of the release build's 2.5 minutes on two cores.
    command
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false");
    let run = command.output().unwrap();
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
    assert_eq!(text(&run.stdout), format!("php-fuzz {VERSION}\n"));
    assert!(
        stderr.contains("cannot download http://127.0.0.1:1/"),
        "{stderr}"
    );
    assert!(stderr.contains("building php-fuzz"), "{stderr}");
    assert!(
        stderr.contains("Compiling php-fuzz"),
        "cargo's progress is shown: {stderr}"
    );
    assert!(project.cached_binary().is_file());
    let version_dir = project.cache().join(format!("php-fuzz/{VERSION}"));
    assert!(
        !version_dir.join("cargo-target").exists(),
        "the build folder is removed"
    );

    let again = project.run("http://127.0.0.1:1", &["--version"]);
    assert_eq!(again.status.code(), Some(0), "{}", describe(&again));
    assert!(again.stderr.is_empty(), "{}", describe(&again));
}

fn home_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
}

//! The static musl binary that Alpine (`php:*-alpine`) users get, checked on
//! this glibc machine, where a static binary runs too:
//!
//! - `scripts/release --target <arch>-unknown-linux-musl` builds it with
//!   cargo-zigbuild and packs it only if it is statically linked;
//! - the launcher's own classes, on a system laid out as Alpine, choose the
//!   musl triple, fetch its archive and verify it against the package's
//!   digests, as `vendor/bin/php-fuzz` does;
//! - the binary they installed runs scripts/demo's campaign (fixtures/json-parser
//!   from its seeds) to the planted bug, and replays it exactly as the glibc
//!   build does.
//!
//! The release build takes about three minutes of two cores, the first time
//! of a test run; cargo keeps target/release-archives/<triple>/ up to date
//! between runs (`release_command`), and scripts/test builds it ahead of the
//! tests, in the background.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::composer::{
    USER_PATH, VERSION, copy_tree, describe, musl_triple, release_command, text,
};
use common::{artifacts, bin, fixture, repo};

#[test]
fn the_static_musl_release_is_chosen_on_alpine_and_finds_the_demo_bug() {
    let triple = musl_triple();
    let root = repo().join("target/musl-test");
    let _ = fs::remove_dir_all(&root);
    let dist = root.join("dist");
    let digests = root.join("package-digests");
    let release = release_command(&triple)
        .args(["--out", dist.to_str().unwrap()])
        .arg("--digests-file")
        .arg(&digests)
        .output()
        .expect("running scripts/release");
    assert!(release.status.success(), "{}", describe(&release));
    assert!(
        text(&release.stderr).contains(&format!(
            "php-fuzz for {triple} is statically linked (no interpreter, no shared library)"
        )),
        "{}",
        describe(&release)
    );
    let archive = format!("php-fuzz-{VERSION}-{triple}.tar.gz");
    assert!(
        fs::read_to_string(&digests)
            .unwrap()
            .contains(&format!("  {archive}\n")),
        "the package's digests name {archive}"
    );

    let binary = install_as_on_alpine(&root, &dist, &digests, &triple);
    assert_statically_linked(&binary);
    let version = Command::new(&binary).arg("--version").output().unwrap();
    assert_eq!(text(&version.stdout), format!("php-fuzz {VERSION}\n"));

    // scripts/demo's campaign, with the binary the launcher installed.
    let work = tempfile::tempdir().unwrap();
    copy_tree(&fixture("json-parser/seeds"), &work.path().join("corpus"));
    let target = fixture("json-parser/target.php");
    let fuzz = user_run(
        &binary,
        &[
            "fuzz",
            target.to_str().unwrap(),
            work.path().join("corpus").to_str().unwrap(),
            "--artifact-dir",
            work.path().to_str().unwrap(),
            "--max-crashes",
            "1",
            "--max-time",
            "60",
            "--seed",
            "1",
        ],
    );
    assert_eq!(fuzz.status.code(), Some(77), "{}", describe(&fuzz));
    let crash = artifacts(work.path(), "crash-")
        .into_iter()
        .next()
        .expect("a crash file");
    assert!(
        text(&fuzz.stderr).contains("fixtures/json-parser/JsonParser.php"),
        "{}",
        describe(&fuzz)
    );

    let args = [
        "run-single",
        target.to_str().unwrap(),
        crash.to_str().unwrap(),
    ];
    let musl = user_run(&binary, &args);
    let glibc = user_run(&bin(), &args);
    assert_eq!(musl.status.code(), Some(77), "{}", describe(&musl));
    assert_eq!(
        (text(&musl.stdout), text(&musl.stderr)),
        (text(&glibc.stdout), text(&glibc.stderr)),
        "the musl and the glibc binary replay the crash alike"
    );
}

/// scripts/release's static check refuses what a musl archive must not hold:
/// a binary that asks for a program interpreter, a library that needs others
/// (DT_NEEDED), and a binary of another architecture.
#[test]
fn the_release_refuses_a_musl_binary_that_is_not_static() {
    let arch = std::env::consts::ARCH;
    let other = if arch == "x86_64" {
        "aarch64"
    } else {
        "x86_64"
    };
    let maps = fs::read_to_string("/proc/self/maps").unwrap();
    let libc = maps
        .split_whitespace()
        .find(|field| field.ends_with("/libc.so.6"))
        .expect("this test runs on glibc");
    // glibc's libm: no program interpreter, but it needs libc.so.6.
    let libm = Path::new(libc).with_file_name("libm.so.6");
    let script = r#"
import runpy, sys
from pathlib import Path
release = runpy.run_path(sys.argv[1], run_name="release")
for binary, target in zip(sys.argv[2::2], sys.argv[3::2]):
    try:
        release["check_static"](Path(binary), target)
        print("accepted")
    except release["ReleaseError"] as error:
        print(error)
"#;
    let checks = [
        (bin(), format!("{arch}-unknown-linux-musl")),
        (libm, format!("{arch}-unknown-linux-musl")),
        (bin(), format!("{other}-unknown-linux-musl")),
        (
            repo().join("README.md"),
            format!("{arch}-unknown-linux-musl"),
        ),
    ];
    let mut command = Command::new("python3");
    command
        .args(["-c", script])
        .arg(repo().join("scripts/release"));
    for (binary, target) in &checks {
        command.arg(binary).arg(target);
    }
    let output = command.output().unwrap();
    let stdout = text(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), checks.len(), "{}", describe(&output));
    assert!(
        lines[0].ends_with(
            "is dynamically linked: it asks for the program interpreter /lib64/ld-linux-x86-64.so.2"
        ) || lines[0]
            .contains("is dynamically linked: it asks for the program interpreter /lib/ld-linux-"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("libm.so.6 is dynamically linked: it needs libc.so.6"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains(&format!(", not {other} (")),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].ends_with("README.md is not a 64-bit little-endian ELF file"),
        "{}",
        lines[3]
    );
}

/// What `vendor/bin/php-fuzz` does on Alpine, by the launcher's classes: the
/// triple from an Alpine root (its PHP maps musl's loader), the archive from
/// `file://dist`, verified against `digests` shipped in a package folder,
/// into a fresh cache. Returns the cached binary.
fn install_as_on_alpine(root: &Path, dist: &Path, digests: &Path, triple: &str) -> PathBuf {
    let arch = std::env::consts::ARCH;
    let alpine = root.join("alpine");
    fs::create_dir_all(alpine.join("proc/self")).unwrap();
    fs::create_dir_all(alpine.join("lib")).unwrap();
    let loader = format!("/lib/ld-musl-{arch}.so.1");
    fs::write(
        alpine.join("proc/self/maps"),
        format!(
            "55d0c0000000-55d0c0100000 r--p 00000000 00:2a 101 /usr/local/bin/php\n\
             7f3a10000000-7f3a10014000 r--p 00000000 00:2a 202 {loader}\n\
             7f3a10014000-7f3a1005b000 r-xp 00014000 00:2a 202 {loader}\n"
        ),
    )
    .unwrap();
    fs::write(alpine.join(&loader[1..]), "").unwrap();
    let package = root.join("package");
    fs::create_dir_all(package.join("php-runtime/launcher")).unwrap();
    fs::copy(digests, package.join("php-runtime/launcher/SHA256SUMS")).unwrap();
    let cache = root.join("cache");

    let script = r#"
        [, $launcher, $alpine, $package, $version, $dist, $cache] = $argv;
        foreach (glob($launcher . '/*.php') as $file) { require $file; }
        use PhpFuzz\Launcher\{Cache, Installer, Platform};
        $triple = Platform::triple('Linux', php_uname('m'), Platform::linuxLibc($alpine));
        $env = ['PHP_FUZZ_DOWNLOAD_URL' => 'file://' . $dist];
        $installer = new Installer($package, $version, $triple, new Cache($cache, $version, $triple), $env);
        echo $installer->download(), "\n";
    "#;
    let install = Command::new("php")
        .args(["-r", script])
        .arg(repo().join("php-runtime/launcher"))
        .args([&alpine, &package])
        .arg(VERSION)
        .args([dist, &cache])
        .output()
        .unwrap();
    assert!(install.status.success(), "{}", describe(&install));
    assert!(
        text(&install.stderr).contains(&format!(
            "php-fuzz: downloading php-fuzz {VERSION} for {triple} ("
        )),
        "{}",
        describe(&install)
    );
    let binary = cache.join(format!("php-fuzz/{VERSION}/{triple}/php-fuzz"));
    assert_eq!(text(&install.stdout).trim(), binary.to_str().unwrap());
    binary
}

/// Checked apart from scripts/release's own check, with binutils' readelf.
fn assert_statically_linked(binary: &Path) {
    let segments = Command::new("readelf")
        .args(["--wide", "--program-headers"])
        .arg(binary)
        .output()
        .expect("readelf (binutils)");
    assert!(segments.status.success(), "{}", describe(&segments));
    let segments = text(&segments.stdout);
    assert!(segments.contains("LOAD"), "{segments}");
    assert!(!segments.contains("INTERP"), "{segments}");
    let dynamic = Command::new("readelf")
        .args(["--wide", "--dynamic"])
        .arg(binary)
        .output()
        .unwrap();
    assert!(!text(&dynamic.stdout).contains("(NEEDED)"), "{dynamic:?}");
}

/// A run with the environment of a user's shell reduced to PATH.
fn user_run(binary: &Path, args: &[&str]) -> Output {
    Command::new(binary)
        .args(args)
        .current_dir(repo())
        .env_clear()
        .env("PATH", USER_PATH)
        .output()
        .unwrap()
}

//! A composer project that requires php-fuzz/php-fuzz as users receive it:
//! `composer archive` of this repository, the release archive of
//! `scripts/release` served over HTTP on 127.0.0.1, and a PATH without cargo
//! or php-fuzz. Shared by the composer and PHPUnit tests.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

use super::{fixture, repo};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Debian's php and composer live here; cargo and php-fuzz do not.
pub const USER_PATH: &str = "/usr/bin:/bin";

pub fn triple() -> String {
    format!("{}-unknown-linux-gnu", std::env::consts::ARCH)
}

pub fn musl_triple() -> String {
    format!("{}-unknown-linux-musl", std::env::consts::ARCH)
}

/// `scripts/release --target TRIPLE`, building in cargo's target directory
/// `target/release-archives`, where scripts/test builds the musl binary
/// ahead (`scripts/release --build-only`, at low priority while the other
/// tests run): a directory of its own, because cargo locks its target
/// directory for as long as `cargo test` runs.
pub fn release_command(triple: &str) -> Command {
    let mut command = Command::new(repo().join("scripts/release"));
    command
        .env("CARGO_TARGET_DIR", repo().join("target/release-archives"))
        .args(["--target", triple]);
    command
}

/// The glibc archive's `scripts/release`. scripts/test builds the tests with
/// cargo-zigbuild for the release's glibc target and says so in
/// PHP_FUZZ_TEST_PREBUILT_RELEASE: then the php-fuzz under test is the
/// release's binary, and is packed as it is (`--prebuilt`, which checks its
/// glibc floor as a build's). A plain `cargo test` builds the release.
fn glibc_release_command() -> Command {
    if std::env::var("PHP_FUZZ_TEST_PREBUILT_RELEASE").is_ok_and(|built| built == triple()) {
        let mut command = Command::new(repo().join("scripts/release"));
        command
            .args(["--target", &triple()])
            .arg("--prebuilt")
            .arg(env!("CARGO_BIN_EXE_php-fuzz"));
        return command;
    }
    release_command(&triple())
}

pub fn archive_name() -> String {
    format!("php-fuzz-{VERSION}-{}.tar.gz", triple())
}

/// The release archives and the package as users receive it.
pub struct Release {
    pub dist: PathBuf,
    pub package: PathBuf,
    pub package_tar_bytes: u64,
}

pub fn release() -> &'static Release {
    static RELEASE: OnceLock<Release> = OnceLock::new();
    RELEASE.get_or_init(|| {
        let root = repo().join("target/composer-test");
        let dist = root.join("dist");
        let status = glibc_release_command()
            .args(["--out", dist.to_str().unwrap()])
            .arg("--digests-file")
            .arg(root.join("package-digests"))
            .status()
            .expect("running scripts/release");
        assert!(status.success(), "scripts/release failed");
        let (package, package_tar_bytes) = archived_package(&root);
        fs::copy(
            dist.join("SHA256SUMS"),
            package.join("php-runtime/launcher/SHA256SUMS"),
        )
        .unwrap();
        Release {
            dist,
            package,
            package_tar_bytes,
        }
    })
}

/// `composer archive` of the repository, unpacked into root/package.
fn archived_package(root: &Path) -> (PathBuf, u64) {
    let package = root.join("package");
    let _ = fs::remove_dir_all(&package);
    fs::create_dir_all(&package).unwrap();
    let home = tempfile::tempdir().unwrap();
    let output = Command::new("composer")
        .args([
            "archive",
            "--format=tar",
            "--file=package",
            "--no-interaction",
        ])
        .arg(format!("--dir={}", root.display()))
        .current_dir(repo())
        .env("COMPOSER_HOME", home.path())
        .output()
        .expect("running composer archive");
    assert!(output.status.success(), "{output:?}");
    let tar = root.join("package.tar");
    let bytes = fs::metadata(&tar).unwrap().len();
    let status = Command::new("tar")
        .arg("-xf")
        .arg(&tar)
        .arg("-C")
        .arg(&package)
        .status()
        .unwrap();
    assert!(status.success());
    (package, bytes)
}

/// `fixtures/composer/serve.py` on 127.0.0.1; killed when dropped.
pub struct Server {
    child: Child,
    pub port: u16,
    log: PathBuf,
    _log_dir: tempfile::TempDir,
}

impl Server {
    pub fn start(dir: &Path, extra: &[&str]) -> Server {
        let log_dir = tempfile::tempdir().unwrap();
        let log = log_dir.path().join("server.log");
        let mut child = Command::new("python3")
            .arg(fixture("composer/serve.py"))
            .arg(dir)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(fs::File::create(&log).unwrap())
            .spawn()
            .expect("starting the release server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the server prints its port");
        Server {
            child,
            port,
            log,
            _log_dir: log_dir,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A sample project with a planted bug that requires php-fuzz/php-fuzz.
pub struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    /// The sample project of fixtures/composer/project.
    pub fn new() -> Project {
        Project::from_fixture("composer/project")
    }

    /// A copy of `fixtures/<name>` with php-fuzz/php-fuzz required.
    pub fn from_fixture(name: &str) -> Project {
        assert!(
            !Path::new("/usr/bin/cargo").exists() && !Path::new("/usr/bin/php-fuzz").exists(),
            "these tests need a PATH ({USER_PATH}) without cargo and php-fuzz"
        );
        let release = release();
        let dir = tempfile::tempdir().unwrap();
        copy_tree(&fixture(name), dir.path());
        let composer_json = serde_json::json!({
            "name": "sample/csv",
            "autoload": {"psr-4": {"Sample\\": "src/"}},
            "repositories": [
                {"type": "path", "url": release.package, "options": {"symlink": false, "versions": {"php-fuzz/php-fuzz": VERSION}}},
                {"packagist.org": false}
            ]
        });
        fs::write(dir.path().join("composer.json"), composer_json.to_string()).unwrap();
        let project = Project { dir };
        let output = Command::new("composer")
            .args(["require", "--dev", "php-fuzz/php-fuzz", "--no-interaction"])
            .current_dir(project.path())
            .env_clear()
            .env("PATH", USER_PATH)
            .env("HOME", project.path().join("home"))
            .env("COMPOSER_HOME", project.path().join("composer-home"))
            .output()
            .unwrap();
        assert!(output.status.success(), "composer require: {output:?}");
        project
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn cache(&self) -> PathBuf {
        self.path().join("cache")
    }

    pub fn cached_binary(&self) -> PathBuf {
        self.cache()
            .join(format!("php-fuzz/{VERSION}/{}/php-fuzz", triple()))
    }

    /// `vendor/bin/php-fuzz ARGS` as a user runs it, downloading from `url`.
    pub fn launcher(&self, url: &str) -> Command {
        let mut command = Command::new(self.path().join("vendor/bin/php-fuzz"));
        command
            .current_dir(self.path())
            .env_clear()
            .env("PATH", USER_PATH)
            .env("HOME", self.path().join("home"))
            .env("XDG_CACHE_HOME", self.cache())
            .env("PHP_FUZZ_DOWNLOAD_URL", url);
        command
    }

    pub fn run(&self, url: &str, args: &[&str]) -> Output {
        self.launcher(url).args(args).output().unwrap()
    }

    /// Every file under the cache, for "nothing was kept" checks.
    pub fn cached_files(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        let mut stack = vec![self.cache()];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    files.push(path);
                }
            }
        }
        files
    }

    /// The cache holds nothing but the lock file.
    pub fn assert_nothing_cached(&self) {
        let kept: Vec<_> = self
            .cached_files()
            .into_iter()
            .filter(|p| p.file_name().unwrap() != ".lock")
            .collect();
        assert!(kept.is_empty(), "left behind: {kept:?}");
    }
}

pub fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn describe(output: &Output) -> String {
    format!(
        "--- {:?}\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        text(&output.stdout),
        text(&output.stderr)
    )
}

pub fn sha256(path: &Path) -> String {
    let output = Command::new("sha256sum").arg(path).output().unwrap();
    text(&output.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

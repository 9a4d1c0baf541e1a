//! PHPUnit fuzz tests end to end, as a PHP developer runs them: a sample
//! project (fixtures/phpunit/project) that requires php-fuzz/php-fuzz through
//! a composer `path` repository with Packagist off, Debian's real `phpunit`,
//! and `vendor/bin/php-fuzz`.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::composer::{Project, Server, USER_PATH, describe, release, text};

const FOLDER: &str = "tests/fuzz/KeyValueFuzzTest/fuzzParse";

fn project() -> Project {
    Project::from_fixture("phpunit/project")
}

/// Debian's phpunit in the project, as CI runs it.
fn phpunit(project: &Project) -> Output {
    Command::new("phpunit")
        .current_dir(project.path())
        .env_clear()
        .env("PATH", USER_PATH)
        .env("HOME", project.path().join("home"))
        .output()
        .expect("running phpunit")
}

/// `vendor/bin/php-fuzz ARGS` with this build's binary as PHP_FUZZ_BINARY
/// (the download itself is tested in composer_install.rs).
fn php_fuzz(project: &Project, args: &[&str]) -> Output {
    project
        .launcher("http://127.0.0.1:1")
        .env("PHP_FUZZ_BINARY", common::bin())
        .args(args)
        .output()
        .unwrap()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn write(project: &Project, relative: &str, text: &str) {
    let path = project.path().join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn assert_green(project: &Project, expected: &str) {
    let run = phpunit(project);
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
    assert!(text(&run.stdout).contains(expected), "{}", describe(&run));
}

#[test]
fn a_finding_fails_phpunit_until_the_bug_is_fixed() {
    let project = project();
    assert_green(&project, "OK (3 tests, 3 assertions)");

    let server = Server::start(&release().dist, &[]);
    let tests_before = files_in(&project.path().join(FOLDER));
    let fuzz = project.run(
        &server.url(),
        &[
            "fuzz",
            "tests/KeyValueFuzzTest.php",
            "--max-time",
            "30",
            "--seed",
            "1",
        ],
    );
    assert_eq!(fuzz.status.code(), Some(77), "{}", describe(&fuzz));
    let tests_after = files_in(&project.path().join(FOLDER));
    let new: Vec<_> = tests_after
        .iter()
        .filter(|f| !tests_before.contains(f))
        .collect();
    assert_eq!(
        new.len(),
        1,
        "exactly the finding is written: {tests_after:?}"
    );
    assert!(new[0].starts_with("crash-"), "{new:?}");
    assert_eq!(
        files_in(&project.path().join("tests/fuzz")),
        ["KeyValueFuzzTest"],
        "nothing else under tests/"
    );
    let finding = format!("{FOLDER}/{}", new[0]);

    let red = phpunit(&project);
    let stdout = text(&red.stdout);
    assert_eq!(red.status.code(), Some(1), "{}", describe(&red));
    assert!(stdout.contains("Warning: Undefined array key"), "{stdout}");
    assert!(
        stdout.contains(&format!("fuzz input {finding} of fuzzParse() failed")),
        "{stdout}"
    );
    let replay_command = format!(
        "Replay it with: vendor/bin/php-fuzz run-single tests/KeyValueFuzzTest.php::fuzzParse {finding}"
    );
    assert!(stdout.contains(&replay_command), "{stdout}");

    let replay = project.run(
        "http://127.0.0.1:1",
        &[
            "run-single",
            "tests/KeyValueFuzzTest.php::fuzzParse",
            &finding,
        ],
    );
    assert_eq!(replay.status.code(), Some(77), "{}", describe(&replay));
    assert!(
        text(&replay.stdout).contains("Undefined array key"),
        "{}",
        describe(&replay)
    );

    // Fixed: the finding stays as a regression test, and passes.
    let source = project.path().join("src/KeyValue.php");
    let code = fs::read_to_string(&source).unwrap();
    fs::write(
        &source,
        code.replace("\\trim($lines[++$i])", "\\trim($lines[++$i] ?? '')"),
    )
    .unwrap();
    assert_green(&project, "OK (4 tests, 4 assertions)");
    // Removed: green as before.
    fs::write(&source, code).unwrap();
    fs::remove_file(project.path().join(&finding)).unwrap();
    assert_green(&project, "OK (3 tests, 3 assertions)");
}

#[test]
fn several_methods_must_be_named_and_each_gets_its_own_folder() {
    let project = project();
    write(
        &project,
        "tests/MoreFuzzTest.php",
        r#"<?php declare(strict_types=1);

use PhpFuzz\FuzzedDataProvider;
use PhpFuzz\PHPUnit\FuzzTest;
use PhpFuzz\PHPUnit\Fuzzing;
use PHPUnit\Framework\TestCase;

final class MoreFuzzTest extends TestCase
{
    use Fuzzing;

    #[FuzzTest]
    public function fuzzPick(FuzzedDataProvider $data): void
    {
        $sizes = ['small', 'medium', 'large'];
        $size = $sizes[$data->consumeInt(0, 3)]; // planted bug: 3 is out of range
        self::assertNotSame('', $size);
    }

    #[FuzzTest(allowedExceptions: [\InvalidArgumentException::class])]
    public function fuzzStrict(string $input): void
    {
        if (!\ctype_digit($input)) {
            throw new \InvalidArgumentException('digits only');
        }
    }
}
"#,
    );
    let ask = php_fuzz(
        &project,
        &["fuzz", "tests/MoreFuzzTest.php", "--max-runs", "10"],
    );
    let stderr = text(&ask.stderr);
    assert_eq!(ask.status.code(), Some(2), "{}", describe(&ask));
    assert!(
        stderr.contains("tests/MoreFuzzTest.php::fuzzPick, tests/MoreFuzzTest.php::fuzzStrict"),
        "{stderr}"
    );

    let strict = php_fuzz(
        &project,
        &[
            "fuzz",
            "tests/MoreFuzzTest.php::fuzzStrict",
            "--max-runs",
            "3000",
            "--seed",
            "1",
        ],
    );
    assert_eq!(
        strict.status.code(),
        Some(0),
        "allowed exceptions are no finding: {}",
        describe(&strict)
    );
    assert!(
        !project
            .path()
            .join("tests/fuzz/MoreFuzzTest/fuzzStrict")
            .exists()
    );

    let pick = php_fuzz(
        &project,
        &[
            "fuzz",
            "tests/MoreFuzzTest.php::fuzzPick",
            "--max-time",
            "30",
            "--seed",
            "1",
            "--max-crashes",
            "1",
        ],
    );
    assert_eq!(pick.status.code(), Some(77), "{}", describe(&pick));
    let found = files_in(&project.path().join("tests/fuzz/MoreFuzzTest/fuzzPick"));
    assert_eq!(found.len(), 1, "{found:?}");

    let red = phpunit(&project);
    let stdout = text(&red.stdout);
    assert_eq!(red.status.code(), Some(1), "{}", describe(&red));
    assert!(stdout.contains("1 failure"), "{stdout}");
    assert!(
        stdout.contains("Warning: Undefined array key 3"),
        "{stdout}"
    );
    let listed = Command::new("phpunit")
        .arg("--list-tests")
        .current_dir(project.path())
        .env_clear()
        .env("PATH", USER_PATH)
        .output()
        .unwrap();
    let listed = text(&listed.stdout);
    assert!(
        listed.contains("MoreFuzzTest::testFuzzInput\"fuzzStrict (empty input)\""),
        "an empty folder replays the empty input once: {listed}"
    );
    assert!(
        listed.contains(&format!(
            "MoreFuzzTest::testFuzzInput\"fuzzPick/{}\"",
            found[0]
        )),
        "each input is a test case named after its file: {listed}"
    );
}

#[test]
fn a_deprecation_fails_the_test_under_its_own_error_reporting() {
    let project = project();
    write(
        &project,
        "tests/DeprecatedFuzzTest.php",
        r#"<?php declare(strict_types=1);

use PhpFuzz\PHPUnit\FuzzTest;
use PhpFuzz\PHPUnit\Fuzzing;
use PHPUnit\Framework\TestCase;

final class Point
{
    public string $x = '';
}

final class DeprecatedFuzzTest extends TestCase
{
    use Fuzzing;

    #[FuzzTest]
    public function fuzzLength(string $input): void
    {
        $point = new Point();
        $point->y = $input; // a dynamic property: deprecated since PHP 8.2
    }
}
"#,
    );
    let red = phpunit(&project);
    let stdout = text(&red.stdout);
    assert_eq!(red.status.code(), Some(1), "{}", describe(&red));
    assert!(
        stdout.contains(
            "DeprecatedFuzzTest::testFuzzInput with data set \"fuzzLength (empty input)\""
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("Deprecated: Creation of dynamic property Point::$y is deprecated"),
        "{stdout}"
    );

    let empty = project.path().join("empty-input");
    fs::write(&empty, "").unwrap();
    let agree = php_fuzz(
        &project,
        &[
            "run-single",
            "tests/DeprecatedFuzzTest.php::fuzzLength",
            empty.to_str().unwrap(),
        ],
    );
    assert_eq!(agree.status.code(), Some(77), "{}", describe(&agree));
    assert!(
        text(&agree.stdout).contains("Deprecated"),
        "{}",
        describe(&agree)
    );
}

#[test]
fn a_wrong_signature_is_a_clear_error_in_phpunit_and_in_php_fuzz() {
    let project = project();
    write(
        &project,
        "tests/WrongFuzzTest.php",
        r#"<?php declare(strict_types=1);

use PhpFuzz\PHPUnit\FuzzTest;
use PhpFuzz\PHPUnit\Fuzzing;
use PHPUnit\Framework\TestCase;

final class WrongFuzzTest extends TestCase
{
    use Fuzzing;

    #[FuzzTest]
    public static function fuzzNumber(int $number): void
    {
    }
}
"#,
    );
    let expected = "WrongFuzzTest::fuzzNumber() cannot be a fuzz test: it must be a public, non-static method \
                    that takes `string $input`, a `\\PhpFuzz\\FuzzedDataProvider $data` or typed parameters; this one is static";
    let red = phpunit(&project);
    assert_eq!(red.status.code(), Some(1), "{}", describe(&red));
    assert!(text(&red.stdout).contains(expected), "{}", describe(&red));
    let fuzz = php_fuzz(
        &project,
        &["fuzz", "tests/WrongFuzzTest.php", "--max-runs", "10"],
    );
    assert_eq!(fuzz.status.code(), Some(1), "{}", describe(&fuzz));
    assert!(text(&fuzz.stderr).contains(expected), "{}", describe(&fuzz));
}

#[test]
fn only_the_project_is_instrumented_and_the_commands_take_file_and_method() {
    let project = project();
    let corpus = project.path().join("tests/fuzz/KeyValueFuzzTest/fuzzParse");
    let report = project.path().join("report");
    let run = php_fuzz(
        &project,
        &[
            "report-coverage",
            "tests/KeyValueFuzzTest.php::fuzzParse",
            corpus.to_str().unwrap(),
            report.to_str().unwrap(),
        ],
    );
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
    let coverage: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(report.join("coverage.json")).unwrap()).unwrap();
    let files: Vec<String> = coverage_files(&coverage);
    assert!(
        files.iter().any(|f| f.ends_with("src/KeyValue.php")),
        "{files:?}"
    );
    for file in &files {
        assert!(
            !file.contains("PHPUnit")
                && !file.contains("php-fuzz/php-fuzz")
                && !file.contains("php-fuzz-runtime"),
            "instrumented a framework file: {file}"
        );
    }

    let crash = project.path().join("crash");
    fs::write(&crash, "a = 1\nkey = x\\").unwrap();
    let minimize = php_fuzz(
        &project,
        &[
            "minimize-crash",
            "tests/KeyValueFuzzTest.php::fuzzParse",
            crash.to_str().unwrap(),
            "--artifact-dir",
            "min",
        ],
    );
    assert_eq!(minimize.status.code(), Some(0), "{}", describe(&minimize));
    let minimized: Vec<PathBuf> = fs::read_dir(project.path().join("min"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(
        minimized.iter().any(|p| fs::read(p).unwrap().len() < 6),
        "{minimized:?} {}",
        describe(&minimize)
    );
}

fn coverage_files(coverage: &serde_json::Value) -> Vec<String> {
    let files = coverage.get("files").expect("coverage.json has files");
    match files {
        serde_json::Value::Array(list) => list
            .iter()
            .filter_map(|f| f.get("path").and_then(|p| p.as_str()).map(String::from))
            .collect(),
        serde_json::Value::Object(map) => map.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

#[test]
fn init_writes_a_fuzz_test_that_phpunit_runs_and_php_fuzz_fuzzes() {
    let project = project();
    fs::remove_dir_all(project.path().join("tests")).unwrap();
    let init = php_fuzz(&project, &["init", "--call", "Sample\\KeyValue->parse"]);
    assert_eq!(init.status.code(), Some(0), "{}", describe(&init));
    let test = project.path().join("tests/CsvFuzzTest.php");
    let source = fs::read_to_string(&test).unwrap();
    assert!(source.contains("use Fuzzing;"), "{source}");
    assert!(source.contains("#[FuzzTest("), "{source}");
    assert!(
        source.contains("public function fuzzParse(string $input): void"),
        "{source}"
    );
    assert!(
        !project.path().join("fuzz").exists(),
        "no target.php in a PHPUnit project"
    );
    assert_green(&project, "OK (1 test, 1 assertion)");
    let fuzz = php_fuzz(
        &project,
        &[
            "fuzz",
            "tests/CsvFuzzTest.php",
            "--max-time",
            "30",
            "--seed",
            "2",
            "--max-crashes",
            "1",
        ],
    );
    assert_eq!(fuzz.status.code(), Some(77), "{}", describe(&fuzz));
}

/// Debian's phpunit with this build's php-fuzz as the launcher's binary:
/// a security finding replays through `vendor/bin/php-fuzz run-single`.
fn phpunit_with_php_fuzz(project: &Project) -> Output {
    Command::new("phpunit")
        .current_dir(project.path())
        .env_clear()
        .env("PATH", USER_PATH)
        .env("HOME", project.path().join("home"))
        .env("PHP_FUZZ_BINARY", common::bin())
        .output()
        .expect("running phpunit")
}

#[test]
fn a_security_finding_fails_phpunit_naming_its_detector_until_fixed() {
    let project = project();
    let vulnerable = r#"<?php declare(strict_types=1);

namespace Sample;

final class Prefs
{
    /** @return array<mixed> */
    public static function load(string $cookie): array
    {
        $prefs = @unserialize($cookie);
        return is_array($prefs) ? $prefs : [];
    }
}
"#;
    write(&project, "src/Prefs.php", vulnerable);
    write(
        &project,
        "tests/PrefsFuzzTest.php",
        r#"<?php declare(strict_types=1);

use PhpFuzz\PHPUnit\FuzzTest;
use PhpFuzz\PHPUnit\Fuzzing;
use PHPUnit\Framework\TestCase;
use Sample\Prefs;

final class PrefsFuzzTest extends TestCase
{
    use Fuzzing;

    #[FuzzTest(maxLen: 128, detectors: ['object-injection'])]
    public function fuzzLoad(string $input): void
    {
        Prefs::load($input);
    }
}
"#,
    );
    let folder = "tests/fuzz/PrefsFuzzTest/fuzzLoad";
    write(
        &project,
        &format!("{folder}/seed"),
        r#"a:1:{s:5:"theme";s:4:"dark";}"#,
    );
    let fuzz = php_fuzz(
        &project,
        &[
            "fuzz",
            "tests/PrefsFuzzTest.php",
            "--max-time",
            "60",
            "--seed",
            "1",
            "--max-crashes",
            "1",
        ],
    );
    assert_eq!(fuzz.status.code(), Some(77), "{}", describe(&fuzz));
    let findings: Vec<String> = files_in(&project.path().join(folder))
        .into_iter()
        .filter(|f| f != "seed")
        .collect();
    assert_eq!(findings.len(), 1, "{findings:?}\n{}", describe(&fuzz));
    assert!(
        findings[0].starts_with("security-object-injection-"),
        "{findings:?}"
    );

    let red = phpunit_with_php_fuzz(&project);
    let stdout = text(&red.stdout);
    assert_eq!(red.status.code(), Some(1), "{}", describe(&red));
    assert!(
        stdout.contains("php-fuzz's object-injection detector reports a security bug"),
        "{stdout}"
    );
    assert!(
        stdout.contains("unserialize() would create an object of class PhpFuzzObject"),
        "{stdout}"
    );

    // Fixed: no object can come out of the cookie; the finding passes.
    write(
        &project,
        "src/Prefs.php",
        &vulnerable.replace(
            "@unserialize($cookie)",
            "@unserialize($cookie, ['allowed_classes' => false])",
        ),
    );
    let green = phpunit_with_php_fuzz(&project);
    assert_eq!(green.status.code(), Some(0), "{}", describe(&green));
}

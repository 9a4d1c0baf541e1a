//! Typed PHPUnit fuzz tests (docs/phpunit.md, docs/autofuzz.md): a fuzz
//! method with typed parameters, in the sample project of
//! fixtures/phpunit/project (php-fuzz/php-fuzz through a composer `path`
//! repository, Debian's phpunit). Its data provider's sets are seeds;
//! php-fuzz mutates one argument at a time and writes the finding beside
//! the test as a readable entry, which phpunit then replays and fails on.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use common::composer::{Project, USER_PATH, describe, text};

const FOLDER: &str = "tests/fuzz/PagingFuzzTest/fuzzPage";

fn phpunit(project: &Project) -> Output {
    Command::new("phpunit")
        .current_dir(project.path())
        .env_clear()
        .env("PATH", USER_PATH)
        .env("HOME", project.path().join("home"))
        .output()
        .expect("running phpunit")
}

fn php_fuzz(project: &Project, args: &[&str]) -> Output {
    project
        .launcher("http://127.0.0.1:1")
        .env("PHP_FUZZ_BINARY", common::bin())
        .args(args)
        .output()
        .unwrap()
}

fn write(project: &Project, relative: &str, text: &str) {
    let path = project.path().join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn findings(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("crash-"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A paging helper whose bug needs one enum case and a negative page, and
/// its typed fuzz test, seeded by a data provider that comes close.
fn write_typed_test(project: &Project) {
    write(
        project,
        "src/Order.php",
        "<?php declare(strict_types=1);\n\nnamespace Sample;\n\nenum Order\n{\n    case Ascending;\n    case Descending;\n}\n",
    );
    write(
        project,
        "src/Paging.php",
        r#"<?php declare(strict_types=1);

namespace Sample;

final class Paging
{
    /** @param list<string> $items */
    public static function page(array $items, Order $order, int $page): array
    {
        if ($order === Order::Descending) {
            $items = \array_reverse($items);
            if ($page < 0) {
                return [$items[\count($items) + $page * 10]]; // planted bug: a negative page reads before the start
            }
        }

        return \array_slice($items, \max(0, $page) * 10, 10);
    }
}
"#,
    );
    write(
        project,
        "tests/PagingFuzzTest.php",
        r#"<?php declare(strict_types=1);

use PhpFuzz\PHPUnit\FuzzTest;
use PhpFuzz\PHPUnit\Fuzzing;
use PHPUnit\Framework\TestCase;
use Sample\Order;
use Sample\Paging;

final class PagingFuzzTest extends TestCase
{
    use Fuzzing;

    public static function pages(): array
    {
        return [[['a', 'b', 'c'], Order::Descending, 3], [[], Order::Ascending, 0]];
    }

    /**
     * @param list<string> $items
     * @dataProvider pages
     */
    #[FuzzTest]
    public function fuzzPage(array $items, Order $order, int $page): void
    {
        self::assertLessThanOrEqual(10, \count(Paging::page($items, $order, $page)));
    }
}
"#,
    );
}

#[test]
fn a_typed_fuzz_test_is_fuzzed_and_its_finding_replays_in_phpunit() {
    let project = Project::from_fixture("phpunit/project");
    write_typed_test(&project);
    let green = phpunit(&project);
    assert_eq!(green.status.code(), Some(0), "{}", describe(&green));
    assert!(
        text(&green.stdout).contains("OK (4 tests, 4 assertions)"),
        "{}",
        describe(&green)
    );

    let fuzz = php_fuzz(
        &project,
        &[
            "fuzz",
            "tests/PagingFuzzTest.php",
            "--max-time",
            "60",
            "--max-crashes",
            "1",
            "--seed",
            "1",
        ],
    );
    assert_eq!(fuzz.status.code(), Some(77), "{}", describe(&fuzz));
    let stderr = text(&fuzz.stderr);
    assert!(stderr.contains("typed arguments"), "{stderr}");
    assert!(
        stderr.contains("0 rejected by the callee's types"),
        "{stderr}"
    );
    let found = findings(&project.path().join(FOLDER));
    assert_eq!(found.len(), 1, "{}", describe(&fuzz));
    let entry = fs::read_to_string(project.path().join(FOLDER).join(&found[0])).unwrap();
    let lines: Vec<&str> = entry.lines().collect();
    assert_eq!(lines[0], "php-fuzz arguments v1", "{entry}");
    assert_eq!(lines[2], r"Sample\Order::Descending", "{entry}");
    assert!(lines[3].starts_with('-'), "{entry}");

    let red = phpunit(&project);
    let stdout = text(&red.stdout);
    assert_eq!(red.status.code(), Some(1), "{}", describe(&red));
    assert!(stdout.contains("Warning: Undefined array key"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "fuzz input {FOLDER}/{} of fuzzPage() failed",
            found[0]
        )),
        "{stdout}"
    );
    let replay = php_fuzz(
        &project,
        &[
            "run-single",
            "tests/PagingFuzzTest.php::fuzzPage",
            &format!("{FOLDER}/{}", found[0]),
        ],
    );
    assert_eq!(replay.status.code(), Some(77), "{}", describe(&replay));
}

#[test]
fn autofuzz_writes_a_typed_fuzz_test_that_phpunit_runs() {
    let project = Project::from_fixture("phpunit/project");
    write_typed_test(&project);
    let written = php_fuzz(
        &project,
        &[
            "autofuzz",
            r"Sample\Paging::page",
            "--max-runs",
            "50",
            "--write-test",
            "tests",
        ],
    );
    assert!(
        matches!(written.status.code(), Some(0 | 77)),
        "{}",
        describe(&written)
    );
    let test = fs::read_to_string(project.path().join("tests/PagingPageFuzzTest.php"))
        .unwrap_or_else(|_| panic!("{}", describe(&written)));
    assert!(
        test.contains(
            "public function fuzzPage(array $items, \\Sample\\Order $order, int $page): void"
        ),
        "{test}"
    );
    assert!(test.contains("@param list<string> $items"), "{test}");
    let green = phpunit(&project);
    assert_eq!(green.status.code(), Some(0), "{}", describe(&green));
    assert!(
        text(&green.stdout).contains("OK (5 tests"),
        "{}",
        describe(&green)
    );
}

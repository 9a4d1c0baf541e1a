//! `report-coverage` end to end: the pages say what the corpus reached.

mod common;

use std::fs;
use std::path::Path;

use common::{Run, fixture, php_fuzz, php_fuzz_into_closed_pipe};
use scraper::{Html, Selector};

fn line_of(source: &str, needle: &str) -> usize {
    source
        .lines()
        .position(|l| l.contains(needle))
        .expect(needle)
        + 1
}

/// `report-coverage` of fixtures/report into `dir/out`, run by `php_fuzz`.
fn report_the_fixture(php_fuzz: fn(&[&str], &Path) -> Run, dir: &Path) -> Run {
    let target = fixture("report/target.php");
    let corpus = fixture("report/corpus");
    php_fuzz(
        &[
            "report-coverage",
            target.to_str().unwrap(),
            corpus.to_str().unwrap(),
            "out",
        ],
        dir,
    )
}

#[test]
fn report_marks_covered_and_uncovered_blocks_and_agrees_with_json_and_lcov() {
    let dir = tempfile::tempdir().unwrap();
    let run = report_the_fixture(php_fuzz, dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(
        run.stdout().contains("5 corpus entries replayed"),
        "{}",
        run.all()
    );
    assert!(
        run.stdout().contains("(1 crashed and were skipped)"),
        "{}",
        run.all()
    );
    let out = dir.path().join("out");
    let source = fs::read_to_string(fixture("report/Classifier.php")).unwrap();

    // The file page.
    let page =
        Html::parse_document(&fs::read_to_string(out.join("files/Classifier.php.html")).unwrap());
    let line = |n: usize| {
        page.select(&Selector::parse(&format!("#L{n}")).unwrap())
            .next()
            .expect("line element")
    };
    let markers = |n: usize, class: &str| {
        let selector = Selector::parse(&format!(".m.{class}")).unwrap();
        line(n)
            .select(&selector)
            .map(|m| m.value().attr("title").unwrap_or("").to_string())
            .collect::<Vec<_>>()
    };
    let number = line_of(&source, "if (ctype_digit($s))");
    assert!(
        markers(number, "c")
            .iter()
            .any(|t| t.starts_with("IfBranch · hit 1 time")),
        "{:?}",
        markers(number, "c")
    );
    let markup = line_of(&source, "if ($s[0] === '<')");
    assert!(
        markers(markup, "u")
            .iter()
            .any(|t| t.starts_with("IfBranch · never ran")),
        "{:?}",
        markers(markup, "u")
    );
    // The code after that `if` ran: its block sits on the `}` closing it.
    assert!(
        markers(markup + 2, "c")
            .iter()
            .any(|t| t.starts_with("AfterIf")),
        "{:?}",
        markers(markup + 2, "c")
    );
    assert_eq!(line(markup).value().attr("class"), Some("l uncovered"));
    let unused = line_of(&source, "public static function unused()") + 1; // its `{`
    assert_eq!(
        markers(unused, "u").len(),
        1,
        "the unused method's entry never ran"
    );
    assert_eq!(line(unused).value().attr("class"), Some("l uncovered"));
    assert_eq!(
        line(1).value().attr("class"),
        Some("l covered"),
        "loading the file counts"
    );

    // Escaping: the source's markup is text, the page has only its own script.
    let scripts = page.select(&Selector::parse("script").unwrap()).count();
    assert_eq!(scripts, 1);
    let constant = line_of(&source, "const MARKUP");
    assert!(
        line(constant)
            .text()
            .collect::<String>()
            .contains("</script><script>alert(1)</script><!--")
    );

    // Per-function table.
    let functions: Vec<Vec<String>> = page
        .select(&Selector::parse("#functions tbody tr").unwrap())
        .map(|tr| {
            tr.select(&Selector::parse("td").unwrap())
                .map(|td| td.text().collect::<String>().trim().to_string())
                .collect()
        })
        .collect();
    let classify = functions
        .iter()
        .find(|r| r[0] == "Classifier::classify")
        .expect("classify row");
    let unused_row = functions
        .iter()
        .find(|r| r[0] == "Classifier::unused")
        .expect("unused row");
    assert_eq!(unused_row[1], "0 / 1");
    let (covered, total): (usize, usize) = {
        let parts: Vec<usize> = classify[1]
            .split(" / ")
            .map(|p| p.parse().unwrap())
            .collect();
        (parts[0], parts[1])
    };
    assert!(covered < total && covered > 0, "{classify:?}");

    // The index: one row per file, totals, the crash.
    let index = Html::parse_document(&fs::read_to_string(out.join("index.html")).unwrap());
    let rows: Vec<String> = index
        .select(&Selector::parse("#files tbody tr td.path").unwrap())
        .map(|td| td.text().collect())
        .collect();
    assert_eq!(
        rows,
        vec!["Classifier.php".to_string(), "target.php".to_string()]
    );
    let crashes = index
        .select(&Selector::parse(".crashes li").unwrap())
        .map(|li| li.text().collect::<String>())
        .collect::<Vec<_>>();
    assert_eq!(crashes.len(), 1);
    assert!(crashes[0].contains("bang"), "{crashes:?}");

    // coverage.json agrees with the page.
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("coverage.json")).unwrap()).unwrap();
    let file = json["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["relative"] == "Classifier.php")
        .unwrap();
    let block_at = |line: usize, kind: &str| {
        file["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["line"] == line as u64 && b["kind"] == kind)
            .cloned()
            .unwrap()
    };
    assert_eq!(block_at(number, "if_branch")["hits"], 1);
    assert_eq!(block_at(markup, "if_branch")["hits"], 0);
    assert_eq!(block_at(unused, "method_entry")["hits"], 0);
    assert_eq!(
        block_at(unused, "method_entry")["function"],
        "Classifier::unused"
    );
    let page_covered = page.select(&Selector::parse(".src .m.c").unwrap()).count() as u64;
    assert_eq!(file["blocks_covered"], page_covered);

    // lcov.info agrees too: a line's count is its blocks' highest.
    let lcov = fs::read_to_string(out.join("lcov.info")).unwrap();
    let record = lcov
        .split("end_of_record")
        .find(|r| r.contains("Classifier.php"))
        .unwrap();
    assert!(record.contains(&format!("DA:{unused},0")), "{record}");
    assert!(
        record.contains(&format!("DA:{number},1")),
        "the branch on that line ran once: {record}"
    );
    assert!(record.contains("FNDA:0,Classifier::unused"), "{record}");
    assert!(
        record.contains("FNDA:4,Classifier::classify"),
        "four entries ran cleanly: {record}"
    );
}

#[test]
fn an_empty_corpus_and_a_missing_one() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("empty")).unwrap();
    let target = fixture("report/target.php");
    let run = php_fuzz(
        &["report-coverage", target.to_str().unwrap(), "empty", "out"],
        dir.path(),
    );
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(dir.path().join("out/index.html").exists());
    let run = php_fuzz(
        &[
            "report-coverage",
            target.to_str().unwrap(),
            "missing",
            "out",
        ],
        dir.path(),
    );
    assert_eq!(run.code(), 1, "{}", run.all());
    assert!(run.stderr().contains("missing"), "{}", run.all());
}

#[test]
fn report_coverage_into_a_closed_pipe_writes_the_report_and_does_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let run = report_the_fixture(php_fuzz_into_closed_pipe, dir.path());
    assert_eq!(run.code(), 0, "{}", run.all());
    assert!(!run.stderr().contains("panicked"), "{}", run.all());
    assert!(dir.path().join("out/index.html").exists());
}

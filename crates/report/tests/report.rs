//! The report as a reader sees it: write it for known hit counts, parse the
//! HTML, and check the pages, `coverage.json` and `lcov.info` against each
//! other.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use php_fuzz_instrument::{Block, BlockId, BlockKind};
use php_fuzz_report::{
    BlockCoverage, CampaignHistory, FileCoverage, HistoryCrash, HistoryRestart, HistorySample,
    ReplayCrash, ReportInput, ReportSummary, write_report,
};
use scraper::{ElementRef, Html, Node, Selector};

const DATE: &str = "2026-11-22 14:05 UTC";

fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/report")
        .join(relative)
        .canonicalize()
        .unwrap()
}

fn select(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

fn text(e: ElementRef<'_>) -> String {
    e.text().collect::<String>().trim().to_string()
}

/// A block at the first `needle` after the first `after` in `source`,
/// with line and column computed from the bytes, as the instrumenter does.
fn block_at(
    source: &[u8],
    after: &str,
    needle: &str,
    kind: BlockKind,
    function: Option<&str>,
    hits: u64,
) -> BlockCoverage {
    let find = |hay: &[u8], what: &str| {
        if what.is_empty() {
            Some(0)
        } else {
            hay.windows(what.len()).position(|w| w == what.as_bytes())
        }
    };
    let start = find(source, after).unwrap_or_else(|| panic!("{after:?} not in the fixture"));
    let offset = start
        + find(&source[start..], needle).unwrap_or_else(|| panic!("{needle:?} after {after:?}"));
    let line = source[..offset].iter().filter(|&&b| b == b'\n').count() as u32 + 1;
    let line_start = source[..offset]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let id = u32::try_from(offset).unwrap() + 1;
    BlockCoverage {
        block: Block {
            id: BlockId(id),
            kind,
            byte_offset: offset,
            line,
            column: (offset - line_start) as u32 + 1,
            function: function.map(str::to_string),
        },
        hits,
    }
}

const ADD: Option<&str> = Some("Fixture\\Report\\Calculator::add");
const NEGATIVE: Option<&str> = Some("Fixture\\Report\\Calculator::negative");
const DESCRIBE: Option<&str> = Some("Fixture\\Report\\Calculator::describe");
const UNUSED: Option<&str> = Some("Fixture\\Report\\Calculator::unused");

/// What a marker should show: the token at the block, and the block.
struct Expected {
    token: &'static str,
    block: BlockCoverage,
}

/// Calculator.php with hand-written blocks: `add` half covered, `negative`
/// and `unused` never entered, `describe` partly.
fn calculator() -> (FileCoverage, Vec<Expected>) {
    use BlockKind::*;
    let path = fixture("Calculator.php");
    let source = fs::read(&path).unwrap();
    let s = source.as_slice();
    let expected = vec![
        Expected {
            token: "<?php",
            block: block_at(s, "", "<?php", FileEntry, None, 1),
        },
        Expected {
            token: "{",
            block: block_at(s, "function add", "{", MethodEntry, ADD, 5),
        },
        Expected {
            token: "||",
            block: block_at(s, "if ($a < 0 ", "||", ShortCircuit, ADD, 4),
        },
        Expected {
            token: "{",
            block: block_at(s, "$b < 0)", "{", IfBranch, ADD, 0),
        },
        Expected {
            token: "}",
            block: block_at(s, "return $this->negative($a, $b);", "}", AfterIf, ADD, 5),
        },
        Expected {
            token: "{",
            block: block_at(s, "function negative", "{", MethodEntry, NEGATIVE, 0),
        },
        Expected {
            token: "{",
            block: block_at(s, "function describe", "{", MethodEntry, DESCRIBE, 3),
        },
        Expected {
            token: "=>",
            block: block_at(s, "$n === 0 ", "=>", MatchArm, DESCRIBE, 1),
        },
        Expected {
            token: "=>",
            block: block_at(s, "$n < 0 ", "=>", MatchArm, DESCRIBE, 0),
        },
        Expected {
            token: "=>",
            block: block_at(s, "default ", "=>", MatchArm, DESCRIBE, 2),
        },
        Expected {
            token: "=>",
            block: block_at(
                s,
                "fn (string $s): string ",
                "=>",
                ArrowFunctionBody,
                Some("{closure}"),
                3,
            ),
        },
        // After a two-byte character: the column counts bytes.
        Expected {
            token: "??",
            block: block_at(s, "$say($kind) ", "??", Coalesce, DESCRIBE, 0),
        },
        Expected {
            token: "{",
            block: block_at(s, "function unused", "{", MethodEntry, UNUSED, 0),
        },
    ];
    // The caller's order is not source order.
    let mut blocks: Vec<BlockCoverage> = expected.iter().map(|e| e.block.clone()).collect();
    blocks.reverse();
    (
        FileCoverage {
            path,
            source,
            blocks,
        },
        expected,
    )
}

fn input(files: Vec<FileCoverage>, crashes: Vec<ReplayCrash>) -> ReportInput {
    ReportInput {
        target: fixture("target.php"),
        corpus_dir: PathBuf::from("/work/corpus"),
        corpus_entries: 7,
        generated_at: DATE.to_string(),
        files,
        crashes,
        history: None,
    }
}

struct Written {
    dir: tempfile::TempDir,
    summary: ReportSummary,
}

impl Written {
    fn out(&self) -> PathBuf {
        self.dir.path().join("report")
    }

    fn read(&self, name: &str) -> String {
        fs::read_to_string(self.out().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn page(&self, name: &str) -> Html {
        Html::parse_document(&self.read(name))
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.read("coverage.json")).unwrap()
    }
}

fn write(input: &ReportInput) -> Written {
    let dir = tempfile::tempdir().unwrap();
    // A directory that does not exist yet, two levels deep.
    let summary = write_report(input, &dir.path().join("report")).unwrap();
    Written { dir, summary }
}

/// The page of the only file, found through the index's link.
fn only_page(w: &Written) -> Html {
    let index = w.page("index.html");
    let link = index
        .select(&select("#files tbody td.path a"))
        .next()
        .unwrap();
    w.page(link.value().attr("href").unwrap())
}

/// Markers of a line: class (`c`/`u`), title, and the text before the
/// marker on the line (to check the column).
fn markers(page: &Html, line: u32) -> Vec<(String, String, String, String)> {
    let code = page
        .select(&select(&format!("#L{line} .code")))
        .next()
        .unwrap_or_else(|| panic!("line {line}"));
    let mut before = String::new();
    let mut out = Vec::new();
    for node in code.descendants() {
        match node.value() {
            Node::Text(t) => before.push_str(t),
            Node::Element(e) if e.has_class("m", scraper::CaseSensitivity::CaseSensitive) => {
                let class = if e.has_class("c", scraper::CaseSensitivity::CaseSensitive) {
                    "c"
                } else {
                    "u"
                };
                let marker = ElementRef::wrap(node).unwrap();
                out.push((
                    class.to_string(),
                    e.attr("title").unwrap().to_string(),
                    before.clone(),
                    text(marker),
                ));
            }
            _ => {}
        }
    }
    out
}

fn line_class(page: &Html, line: u32) -> String {
    let el = page.select(&select(&format!("#L{line}"))).next().unwrap();
    el.value().attr("class").unwrap().trim().to_string()
}

#[test]
fn every_block_is_marked_covered_or_not_at_its_exact_column() {
    let (file, expected) = calculator();
    let source = String::from_utf8(file.source.clone()).unwrap();
    let w = write(&input(vec![file], vec![]));
    let page = only_page(&w);
    for e in &expected {
        let b = &e.block.block;
        let found = markers(&page, b.line);
        let kind = format!("{:?} · ", b.kind);
        let marker = found
            .iter()
            .find(|(_, title, _, _)| {
                title.starts_with(&kind) && title.contains(&format!("block {}", b.id.0))
            })
            .unwrap_or_else(|| panic!("no {kind} marker on line {}: {found:?}", b.line));
        let (class, title, before, token) = marker;
        assert_eq!(class, if e.block.hits > 0 { "c" } else { "u" }, "{title}");
        let hits = match e.block.hits {
            0 => "never ran".to_string(),
            1 => "hit 1 time".to_string(),
            n => format!("hit {n} times"),
        };
        assert!(title.starts_with(&format!("{kind}{hits}")), "{title}");
        assert_eq!(token, e.token, "{title}");
        let line = source.lines().nth(b.line as usize - 1).unwrap();
        assert_eq!(
            before,
            &line[..b.column as usize - 1],
            "the marker sits at column {}",
            b.column
        );
    }
    // Every block is one marker, no more.
    assert_eq!(page.select(&select("#source .m")).count(), expected.len());
    assert_eq!(
        page.select(&select("#source .m.c")).count(),
        expected.iter().filter(|e| e.block.hits > 0).count()
    );

    // The gutter: covered, uncovered, partial, and lines without blocks.
    let at = |needle: &str| source.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1;
    assert_eq!(
        line_class(&page, at("if ($a < 0 || $b < 0) {")),
        "l partial"
    );
    assert_eq!(line_class(&page, at("$n < 0 => 'negative'")), "l uncovered");
    assert_eq!(line_class(&page, at("default => 'positive'")), "l covered");
    assert_eq!(line_class(&page, at("private const LABEL")), "l");
    let count = |line: u32| {
        text(
            page.select(&select(&format!("#L{line} .h")))
                .next()
                .unwrap(),
        )
    };
    assert_eq!(
        count(at("if ($a < 0 || $b < 0) {")),
        "4",
        "a line's count is its blocks' highest"
    );
    assert_eq!(count(at("private const LABEL")), "");
}

#[test]
fn the_function_table_counts_blocks_per_function_and_links_to_them() {
    let (file, _) = calculator();
    let w = write(&input(vec![file], vec![]));
    let page = only_page(&w);
    let rows: Vec<Vec<String>> = page
        .select(&select("#functions tbody tr"))
        .map(|tr| tr.select(&select("td")).map(text).collect())
        .collect();
    let table: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str(), r[3].as_str()))
        .collect();
    assert_eq!(
        table,
        vec![
            ("{main}", "1 / 1", "1"),
            ("Fixture\\Report\\Calculator::add", "3 / 4", "5"),
            ("Fixture\\Report\\Calculator::negative", "0 / 1", "0"),
            ("Fixture\\Report\\Calculator::describe", "3 / 5", "3"),
            ("{closure:34}", "1 / 1", "3"),
            ("Fixture\\Report\\Calculator::unused", "0 / 1", "0"),
        ]
    );
    // Each name links to its first line, which exists.
    for a in page.select(&select("#functions tbody td.fn a")) {
        let href = a.value().attr("href").unwrap();
        assert!(page.select(&select(href)).next().is_some(), "{href}");
    }
    let add = page
        .select(&select("#functions tbody td.fn a"))
        .nth(1)
        .unwrap();
    assert_eq!(add.value().attr("href"), Some("#L15"));
}

#[test]
fn the_index_has_a_row_per_file_the_totals_and_the_run_details() {
    let (calc, _) = calculator();
    let target_source = fs::read(fixture("target.php")).unwrap();
    let target = FileCoverage {
        path: fixture("target.php"),
        blocks: vec![
            block_at(&target_source, "", "<?php", BlockKind::FileEntry, None, 1),
            block_at(
                &target_source,
                "function (string $input)",
                "{",
                BlockKind::ClosureEntry,
                Some("{closure}"),
                7,
            ),
        ],
        source: target_source,
    };
    let crashes = vec![ReplayCrash {
        input: PathBuf::from("/work/corpus/crash-1"),
        kind: "exception".into(),
        summary: "Error: bang in Classifier.php:14".into(),
    }];
    let w = write(&input(vec![target, calc], crashes));
    assert_eq!(w.summary.files, 2);
    assert_eq!((w.summary.blocks, w.summary.covered_blocks), (15, 10));
    assert_eq!(w.summary.index, w.out().join("index.html"));
    let index = w.page("index.html");
    let rows: Vec<Vec<String>> = index
        .select(&select("#files tbody tr"))
        .map(|tr| tr.select(&select("td")).map(text).collect())
        .collect();
    assert_eq!(
        rows,
        vec![
            vec!["Calculator.php", "8 / 13", "5", "61.5 %", "8 / 12"],
            vec!["target.php", "2 / 2", "0", "100.0 %", "2 / 2"],
        ]
    );
    let total: Vec<String> = index.select(&select("#files tfoot td")).map(text).collect();
    assert_eq!(total, vec!["Total", "10 / 15", "5", "66.6 %", "10 / 14"]);
    assert_eq!(
        text(index.select(&select("#target")).next().unwrap()),
        fixture("target.php").display().to_string()
    );
    assert_eq!(
        text(index.select(&select("#corpus")).next().unwrap()),
        "/work/corpus · 7 entries"
    );
    assert_eq!(
        text(index.select(&select("#generated")).next().unwrap()),
        DATE
    );
    let crashes: Vec<String> = index.select(&select(".crashes li")).map(text).collect();
    assert_eq!(
        crashes,
        vec!["crash-1exceptionError: bang in Classifier.php:14"]
    );
    assert!(index.select(&select("#crashes .none")).next().is_none());
}

#[test]
fn no_crashes_says_none() {
    let (calc, _) = calculator();
    let w = write(&input(vec![calc], vec![]));
    let index = w.page("index.html");
    let none = index
        .select(&select("#crashes .none"))
        .next()
        .expect("a 'none' line");
    assert!(text(none).starts_with("None"));
    assert_eq!(index.select(&select(".crashes li")).count(), 0);
}

#[test]
fn coverage_json_and_lcov_agree_with_the_pages() {
    let (calc, _) = calculator();
    let w = write(&input(vec![calc], vec![]));
    let page = only_page(&w);
    let json = w.json();
    let file = &json["files"][0];
    assert_eq!(file["relative"], "Calculator.php");
    assert_eq!(json["totals"]["blocks"], 13);
    assert_eq!(json["totals"]["covered_blocks"], 8);
    assert_eq!(
        file["blocks_covered"],
        page.select(&select("#source .m.c")).count()
    );

    // Per line, from each source: (blocks, covered, highest hits).
    let mut from_json: BTreeMap<u64, (usize, usize, u64)> = BTreeMap::new();
    let mut previous = (0, 0);
    for b in file["blocks"].as_array().unwrap() {
        let (line, column, hits) = (
            b["line"].as_u64().unwrap(),
            b["column"].as_u64().unwrap(),
            b["hits"].as_u64().unwrap(),
        );
        assert!((line, column) > previous, "blocks are in source order");
        previous = (line, column);
        for key in ["id", "kind", "function"] {
            assert!(b.get(key).is_some(), "{key} in {b}");
        }
        let e = from_json.entry(line).or_default();
        *e = (e.0 + 1, e.1 + usize::from(hits > 0), e.2.max(hits));
    }
    let mut from_html: BTreeMap<u64, (usize, usize)> = BTreeMap::new();
    for m in page.select(&select("#source .m")) {
        let line = m
            .ancestors()
            .filter_map(ElementRef::wrap)
            .find(|e| {
                e.value()
                    .has_class("l", scraper::CaseSensitivity::CaseSensitive)
            })
            .unwrap();
        let n: u64 = line.value().attr("id").unwrap()[1..].parse().unwrap();
        let e = from_html.entry(n).or_default();
        *e = (
            e.0 + 1,
            e.1 + usize::from(
                m.value()
                    .has_class("c", scraper::CaseSensitivity::CaseSensitive),
            ),
        );
    }
    assert_eq!(
        from_json
            .iter()
            .map(|(l, (b, c, _))| (*l, (*b, *c)))
            .collect::<BTreeMap<_, _>>(),
        from_html
    );

    let lcov = w.read("lcov.info");
    assert!(lcov.starts_with("TN:\nSF:"), "{lcov}");
    assert!(lcov.ends_with("end_of_record\n"));
    let da: BTreeMap<u64, u64> = lcov
        .lines()
        .filter_map(|l| l.strip_prefix("DA:"))
        .map(|l| {
            let (line, hits) = l.split_once(',').unwrap();
            (line.parse().unwrap(), hits.parse().unwrap())
        })
        .collect();
    assert_eq!(
        da,
        from_json
            .iter()
            .map(|(l, (_, _, h))| (*l, *h))
            .collect::<BTreeMap<_, _>>()
    );
    let field = |name: &str| {
        lcov.lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap()
            .to_string()
    };
    assert_eq!(field("LF:"), file["lines_total"].to_string());
    assert_eq!(field("LH:"), file["lines_covered"].to_string());
    let index = w.page("index.html");
    let lines_cell = text(
        index
            .select(&select("#files tbody td:nth-child(5)"))
            .next()
            .unwrap(),
    );
    assert_eq!(lines_cell, format!("{} / {}", field("LH:"), field("LF:")));

    // Functions: the page's rows but top-level code, with the same counts.
    let rows: Vec<(String, String)> = page
        .select(&select("#functions tbody tr"))
        .map(|tr| {
            let cells: Vec<String> = tr.select(&select("td")).map(text).collect();
            (cells[0].clone(), cells[3].clone())
        })
        .filter(|(name, _)| name != "{main}")
        .collect();
    let fnda: Vec<(String, String)> = lcov
        .lines()
        .filter_map(|l| l.strip_prefix("FNDA:"))
        .map(|l| {
            let (hits, name) = l.split_once(',').unwrap();
            (name.to_string(), hits.to_string())
        })
        .collect();
    assert_eq!(fnda, rows);
    assert_eq!(field("FNF:"), "5");
    assert_eq!(field("FNH:"), "3");
    // The line with two blocks has a branch record per block.
    assert!(lcov.contains("BRDA:16,0,0,4\nBRDA:16,0,1,0\n"), "{lcov}");
    assert_eq!(
        (field("BRF:"), field("BRH:")),
        ("2".to_string(), "1".to_string())
    );
}

#[test]
fn genhtml_accepts_the_tracefile() {
    let has = |tool: &str| {
        std::process::Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !has("genhtml") {
        eprintln!("genhtml is not installed: skipped (apt-get install lcov)");
        return;
    }
    let (calc, _) = calculator();
    let w = write(&input(vec![calc], vec![]));
    let html = w.dir.path().join("genhtml");
    let run = std::process::Command::new("genhtml")
        .args(["--branch-coverage", "--quiet", "--output-directory"])
        .arg(&html)
        .arg(w.out().join("lcov.info"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(!stderr.to_lowercase().contains("warning"), "{stderr}");
    assert!(html.join("index.html").exists());
}

#[test]
fn markup_in_the_source_and_in_paths_stays_text() {
    let source = b"<?php\n// </script><script>alert(1)</script> <!-- open comment\n$x = '<img src=x onerror=alert(1)>'; // \"q\" 'q' &amp; &lt;\nif ($x) { echo '-->'; }\n".to_vec();
    let block =
        |after: &str, needle: &str, kind, hits| block_at(&source, after, needle, kind, None, hits);
    let blocks = vec![
        block("", "<?php", BlockKind::FileEntry, 1),
        block("if ($x) ", "{", BlockKind::IfBranch, 0),
    ];
    let path = PathBuf::from("/p/<img src=x onerror=alert(1)>&amp;\"it's\".php");
    let file = FileCoverage {
        path: path.clone(),
        source: source.clone(),
        blocks,
    };
    let crash = ReplayCrash {
        input: PathBuf::from("/work/corpus/<i>x</i>"),
        kind: "<kind>".into(),
        summary: "</script><script>alert(2)</script> & <!--".into(),
    };
    let w = write(&input(vec![file], vec![crash]));
    let page = only_page(&w);
    let index = w.page("index.html");
    for doc in [&page, &index] {
        for tag in ["img", "i", "kind"] {
            assert_eq!(doc.select(&select(tag)).count(), 0, "an injected <{tag}>");
        }
        assert_eq!(
            doc.select(&select("script")).count(),
            1,
            "only the page's own script"
        );
        let comments = doc.tree.nodes().filter(|n| n.value().is_comment()).count();
        assert_eq!(comments, 0, "an injected comment");
    }
    // The listing is lines of spans and links, nothing else.
    for e in page.select(&select("#source *")) {
        assert!(
            ["div", "span", "a"].contains(&e.value().name()),
            "<{}> in the listing",
            e.value().name()
        );
    }
    // Each line reads exactly as the source.
    for (n, line) in String::from_utf8(source).unwrap().lines().enumerate() {
        let shown = page
            .select(&select(&format!("#L{} .code", n + 1)))
            .next()
            .unwrap()
            .text()
            .collect::<String>();
        assert_eq!(shown, line);
    }
    let row = index
        .select(&select("#files tbody td.path"))
        .next()
        .unwrap();
    assert_eq!(text(row), "<img src=x onerror=alert(1)>&amp;\"it's\".php");
    let crash = text(index.select(&select(".crashes li")).next().unwrap());
    assert_eq!(
        crash,
        "<i>x</i><kind></script><script>alert(2)</script> & <!--"
    );
    let title = page.select(&select("title")).next().unwrap();
    assert!(
        text(title).starts_with("<img src=x onerror=alert(1)>&amp;\"it's\".php"),
        "{}",
        text(title)
    );
    // The page name is sanitised and the link works.
    let href = index
        .select(&select("#files tbody td.path a"))
        .next()
        .unwrap()
        .value()
        .attr("href")
        .unwrap();
    assert!(
        href.starts_with("files/")
            && href
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/._-".contains(&b)),
        "{href}"
    );
    assert!(w.out().join(href).exists());
    // coverage.json carries the path as it is.
    assert_eq!(w.json()["files"][0]["path"], path.display().to_string());
}

#[test]
fn invalid_utf8_and_control_bytes_render_and_keep_columns() {
    // Invalid bytes, NUL, ESC, a right-to-left override, a BOM, CRLF endings.
    let source = b"<?php\r\n$a = \"\xff\xfe\x00\x1b[31m\xe2\x80\xae\"; if ($a) { f(); }\r\n\xef\xbb\xbf\xc3\r\n".to_vec();
    let blocks = vec![
        block_at(&source, "", "<?php", BlockKind::FileEntry, None, 1),
        block_at(&source, "if ($a) ", "{", BlockKind::IfBranch, None, 0),
        // A stale block past the end still shows, on the last line.
        BlockCoverage {
            block: Block {
                id: BlockId(99),
                kind: BlockKind::AfterIf,
                byte_offset: 10_000,
                line: 40,
                column: 1,
                function: None,
            },
            hits: 2,
        },
    ];
    let w = write(&input(
        vec![FileCoverage {
            path: "/p/bytes.php".into(),
            source,
            blocks,
        }],
        vec![],
    ));
    let page = only_page(&w);
    let line2 = markers(&page, 2);
    assert_eq!(line2.len(), 1);
    let (class, _, before, token) = &line2[0];
    assert_eq!((class.as_str(), token.as_str()), ("u", "{"));
    assert_eq!(
        before,
        "$a = \"\u{fffd}\u{fffd}\u{2400}\u{241b}[31m\\u{202E}\"; if ($a) "
    );
    let specials: Vec<(String, String)> = page
        .select(&select("#L2 .sp"))
        .map(|s| (text(s), s.value().attr("title").unwrap().to_string()))
        .collect();
    assert_eq!(
        specials,
        vec![
            ("\u{fffd}".to_string(), "not UTF-8: FF".to_string()),
            ("\u{fffd}".to_string(), "not UTF-8: FE".to_string()),
            ("\u{2400}".to_string(), "U+0000".to_string()),
            ("\u{241b}".to_string(), "U+001B".to_string()),
            ("\\u{202E}".to_string(), "U+202E".to_string()),
        ]
    );
    // No stray carriage returns; the BOM and the truncated character show.
    assert_eq!(
        page.select(&select("#L3 .code"))
            .next()
            .unwrap()
            .text()
            .collect::<String>(),
        "\\u{FEFF}\u{fffd}"
    );
    assert_eq!(
        markers(&page, 3).len(),
        1,
        "the stale block lands on the last line"
    );
    assert!(page.select(&select("#L4")).next().is_none());
    let raw = w.read(&format!("files/{}", "bytes.php.html"));
    assert!(!raw.contains('\0') && !raw.contains('\u{1b}') && !raw.contains('\r'));
}

#[test]
fn uncovered_runs_are_jump_targets_linked_in_order() {
    let (calc, _) = calculator();
    let w = write(&input(vec![calc], vec![]));
    let page = only_page(&w);
    // Runs of uncovered blocks (in source order): the `if` body, negative(),
    // the second match arm, then `??` together with unused().
    let ids: Vec<String> = page
        .select(&select("#source [id^=u]"))
        .map(|e| e.value().attr("id").unwrap().to_string())
        .collect();
    assert_eq!(ids, vec!["u1", "u2", "u3", "u4"]);
    let links: Vec<&str> = page
        .select(&select("#source .m.u a"))
        .map(|a| a.value().attr("href").unwrap())
        .collect();
    assert_eq!(links, vec!["#u2", "#u3", "#u4", "#u1", "#u1"]);
    assert_eq!(
        page.select(&select("#next"))
            .next()
            .unwrap()
            .value()
            .attr("href"),
        Some("#u1")
    );
    assert_eq!(
        page.select(&select("#prev"))
            .next()
            .unwrap()
            .value()
            .attr("href"),
        Some("#u4")
    );
    let script = text(page.select(&select("script")).next().unwrap());
    assert!(script.contains("e.key === 'n'") && script.contains("scrollIntoView"));
}

#[test]
fn a_fully_covered_file_has_no_jump_buttons() {
    let source = b"<?php\necho 1;\n".to_vec();
    let blocks = vec![block_at(
        &source,
        "",
        "<?php",
        BlockKind::FileEntry,
        None,
        3,
    )];
    let w = write(&input(
        vec![FileCoverage {
            path: "/p/ok.php".into(),
            source,
            blocks,
        }],
        vec![],
    ));
    let page = only_page(&w);
    assert!(page.select(&select("#next")).next().is_none());
    assert_eq!(line_class(&page, 1), "l covered");
}

#[test]
fn blocks_at_one_position_are_one_marker_each() {
    let source = b"<?php\nf();\n".to_vec();
    let mut second = block_at(&source, "", "f", BlockKind::AfterIf, None, 0);
    second.block.id = BlockId(50);
    let blocks = vec![
        block_at(&source, "", "f", BlockKind::IfBranch, None, 2),
        second,
    ];
    let w = write(&input(
        vec![FileCoverage {
            path: "/p/same.php".into(),
            source,
            blocks,
        }],
        vec![],
    ));
    let page = only_page(&w);
    let found = markers(&page, 2);
    assert_eq!(found.len(), 2);
    assert_eq!((found[0].0.as_str(), found[1].0.as_str()), ("c", "u"));
    // The inner one, which a pointer hovers, names both.
    assert!(
        found[1].1.starts_with("AfterIf · never ran")
            && found[1].1.contains("\nIfBranch · hit 2 times"),
        "{}",
        found[1].1
    );
    assert_eq!(line_class(&page, 2), "l partial");
}

#[test]
fn paths_are_relative_to_the_common_root_and_same_names_get_their_own_pages() {
    let file = |path: &str, hits: u64| {
        let source = format!("<?php // {path}\n").into_bytes();
        let blocks = vec![block_at(
            &source,
            "",
            "<?php",
            BlockKind::FileEntry,
            None,
            hits,
        )];
        FileCoverage {
            path: path.into(),
            source,
            blocks,
        }
    };
    let files = vec![
        file("/proj/src/b/Util.php", 0),
        file("/proj/src/a/Util.php", 1),
        file("/proj/src/a_Util.php", 1),
        file("/proj/src/A/util.php", 1),
    ];
    let w = write(&input(files, vec![]));
    let index = w.page("index.html");
    let rows: Vec<(String, String)> = index
        .select(&select("#files tbody td.path a"))
        .map(|a| (text(a), a.value().attr("href").unwrap().to_string()))
        .collect();
    let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        vec!["A/util.php", "a/Util.php", "a_Util.php", "b/Util.php"]
    );
    let mut pages: Vec<String> = rows.iter().map(|(_, p)| p.to_lowercase()).collect();
    pages.sort();
    pages.dedup();
    assert_eq!(pages.len(), 4, "distinct even ignoring case: {rows:?}");
    for (name, href) in &rows {
        let page = w.page(href);
        let code = page
            .select(&select("#L1 .code"))
            .next()
            .unwrap()
            .text()
            .collect::<String>();
        assert!(
            code.ends_with(&format!("/proj/src/{name}")),
            "{href} shows {code}"
        );
        assert_eq!(
            page.select(&select("a.brand"))
                .next()
                .unwrap()
                .value()
                .attr("href"),
            Some("../index.html")
        );
    }
    assert_eq!(w.json()["root"], "/proj/src");
}

#[test]
fn the_index_sorts_and_filters_with_its_own_script() {
    let (calc, _) = calculator();
    let w = write(&input(vec![calc], vec![]));
    let index = w.page("index.html");
    let heads: Vec<String> = index
        .select(&select("#files thead th button"))
        .map(text)
        .collect();
    assert_eq!(heads, vec!["File", "Blocks", "Missed", "Coverage", "Lines"]);
    for cell in index.select(&select("#files tbody td")) {
        assert!(
            cell.value().attr("data-sort").is_some(),
            "every cell has a sort key"
        );
    }
    let numeric: Vec<&str> = index
        .select(&select("#files tbody td[data-sort]"))
        .skip(1)
        .map(|c| c.value().attr("data-sort").unwrap())
        .collect();
    assert!(
        numeric.iter().all(|v| v.parse::<f64>().is_ok()),
        "{numeric:?}"
    );
    let script = text(index.select(&select("script")).next().unwrap());
    assert!(
        script.contains("aria-sort")
            && script.contains("localeCompare")
            && script.contains("filter")
    );
    // Self-contained: no external resources. The one link is an empty icon
    // inline, so that a browser asks no server for /favicon.ico.
    let raw = w.read("index.html");
    assert_eq!(raw.matches(r#"<link rel="icon" href="data:,">"#).count(), 1);
    let raw = raw.replace(r#"<link rel="icon" href="data:,">"#, "");
    for needle in ["http://", "https://", "<link", "src=", "@import", "url("] {
        assert!(!raw.contains(needle), "{needle}");
    }
}

#[test]
fn an_empty_report_still_has_every_output() {
    let w = write(&input(vec![], vec![]));
    assert_eq!(
        w.summary,
        ReportSummary {
            files: 0,
            blocks: 0,
            covered_blocks: 0,
            index: w.out().join("index.html")
        }
    );
    let index = w.page("index.html");
    assert!(index.select(&select("#files")).next().is_none());
    assert!(
        text(index.select(&select(".empty")).next().unwrap()).starts_with("No instrumented files")
    );
    assert_eq!(w.json()["totals"]["blocks"], 0);
    assert_eq!(w.json()["files"], serde_json::json!([]));
    assert_eq!(w.read("lcov.info"), "");
    assert!(w.out().join("files").is_dir());
}

#[test]
fn a_file_without_blocks_and_an_empty_file() {
    let files = vec![
        FileCoverage {
            path: "/p/empty.php".into(),
            source: Vec::new(),
            blocks: Vec::new(),
        },
        FileCoverage {
            path: "/p/html.php".into(),
            source: b"<p>just html</p>\n".to_vec(),
            blocks: Vec::new(),
        },
    ];
    let w = write(&input(files, vec![]));
    let index = w.page("index.html");
    let rows: Vec<Vec<String>> = index
        .select(&select("#files tbody tr"))
        .map(|tr| tr.select(&select("td")).map(text).collect())
        .collect();
    assert_eq!(rows[0], vec!["empty.php", "0 / 0", "0", "–", "0 / 0"]);
    let page = w.page("files/empty.php.html");
    assert_eq!(page.select(&select("#source .l")).count(), 1);
    assert!(text(page.select(&select(".empty")).next().unwrap()).contains("no blocks"));
}

#[test]
fn writing_twice_overwrites() {
    let (calc, _) = calculator();
    let report = input(vec![calc], vec![]);
    let w = write(&report);
    let first = w.read("index.html");
    write_report(&report, &w.out()).unwrap();
    assert_eq!(w.read("index.html"), first);
}

#[test]
fn an_unwritable_output_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    fs::write(&blocker, "").unwrap();
    let err = write_report(&input(vec![], vec![]), &blocker.join("out")).unwrap_err();
    assert!(
        matches!(err, php_fuzz_report::ReportError::Write { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("cannot write"), "{err}");
}

// Golden files: a small report's machine outputs and the listing's markup.

#[test]
fn snapshot_lcov_and_json() {
    let (calc, _) = calculator();
    let w = write(&input(vec![calc], vec![]));
    let root = fixture("");
    let lcov = w
        .read("lcov.info")
        .replace(&root.display().to_string(), "<fixtures>");
    insta::assert_snapshot!("lcov", lcov);
    let json = w
        .read("coverage.json")
        .replace(&root.display().to_string(), "<fixtures>");
    insta::assert_snapshot!("coverage_json", json);
}

#[test]
fn snapshot_listing_and_function_table() {
    let (calc, _) = calculator();
    let w = write(&input(vec![calc], vec![]));
    let page = only_page(&w);
    let lines: Vec<String> = (14..20)
        .map(|n| {
            page.select(&select(&format!("#L{n}")))
                .next()
                .unwrap()
                .html()
        })
        .collect();
    insta::assert_snapshot!("listing_add", lines.join("\n"));
    let table = page
        .select(&select("#functions tbody"))
        .next()
        .unwrap()
        .html();
    insta::assert_snapshot!("function_table", table);
}

/// The example's block map (`fixtures/report/sample/blocks.json`, behind the
/// screenshots in `docs/`) still fits its PHP files: every block's line and
/// column name its byte offset, inside the file.
#[test]
fn the_sample_block_map_fits_its_sources() {
    let sample = fixture("sample");
    let map: serde_json::Value =
        serde_json::from_slice(&fs::read(sample.join("blocks.json")).unwrap()).unwrap();
    let files = map["files"].as_array().unwrap();
    assert_eq!(files.len(), 4);
    for file in files {
        let path = sample.join(file["path"].as_str().unwrap());
        let source = fs::read(&path).unwrap();
        let starts: Vec<usize> = std::iter::once(0)
            .chain(newline_offsets(&source).map(|i| i + 1))
            .collect();
        for b in file["blocks"].as_array().unwrap() {
            let block: Block = serde_json::from_value(b.clone()).unwrap();
            let line_start = starts[block.line as usize - 1];
            assert_eq!(
                block.byte_offset,
                line_start + block.column as usize - 1,
                "{}: {b}",
                path.display()
            );
            assert!(block.byte_offset < source.len(), "{}: {b}", path.display());
            assert!(!source[line_start..block.byte_offset].contains(&b'\n'));
            assert!(b["hits"].is_u64(), "{b}");
        }
    }
}

fn newline_offsets(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .map(|(i, _)| i)
}

fn campaign() -> CampaignHistory {
    let sample = |session, elapsed: f64, cov| HistorySample {
        session,
        elapsed,
        runs: (elapsed * 1000.0) as u64,
        cov,
        ft: cov * 4,
        execs_per_sec: 900.0,
    };
    CampaignHistory {
        source: PathBuf::from("/work/corpus/.php-fuzz/<stats>.jsonl"),
        samples: vec![
            sample(1, 0.5, 10),
            sample(1, 5.0, 30),
            sample(1, 10.0, 32),
            sample(2, 10.2, 25),
            sample(2, 30.0, 40),
        ],
        restarts: vec![HistoryRestart {
            session: 2,
            elapsed: 10.1,
        }],
        crashes: vec![HistoryCrash {
            elapsed: 3.0,
            kind: "exception".into(),
            summary: "Error: <script>alert(1)</script> & more".into(),
            artifact: "artifacts/crash-<1>.txt".into(),
        }],
    }
}

#[test]
fn the_campaign_history_is_plotted_on_the_index_with_its_text_escaped() {
    let (file, _) = calculator();
    let mut with = input(vec![file.clone()], Vec::new());
    with.history = Some(campaign());
    let w = write(&with);
    let index = w.page("index.html");
    let html = w.read("index.html");
    assert!(!html.contains("<script>alert"), "summaries are escaped");
    assert!(!html.contains("<stats>"), "the source is escaped");
    let section = index
        .select(&select("#campaign"))
        .next()
        .expect("a campaign section");
    assert!(
        text(section).contains("From /work/corpus/.php-fuzz/<stats>.jsonl: 2 sessions, 30,000 runs, 1 distinct crash found"),
        "{}",
        text(section)
    );
    for id in ["plot-cov", "plot-ft", "plot-execs"] {
        let figure = index.select(&select(&format!("#{id}"))).next().expect(id);
        let path = figure
            .select(&select("svg path.series"))
            .next()
            .expect("a line");
        let d = path.value().attr("d").unwrap();
        assert_eq!(d.matches('M').count(), 2, "one line per session: {d}");
        assert_eq!(d.matches('L').count(), 3, "{d}");
        assert_eq!(figure.select(&select(".restart")).count(), 1);
        let ticks: Vec<String> = figure.select(&select(".labels.x text")).map(text).collect();
        assert_eq!(ticks, ["0s", "10s", "20s", "30s"]);
        assert!(figure.select(&select(".labels.y text")).count() >= 2);
        let mark = figure
            .select(&select("a.crash-mark"))
            .next()
            .expect("a crash mark");
        assert_eq!(mark.value().attr("href"), Some("#found-crash-1"));
        let title = text(mark.select(&select("title")).next().unwrap());
        assert_eq!(
            title,
            "exception first seen at 3s: Error: <script>alert(1)</script> & more"
        );
    }
    let cov = index
        .select(&select("#plot-cov figcaption b"))
        .next()
        .unwrap();
    assert_eq!(text(cov), "40");
    let found = index
        .select(&select("#found-crash-1"))
        .next()
        .expect("the crash's anchor");
    assert_eq!(
        text(found),
        "3sexceptionError: <script>alert(1)</script> & moreartifacts/crash-<1>.txt"
    );

    // No history, no section; a history without samples says so.
    let w = write(&input(vec![file.clone()], Vec::new()));
    assert!(
        w.page("index.html")
            .select(&select("#campaign"))
            .next()
            .is_none()
    );
    let mut empty = input(vec![file], Vec::new());
    empty.history = Some(CampaignHistory {
        samples: Vec::new(),
        crashes: Vec::new(),
        ..campaign()
    });
    let index = write(&empty).page("index.html");
    assert!(index.select(&select("#campaign svg")).next().is_none());
    assert_eq!(
        text(index.select(&select("#campaign .none")).next().unwrap()),
        "No samples yet."
    );
}

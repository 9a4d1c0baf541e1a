//! What the report shows of text it does not control: markup in sources
//! and paths, invalid UTF-8 and control bytes, a campaign's history.

mod common;

use common::*;
use php_fuzz_report::{CampaignHistory, HistoryCrash, HistoryRestart, HistorySample};

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

fn campaign() -> CampaignHistory {
    let sample = |session, elapsed: f64, cov| HistorySample {
        session,
        elapsed,
        runs: (elapsed * 1000.0) as u64,
        cov,
        ft: cov * 4,
        execs_per_sec: 900.0,
        mix: Vec::new(),
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

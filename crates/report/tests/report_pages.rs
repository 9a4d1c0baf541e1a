//! The report's pages as a reader sees them: markers at their exact
//! columns, the function table, the index, jump buttons, paths, and what an
//! empty or unwritable report does.

mod common;

use common::*;

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
    let blocks = vec![file_entry(&source, 3)];
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
        let blocks = vec![file_entry(&source, hits)];
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

//! The report's machine outputs: `coverage.json` and `lcov.info` agree with
//! the pages and with genhtml, golden files of a small report, and the
//! sample block map behind the screenshots.

mod common;

use common::*;
use std::collections::BTreeMap;

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

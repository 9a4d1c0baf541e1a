//! What the report tests share: the fixture, a calculator file with
//! hand-placed blocks, writing a report into a temporary directory and
//! reading its pages back.
#![allow(dead_code)] // each test file uses its own part

pub use std::fs;
pub use std::path::{Path, PathBuf};

pub use php_fuzz_instrument::{Block, BlockId, BlockKind};
pub use php_fuzz_report::{
    BlockCoverage, FileCoverage, ReplayCrash, ReportInput, ReportSummary, write_report,
};
pub use scraper::{ElementRef, Html, Node, Selector};

pub const DATE: &str = "2026-11-22 14:05 UTC";

pub fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/report")
        .join(relative)
        .canonicalize()
        .unwrap()
}

pub fn select(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

pub fn text(e: ElementRef<'_>) -> String {
    e.text().collect::<String>().trim().to_string()
}

/// The block that enters a file, at its `<?php`, run `hits` times.
pub fn file_entry(source: &[u8], hits: u64) -> BlockCoverage {
    block_at(source, "", "<?php", BlockKind::FileEntry, None, hits)
}

/// A block at the first `needle` after the first `after` in `source`,
/// with line and column computed from the bytes, as the instrumenter does.
pub fn block_at(
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

pub const ADD: Option<&str> = Some("Fixture\\Report\\Calculator::add");
pub const NEGATIVE: Option<&str> = Some("Fixture\\Report\\Calculator::negative");
pub const DESCRIBE: Option<&str> = Some("Fixture\\Report\\Calculator::describe");
pub const UNUSED: Option<&str> = Some("Fixture\\Report\\Calculator::unused");

/// What a marker should show: the token at the block, and the block.
pub struct Expected {
    pub token: &'static str,
    pub block: BlockCoverage,
}

/// Calculator.php with hand-written blocks: `add` half covered, `negative`
/// and `unused` never entered, `describe` partly.
pub fn calculator() -> (FileCoverage, Vec<Expected>) {
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

pub fn input(files: Vec<FileCoverage>, crashes: Vec<ReplayCrash>) -> ReportInput {
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

pub struct Written {
    pub dir: tempfile::TempDir,
    pub summary: ReportSummary,
}

impl Written {
    pub fn out(&self) -> PathBuf {
        self.dir.path().join("report")
    }

    pub fn read(&self, name: &str) -> String {
        fs::read_to_string(self.out().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    pub fn page(&self, name: &str) -> Html {
        Html::parse_document(&self.read(name))
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.read("coverage.json")).unwrap()
    }
}

pub fn write(input: &ReportInput) -> Written {
    let dir = tempfile::tempdir().unwrap();
    // A directory that does not exist yet, two levels deep.
    let summary = write_report(input, &dir.path().join("report")).unwrap();
    Written { dir, summary }
}

/// The page of the only file, found through the index's link.
pub fn only_page(w: &Written) -> Html {
    let index = w.page("index.html");
    let link = index
        .select(&select("#files tbody td.path a"))
        .next()
        .unwrap();
    w.page(link.value().attr("href").unwrap())
}

/// Markers of a line: class (`c`/`u`), title, and the text before the
/// marker on the line (to check the column).
pub fn markers(page: &Html, line: u32) -> Vec<(String, String, String, String)> {
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

pub fn line_class(page: &Html, line: u32) -> String {
    let el = page.select(&select(&format!("#L{line}"))).next().unwrap();
    el.value().attr("class").unwrap().trim().to_string()
}

//! The HTML pages, rendered with askama. The source listing is built here
//! with explicit escaping, because markers sit inside the code.

use std::fmt::Write;

use askama::Template;

use crate::model::{FileSummary, percent};
use crate::{BlockHits, FileCoverage, ReportError, ReportInput};

const STYLE: &str = include_str!("../templates/style.css");

struct IndexRow<'a> {
    relative: &'a str,
    page: &'a str,
    covered: usize,
    blocks: usize,
    percent: f64,
    covered_lines: usize,
    lines: usize,
}

struct CrashRow {
    input: String,
    kind: String,
    summary: String,
}

#[derive(Template)]
#[template(path = "index.html")]
struct IndexPage<'a> {
    style: &'static str,
    target: String,
    corpus_dir: String,
    corpus_entries: usize,
    generated_at: &'a str,
    rows: Vec<IndexRow<'a>>,
    total_covered: usize,
    total_blocks: usize,
    total_percent: f64,
    total_covered_lines: usize,
    total_lines: usize,
    crashes: Vec<CrashRow>,
}

struct FunctionRow<'a> {
    name: &'a str,
    line: u32,
    covered: usize,
    blocks: usize,
    percent: f64,
}

struct SourceLine {
    number: usize,
    /// `covered`, `uncovered`, `partial` or empty: the gutter's colour.
    class: &'static str,
    /// Escaped source with block markers.
    html: String,
}

#[derive(Template)]
#[template(path = "file.html")]
struct FilePage<'a> {
    style: &'static str,
    relative: &'a str,
    path: String,
    target: String,
    generated_at: &'a str,
    covered: usize,
    blocks: usize,
    percent: f64,
    uncovered: usize,
    functions: Vec<FunctionRow<'a>>,
    lines: Vec<SourceLine>,
}

fn render(page: &impl Template, name: &str) -> Result<String, ReportError> {
    page.render().map_err(|source| ReportError::Render {
        page: name.to_string(),
        source,
    })
}

pub(crate) fn index_page(
    input: &ReportInput,
    files: &[FileSummary],
) -> Result<String, ReportError> {
    let rows: Vec<IndexRow<'_>> = files
        .iter()
        .map(|f| IndexRow {
            relative: &f.relative,
            page: &f.page,
            covered: f.covered,
            blocks: f.blocks,
            percent: percent(f.covered, f.blocks),
            covered_lines: f.covered_lines,
            lines: f.lines,
        })
        .collect();
    let total_covered = files.iter().map(|f| f.covered).sum();
    let total_blocks = files.iter().map(|f| f.blocks).sum();
    let page = IndexPage {
        style: STYLE,
        target: input.target.display().to_string(),
        corpus_dir: input.corpus_dir.display().to_string(),
        corpus_entries: input.corpus_entries,
        generated_at: &input.generated_at,
        rows,
        total_covered,
        total_blocks,
        total_percent: percent(total_covered, total_blocks),
        total_covered_lines: files.iter().map(|f| f.covered_lines).sum(),
        total_lines: files.iter().map(|f| f.lines).sum(),
        crashes: input
            .crashes
            .iter()
            .map(|c| CrashRow {
                input: c.input.display().to_string(),
                kind: c.kind.clone(),
                summary: c.summary.clone(),
            })
            .collect(),
    };
    render(&page, "index.html")
}

pub(crate) fn file_page(
    input: &ReportInput,
    file: &FileCoverage,
    summary: &FileSummary,
) -> Result<String, ReportError> {
    let page = FilePage {
        style: STYLE,
        relative: &summary.relative,
        path: file.path.display().to_string(),
        target: input.target.display().to_string(),
        generated_at: &input.generated_at,
        covered: summary.covered,
        blocks: summary.blocks,
        percent: percent(summary.covered, summary.blocks),
        uncovered: summary.blocks - summary.covered,
        functions: summary
            .functions
            .iter()
            .map(|f| FunctionRow {
                name: &f.name,
                line: f.first_line,
                covered: f.covered,
                blocks: f.blocks,
                percent: percent(f.covered, f.blocks),
            })
            .collect(),
        lines: source_lines(&file.source, &file.blocks),
    };
    render(&page, &summary.page)
}

/// The source split into lines, each escaped, with a marker before every
/// block's anchor. Uncovered markers link to the next uncovered one.
fn source_lines(source: &[u8], blocks: &[BlockHits]) -> Vec<SourceLine> {
    let mut sorted: Vec<&BlockHits> = blocks.iter().collect();
    sorted.sort_by_key(|b| b.block.byte_offset);
    let uncovered_total = sorted.iter().filter(|b| b.hits == 0).count();
    let mut next_block = 0;
    let mut uncovered_seen = 0;
    let mut lines = Vec::new();
    let mut start = 0;
    for (index, line) in source.split(|&b| b == b'\n').enumerate() {
        let end = start + line.len();
        let mut html = String::with_capacity(line.len() + 16);
        let mut copied = start;
        let (mut any_covered, mut any_uncovered) = (false, false);
        while next_block < sorted.len() && sorted[next_block].block.byte_offset <= end {
            let b = sorted[next_block];
            let at = b.block.byte_offset.max(copied);
            escape_into(&mut html, &source[copied..at]);
            copied = at;
            let kind = format!("{:?}", b.block.kind);
            if b.hits > 0 {
                any_covered = true;
                let _ = write!(
                    html,
                    "<span class=\"m c\" title=\"{} · hit {} time{}\"></span>",
                    kind,
                    b.hits,
                    if b.hits == 1 { "" } else { "s" }
                );
            } else {
                any_uncovered = true;
                let next = if uncovered_seen + 1 < uncovered_total {
                    uncovered_seen + 1
                } else {
                    0
                };
                let _ = write!(
                    html,
                    "<a class=\"m u\" id=\"u{uncovered_seen}\" href=\"#u{next}\" title=\"{kind} · never ran (click: next uncovered)\"></a>"
                );
                uncovered_seen += 1;
            }
            next_block += 1;
        }
        escape_into(&mut html, &source[copied..end]);
        let class = match (any_covered, any_uncovered) {
            (true, true) => "partial",
            (true, false) => "covered",
            (false, true) => "uncovered",
            (false, false) => "",
        };
        lines.push(SourceLine {
            number: index + 1,
            class,
            html,
        });
        start = end + 1;
    }
    lines
}

/// HTML-escapes bytes, decoding invalid UTF-8 lossily and showing control
/// characters (other than tabs) as replacement symbols.
fn escape_into(out: &mut String, bytes: &[u8]) {
    for c in String::from_utf8_lossy(bytes).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' => out.push('\t'),
            '\r' => {}
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::escape_into;

    #[test]
    fn escaping_covers_markup_quotes_and_bad_bytes() {
        let mut out = String::new();
        escape_into(&mut out, b"</script><a href='x'>&\"\x00\xff");
        assert_eq!(
            out,
            "&lt;/script&gt;&lt;a href=&#39;x&#39;&gt;&amp;&quot;\u{fffd}\u{fffd}"
        );
    }
}

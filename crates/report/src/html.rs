//! The HTML pages, rendered with askama (`templates/`). Every string from
//! the input (paths, source text, crash summaries) reaches the page through
//! askama's HTML escaping; nothing is marked `|safe`.

use askama::Template;

use crate::CampaignHistory;
use crate::ReportError;
use crate::analysis::{Counts, FileReport, Report, RunDetails, percent};
use crate::listing::{self, Line, Segment};
use crate::paths::relative;
use crate::plot::{self, Frame, Plot};

/// A percentage as the pages show it.
struct Cov {
    /// `hi`, `mid`, `lo`, or `none` when there is nothing to cover.
    tier: &'static str,
    /// Bar width, `0.0`..=`100.0`.
    width: String,
    /// `87.5 %`; rounded down, so 100 % means everything.
    text: String,
    /// For sorting; -1 when there is nothing to cover.
    sort: String,
}

impl Cov {
    fn new(covered: usize, total: usize) -> Self {
        if total == 0 {
            return Cov {
                tier: "none",
                width: "0".into(),
                text: "–".into(),
                sort: "-1".into(),
            };
        }
        let p = percent(covered, total);
        let shown = (p * 10.0).floor() / 10.0;
        let tier = if p >= 80.0 {
            "hi"
        } else if p >= 50.0 {
            "mid"
        } else {
            "lo"
        };
        Cov {
            tier,
            width: format!("{shown:.1}"),
            text: format!("{shown:.1} %"),
            sort: format!("{p:.4}"),
        }
    }
}

/// The numbers of one index row, of the totals, and of a file page's header.
struct Row {
    blocks: usize,
    covered: usize,
    missed: usize,
    lines: usize,
    covered_lines: usize,
    cov: Cov,
    line_cov: Cov,
}

impl Row {
    fn new(c: &Counts) -> Self {
        Row {
            blocks: c.blocks,
            covered: c.covered_blocks,
            missed: c.uncovered_blocks(),
            lines: c.lines,
            covered_lines: c.covered_lines,
            cov: Cov::new(c.covered_blocks, c.blocks),
            line_cov: Cov::new(c.covered_lines, c.lines),
        }
    }
}

struct IndexFile<'a> {
    relative: &'a str,
    /// `relative` split for display: directory part (with its `/`) and name.
    dir: &'a str,
    name: &'a str,
    page: &'a str,
    row: Row,
}

struct CrashRow {
    input: String,
    kind: String,
    summary: String,
}

#[derive(Template)]
#[template(path = "index.html")]
struct IndexPage<'a> {
    run: RunDetails<'a>,
    target_name: String,
    files: Vec<IndexFile<'a>>,
    total: Row,
    functions: usize,
    covered_functions: usize,
    crashes: Vec<CrashRow>,
    campaign: Option<Campaign>,
}

/// The campaign section of the index: plots of the statistics file.
struct Campaign {
    source: String,
    sessions: u32,
    elapsed: String,
    /// With thousands separators.
    runs: String,
    frame: Frame,
    plots: Vec<Plot>,
    crashes: Vec<FoundCrash>,
}

/// A crash as the statistics file recorded it, first seen at `when`.
struct FoundCrash {
    anchor: String,
    when: String,
    kind: String,
    summary: String,
    artifact: String,
}

struct FunctionRow<'a> {
    name: &'a str,
    top_level: bool,
    line: usize,
    covered: usize,
    blocks: usize,
    entries: u64,
    cov: Cov,
}

/// A mark on the right-hand overview: a stretch of uncovered or partly
/// covered lines.
struct Tick {
    /// `u` or `p`.
    class: &'static str,
    line: usize,
    top: String,
    height: String,
    title: String,
}

#[derive(Template)]
#[template(path = "file.html")]
struct FilePage<'a> {
    relative: &'a str,
    dir: &'a str,
    name: &'a str,
    path: String,
    run: RunDetails<'a>,
    row: Row,
    runs: usize,
    functions: Vec<FunctionRow<'a>>,
    lines: Vec<Line<'a>>,
    minimap: Vec<Tick>,
}

fn render(page: &impl Template, name: &str) -> Result<String, ReportError> {
    page.render().map_err(|source| ReportError::Render {
        page: name.to_string(),
        source,
    })
}

fn split_name(relative: &str) -> (&str, &str) {
    match relative.rfind(['/', '\\']) {
        Some(i) => relative.split_at(i + 1),
        None => ("", relative),
    }
}

pub(crate) fn index_page(report: &Report<'_>) -> Result<String, ReportError> {
    let input = report.input;
    let files = report
        .files
        .iter()
        .map(|f| {
            let (dir, name) = split_name(&f.relative);
            IndexFile {
                relative: &f.relative,
                dir,
                name,
                page: &f.page,
                row: Row::new(&f.counts),
            }
        })
        .collect();
    let target_name = input.target.file_name().map_or_else(
        || input.target.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let page = IndexPage {
        run: report.run_details(),
        target_name,
        files,
        total: Row::new(&report.totals),
        functions: report.totals.functions,
        covered_functions: report.totals.covered_functions,
        crashes: input
            .crashes
            .iter()
            .map(|c| CrashRow {
                input: relative(&c.input, &input.corpus_dir),
                kind: c.kind.clone(),
                summary: c.summary.clone(),
            })
            .collect(),
        campaign: input.history.as_ref().map(campaign),
    };
    render(&page, "index.html")
}

fn campaign(history: &CampaignHistory) -> Campaign {
    let last = history.samples.last();
    let elapsed = last.map_or(0.0, |s| s.elapsed);
    Campaign {
        source: history.source.display().to_string(),
        sessions: history
            .samples
            .iter()
            .map(|s| s.session)
            .chain(history.restarts.iter().map(|r| r.session))
            .max()
            .unwrap_or(0),
        elapsed: plot::duration_label(elapsed),
        runs: plot::grouped(last.map_or(0, |s| s.runs)),
        frame: Frame::new(),
        plots: plot::plots(history),
        crashes: history
            .crashes
            .iter()
            .enumerate()
            .map(|(i, c)| FoundCrash {
                anchor: plot::crash_anchor(i),
                when: plot::duration_label(c.elapsed),
                kind: c.kind.clone(),
                summary: c.summary.clone(),
                artifact: c.artifact.clone(),
            })
            .collect(),
    }
}

pub(crate) fn file_page(report: &Report<'_>, file: &FileReport<'_>) -> Result<String, ReportError> {
    let (dir, name) = split_name(&file.relative);
    let lines = listing::lines(file);
    let page = FilePage {
        relative: &file.relative,
        dir,
        name,
        path: file.file.path.display().to_string(),
        run: report.run_details(),
        row: Row::new(&file.counts),
        runs: file.runs,
        functions: file
            .functions
            .iter()
            .map(|f| FunctionRow {
                name: &f.name,
                top_level: f.top_level,
                line: f.first_line,
                covered: f.covered,
                blocks: f.blocks,
                entries: f.entries,
                cov: Cov::new(f.covered, f.blocks),
            })
            .collect(),
        minimap: minimap(&lines),
        lines,
    };
    render(&page, &file.page)
}

/// Short files fit on a screen and need no overview.
const MINIMAP_MIN_LINES: usize = 60;

fn minimap(lines: &[Line<'_>]) -> Vec<Tick> {
    let total = lines.len();
    if total < MINIMAP_MIN_LINES {
        return Vec::new();
    }
    let mut ticks: Vec<Tick> = Vec::new();
    let mut last: Option<(&'static str, usize)> = None; // class and number of the previous marked line
    for line in lines {
        let class = match line.class {
            "uncovered" => "u",
            "partial" => "p",
            _ => continue,
        };
        // Lines without blocks between two uncovered ones do not break a stretch.
        match (last, ticks.last_mut()) {
            (Some((c, n)), Some(tick)) if c == class && line.number - n <= 3 => {
                let span = line.number - tick.line + 1;
                tick.height = format!("{:.3}", 100.0 * span as f64 / total as f64);
                tick.title = format!("lines {}–{}", tick.line, line.number);
            }
            _ => ticks.push(Tick {
                class,
                line: line.number,
                top: format!("{:.3}", 100.0 * (line.number - 1) as f64 / total as f64),
                height: format!("{:.3}", 100.0 / total as f64),
                title: format!("line {}", line.number),
            }),
        }
        last = Some((class, line.number));
    }
    for tick in &mut ticks {
        let what = if tick.class == "u" {
            "never ran"
        } else {
            "partly ran"
        };
        tick.title = format!("{}: {what}", tick.title);
    }
    ticks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_down_and_pick_a_tier() {
        let c = Cov::new(1999, 2000);
        assert_eq!((c.text.as_str(), c.tier), ("99.9 %", "hi"));
        let c = Cov::new(1, 3);
        assert_eq!(
            (c.text.as_str(), c.tier, c.width.as_str()),
            ("33.3 %", "lo", "33.3")
        );
        assert_eq!(Cov::new(0, 0).tier, "none");
        assert_eq!(Cov::new(5, 5).text, "100.0 %");
    }

    #[test]
    fn names_split_at_the_last_separator() {
        assert_eq!(split_name("a/b/C.php"), ("a/b/", "C.php"));
        assert_eq!(split_name("C.php"), ("", "C.php"));
    }
}

//! Line plots of a campaign's statistics (coverage, features, exec/s over
//! campaign time) as plain SVG geometry: path data, ticks with their
//! labels, session restarts and crash markers. The index template draws
//! them inline (askama escapes every label); no script, nothing fetched.

use crate::{CampaignHistory, HistorySample};

/// The SVG's viewBox; the page scales it to its width.
pub(crate) const WIDTH: f64 = 1100.0;
pub(crate) const HEIGHT: f64 = 210.0;
/// The plot area inside the viewBox.
const LEFT: f64 = 56.0;
const RIGHT: f64 = WIDTH - 14.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = HEIGHT - 30.0;

/// One plot, ready for the template. Coordinates are already formatted.
pub(crate) struct Plot {
    /// Element id, e.g. `plot-cov`.
    pub id: &'static str,
    pub title: &'static str,
    /// The last sample's value, e.g. `181`.
    pub latest: String,
    /// Path data of the line: one subpath per session.
    pub line: String,
    pub x_ticks: Vec<Tick>,
    pub y_ticks: Vec<Tick>,
    pub restarts: Vec<Mark>,
    pub crashes: Vec<Mark>,
    /// More lines, each named (the mutation mix's groups); their names
    /// make the legend.
    pub series: Vec<Series>,
}

/// A named line of a plot with several.
pub(crate) struct Series {
    pub name: String,
    pub line: String,
}

/// An axis tick: its position along the axis, and its label.
pub(crate) struct Tick {
    pub at: String,
    pub label: String,
}

/// A vertical mark at one moment: a restart, or a crash first seen.
pub(crate) struct Mark {
    pub x: String,
    /// What a hover shows.
    pub title: String,
    /// The crash's anchor in the page (`found-crash-N`), for crashes.
    pub anchor: String,
}

/// The plot area's edges, for the template's axes.
pub(crate) struct Frame {
    pub left: String,
    pub right: String,
    pub top: String,
    pub bottom: String,
    pub width: String,
    pub height: String,
    /// Where the y labels end, the x ticks end and the x labels sit.
    pub y_label_x: String,
    pub x_tick_end: String,
    pub x_label_y: String,
}

impl Frame {
    pub(crate) fn new() -> Frame {
        Frame {
            left: num(LEFT),
            right: num(RIGHT),
            top: num(TOP),
            bottom: num(BOTTOM),
            width: num(WIDTH),
            height: num(HEIGHT),
            y_label_x: num(LEFT - 7.0),
            x_tick_end: num(BOTTOM + 4.0),
            x_label_y: num(BOTTOM + 17.0),
        }
    }
}

/// What a plot shows of each sample.
type Value = fn(&HistorySample) -> f64;

/// Coverage, features and exec/s over time; none without samples.
pub(crate) fn plots(history: &CampaignHistory) -> Vec<Plot> {
    if history.samples.is_empty() {
        return Vec::new();
    }
    let series: [(&'static str, &'static str, Value); 3] = [
        ("plot-cov", "Coverage (edges)", |s| s.cov as f64),
        ("plot-ft", "Features", |s| s.ft as f64),
        ("plot-execs", "Executions per second", |s| s.execs_per_sec),
    ];
    let mut plots: Vec<Plot> = series
        .iter()
        .map(|&(id, title, value)| plot(history, id, title, value))
        .collect();
    if let Some(mix) = mix_plot(history) {
        plots.push(mix);
    }
    plots
}

/// The learned mutation schedule's draw by group over time, in percent
/// (docs/scheduling.md); none without it.
fn mix_plot(history: &CampaignHistory) -> Option<Plot> {
    let mut groups: Vec<String> = Vec::new();
    for sample in &history.samples {
        for (group, _) in &sample.mix {
            if !groups.contains(group) {
                groups.push(group.clone());
            }
        }
    }
    if groups.is_empty() {
        return None;
    }
    let share = |sample: &HistorySample, group: &str| {
        sample
            .mix
            .iter()
            .find(|(g, _)| g == group)
            .map_or(0.0, |(_, s)| s * 100.0)
    };
    // The frame (axes, ticks, marks) of a plot whose peak is 100 %.
    let mut plot = plot(history, "plot-mix", "Mutation mix (% of the draw)", |_| {
        100.0
    });
    plot.line = String::new();
    plot.latest = String::new();
    let x_max = x_extent(history);
    let x = |t: f64| LEFT + (RIGHT - LEFT) * (t / x_max).clamp(0.0, 1.0);
    let y = |v: f64| BOTTOM - (BOTTOM - TOP) * (v / 100.0).clamp(0.0, 1.0);
    plot.series = groups
        .into_iter()
        .map(|group| {
            let points: Vec<(u32, f64, f64)> = history
                .samples
                .iter()
                .filter(|s| !s.mix.is_empty())
                .map(|s| (s.session, x(s.elapsed), y(share(s, &group))))
                .collect();
            let last = history.samples.iter().rev().find(|s| !s.mix.is_empty());
            let latest = last.map_or(0.0, |s| share(s, &group));
            Series {
                name: format!("{group} {latest:.0}%"),
                line: path(&points),
            }
        })
        .collect();
    Some(plot)
}

fn plot(history: &CampaignHistory, id: &'static str, title: &'static str, value: Value) -> Plot {
    let x_max = x_extent(history);
    let y_peak = history.samples.iter().map(value).fold(0.0, f64::max);
    let (y_max, y_step) = nice_scale(y_peak);
    let x = |t: f64| LEFT + (RIGHT - LEFT) * (t / x_max).clamp(0.0, 1.0);
    let y = |v: f64| BOTTOM - (BOTTOM - TOP) * (v / y_max).clamp(0.0, 1.0);

    // One point per horizontal pixel and session is plenty: a week of
    // samples stays a few kilobytes.
    let mut points: Vec<(u32, f64, f64)> = Vec::new();
    for sample in &history.samples {
        let point = (sample.session, x(sample.elapsed), y(value(sample)));
        match points.last_mut() {
            Some(last) if last.0 == point.0 && last.1.round() == point.1.round() => *last = point,
            _ => points.push(point),
        }
    }
    let line = path(&points);

    let x_ticks = time_ticks(x_max)
        .into_iter()
        .map(|t| Tick {
            at: num(x(t)),
            label: duration_label(t),
        })
        .collect();
    let y_ticks = (0..)
        .map(|i| i as f64 * y_step)
        .take_while(|v| *v <= y_max * (1.0 + 1e-9))
        .map(|v| Tick {
            at: num(y(v)),
            label: value_label(v, y_step),
        })
        .collect();
    let restarts = history
        .restarts
        .iter()
        .map(|r| Mark {
            x: num(x(r.elapsed)),
            title: format!(
                "session {} began at {}",
                r.session,
                duration_label(r.elapsed)
            ),
            anchor: String::new(),
        })
        .collect();
    let crashes = history
        .crashes
        .iter()
        .enumerate()
        .map(|(i, c)| Mark {
            x: num(x(c.elapsed)),
            title: format!(
                "{} first seen at {}: {}",
                c.kind,
                duration_label(c.elapsed),
                c.summary
            ),
            anchor: crash_anchor(i),
        })
        .collect();
    let latest = history.samples.last().map(value).unwrap_or(0.0);
    Plot {
        id,
        title,
        latest: grouped(latest.round() as u64),
        line,
        x_ticks,
        y_ticks,
        restarts,
        crashes,
        series: Vec::new(),
    }
}

/// The page anchor of the `i`-th crash of the campaign.
pub(crate) fn crash_anchor(i: usize) -> String {
    format!("found-crash-{}", i + 1)
}

/// The time axis runs from 0 to the last moment anything happened.
fn x_extent(history: &CampaignHistory) -> f64 {
    let last = history
        .samples
        .iter()
        .map(|s| s.elapsed)
        .chain(history.crashes.iter().map(|c| c.elapsed))
        .chain(history.restarts.iter().map(|r| r.elapsed))
        .fold(0.0, f64::max);
    last.max(1.0)
}

/// Path data through `points`, a subpath per session. A session of one
/// point gets a zero-length segment, which a round line cap draws as a dot.
fn path(points: &[(u32, f64, f64)]) -> String {
    let mut out = Vec::with_capacity(points.len() + 1);
    for (i, &(session, px, py)) in points.iter().enumerate() {
        let starts = i == 0 || points[i - 1].0 != session;
        let alone = starts && points.get(i + 1).is_none_or(|next| next.0 != session);
        let at = format!("{},{}", num(px), num(py));
        out.push(format!("{}{at}", if starts { 'M' } else { 'L' }));
        if alone {
            out.push(format!("L{at}"));
        }
    }
    out.join(" ")
}

/// An axis maximum at or above `peak` and the step of about five ticks up
/// to it: 1, 2 or 5 times a power of ten.
pub(crate) fn nice_scale(peak: f64) -> (f64, f64) {
    if !peak.is_finite() || peak <= 0.0 {
        return (1.0, 1.0);
    }
    let raw = peak / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude);
    // Counts tick in whole numbers.
    let step = if peak >= 1.0 { step.max(1.0) } else { step };
    ((peak / step - 1e-9).ceil().max(1.0) * step, step)
}

/// Tick moments from 0 up to `max` seconds, at most six, at round
/// durations.
pub(crate) fn time_ticks(max: f64) -> Vec<f64> {
    const STEPS: [f64; 20] = [
        1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0,
        10800.0, 21600.0, 43200.0, 86400.0, 172800.0, 604800.0,
    ];
    let step = STEPS
        .iter()
        .copied()
        .find(|s| max / s <= 5.0)
        .unwrap_or_else(|| (max / 5.0 / 604800.0).ceil() * 604800.0);
    (0..)
        .map(|i| i as f64 * step)
        .take_while(|t| *t <= max + 1e-9)
        .collect()
}

/// `0s`, `45s`, `2m`, `2m30s`, `1h`, `1h30m`, `2d3h`.
pub(crate) fn duration_label(seconds: f64) -> String {
    let s = seconds.round() as u64;
    let (d, h, m, sec) = (s / 86400, s / 3600 % 24, s / 60 % 60, s % 60);
    match (d, h, m, sec) {
        (0, 0, 0, sec) => format!("{sec}s"),
        (0, 0, m, 0) => format!("{m}m"),
        (0, 0, m, sec) => format!("{m}m{sec}s"),
        (0, h, 0, _) => format!("{h}h"),
        (0, h, m, _) => format!("{h}h{m}m"),
        (d, 0, _, _) => format!("{d}d"),
        (d, h, _, _) => format!("{d}d{h}h"),
    }
}

/// A value on an axis whose ticks are `step` apart: `950`, `1.5k`, `12k`,
/// `2.5M`; a fraction when the step is below 1.
pub(crate) fn value_label(v: f64, step: f64) -> String {
    let (scaled, suffix, scaled_step) = if v >= 1e6 {
        (v / 1e6, "M", step / 1e6)
    } else if v >= 1e3 {
        (v / 1e3, "k", step / 1e3)
    } else {
        (v, "", step)
    };
    let decimals = if scaled_step >= 1.0 || scaled.fract() == 0.0 {
        0
    } else if (scaled_step * 10.0).fract().abs() < 1e-9 {
        1
    } else {
        2
    };
    let text = format!("{scaled:.decimals$}");
    format!("{text}{suffix}")
}

/// `48600000` as `48,600,000`.
pub(crate) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() * 4 / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// A coordinate with one decimal, without a trailing `.0`.
fn num(v: f64) -> String {
    let text = format!("{:.1}", v);
    text.strip_suffix(".0").map(str::to_string).unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HistoryCrash, HistoryRestart};

    fn sample(session: u32, elapsed: f64, cov: usize) -> HistorySample {
        HistorySample {
            session,
            elapsed,
            runs: elapsed as u64 * 1000,
            cov,
            ft: cov * 3,
            execs_per_sec: 1000.0 + elapsed,
            mix: Vec::new(),
        }
    }

    fn history(samples: Vec<HistorySample>) -> CampaignHistory {
        CampaignHistory {
            source: "stats.jsonl".into(),
            samples,
            restarts: Vec::new(),
            crashes: Vec::new(),
        }
    }

    #[test]
    fn scales_are_round() {
        assert_eq!(nice_scale(181.0), (200.0, 50.0));
        assert_eq!(nice_scale(933.0), (1000.0, 200.0));
        assert_eq!(nice_scale(121_726.2), (150_000.0, 50_000.0));
        assert_eq!(nice_scale(3.0), (3.0, 1.0));
        assert_eq!(nice_scale(0.0), (1.0, 1.0));
        let (max, step) = nice_scale(0.3);
        assert!((max - 0.3).abs() < 1e-9 && (step - 0.1).abs() < 1e-9);
    }

    #[test]
    fn time_ticks_are_round_durations() {
        assert_eq!(time_ticks(12.0), [0.0, 5.0, 10.0]);
        assert_eq!(time_ticks(300.0), [0.0, 60.0, 120.0, 180.0, 240.0, 300.0]);
        assert_eq!(time_ticks(86400.0).len(), 5, "every 6 hours");
        assert_eq!(duration_label(0.0), "0s");
        assert_eq!(duration_label(150.0), "2m30s");
        assert_eq!(duration_label(5400.0), "1h30m");
        assert_eq!(duration_label(86400.0 * 2.0 + 3600.0 * 3.0), "2d3h");
    }

    #[test]
    fn run_counts_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(48_600_000), "48,600,000");
    }

    #[test]
    fn values_are_labelled_compactly() {
        assert_eq!(value_label(150.0, 50.0), "150");
        assert_eq!(value_label(20_000.0, 20_000.0), "20k");
        assert_eq!(value_label(1_500.0, 500.0), "1.5k");
        assert_eq!(value_label(2_500_000.0, 500_000.0), "2.5M");
        assert_eq!(value_label(0.2, 0.1), "0.2");
    }

    #[test]
    fn each_session_is_its_own_subpath_within_the_frame() {
        let mut h = history(vec![
            sample(1, 0.0, 10),
            sample(1, 5.0, 50),
            sample(1, 10.0, 100),
            sample(2, 10.5, 40),
            sample(2, 20.0, 120),
        ]);
        h.restarts.push(HistoryRestart {
            session: 2,
            elapsed: 10.5,
        });
        h.crashes.push(HistoryCrash {
            elapsed: 4.0,
            kind: "exception".into(),
            summary: "Error: <bang>".into(),
            artifact: "crash-1.txt".into(),
        });
        let plots = plots(&h);
        assert_eq!(plots.len(), 3);
        let cov = &plots[0];
        assert_eq!(cov.id, "plot-cov");
        assert_eq!(cov.latest, "120");
        assert_eq!(cov.line.matches('M').count(), 2, "{}", cov.line);
        assert_eq!(cov.line.matches('L').count(), 3, "{}", cov.line);
        for point in cov.line.split(' ') {
            let (px, py) = point[1..].split_once(',').unwrap();
            let (px, py): (f64, f64) = (px.parse().unwrap(), py.parse().unwrap());
            assert!(
                (LEFT..=RIGHT).contains(&px) && (TOP..=BOTTOM).contains(&py),
                "{point}"
            );
        }
        assert!(
            cov.line.starts_with(&format!("M{},", num(LEFT))),
            "{}",
            cov.line
        );
        assert!(
            cov.line.ends_with(&format!(
                "{},{}",
                num(RIGHT),
                num(TOP + (BOTTOM - TOP) * (1.0 - 120.0 / 150.0))
            )),
            "{}",
            cov.line
        );
        let labels: Vec<&str> = cov.y_ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["0", "50", "100", "150"]);
        let labels: Vec<&str> = cov.x_ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["0s", "5s", "10s", "15s", "20s"]);
        assert_eq!(cov.restarts.len(), 1);
        assert_eq!(cov.restarts[0].title, "session 2 began at 11s");
        assert_eq!(cov.crashes[0].anchor, "found-crash-1");
        assert_eq!(
            cov.crashes[0].title,
            "exception first seen at 4s: Error: <bang>"
        );
    }

    #[test]
    fn a_single_sample_is_drawn_as_a_dot_and_no_samples_draw_nothing() {
        let plots = plots(&history(vec![sample(1, 0.5, 7)]));
        let line = &plots[0].line;
        let (m, l) = line.split_once(' ').unwrap();
        assert_eq!(&m[1..], &l[1..], "{line}");
        assert!(super::plots(&history(Vec::new())).is_empty());
    }

    #[test]
    fn long_campaigns_are_thinned_to_a_point_per_pixel() {
        let samples = (0..100_000).map(|i| sample(1, i as f64 * 5.0, i)).collect();
        let plots = plots(&history(samples));
        let points = plots[0].line.split(' ').count();
        assert!(points <= (RIGHT - LEFT) as usize + 2, "{points} points");
    }
}

"""report.json and report.html: one self-contained page, inline SVG, no script."""

import html
import json
import time
from statistics import median

from . import stats

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
GRID_POINTS = 60


def summarize(runs: list, configs: dict, trials: int, seconds: float) -> dict:
    targets = {}
    for target in sorted({r.target for r in runs}):
        mine = [r for r in runs if r.target == target]
        targets[target] = summarize_target(mine, list(configs), seconds)
    final = {t: {c: v["values"] for c, v in s["final_coverage"].items()} for t, s in targets.items()}
    return {
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "trials": trials, "seconds": seconds, "configs": configs,
        "targets": targets, "mean_rank": stats.mean_ranks(final),
        "runs": [r.to_json() for r in runs],
    }


def summarize_target(runs: list, configs: list, seconds: float) -> dict:
    by_config = {c: [r for r in runs if r.config == c] for c in configs}
    final = {c: [r.final_coverage for r in rs] for c, rs in by_config.items() if rs}
    return {
        "final_coverage": {c: {"values": v, "median": median(v), "min": min(v), "max": max(v)} for c, v in final.items()},
        "execs_per_sec": {c: median([r.execs_per_sec for r in rs]) for c, rs in by_config.items() if rs},
        "pairwise": [
            {"a": a, "b": b, "p_value": stats.p_value(final[a], final[b]), "a12": stats.a12(final[a], final[b]),
             "magnitude": stats.magnitude(stats.a12(final[a], final[b]))}
            for i, a in enumerate(final) for b in list(final)[i + 1:]
        ],
        "findings": findings_table(by_config),
        # A configuration without samples (php-fuzzer) gets no band rather than a flat zero.
        "coverage_over_time": {c: coverage_band(rs, seconds) for c, rs in by_config.items()
                               if rs and any(r.coverage_over_time for r in rs)},
    }


def findings_table(by_config: dict) -> dict:
    keys = sorted({k for rs in by_config.values() for r in rs for k in r.findings})
    table = {}
    for key in keys:
        table[key] = {}
        for config, rs in by_config.items():
            times = [r.findings[key] for r in rs if key in r.findings]
            table[key][config] = {"found_in": len(times), "trials": len(rs),
                                  "median_seconds": median(times) if times else None}
    return table


def coverage_band(runs: list, seconds: float) -> list:
    """Median and interquartile range of edges at GRID_POINTS times."""
    band = []
    for i in range(GRID_POINTS + 1):
        t = seconds * i / GRID_POINTS
        values = [value_at(r.coverage_over_time, t) for r in runs]
        q1, q2, q3 = stats.quartiles(values)
        band.append({"t": round(t, 3), "q1": q1, "median": q2, "q3": q3})
    return band


def value_at(samples: list, t: float) -> float:
    value = 0
    for elapsed, edges in samples:
        if elapsed > t:
            break
        value = edges
    return value


def write(summary: dict, out) -> None:
    (out / "report.json").write_text(json.dumps(summary, indent=2, sort_keys=False) + "\n")
    (out / "report.html").write_text(page(summary))
    # The same plots as files of their own, for pages that show images
    # (docs/evaluations/ on a forge).
    plots = out / "plots"
    plots.mkdir(exist_ok=True)
    configs = list(summary["configs"])
    for target, t in summary["targets"].items():
        svg = plot(t["coverage_over_time"], configs, summary["seconds"], title=target)
        (plots / f"{target}.svg").write_text("<?xml version='1.0' encoding='utf-8'?>\n" + svg + "\n")


def page(s: dict) -> str:
    configs = list(s["configs"])
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>php-fuzz evaluation</title>{STYLE}</head><body>",
             "<h1>php-fuzz evaluation</h1>",
             f"<p>{s['trials']} trials of {s['seconds']:g} s per target and configuration; generated {s['generated_at']}. "
             "Final coverage is the covered blocks of each final corpus replayed with full instrumentation. "
             "p: two-sided Mann-Whitney U (SciPy); A12: Vargha-Delaney, the probability that a trial of A "
             "covers more than one of B.</p>",
             "<h2>Configurations</h2>", table(["name", "flags"], [[c, s["configs"][c] or "(none)"] for c in configs]),
             "<h2>Mean rank across targets</h2>",
             table(["configuration", "mean rank (1 is best)"],
                   [[c, f"{r:.2f}"] for c, r in sorted(s["mean_rank"].items(), key=lambda x: x[1])])]
    for target, t in s["targets"].items():
        parts.append(f"<h2>{esc(target)}</h2>")
        parts.append(plot(t["coverage_over_time"], configs, s["seconds"]))
        missing = [c for c in t["final_coverage"] if c not in t["coverage_over_time"]]
        if missing:
            parts.append(f"<p>No coverage over time for {esc(', '.join(missing))}: final coverage only "
                         "(nikic/php-fuzzer's status lines count features, not edges).</p>")
        parts.append(table(["configuration", "median", "min", "max", "exec/s (median)"],
                           [[c, v["median"], v["min"], v["max"], f"{t['execs_per_sec'][c]:.0f}"]
                            for c, v in t["final_coverage"].items()]))
        parts.append(table(["A", "B", "p", "A12", "effect"],
                           [[p["a"], p["b"], f"{p['p_value']:.4f}", f"{p['a12']:.3f}", p["magnitude"]]
                            for p in t["pairwise"]]))
        rows = [[key] + [cell(v[c]) for c in configs if c in v] for key, v in t["findings"].items()]
        parts.append("<h3>Time to each finding</h3>" + (table(["finding"] + configs, rows) if rows else "<p>No findings.</p>"))
    parts.append("</body></html>")
    return "\n".join(parts)


def cell(v: dict) -> str:
    when = f"{v['median_seconds']:.1f} s" if v["median_seconds"] is not None else "–"
    return f"{when} ({v['found_in']}/{v['trials']})"


def plot(bands: dict, configs: list, seconds: float, title: str = "") -> str:
    width, height, pad = 640, 240, 40
    top = max((p["q3"] for b in bands.values() for p in b), default=1) or 1
    # The axis starts where the last nine tenths of the campaign do: the
    # configurations differ at the top, which a scale from 0 flattens. The
    # first climb is drawn at the axis.
    bottom = min((p["q1"] for b in bands.values() for p in b if p["t"] >= seconds / 10), default=0)
    bottom = bottom if bottom < top else 0

    def xy(t, v):
        share = (max(v, bottom) - bottom) / (top - bottom)
        return pad + (width - 2 * pad) * t / seconds, height - pad - (height - 2 * pad) * share

    shapes = []
    for i, config in enumerate(configs):
        band = bands.get(config)
        if not band:
            continue
        color = COLORS[i % len(COLORS)]
        upper = [xy(p["t"], p["q3"]) for p in band]
        lower = [xy(p["t"], p["q1"]) for p in reversed(band)]
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in upper + lower)
        shapes.append(f"<polygon points='{points}' fill='{color}' fill-opacity='0.15' stroke='none'/>")
        line = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(p["t"], p["median"]) for p in band))
        shapes.append(f"<polyline points='{line}' fill='none' stroke='{color}' stroke-width='2'/>")
        shapes.append(f"<text x='{width - pad + 4}' y='{pad + 14 * i}' fill='{color}'>{esc(config)}</text>")
    axes = (f"<line x1='{pad}' y1='{height - pad}' x2='{width - pad}' y2='{height - pad}' stroke='#444'/>"
            f"<line x1='{pad}' y1='{pad}' x2='{pad}' y2='{height - pad}' stroke='#444'/>"
            f"<text x='{pad}' y='{height - 10}'>0 s</text><text x='{width - pad - 30}' y='{height - 10}'>{seconds:g} s</text>"
            f"<text x='4' y='{pad}'>{top:g}</text><text x='4' y='{height - pad}'>{bottom:g}</text>"
            f"<text x='{pad}' y='{pad - 12}'>{esc(title)} edges over time (median, IQR band)</text>")
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width + 120}' height='{height}' role='img' "
            f"aria-label='edges over time, median and interquartile range'>{axes}{''.join(shapes)}</svg>")


def table(header: list, rows: list) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def esc(value) -> str:
    return html.escape(str(value))


STYLE = ("<style>body{font-family:sans-serif;max-width:60rem;margin:2rem auto}table{border-collapse:collapse;"
         "margin:1rem 0}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left}svg text{font-size:12px}</style>")

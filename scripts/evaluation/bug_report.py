"""The figures and page of the known-bug mode (`scripts/evaluate --bugs`).

- per bug x configuration: trials that found it, median time to bug over
  the trials that found it, and every trial's time, a trial that did not
  find it censored at --seconds;
- per configuration: bugs found per trial (trial i: the bugs its campaigns
  found), median and mean; the same per kind (code-parser, other-format);
- per pair of configurations: Mann-Whitney U p and Vargha-Delaney A12 on
  bugs per trial (A12 = P(a trial of A finds more bugs)), and per bug on
  time to bug with censored times (A12 = P(A finds it faster): lower is better).
"""

import json
import time
from statistics import mean, median

from . import stats
from .bug_catalog import KINDS
from .report import STYLE, esc, table


def censored_times(runs: list, bug: str, config: str, trials: int, seconds: float) -> "tuple[list, list]":
    """Trial 1..N's time to the bug (--seconds when not found) and whether it was found."""
    by_trial = {r.trial: r for r in runs if r.bug == bug and r.config == config}
    found = [t in by_trial and by_trial[t].found for t in range(1, trials + 1)]
    times = [min(by_trial[t].seconds_to_bug, seconds) if ok else seconds
             for t, ok in zip(range(1, trials + 1), found)]
    return times, found


def bugs_per_trial(runs: list, bugs: list, config: str, trials: int) -> list:
    """For trial i (1..N), how many of `bugs` the configuration's campaigns found."""
    return [sum(1 for r in runs if r.config == config and r.trial == t and r.bug in bugs and r.found)
            for t in range(1, trials + 1)]


def bug_figures(runs: list, bug: str, configs: list, trials: int, seconds: float) -> dict:
    per_config, times = {}, {}
    for config in configs:
        times[config], found = censored_times(runs, bug, config, trials, seconds)
        hits = [t for t, ok in zip(times[config], found) if ok]
        unconfirmed = sum(len(r.unconfirmed) for r in runs if r.bug == bug and r.config == config)
        per_config[config] = {"found_in": len(hits), "trials": trials,
                              "median_seconds": median(hits) if hits else None,
                              "times": times[config], "found": found, "unconfirmed": unconfirmed}
    pairwise = [{"a": a, "b": b, "p_value": stats.p_value(times[a], times[b]),
                 "a12_faster": stats.a12(times[b], times[a]),
                 "magnitude": stats.magnitude(stats.a12(times[b], times[a]))}
                for i, a in enumerate(configs) for b in configs[i + 1:]]
    return {"configs": per_config, "pairwise": pairwise}


def group_figures(runs: list, bugs: list, configs: list, trials: int) -> dict:
    """Bugs found per trial for a group of bugs, and each pair's MWU and A12 on them."""
    counts = {c: bugs_per_trial(runs, bugs, c, trials) for c in configs}
    return {
        "bugs": bugs,
        "bugs_per_trial": {c: {"values": v, "median": median(v), "mean": mean(v)} for c, v in counts.items()},
        "pairwise": [{"a": a, "b": b, "p_value": stats.p_value(counts[a], counts[b]),
                      "a12": stats.a12(counts[a], counts[b]), "magnitude": stats.magnitude(stats.a12(counts[a], counts[b]))}
                     for i, a in enumerate(configs) for b in configs[i + 1:]],
    }


def summarize(runs: list, entries: list, configs: dict, trials: int, seconds: float, skipped: list,
              catalog: str) -> dict:
    names = list(configs)
    bugs = {}
    for entry in entries:
        bugs[entry["id"]] = {"library": entry["library"], "kind": entry["kind"], "format": entry["format"],
                             "expected": entry["expected"], "vulnerable_commit": entry["vulnerable_commit"],
                             **bug_figures(runs, entry["id"], names, trials, seconds)}
    groups = {"all": group_figures(runs, list(bugs), names, trials)}
    for kind in KINDS:
        ids = [b for b, v in bugs.items() if v["kind"] == kind]
        if ids:
            groups[kind] = group_figures(runs, ids, names, trials)
    return {
        "mode": "bugs", "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "catalog": catalog, "trials": trials, "seconds": seconds, "configs": configs,
        "bugs": bugs, "bug_groups": groups, "skipped": skipped,
        "runs": [r.to_json() for r in runs],
    }


def write(summary: dict, out) -> None:
    (out / "report.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "report.html").write_text(page(summary))


def page(s: dict) -> str:
    configs = list(s["configs"])
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>php-fuzz known-bug evaluation</title>{STYLE}"
             "</head><body>", "<h1>php-fuzz known-bug evaluation</h1>",
             f"<p>{len(s['bugs'])} bugs of {esc(s['catalog'])}, {s['trials']} trials of at most {s['seconds']:g} s "
             f"per bug and configuration; generated {s['generated_at']}. Each campaign fuzzes the bug's vulnerable "
             "commit and stops at the first finding that matches the bug (its kind, class, message and site) and "
             "is confirmed outside php-fuzz: the input raises the bug on the vulnerable commit and not on the "
             "fixed one. p: two-sided Mann-Whitney U (SciPy); A12: Vargha-Delaney.</p>",
             "<h2>Configurations</h2>", table(["name", "flags"], [[c, s["configs"][c] or "(none)"] for c in configs])]
    for name, group in s["bug_groups"].items():
        parts.append(group_section(name, group, s["trials"]))
    parts.append("<h2>Time to each bug</h2><p>Median seconds over the trials that found it, and how many trials "
                 "found it. A trial that did not find it counts as "
                 f"{s['seconds']:g} s (censored) in the tests below.</p>")
    rows = [[bug, v["kind"], site(v["expected"])] + [cell(v["configs"][c]) for c in configs]
            for bug, v in s["bugs"].items()]
    parts.append(table(["bug", "kind", "expected"] + configs, rows) if rows else "<p>No bug ran.</p>")
    rows = [[bug, p["a"], p["b"], f"{p['p_value']:.4f}", f"{p['a12_faster']:.3f}", p["magnitude"]]
            for bug, v in s["bugs"].items() for p in v["pairwise"]]
    if rows:
        parts.append("<h3>Time to bug, pairwise</h3><p>Lower is better. <b>A12 = P(A finds the bug faster than "
                     "B)</b> over all pairs of trials, ties counting half (a trial that did not find it counts as "
                     f"{s['seconds']:g} s): above 0.5 favours A, below favours B.</p>")
        parts.append(table(["bug", "A", "B", "p", "A12 (A faster)", "effect"], rows))
    unconfirmed = [[r["bug"], r["config"], r["trial"], u["artifact"], u["observed"].get("vulnerable", ""),
                    u["observed"].get("fixed", "(not run)")] for r in s["runs"] for u in r["unconfirmed"]]
    if unconfirmed:
        parts.append("<h2>Matched but not confirmed</h2><p>Findings at the bug's site that repro.php did not "
                     "confirm (not counted): what each commit gave.</p>")
        parts.append(table(["bug", "configuration", "trial", "artifact", "vulnerable", "fixed"], unconfirmed))
    parts.append("<h2>Skipped bugs</h2>" + (table(["bug", "why"], [[k["id"], k["reason"]] for k in s["skipped"]])
                                              if s["skipped"] else "<p>None.</p>"))
    parts.append("</body></html>")
    return "\n".join(parts)


def group_section(name: str, group: dict, trials: int) -> str:
    title = "all bugs" if name == "all" else f"{name} bugs"
    rows = [[c, *v["values"], f"{v['median']:g}", f"{v['mean']:.2f}"] for c, v in group["bugs_per_trial"].items()]
    head = ["configuration"] + [f"trial {t}" for t in range(1, trials + 1)] + ["median", "mean"]
    out = [f"<h2>Bugs found per trial: {esc(title)} ({len(group['bugs'])})</h2>", table(head, rows)]
    if group["pairwise"]:
        out.append("<p>A12 = P(a trial of A finds more of these bugs than a trial of B).</p>")
        out.append(table(["A", "B", "p", "A12 (A finds more)", "effect"],
                         [[p["a"], p["b"], f"{p['p_value']:.4f}", f"{p['a12']:.3f}", p["magnitude"]]
                          for p in group["pairwise"]]))
    return "\n".join(out)


def site(expected: dict) -> str:
    where = expected.get("site") or " or ".join(expected.get("site_files", [])) or "anywhere in the library"
    return f"{expected['kind']} {expected.get('class', '')} at {where}"


def cell(v: dict) -> str:
    when = f"{v['median_seconds']:.1f} s" if v["median_seconds"] is not None else "–"
    extra = f", {v['unconfirmed']} unconfirmed" if v["unconfirmed"] else ""
    return f"{when} ({v['found_in']}/{v['trials']}{extra})"

"""`scripts/evaluate --bugs`: the known-bug evaluation from start to report.

Prepares every selected bug (a bug that cannot be had here is skipped with
its reason; a tree digest that differs from the catalog's stops everything),
runs each bug x configuration x trial as one campaign (run_bug_campaign), and
writes report.json and report.html (bug_report).
"""

import sys
from concurrent.futures import ThreadPoolExecutor

from . import bug_catalog, bug_report, bugs, campaigns


def prepare_all(entries: list, args) -> "tuple[list, list]":
    prepared, skipped = [], []
    for entry in entries:
        try:
            prepared.append(bugs.prepare(entry, args.mirrors, args.work, args.git_base, args.seeds))
        except bug_catalog.Unavailable as why:
            print(f"evaluate: skipping {entry['id']}: {why}", file=sys.stderr, flush=True)
            skipped.append({"id": entry["id"], "reason": str(why)})
        except bug_catalog.DigestMismatch as e:
            raise SystemExit(f"evaluate: {e}: refusing to use it (a different history, or a wrong catalog entry)")
    return prepared, skipped


def catalog_label(path) -> str:
    """The catalog as the report names it: relative to this clone when inside it (no local path in a
    published report)."""
    try:
        return str(path.resolve().relative_to(bug_catalog.ROOT))
    except ValueError:
        return str(path)


def main(args) -> int:
    catalog = bug_catalog.load_catalog(args.catalog)
    try:
        entries = bugs.select(catalog, args.only, args.kind)
    except SystemExit as e:
        raise SystemExit(f"evaluate: {e}")
    if not entries:
        wanted = [f"one of {', '.join(args.only)}" if args.only else "", f"of kind {args.kind}" if args.kind else ""]
        raise SystemExit(f"evaluate: no bug of {args.catalog} is {' and '.join(w for w in wanted if w)}")
    binary, out = args.php_fuzz.resolve(), args.out.resolve()
    if not binary.is_file():
        raise SystemExit(f"evaluate: --php-fuzz {args.php_fuzz}: no such file")
    args.work = args.work.resolve()
    prepared, skipped = prepare_all(entries, args)
    jobs = [(p, c, f, i) for p in prepared for i in range(1, args.trials + 1) for c, f in args.configs.items()]
    progress = campaigns.Progress(len(jobs), args.seconds, args.parallel)

    def one(job):
        prep, config, flags, trial = job
        label = f"{prep.id} {config} trial {trial}"
        if args.resume:
            run = bugs.finished_run(binary, prep, config, flags, trial, args.seconds, out)
            if run is not None:
                progress.report(run, sys.stderr, resumed=True, label=label, figures=bugs.describe(run))
                return run
        run = bugs.run_bug_campaign(binary, prep, config, flags, trial, args.seconds, out)
        bugs.save(run, bugs.campaign_settings(binary, prep, flags, args.seconds))
        progress.report(run, sys.stderr, label=label, figures=bugs.describe(run))
        return run

    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        runs = list(pool.map(one, jobs))
    summary = bug_report.summarize(runs, [p.entry for p in prepared], args.configs, args.trials, args.seconds,
                                   skipped, catalog_label(args.catalog))
    bug_report.write(summary, args.out)
    print(f"evaluate: wrote {args.out / 'report.html'} and {args.out / 'report.json'}", file=sys.stderr)
    if not prepared:
        print("evaluate: every selected bug was skipped", file=sys.stderr)
        return 1
    return 0

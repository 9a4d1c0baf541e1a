#!/usr/bin/env python3
"""Checks the known-bug catalog (bugs/catalog.json) against fetched mirrors.

    bugs/verify.py [--mirrors DIR] [--work DIR] [--only ID ...] [--seeds] [--update]

For each entry: the library's mirror (a bare git directory, DIR/owner+name/repo,
the layout the search tool's fetch verb gives) must hold both commits, and
their trees must have the recorded digests (git tree ids). Both commits are
exported with `git archive` into --work (never into this repository), the
entry is run once on its trigger with bugs/repro.php, and the result is
compared with `expected`: the vulnerable commit must fail with the expected
kind, class and signature site; the fixed commit must not fail there.
An entry whose mirror or commits are missing is skipped with a message.
--seeds also runs every seed of the entry's format (bugs/seeds/FORMAT/) on
the vulnerable commit and reports each that triggers the bug by itself.
--update records `reproduced` and `observed` back into the catalog.

The fetching, digest checks and repro.php runs are shared with
`scripts/evaluate --bugs` (scripts/evaluation/bug_catalog.py).
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "scripts"))

from evaluation.bug_catalog import (checked, export, has_commit, load_catalog, matches,  # noqa: E402
                                    mirror_of, missing_system_files, run_repro, slug, DigestMismatch)


def dependencies(entry: dict, mirrors: Path, work: Path) -> "tuple[dict, str | None]":
    """The entry's deps exported from their mirrors, or the reason one is unavailable."""
    deps = {}
    for dep in entry["autoload"].get("deps", []):
        dm = mirror_of(mirrors, dep["library"])
        if dm is None or not has_commit(dm, dep["commit"]):
            return deps, f"dependency {dep['library']} at {dep['commit'][:12]} unavailable"
        checked(dm, dep["commit"], dep["tree"], dep["library"])
        deps[dep["library"]] = export(dm, dep["commit"], work / f"{slug(dep['library'])}-{dep['commit'][:12]}")
    return deps, None


def seeds_triggering(entry: dict, root: Path, deps: dict, work: Path) -> list:
    folder = HERE / "seeds" / entry["format"]
    seeds = sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
    return [p.name for p in seeds if matches(run_repro(entry, root, deps, p.read_bytes(), work), entry["expected"])]


def check(entry: dict, args: argparse.Namespace) -> str:
    """PASS, FAIL or SKIP, printed with the reason or what each commit gave."""
    mirror = mirror_of(args.mirrors, entry["library"])
    if mirror is None:
        print(f"SKIP {entry['id']}: no mirror of {entry['library']} in {args.mirrors} (fetch it first)")
        return "SKIP"
    missing = [c for c in (entry["vulnerable_commit"], entry["fixed_commit"]) if not has_commit(mirror, c)]
    if missing:
        print(f"SKIP {entry['id']}: {mirror} lacks {', '.join(missing)} (a snapshot without that history?)")
        return "SKIP"
    try:
        for side in ("vulnerable", "fixed"):
            checked(mirror, entry[f"{side}_commit"], entry[f"{side}_tree"], f"{entry['id']} ({side})")
        deps, why = dependencies(entry, args.mirrors, args.work)
    except DigestMismatch as e:
        print(f"FAIL {entry['id']}: tree digest differs: {e}")
        return "FAIL"
    if why:
        print(f"SKIP {entry['id']}: {why}")
        return "SKIP"
    absent = missing_system_files(entry)
    if absent:
        print(f"SKIP {entry['id']}: system package file(s) missing: {', '.join(absent)}")
        return "SKIP"
    observed, roots = {}, {}
    trigger = entry["trigger"].encode("utf-8", "surrogateescape")
    for side in ("vulnerable", "fixed"):
        sha = entry[f"{side}_commit"]
        roots[side] = export(mirror, sha, args.work / f"{slug(entry['library'])}-{sha[:12]}")
        observed[side] = run_repro(entry, roots[side], deps, trigger, args.work)
    ok = matches(observed["vulnerable"], entry["expected"]) and not matches(observed["fixed"], entry["expected"])
    print(f"{'PASS' if ok else 'FAIL'} {entry['id']}\n    vulnerable: {observed['vulnerable']}\n"
          f"    fixed:      {observed['fixed']}")
    if args.seeds:
        bad = seeds_triggering(entry, roots["vulnerable"], deps, args.work)
        verdict = f"trigger it by themselves: {', '.join(bad)}" if bad else "none triggers it"
        print(f"    seeds ({entry['format']}): {verdict}")
    entry["reproduced"] = ok
    entry["observed"] = observed
    return "PASS" if ok else "FAIL"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", type=Path, default=Path(os.environ.get("WORK", "/work")) / ".mirror")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "php-fuzz-bugs")
    ap.add_argument("--catalog", type=Path, default=HERE / "catalog.json")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--seeds", action="store_true", help="also check that no seed of the format triggers the bug")
    ap.add_argument("--update", action="store_true")
    args = ap.parse_args()
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    catalog = load_catalog(args.catalog)
    unknown = sorted(set(args.only or []) - {e["id"] for e in catalog["bugs"]})
    if unknown:
        ap.error(f"--only: no such entry in {args.catalog}: {', '.join(unknown)}")
    results = [check(e, args) for e in catalog["bugs"] if not args.only or e["id"] in args.only]
    if args.update:
        args.catalog.write_text(json.dumps(catalog, indent=2, ensure_ascii=False) + "\n")
    failures, skipped = results.count("FAIL"), results.count("SKIP")
    print(f"verify: {failures} failed, {skipped} skipped", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
